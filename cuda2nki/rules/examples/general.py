"""Examples for the general ids (C2N0xxx): command-line, file and batch errors."""

from __future__ import annotations

from cuda2nki.rules.examples.base import Example

K = "__global__ void k(float* y, int n) {\n    int i = threadIdx.x;\n    if (i < n) y[i] = 2.0f;\n}\n"

TOML = (
    'kernel = "k"\n[launch]\ngrid = [1]\nblock = [32]\n'
    '[params]\ny = { shape = ["n"], dtype = "float32", role = "out" }\nn = 32\n'
)

# 1500 kernels in one file: more than 0.3 s of work for one job
#: 1,500 kernels stamped out by one macro: a file's time limit counts the kernels its text
#: spells (one here), so --timeout 0.3 gives the whole file 0.3 s
MANY = (
    "#define SCALE_KERNEL(i) __global__ void k##i(float* y, int n) "
    "{ if (threadIdx.x < n) y[threadIdx.x] *= (float)i; }\n"
    + "".join(f"SCALE_KERNEL({i})\n" for i in range(1500))
)

EXAMPLES = {
    "C2N0001": Example(argv=("parse", "missing.cu"), exit_code=2),
    "C2N0002": Example(files={"k.cu": K}, argv=("parse", "k.cu", "-D", "=1"), exit_code=2),
    "C2N0003": Example(
        files={
            "k.cu": K,
            "k.toml": TOML.replace(', role = "out"', ""),
        },
        argv=("run", "k.cu", "--out", "out.npz"),
        exit_code=2,
    ),
    "C2N0004": Example(
        files={"k.cu": K, "k.toml": TOML, "blocker": "a file, not a directory\n"},
        argv=("run", "k.cu", "--out", "blocker/out.npz"),
        exit_code=2,
    ),
    "C2N0006": Example(
        files={"src/many.cu": MANY},
        argv=("migrate", "src", "-o", "out", "--timeout", "0.3", "--jobs", "1"),
        exit_code=1,
    ),
}

TWO = (
    K + "__global__ void h(float* z, int m) {\n    if (threadIdx.x < m) z[threadIdx.x] = 1.0f;\n}\n"
)

EXAMPLES.update(
    {
        "C2N0007": Example(
            files={"two.cu": TWO, "k.toml": TOML},
            argv=("port", "two.cu", "--kernel", "h", "--binding", "k.toml"),
            exit_code=2,
        ),
        "C2N0008": Example(
            files={
                "two.cu": TWO + "void run(float* z) { h<<<1, 32>>>(z, 32); }\n",
                "two.toml": TOML,
            },
            argv=("port", "two.cu", "--kernel", "h"),
            exit_code=0,  # h is bound by inference instead: its launch passes m = 32
        ),
    }
)

NO_EXAMPLE = {
    "C2N0005": "reports a bug in cuda2nki itself (an unexpected exception); no correct input "
    "triggers it",
}
