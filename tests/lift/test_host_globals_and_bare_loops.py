"""Two things that kept a kernel from being analysed although it is simple: a file-scope
variable only the host uses (a name string, a scratch table no device code reads), and a
grid-stride loop that steps a variable declared before it (``for (; i < n; i += stride)``)."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference

FILL = """
__global__ void fill(char* buf, int len, char v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len) buf[i] = v;
}
"""

HOST_GLOBALS = {
    "name-string": 'static const char seg_name[] = "segment";\n',
    "uninitialised-device-table": "__device__ float unused_scratch[64];\n",
    "constant-table-filled-later": "__constant__ float coeffs_unused[16];\n",
}


@pytest.mark.parametrize("spelling", sorted(HOST_GLOBALS))
def test_a_global_no_device_code_names_does_not_refuse_the_kernel(spelling: str) -> None:
    src = (
        HOST_GLOBALS[spelling]
        + FILL
        + """
void go(char* b, int n) { fill<<<(n + 127) / 128, 128>>>(b, n, 3); }
"""
    )
    tu = parse_source(src, "g.cu")
    bnd, diags = binding_from_inference(tu, "fill")
    assert bnd is not None, [d.message for d in diags if d.severity.name != "NOTE"]
    assert [str(d) for d in bnd.tensor("buf").shape] == ["len"]
    assert not any("analysed" in d.message for d in diags)  # executed, not read off the syntax


BARE_LOOPS = {
    "grid-stride-plus-assign": """
__global__ void k(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (; i < n; i += blockDim.x * gridDim.x) y[i] = 2.0f * x[i];
}
void go(float* y, const float* x, int n) { k<<<16, 128>>>(y, x, n); }""",
    "block-stride-pre-increment-of-rows": """
__global__ void k(float* y, const float* x, int n) {
    unsigned int r = blockIdx.x;
    for (; r < n; r += gridDim.x) y[r] = x[r] + 1.0f;
}
void go(float* y, const float* x, int n) { k<<<8, 1>>>(y, x, n); }""",
    "declared-apart-then-post-increment": """
__global__ void k(float* y, const float* x, int n) {
    int j;
    j = threadIdx.x * 0;
    for (; j < n; j++) if (threadIdx.x == 0 && blockIdx.x == 0) y[j] = x[j] - 1.0f;
}
void go(float* y, const float* x, int n) { k<<<1, 32>>>(y, x, n); }""",
}


@pytest.mark.parametrize("spelling", sorted(BARE_LOOPS))
def test_a_loop_stepping_a_declared_variable_is_analysed(spelling: str) -> None:
    tu = parse_source(BARE_LOOPS[spelling], "b.cu")
    bnd, diags = binding_from_inference(tu, "k")
    assert bnd is not None, [d.message for d in diags if d.severity.name != "NOTE"]
    assert [str(d) for d in bnd.tensor("y").shape] == ["n"]
    assert [str(d) for d in bnd.tensor("x").shape] == ["n"]
    assert bnd.tensor("y").role == "out" and bnd.tensor("x").role == "in"
