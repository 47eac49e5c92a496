"""Pointers a kernel hands to ``__device__`` helpers: the helper's body is scanned where it is
called (its pointer parameters are what the kernel passes, its integers the kernel's values), so
the kernel's pointers get shapes from the helper's accesses and the guards around the call.
(A recursive or bodiless helper never gets here: the frontend refuses the kernel.)"""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.extents import extents
from cuda2nki.lift.infer import binding_from_inference

HELPERS = """
__device__ void put(float* dst, int at, float v) { dst[at] = v; }
__device__ float get(const float* src, int at) { return src[at]; }
__device__ float sum3(const float* src, int k) { return get(src, k) + get(src, k + 1) + get(src, k + 2); }
__device__ void fill_row(float* row, int width, float v) {
    for (int c = 0; c < width; ++c) row[c] = v;
}
"""


def _scan(body: str, name: str = "k", launch: dict | None = None):
    tu = parse_source(HELPERS + body, "h.cu")
    fn = tu.function(name)
    launch = launch or {"grid": ["ceil_div(n, 128)"], "block": [128]}
    return extents(fn, launch, device=tu.function)


@pytest.mark.parametrize(
    "body",
    [
        "int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) put(y, i, get(x, i) * 2.0f);",
        "int g = threadIdx.x + blockDim.x * blockIdx.x; if (g >= n) return; put(y, g, x[g]);",
        "for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += blockDim.x * gridDim.x)"
        " put(y, t, get(x, t));",
    ],
)
def test_a_pointer_written_and_read_through_helpers(body: str) -> None:
    got = _scan(f"__global__ void k(float* y, const float* x, int n) {{ {body} }}")
    assert got["y"].shape == ("n",) and got["y"].role == "out"
    assert got["x"].shape == ("n",) and got["x"].role == "in"


def test_a_row_pointer_handed_to_a_helper_looping_over_the_row() -> None:
    src = """
__global__ void rows(float* m, int nrows, int w) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < nrows) fill_row(m + r * w, w, 1.0f);
}"""
    got = _scan(src, "rows", {"grid": ["ceil_div(nrows, 64)"], "block": [64]})
    assert got["m"].shape == ("nrows", "w") and got["m"].role == "out"


def test_helpers_calling_helpers_read_past_the_index() -> None:
    src = """
__global__ void win(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = sum3(x, i);
}"""
    got = _scan(src, "win")
    assert got["y"].shape == ("n",)
    assert got["x"].shape == ("2+n",) and got["x"].role == "in"


def test_a_helper_reusing_the_callers_loop_counter_is_not_followed() -> None:
    """``fill_row`` counts with ``c`` inside the caller's loop over ``c``: the two counters would
    be one atom with one bound, so the helper is not followed (a coarser shape, never a wrong one)."""
    src = """
__global__ void tiles(float* m, int nrows, int w) {
    for (int c = 0; c < nrows; ++c) fill_row(m + c * w, w, 0.0f);
}"""
    got = _scan(src, "tiles", {"grid": ["1"], "block": [1]})
    # the row starts the kernel passes, as without the helper; never `w` rows bounded by `w`
    assert got["m"].shape == ("1-w+nrows*w",)


def test_the_inferred_binding_sizes_a_pointer_only_a_helper_touches() -> None:
    src = (
        HELPERS
        + """
__global__ void scale(float* v, float a, int len) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < len) put(v, j, a * get(v, j));
}
void run(float* v, int len) { scale<<<(len + 255) / 256, 256>>>(v, 0.5f, len); }
"""
    )
    bnd, diags = binding_from_inference(parse_source(src, "s.cu"), "scale")
    assert bnd is not None, [d.message for d in diags]
    assert [str(x) for x in bnd.tensor("v").shape] == ["len"]
