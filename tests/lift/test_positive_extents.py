"""An extent read from a guarded index expression (``out[i - w]`` under ``i >= w``: ``n - w``
elements) is kept positive: a default size, or a host's size that leaves it empty, is moved to
where the guard lets threads through, with a note, so the binding resolves and the check compares
elements (before, ``w = 512`` from the launch and a default ``n = 256`` gave "shape of 'd_out' is
negative (-256)")."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference

#: spelling -> (kernel, output, source)
CASES = {
    "host-offset-default-size": (
        "lag",
        "d_out",
        """
__global__ void lag(const float* d_in, float* d_out, int n, int w) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= w && i < n) d_out[i - w] = d_in[i] - d_in[i - w];
}
void go(float* a, float* b, int n) { lag<<<(n + 255) / 256, 256>>>(a, b, n, 512); }
""",
    ),
    "nested-guards-equal-defaults": (
        "trim",
        "dst",
        """
__global__ void trim(const int* src, int* dst, int len, int skip) {
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    if (t < len) {
        if (t >= skip) dst[t - skip] = src[t] * 3;
    }
}
void run(const int* s, int* d, int len, int skip) { trim<<<(len + 127) / 128, 128>>>(s, d, len, skip); }
""",
    ),
    "grid-stride-host-values-empty": (
        "tail",
        "o",
        """
__global__ void tail(const float* x, float* o, int count, int first) {
    for (int k = blockIdx.x * blockDim.x + threadIdx.x + first; k < count;
         k += blockDim.x * gridDim.x)
        o[k - first] = 0.5f * x[k];
}
int main() {
    float *x, *o;
    int count = 100, first = 512;
    tail<<<8, 128>>>(x, o, count, first);
    return 0;
}
""",
    ),
    "early-returns-both-margins": (
        "inner",
        "out",
        """
#define HALO 3
__global__ void inner(const float* in, float* out, int n, int margin) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < margin) return;
    if (i >= n - margin) return;
    out[i - margin] = in[i - HALO] + in[i + HALO];
}
void launch(const float* in, float* out, int n) { inner<<<(n + 63) / 64, 64>>>(in, out, n, 200); }
""",
    ),
}


def _elements(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_guarded_extent_gets_elements(case: str) -> None:
    kernel, output, src = CASES[case]
    tu = parse_source(src, "k.cu")
    bnd, diags = binding_from_inference(tu, kernel)
    assert bnd is not None, [d.message for d in diags if d.severity.name != "NOTE"]
    shapes = bnd.resolve().shapes
    assert all(_elements(s) > 0 for s in shapes.values()), shapes
    assert _elements(shapes[output]) > 0
    notes = [d.message for d in diags if "which is empty at" in d.message]
    assert notes, "the size moved says why"
