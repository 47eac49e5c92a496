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


def _port(body: str) -> Example:
    src = (
        "__global__ void k(const float* x, float* y, int N) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    int t = threadIdx.x;\n" + body + "}\n"
    )
    return Example(
        files={"k.cu": src, "k.toml": _BINDING},
        argv=("port", "k.cu", "-o", "k_nki.py"),
        requires="cuda2nki.lift:lift_kernel",
    )


EXAMPLES = {
    "C2N2010": _port(
        "    if (i >= N) return;\n    switch (t % 3) {\n    case 0: y[i] = x[i]; break;\n"
        "    default: y[i] = -x[i];\n    }\n"
    ),
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
    "C2N2017": _port("    if (i < N) y[i / 2] = x[i];\n"),
    "C2N2018": _port("    if (i >= N) return;\n    if (x[i] > 0.0f) return;\n    y[i] = x[i];\n"),
    "C2N2019": _port(
        "    if (i >= N) return;\n    float v = x[i];\n    while (v > 1.0f) v *= 0.5f;\n    y[i] = v;\n"
    ),
    "C2N2022": _port("    if (i < N) atomicExch(&y[0], x[i]);\n"),
}

NO_EXAMPLE = {
    "C2N2001": "not raised yet: the lifter does not report lifted kernels",
    "C2N2020": "not raised yet: no check for kernels without a global write",
    "C2N2021": "not raised yet: no check that the launch covers the domain",
    "C2N2023": "not raised yet: the lifter does not ask for a binding",
    "C2N2100": "not raised yet: binding inference is not implemented",
    "C2N2101": "not raised yet: binding inference is not implemented",
}
