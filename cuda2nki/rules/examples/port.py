"""Examples for the porting ids (C2N2500-2999): `cuda2nki port`, and the pass pipeline's notes.

Notes are shown on corpus kernels; decisions no corpus kernel reaches yet are shown on an intent
kernel (the text ``cuda2nki port --emit intent`` prints) given to
:func:`cuda2nki.pipeline.port_intent`.
"""

from __future__ import annotations

from cuda2nki.rules.examples.base import Example

_PORT_INTENT = """\
from pathlib import Path
from cuda2nki.pipeline import port_intent
from cuda2nki.ir.parser import parse

intent = parse(Path("k.ir").read_text(), "k.ir")
scheduled, source, diagnostics = port_intent(intent{extra})
"""


def _corpus(kernel: str) -> Example:
    """``cuda2nki port`` of a corpus kernel; the notes are printed and written into the port."""
    return Example(
        argv=("port", f"{{CORPUS}}/{kernel}.cu", "-o", "port_nki.py"),
        exit_code=0,
        requires="cuda2nki.lift:lift_kernel",
    )


def _intent(text: str, extra: str = "") -> Example:
    return Example(files={"k.ir": text}, python=_PORT_INTENT.format(extra=extra))


MATMUL = """\
kernel matmul(A: in bfloat16[M, K], B: in bfloat16[K, N], C: out float32[M, N], M: int32, N: int32, K: int32) {
  @3:5 contract: C[i, j] = reduce(add, k < K: A[i, k] * B[k, j]; acc float32) for i < M, j < N;
}
"""

ROWSUM_BF16 = """\
kernel rowsum(x: in bfloat16[R, C], y: out bfloat16[R], R: int32, C: int32) {
  @3:5 reduce: y[i] = reduce(add, j < C: x[i, j]; acc bfloat16) for i < R;
}
"""

ROWSUM_F64_ACC = """\
kernel rowsum(x: in float32[R, C], y: out float32[R], R: int32, C: int32) {
  @3:5 reduce: y[i] = reduce(add, j < C: x[i, j]; acc float64) for i < R;
}
"""

LITERAL = """\
kernel odd(x: in float32[N], y: out float32[N], N: int32) {
  @3:5 literal: y[i] = x[i] * 2.0 for i < N;
}
"""

TWO_KERNELS = """\
__global__ void scale(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * y[i];
}
__global__ void shift(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = y[i] + 1.0f;
}
"""

NO_LAUNCH = """\
__global__ void scale(float* y, const float* x, float a) {
    int i = threadIdx.y * blockDim.x + threadIdx.x;  // laid out by the block's shape
    y[i] = a * x[i];
}
"""

EXAMPLES = {
    "C2N2500": _intent(LITERAL),
    "C2N2501": _intent(
        "kernel k(x: in float32[N], y: out float32[N], N: int32) {\n"
        "  @3:5 map: y[i] = x[i] / 0.0 for i < N;\n}\n"
    ),
    "C2N2502": Example(files={"k.cu": NO_LAUNCH}, argv=("port", "k.cu"), exit_code=2),
    "C2N2503": Example(
        argv=("port", "{CORPUS}/basic/vector_add.cu", "--kernel", "vector_sub"),
        exit_code=2,
    ),
    "C2N2504": Example(files={"k.cu": TWO_KERNELS}, argv=("port", "k.cu"), exit_code=2),
    "C2N2505": _corpus("norm/softmax_naive"),
    "C2N2506": _corpus("linalg/matmul_tiled"),
    "C2N2507": _corpus("norm/softmax_naive"),
    "C2N2510": _corpus("linalg/matmul_tiled"),
    "C2N2511": _intent(ROWSUM_BF16),
    "C2N2515": _intent(ROWSUM_F64_ACC),
    "C2N2516": _corpus("fp64/transpose_colmajor_f64"),
    "C2N2512": _intent(MATMUL, extra=', passes="choose-layout"'),
    "C2N2509": _corpus("norm/softmax_naive"),
    "C2N2513": _corpus("basic/vector_add"),
    "C2N2514": _corpus("basic/saxpy"),
}

NO_EXAMPLE = {
    "C2N2508": "retired: the row lowering keeps whole rows on chip and never chunks them; rows "
    "over the SBUF budget are reported when the port runs (C2N3017, C2N5012)",
}
