"""Integer locals whose value the extent scan cannot follow (variable shifts, conversions from
floats, products with a hash constant) are atoms of their own: unbounded, so an access through
one alone sizes nothing, until a guard on the local bounds it (``if (bin < nbins)``).  A bound
below such a value bounds nothing.

Each kernel carries a value across loop iterations that is no reduction (``v = v * v + ...``),
so the symbolic analysis gives up and the extent scan alone sizes the pointers."""

from __future__ import annotations

import pytest

from cuda2nki.binding import eval_c_expr
from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding

#: kernel source -> (pointer, size parameter its extent equals)
GUARDED = {
    "variable-shifts-then-row-pair": (
        """
__global__ void k(const int* first, const float* w, float* out, int rows, int lg, int lf,
                  int iters) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int r = (g >> (5 + lg)) << lf;
    if (r < rows) {
        float acc = 0.0f;
        for (int t = 0; t < iters; ++t) acc = acc * acc + w[first[r]];
        out[g] = acc + (float)first[r + 1];
    }
}
void go(const int* f, const float* w, float* o, int rows, int a, int b, int it) {
    k<<<(rows + 127) / 128, 128>>>(f, w, o, rows, a, b, it);
}
""",
        "first",
        "rows + 1",
    ),
    "bin-of-a-float": (
        """
__global__ void k(const float* x, const float* table, float* out, int n, int nbins, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int bin = (int)(x[i] * 16.0f);
    float v = 0.0f;
    if (bin >= 0 && bin < nbins)
        for (int t = 0; t < iters; t++) v = v * v + table[bin];
    out[i] = v;
}
void go(const float* x, const float* t, float* o, int n, int b, int it) {
    k<<<(n + 255) / 256, 256>>>(x, t, o, n, b, it);
}
""",
        "table",
        "nbins",
    ),
    "hashed-slot-early-exit": (
        """
__global__ void k(const unsigned* keys, const float* slots, float* out, int n,
                  unsigned cap, int shift) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned h = (keys[i] * 2654435761u) >> shift;
    if (h >= cap) return;
    float s = 1.0f;
    for (int t = 0; t < shift; ++t) s = s * s - slots[h];
    out[i] = s;
}
void go(const unsigned* kk, const float* s, float* o, int n, unsigned cap, int sh) {
    k<<<(n + 63) / 64, 64>>>(kk, s, o, n, cap, sh);
}
""",
        "slots",
        "cap",
    ),
}


@pytest.mark.parametrize("spelling", sorted(GUARDED))
def test_a_guard_on_an_opaque_local_bounds_what_it_indexes(spelling: str) -> None:
    src, ptr, size = GUARDED[spelling]
    params = infer_binding(parse_source(src, "o.cu"), "k")[0]["params"]
    shape = params[ptr].get("shape")
    assert shape is not None and len(shape) == 1, params[ptr]
    env = {"rows": 7, "nbins": 9, "cap": 11, "n": 5, "lg": 1, "lf": 1, "shift": 3, "iters": 2}
    assert eval_c_expr(str(shape[0]), env) == eval_c_expr(size, env), params[ptr]


def test_an_unguarded_opaque_local_sizes_nothing() -> None:
    src = """
__global__ void k(const float* x, const float* table, float* out, int n, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int bin = (int)(x[i] * 7.0f);
        float v = 0.0f;
        for (int t = 0; t < iters; t++) v = v * v + table[bin];
        out[i] = v;
    }
}
void go(const float* x, const float* t, float* o, int n, int it) {
    k<<<(n + 127) / 128, 128>>>(x, t, o, n, it);
}
"""
    params = infer_binding(parse_source(src, "o.cu"), "k")[0]["params"]
    assert "shape" not in params["table"], params["table"]
    assert params["out"]["shape"] == ["n"], params["out"]


def test_a_bound_below_an_opaque_value_keeps_the_launch_bound() -> None:
    """``i < lim`` with ``lim`` unknown leaves ``i`` bounded by the launch's threads."""
    src = """
__global__ void k(const float* x, float* y, int lg) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lim = 1000 >> lg;
    if (i < lim) {
        float v = 0.0f;
        for (int t = 0; t < lg; t++) v = v * v + x[i];
        y[i] = v;
    }
}
void go(const float* x, float* y, int lg) { k<<<8, 128>>>(x, y, lg); }
"""
    params = infer_binding(parse_source(src, "o.cu"), "k")[0]["params"]
    assert params["y"]["shape"] == [1024] and params["x"]["shape"] == [1024], params
