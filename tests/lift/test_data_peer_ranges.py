"""A value loaded from an integer input that picks an element the kernel's counted accesses also
reach (``y[row * P + label[row]]`` beside ``y[row * P + i]`` under ``i < V``) takes the counter's
range ``[0, V)``: the array gets the counted accesses' shape, the input a range in the binding."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.extents import extents
from cuda2nki.lift.infer import infer_binding

LOSS = """
__global__ void loss(float* y, float* out, const int* label, int rows, int P, int V) {
    int row = blockIdx.x;
    if (row >= rows) return;
    if (threadIdx.x == 0) out[row] = y[row * P + label[row]];
    for (int i = threadIdx.x; i < V; i += blockDim.x) y[row * P + i] = 0.5f * y[row * P + i];
}"""

PICK = """
__global__ void pick(const float* x, float* s, const int* cls, int n, int w) {
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < n) {
        int t = cls[b];
        float acc = 0.0f;
        for (int c = 0; c < w; ++c) acc += x[b * w + c];
        s[b] = acc - x[t + b * w];
    }
}"""

GRAD = """
__global__ void grad(float* g, float* picked, const long* tgt, int B, int C) {
    int r = blockIdx.x;
    const long k = tgt[r];
    for (int j = threadIdx.x; j < C; j += blockDim.x) {
        float v = g[r * C + j];
        g[r * C + j] = (j == k) ? v - 1.0f : v;
    }
    if (threadIdx.x == 0) picked[r] = g[k + C * r];
}"""


@pytest.mark.parametrize(
    ("src", "kernel", "launch", "arr", "shape", "data", "hi"),
    [
        (LOSS, "loss", {"grid": ["rows"], "block": [128]}, "y", ("-P+V+P*rows",), "label", "V"),
        (PICK, "pick", {"grid": ["ceil_div(n, 64)"], "block": [64]}, "x", ("n", "w"), "cls", "w"),
        (GRAD, "grad", {"grid": ["B"], "block": [32]}, "g", ("B", "C"), "tgt", "C"),
    ],
    ids=["loss", "pick", "grad"],
)
def test_the_value_takes_the_range_of_the_counter_it_stands_for(
    src: str, kernel: str, launch: dict, arr: str, shape: tuple, data: str, hi: str
) -> None:
    tu = parse_source(src, "k.cu")
    got = extents(tu.function(kernel), launch)
    assert got[arr].shape == shape
    assert [(r.tensor, r.lo, r.hi) for r in got[arr].ranges] == [(data, 0, hi)]


def test_the_binding_gives_the_input_the_counters_range() -> None:
    binding, _ = infer_binding(parse_source(LOSS, "k.cu"), "loss")
    assert binding["params"]["y"]["shape"] == ["-P+V+P*rows"]
    assert binding["params"]["y"]["role"] == "inout"
    assert binding["params"]["label"]["range"] == [0, "V"]


def test_a_counter_bounded_by_another_index_lends_no_range() -> None:
    """``c < b`` bounds the counter by the thread's row: no size range to lend."""
    src = """
__global__ void tri(float* x, const int* idx, int n) {
    int b = blockIdx.x;
    if (b < n) {
        for (int c = 0; c < b; ++c) x[b * n + c] = 1.0f;
        x[b * n + idx[b]] = 2.0f;
    }
}"""
    got = extents(parse_source(src, "k.cu").function("tri"), {"grid": ["n"], "block": [1]})
    assert got["x"].shape is None


def test_a_plain_store_through_the_value_is_still_a_scatter() -> None:
    """Only reads (and atomics) through data are sized: a plain store may collide."""
    src = """
__global__ void put(float* y, const int* at, int rows, int V) {
    int r = blockIdx.x;
    for (int i = threadIdx.x; i < V; i += blockDim.x) y[r * V + i] = 0.0f;
    if (threadIdx.x == 0) y[r * V + at[r]] = 1.0f;
}"""
    got = extents(parse_source(src, "k.cu").function("put"), {"grid": ["rows"], "block": [32]})
    assert got["y"].shape is None
