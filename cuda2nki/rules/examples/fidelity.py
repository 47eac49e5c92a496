"""Examples for the fidelity ids (C2N4xxx): `cuda2nki check` of a port against its CUDA kernel.

Most use the corpus's ``vector_add`` kernel with a variation of its hand-written port, or one of
the corpus's deliberately flawed ports.
"""

from __future__ import annotations

from cuda2nki.rules.examples.base import Example

VADD = "{CORPUS}/basic/vector_add.cu"

PORT = """\
import random

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def vector_add(a, b):
    (N,) = a.shape
    P = nl.tile_size.pmax
    out = nl.ndarray((N,), dtype=a.dtype, buffer=nl.shared_hbm)
    base = 0
    while base < N:
        rest = N - base
        rows, cols = (P, min(2048, rest // P)) if rest >= P else (1, rest)
        cnt = rows * cols
        a_t = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.sbuf)
        b_t = nl.ndarray((rows, cols), dtype=b.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=a_t, src=a[base : base + cnt].reshape((rows, cols)))
        nisa.dma_copy(dst=b_t, src=b[base : base + cnt].reshape((rows, cols)))
        c_t = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=c_t, data1=a_t, data2=b_t, op=nl.add)
        nisa.dma_copy(dst=out[base : base + cnt].reshape((rows, cols)), src=c_t)
        base += cnt
    return out
"""

ADD = "nisa.tensor_tensor(dst=c_t, data1=a_t, data2=b_t, op=nl.add)"


def _variant(old: str, new: str, *extra: str, exit_code: int | None = 1, **files: str) -> Example:
    """``check`` of vector_add against its port with ``old`` replaced by ``new``."""
    assert old in PORT, old
    return Example(
        files={"port.py": PORT.replace(old, new), **files},
        argv=("check", VADD, "port.py", "--seeds", "1", *extra),
        exit_code=exit_code,
    )


def _corpus(kernel: str, port: str, *extra: str, exit_code: int | None = 1) -> Example:
    """``check`` of a corpus kernel against one of the corpus's (flawed) ports."""
    suite, name = kernel.split("/")
    return Example(
        argv=(
            "check",
            f"{{CORPUS}}/{suite}/{name}.cu",
            f"{{CORPUS}}/{suite}/ports/{port}.py",
            *extra,
        ),
        exit_code=exit_code,
    )


TINY_CU = """\
__global__ void tiny(float* out, const float* a, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) out[i] = a[i] * 1e-8f;
}
"""

TINY_TOML = """\
kernel = "tiny"
[launch]
grid = ["ceil_div(N, 128)"]
block = [128]
[params]
out = { shape = ["N"], dtype = "float32", role = "out" }
a = { shape = ["N"], dtype = "float32", role = "in" }
N = 1024
"""

TINY_PORT = """\
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def tiny(a):
    (N,) = a.shape
    out = nl.ndarray((N,), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, N // 128), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a.reshape((128, N // 128)))
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=1e-8)
    nisa.dma_copy(dst=out.reshape((128, N // 128)), src=t)
    return out
"""

CANCEL_CU = """\
__global__ void cancel(float* out, const float* a, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) out[i] = (a[i] + 1e9f) - 1e9f + a[i] * 1e-3f;
}
"""

CANCEL_TOML = """\
kernel = "cancel"
[launch]
grid = ["ceil_div(N, 128)"]
block = [128]
[params]
out = { shape = ["N"], dtype = "float32", role = "out" }
a = { shape = ["N"], dtype = "float32", role = "in" }
N = 1024
"""

CANCEL_PORT = """\
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def cancel(a):
    (N,) = a.shape
    out = nl.ndarray((N,), dtype=a.dtype, buffer=nl.shared_hbm)
    for base in range(0, N, 128):
        n = min(128, N - base)
        t = nl.ndarray((n, 1), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[base : base + n].reshape((n, 1)))
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=1e-3)
        nisa.dma_copy(dst=out[base : base + n].reshape((n, 1)), src=t)
    return out
"""

TWICE_CU = """\
__global__ void twice(int* y, const int* x, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) return;
    if (__ballot_sync(0xffffffffu, x[i] != 0) == 0u) {  // a warp of zeros: nothing to double
        y[i] = 0;
        return;
    }
    y[i] = x[i] * 2;
}
"""

TWICE_TOML = """\
kernel = "twice"
[launch]
grid = ["ceil_div(N, 128)"]
block = [128]
[params]
y = { shape = ["N"], dtype = "int32", role = "out" }
x = { shape = ["N"], dtype = "int32", role = "in" }
N = 1024
"""

TWICE_PORT = """\
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def twice(x):
    (N,) = x.shape
    out = nl.ndarray((N,), dtype=x.dtype, buffer=nl.shared_hbm)
    for base in range(0, N, 128):
        n = min(128, N - base)
        t = nl.ndarray((n, 1), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[base : base + n].reshape((n, 1)))
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2)
        nisa.dma_copy(dst=out[base : base + n].reshape((n, 1)), src=t)
    return out
"""

SQUARE = """\
kernel = "matmul_tiled"
[launch]
grid = ["ceil_div(N, 16)", "ceil_div(M, 16)"]
block = [16, 16]
[params]
C = { shape = ["M", "N"], dtype = "float32", role = "out" }
A = { shape = ["M", "K"], dtype = "float32", role = "in" }
B = { shape = ["K", "N"], dtype = "float32", role = "in" }
M = 64
N = 64
K = 80
"""

EXAMPLES = {
    "C2N4001": _variant(ADD, ADD.replace("nl.add", "nl.subtract")),
    "C2N4002": _corpus("linalg/matmul_tiled", "matmul_tiled_flaw_bf16_inputs", "--seeds", "1"),
    "C2N4003": _corpus("norm/softmax_naive", "softmax_naive_flaw_missing_tail", "--seeds", "1"),
    "C2N4004": _variant(ADD, ADD.replace("op=nl.add", "op=nl.add if rows > 1 else nl.subtract")),
    "C2N4005": Example(
        files={"square.toml": SQUARE},
        argv=(
            "check",
            "{CORPUS}/linalg/matmul_tiled.cu",
            "{CORPUS}/linalg/ports/matmul_tiled_flaw_transposed_operand.py",
            "--binding",
            "square.toml",
            "--seeds",
            "1",
        ),
        exit_code=1,
    ),
    "C2N4006": _corpus("reduce/row_max_warp", "row_max_warp_flaw_off_by_one", "--seeds", "1"),
    "C2N4007": _variant(
        ADD, ADD + "\n        nisa.tensor_tensor(dst=c_t, data1=c_t, data2=c_t, op=nl.add)"
    ),
    "C2N4008": Example(
        files={
            "port.py": PORT.replace("min(2048, rest // P)", "min(4, rest // P)").replace(
                ADD, ADD.replace("op=nl.add", "op=nl.add if base > 0 else nl.subtract")
            )
        },
        argv=("check", VADD, "port.py", "--seeds", "1"),
        exit_code=1,
    ),
    "C2N4009": _corpus("norm/softmax_naive", "softmax_naive_flaw_no_max_shift"),
    "C2N4010": _variant(
        "out = nl.ndarray((N,), dtype=a.dtype, buffer=nl.shared_hbm)",
        "out = nl.ndarray((N + 1,), dtype=a.dtype, buffer=nl.shared_hbm)",
    ),
    "C2N4021": _variant(
        "out = nl.ndarray((N,), dtype=a.dtype, buffer=nl.shared_hbm)",
        "out = nl.ndarray((N,), dtype=nl.int32, buffer=nl.shared_hbm)",
    ),
    # state kept between calls: a second run on the same inputs differs from the first
    "C2N4011": Example(
        files={
            "port.py": PORT.replace("import random\n", "import random\n\nCALLS = []\n").replace(
                ADD,
                ADD + "\n        CALLS.append(1)\n        if len(CALLS) > 1:\n"
                "            nisa.tensor_scalar(dst=c_t, data=c_t, op0=nl.multiply, operand0=1.5)",
            )
        },
        argv=("check", VADD, "port.py", "--seeds", "1"),
        exit_code=1,
    ),
    "C2N4012": Example(
        files={"cancel.cu": CANCEL_CU, "cancel.toml": CANCEL_TOML, "port.py": CANCEL_PORT},
        argv=("check", "cancel.cu", "port.py", "--seeds", "1"),
        exit_code=1,
    ),
    "C2N4013": Example(
        files={"twice.cu": TWICE_CU, "twice.toml": TWICE_TOML, "port.py": TWICE_PORT},
        argv=("check", "twice.cu", "port.py", "--seeds", "1"),
    ),
    "C2N4014": _variant("import random\n", "raise RuntimeError('unfinished port')\n"),
    "C2N4015": Example(
        files={
            "tiny.cu": TINY_CU,
            "tiny.toml": TINY_TOML,
            "port.py": TINY_PORT.replace("    return out", "    while True:\n        pass"),
        },
        argv=("check", "tiny.cu", "port.py", "--seeds", "1", "--timeout", "1"),
        exit_code=1,
    ),
    "C2N4016": _variant(
        ADD,
        ADD + "\n        hog = []\n        while True:\n            hog.append(bytearray(1 << 26))",
        "--memory",
        "1024",
    ),
    "C2N4017": _variant(ADD, ADD + "\n        import os\n        os.system('true')"),
    "C2N4018": _variant(ADD, ADD + "\n        import os\n        os._exit(3)"),
    "C2N4019": _variant("def vector_add(a, b):", "def vector_add(a, b, c, d):", exit_code=2),
    "C2N4022": _variant("    (N,) = a.shape\n", "    return a\n"),
    "C2N4026": _variant(
        "        base += cnt\n",
        "        if N > 1 << 40:  # a path for sizes no test point reaches\n"
        "            nisa.tensor_tensor(dst=c_t, data1=a_t, data2=a_t, op=nl.add)\n"
        "        base += cnt\n",
        exit_code=0,
    ),
    "C2N4025": _variant("    (N,) = a.shape\n", "    import gc\n    (N,) = a.shape\n"),
    "C2N4020": Example(
        files={"port.py": "import nki\n\nSCALE = 2.0\n"},
        argv=("check", VADD, "port.py"),
        exit_code=2,
    ),
}

NO_EXAMPLE: dict[str, str] = {
    "C2N4035": "raised only when a port differs from a CUDA kernel that reads shared memory no "
    "thread wrote; the documentation's example kernels write what they read: "
    "tests/fidelity/test_unwritten_shared.py pins the rule",
    "C2N4034": "raised only when a port differs from a CUDA kernel that divides by subnormals; "
    "the documentation's example kernels divide by normal numbers: "
    "tests/fidelity/test_reciprocal_division.py pins the rule",
    "C2N4033": "raised only when a port differs from a CUDA kernel whose blocks race; the "
    "documentation's example ports match their kernels: tests/fidelity/test_block_order.py pins "
    "the rule",
    "C2N4031": "a note of a check whose CUDA kernel asserts on its data; the documentation's "
    "example kernels hold no assertions: tests/fidelity/test_ndebug_check.py pins the rule",
    "C2N4023": "a binding is validated before a check starts (C2N0003), and the command line always "
    "adds generated shape points, so from the command line some point always runs; the Python API "
    "reaches it with check(..., extra_points=False) and a point that cannot be resolved "
    "(tests/fidelity/test_port_safety.py)",
    "C2N4024": "raised only on a host that lacks a layer of the port sandbox (bubblewrap, user "
    "namespaces, setpriv or libseccomp); the documentation's examples run where all are present",
    "C2N4027": "raised only for a port that would issue more than 20,000 engine instructions in one "
    "run at a generated point (a literal, thread-by-thread port at two full tiles of a matmul), "
    "whose binding points alone take tens of seconds to check: too slow for the documentation's "
    "examples; tests/fidelity/test_port_paths.py pins the rule",
    "C2N4028": "a note of a check whose binding has [check.multiples]; no documentation example "
    "exercises it yet: tests/lift/test_size_steps.py pins the rule (an unguarded kernel launched "
    "at whole blocks, checked at multiples of the block only)",
    "C2N4030": "raised only by a check of a float64 kernel whose fp32 port keeps fewer than "
    "four digits (a cancelling difference); its port is generated, not written by hand, so no "
    "example files hold one: tests/fidelity/test_fp64_check.py pins the rule",
    "C2N4032": "raised only by `migrate --check` of a file sized by macros too large to "
    "simulate, whose check takes minutes even smaller: tests/batch/test_size_macros.py pins "
    "the rule",
    "C2N4029": "raised only for a port whose one run at a binding point issues more than 5,000 "
    "engine instructions (a literal, thread-by-thread port), whose check takes tens of seconds: "
    "too slow for the documentation's examples; tests/fidelity/test_heavy_points.py pins the rule",
}
