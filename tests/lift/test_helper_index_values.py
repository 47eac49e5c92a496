"""Integer helpers in index expressions and loop bounds (``i < ceil_div(n, 4)``,
``x[at(r, c, w)]``): a device function whose body is one ``return`` over its parameters is
expanded where it is called, so the accesses it indexes get shapes."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.extents import extents

HELPERS = """
template <class T> __host__ __device__ T ceil_div(T a, T b) { return (a + b - 1) / b; }
__device__ int cdiv(int a, int b) { return (a + b - 1) / b; }
__device__ __forceinline__ int at(int r, int c, int w) { return r * w + c; }
__device__ int at2(int r, int c, int w) { return at(r, c, w); }
__device__ int stride_of(int w) { return w + PAD; }
__device__ float half_of(int a) { return a * 0.5f; }
"""


def _scan(body: str, launch: dict):
    src = "#define PAD 1\n__device__ int offset_global = 3;\n" + HELPERS + body
    tu = parse_source(src, "k.cu")
    return extents(tu.function("k"), launch, device=tu.function)


@pytest.mark.parametrize("bound", ["ceil_div(n, 4)", "cdiv(n, 4)", "(n + 3) / 4"])
def test_a_loop_bounded_by_a_rounding_helper(bound: str) -> None:
    body = (
        "__global__ void k(float* y, int n) {"
        f" for (int i = threadIdx.x; i < {bound}; i += blockDim.x)"
        " for (int k = 0; k < 4; ++k) y[i * 4 + k] = 0.0f; }"
    )
    got = _scan(body, {"grid": [1], "block": [128]})
    assert got["y"].shape == ("3+n",)


@pytest.mark.parametrize("helper", ["at", "at2"])
def test_an_index_helper_gives_the_row_major_shape(helper: str) -> None:
    body = (
        "__global__ void k(float* y, const float* x, int rows, int w) {"
        " int r = blockIdx.x; if (r >= rows) return;"
        f" for (int c = threadIdx.x; c < w; c += blockDim.x) y[{helper}(r, c, w)] ="
        f" 2.0f * x[{helper}(r, c, w)]; }}"
    )
    got = _scan(body, {"grid": ["rows"], "block": [64]})
    assert got["y"].shape == ("rows", "w") and got["x"].shape == ("rows", "w")


def test_a_helper_of_a_macro_constant_is_expanded() -> None:
    body = (
        "__global__ void k(float* y, int rows, int w) {"
        " int r = blockIdx.x; int c = threadIdx.x;"
        " if (r < rows && c < w) y[r * stride_of(w) + c] = 1.0f; }"
    )
    got = _scan(body, {"grid": ["rows"], "block": [64]})
    assert got["y"].shape == ("-1+rows+rows*w",)


@pytest.mark.parametrize("index", ["(int)half_of(i)", "i + offset_global_of()"])
def test_other_calls_stay_opaque(index: str) -> None:
    body = (
        "__device__ int offset_global_of() { return offset_global; }\n"
        "__global__ void k(float* y, int n) {"
        f" int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[{index}] = 1.0f; }}"
    )
    got = _scan(body, {"grid": ["ceil_div(n, 64)"], "block": [64]})
    assert got["y"].shape is None


@pytest.mark.parametrize(
    ("index", "shape"),
    [
        ("min(i, n - 1)", ("n",)),  # a clamp: bounded whatever i is
        ("std::min(i + 2, n - 1)", ("n",)),
        ("min(n - 1, j)", ("n",)),
        ("min(j, i)", ("n",)),  # both indices: the first, bounded by its loop
    ],
)
def test_a_minimum_is_at_most_its_arguments(index: str, shape: tuple) -> None:
    body = (
        "__global__ void k(float* y, const float* x, int n) {"
        " int i = blockIdx.x * blockDim.x + threadIdx.x;"
        f" for (int j = 0; j < n; ++j) y[{index}] += x[j]; }}"
    )
    got = _scan(body, {"grid": ["ceil_div(n, 64)"], "block": [64]})
    assert got["y"].shape == shape


def test_a_float_minimum_stays_opaque() -> None:
    body = (
        "__global__ void k(float* y, const float* x, int n) {"
        " int i = blockIdx.x * blockDim.x + threadIdx.x;"
        " y[(int)fminf(x[0], 3.0f) + i] = 1.0f; }"
    )
    got = _scan(body, {"grid": ["ceil_div(n, 64)"], "block": [64]})
    assert got["y"].shape is None
