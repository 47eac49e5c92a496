"""Examples for the lifter's ids (C2N2000-2399): `cuda2nki port` on a kernel it cannot lift.

They need the lifter's entry point (``cuda2nki.lift.lift_kernel``) and are skipped until it exists.
"""

from __future__ import annotations

from cuda2nki.rules.examples.base import Example

_BINDING = """\
kernel = "k"
[launch]
grid = ["ceil_div(N, 32)"]
block = [32]
[params]
x = { shape = ["N"], dtype = "float32", role = "in" }
y = { shape = ["N"], dtype = "float32", role = "out" }
N = 256
"""


def _port(body: str, binding: str = _BINDING, params: str = "") -> Example:
    src = (
        f"__global__ void k(const float* x, float* y, int N{params}) {{\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    int t = threadIdx.x;\n" + body + "}\n"
    )
    return Example(
        files={"k.cu": src, "k.toml": binding},
        argv=("port", "k.cu", "-o", "k_nki.py"),
        exit_code=1,
        requires="cuda2nki.lift:lift_kernel",
    )


_LITERAL = (
    "    if (i < N) {\n        float v = x[i];\n"
    "        switch (N % 3) { case 0: v = -v; break; default: break; }\n"
    "        y[i] = v;\n    }\n"
)

LAUNCHED = """\
__global__ void scale(float* y, const float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}
void launch(float* y, const float* x, float a, int n) {
    scale<<<(n + 255) / 256, 256>>>(y, x, a, n);
}
"""

NO_LAUNCH = """\
__global__ void scale(float* y, const float* x, float a) {
    int i = threadIdx.y * blockDim.x + threadIdx.x;  // laid out by the block's shape
    y[i] = a * x[i];
}
"""

# `cuda2nki port` reports a partial inferred binding as C2N0003 for now (see tests/docs), so the
# inference is shown through its API
_INFER = """\
from cuda2nki.api import parse
from cuda2nki.lift import infer_binding

binding, diagnostics = infer_binding(parse("scale.cu"), "scale")
"""

_OPTIONAL_BINDING = _BINDING.replace(
    "[params]\n", '[params]\nb = { shape = ["N"], dtype = "float32", role = "in" }\n'
)
_OPTIONAL = """\
__global__ void k(const float* b, const float* x, float* y, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) y[i] = x[i] + (b != NULL ? b[i] : 0.0f);
}
"""
_KEPT = _OPTIONAL.replace("(b != NULL ? b[i] : 0.0f)", "b[i] * (b ? 2.0f : 1.0f)")

EXAMPLES = {
    "C2N2024": Example(
        files={"k.cu": _OPTIONAL, "k.toml": _OPTIONAL_BINDING},
        argv=("port", "k.cu", "-o", "k_nki.py"),
        exit_code=0,
        requires="cuda2nki.lift:lift_kernel",
    ),
    "C2N2025": Example(
        files={"k.cu": _KEPT, "k.toml": _OPTIONAL_BINDING},
        argv=("port", "k.cu", "-o", "k_nki.py"),
        exit_code=0,
        requires="cuda2nki.lift:lift_kernel",
    ),
    "C2N2100": Example(
        files={"scale.cu": LAUNCHED},
        python=_INFER,
        requires="cuda2nki.lift:infer_binding",
    ),
    "C2N2101": Example(
        files={"scale.cu": NO_LAUNCH},
        python=_INFER,
        requires="cuda2nki.lift:infer_binding",
    ),
    "C2N2001": Example(
        argv=("port", "{CORPUS}/basic/vector_add.cu", "-o", "vector_add_nki.py"),
        exit_code=0,
        requires="cuda2nki.lift:lift_kernel",
    ),
    "C2N2020": _port("    float v = x[i];\n    v = v * 2.0f;\n"),
    "C2N2021": _port(
        "    if (i < N) y[i] = x[i];\n", _BINDING.replace('["ceil_div(N, 32)"]', "[1]")
    ),
    "C2N2023": _port("    if (i < N) y[i] = x[i] + z[i];\n", params=", const float* z"),
    "C2N2010": _port("    if (i >= N) return;\n    y[i] = (float)__brev((unsigned)t) * x[i];\n"),
    "C2N2011": _port(
        "    if (i >= N) return;\n    int c = 1;\n"
        "    for (int k = 0; k < 8; ++k) c = c * 3 + (int)x[i];\n    y[i] = c;\n"
    ),
    "C2N2012": _port(
        "    __shared__ float s[32];\n    s[t] = x[i];\n    y[i] = s[(t + 1) % 32];\n"
    ),
    "C2N2013": _port("    if (i < N) y[i ^ 1] = x[i];\n"),
    "C2N2015": _port(
        "    __shared__ float s[32];\n    s[t] = x[i];\n"
        "    if (t < 16) __syncthreads();\n    y[i] = s[31 - t];\n"
    ),
    "C2N2017": _port(
        "    if (i >= N / 2) return;\n    for (int k = 0; k < 2; ++k) y[2 * i + k] = x[i];\n"
        "    y[2 * i] = y[2 * i + (t % 2)] + 1.0f;\n"
    ),
    "C2N2018": _port(
        "    __shared__ float s[128];\n    s[t] = 0.0f;\n    if (i < N && x[i] > 0.0f) s[t] = x[i];\n"
        "    __syncthreads();\n    if (i < N) y[i] = s[127 - t];\n"
    ),
    "C2N2019": _port(
        "    if (i >= N) return;\n    float v = x[i];\n    while (v > 1.0f) v *= 0.5f;\n    y[i] = v;\n"
    ),
    "C2N2022": _port("    if (i < N) atomicExch(&y[0], x[i]);\n"),
    # the literal lowering (cuda2nki.lift.literal)
    "C2N2300": Example(
        files={"k.cu": _port(_LITERAL).files["k.cu"], "k.toml": _BINDING},
        argv=("port", "k.cu", "--lowering", "literal", "-o", "k_nki.py"),
        exit_code=1,
        requires="cuda2nki.lift.literal:lower_literal",
    ),
    "C2N2301": Example(
        files={
            "k.cu": _port(
                "    float v = x[i] + 2.0f;\n    while (v > 1.0f) v = v * 0.5f;\n"
                "    if (i < N) y[i] = v;\n"
            ).files["k.cu"],
            "k.toml": _BINDING,
        },
        argv=("port", "k.cu", "--lowering", "literal", "--api", "legacy", "-o", "k_nki.py"),
        exit_code=1,
        requires="cuda2nki.lift.literal:lower_literal",
    ),
    "C2N2302": Example(
        files={"k.cu": _port(_LITERAL).files["k.cu"], "k.toml": _BINDING},
        python=(
            "from cuda2nki.pipeline import port_file\n"
            "res = port_file('k.cu', target='trn-next', lowering='literal')\n"
            "print(*(f'{d.code} {d.message}' for d in res.diagnostics), sep='\\n')\n"
        ),
        requires="cuda2nki.lift.literal:lower_literal",
    ),
}

NO_EXAMPLE: dict[str, str] = {}
