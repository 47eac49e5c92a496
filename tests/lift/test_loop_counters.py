"""Counters bumped in counted loops (:mod:`cuda2nki.lift.counters`): a scalar that only grows by
a constant per iteration (``++index`` in ``for j < w`` in ``for i < k``) bounds the array it
walks by its start plus every bump the loops could make.  A counter also changed another way,
or bumped in a loop without a trip count, sizes nothing.  The literal port gives each block its
own copy of a scalar parameter the kernel bumps.

Each kernel carries a value across loop iterations that is no reduction (``r = r * 0.5f + ...``),
so the symbolic analysis gives up and the extent scan sizes the pointers."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.binding import eval_c_expr
from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference, infer_binding

PARAM_COUNTER = """
__global__ void k(int rounds, int index, const float* in, float* out, const float* bm, int size) {
    int w = 4;
    int i, j;
    const unsigned idx = blockDim.x * blockIdx.x + threadIdx.x;
    if (idx >= size) return;
    float r = 0.0f;
    for (i = 0; i < rounds; i++) {
        for (j = 0; j < w; j++) {
            r = r * 0.5f + in[idx] * bm[index];
            ++index;
        }
    }
    out[idx] = r;
}
void go(int rounds, const float* in, float* out, const float* bm, int size) {
    k<<<(size + 127) / 128, 128>>>(rounds, 0, in, out, bm, size);
}
"""

#: kernel source -> (pointer, its element count as an expression of the sizes)
COUNTED = {
    "parameter-bumped-in-a-nest": (PARAM_COUNTER, "bm", "1 + index + 4 * rounds"),
    "local-stepped-by-two-under-a-branch": (
        """
__global__ void k(const float* x, const float* coef, float* y, int n, int taps, int base) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int pos = base * 2;
        float acc = 1.0f;
        for (int t = 0; t < taps; t++) {
            if (x[i] > 0.0f) acc = acc * coef[pos] + x[i];
            pos += 2;
        }
        y[i] = acc;
    }
}
void go(const float* x, const float* c, float* y, int n, int t, int b) {
    k<<<(n + 255) / 256, 256>>>(x, c, y, n, t, b);
}
""",
        "coef",
        "1 + 2 * base + 2 * taps",
    ),
    "post-increment-in-an-inclusive-loop": (
        """
__global__ void k(const float* table, float* out, int n, int last) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= n) return;
    unsigned cursor = 0;
    float v = 0.0f;
    for (int s = 1; s <= last; ++s) v = v * v - table[cursor++];
    out[g] = v;
}
void go(const float* t, float* o, int n, int last) { k<<<(n + 63) / 64, 64>>>(t, o, n, last); }
""",
        "table",
        "1 + last",
    ),
}


@pytest.mark.parametrize("spelling", sorted(COUNTED))
def test_a_counter_bounds_the_array_it_walks(spelling: str) -> None:
    src, ptr, size = COUNTED[spelling]
    params = infer_binding(parse_source(src, "c.cu"), "k")[0]["params"]
    shape = params[ptr].get("shape")
    assert shape is not None and len(shape) == 1, params[ptr]
    env = {"rounds": 3, "index": 5, "base": 2, "taps": 7, "last": 6, "n": 9, "size": 9}
    assert eval_c_expr(str(shape[0]), env) == eval_c_expr(size, env), params[ptr]


#: the counter changed another way, or bumped in a loop without a trip count (or one that may
#: be negative)
UNCOUNTED = {
    "decremented": "pos += 2; if (pos > 100) pos--;",
    "reset": "pos += 2; if (pos > 100) pos = 0;",
    "bumped-in-a-while": "int s = 0; while (s < taps) { s++; pos++; }",
    "bumped-by-a-variable": "pos += taps;",
    "bumped-in-a-loop-from-three": "for (int u = 3; u < taps; u++) pos++;",
}


@pytest.mark.parametrize("spelling", sorted(UNCOUNTED))
def test_an_uncounted_counter_sizes_nothing(spelling: str) -> None:
    src = f"""
__global__ void k(const float* x, const float* coef, float* y, int n, int taps) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {{
        int pos = 0;
        float acc = 1.0f;
        for (int t = 0; t < taps; t++) {{
            acc = acc * coef[pos] + x[i];
            {UNCOUNTED[spelling]}
        }}
        y[i] = acc;
    }}
}}
void go(const float* x, const float* c, float* y, int n, int t) {{
    k<<<(n + 255) / 256, 256>>>(x, c, y, n, t);
}}
"""
    params = infer_binding(parse_source(src, "c.cu"), "k")[0]["params"]
    assert "shape" not in params["coef"], params["coef"]


def test_the_literal_port_of_a_bumped_parameter_matches(tmp_path: Path) -> None:
    """Each block starts from the caller's ``index``: the port runs and matches the kernel."""
    from cuda2nki.pipeline import port_file
    from tests.port.acceptance import run_against_simt

    path = tmp_path / "c.cu"
    path.write_text(PARAM_COUNTER)
    bnd, diags = binding_from_inference(parse_source(PARAM_COUNTER, str(path)), "k")
    assert bnd is not None, [d.message for d in diags]
    res = port_file(path, binding=bnd)
    assert res.source is not None and res.literal, res.diagnostics
    port = tmp_path / "port.py"
    port.write_text(res.source)
    run = run_against_simt(res, bnd, port, points=bnd.test_points()[:1], rtol=1e-4, atol=1e-4)
    assert not run.mismatches, run.mismatches
