"""A while loop that ends by stepping the variable its condition bounds
(``while (i < n) { ...; i += stride; }``) is a counted loop for the extent scan: the accesses in
its body get the bound; one that steps before using, or assigns the variable elsewhere, is not."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.extents import extents

LAUNCH = {"grid": ["ceil_div(n, 128)"], "block": [128]}


def _scan(body: str):
    src = f"__global__ void k(float* y, const float* x, int n, int m) {{ {body} }}"
    return extents(parse_source(src, "k.cu").function("k"), LAUNCH)


@pytest.mark.parametrize(
    ("body", "shapes"),
    [
        (
            "int i = blockIdx.x * blockDim.x + threadIdx.x;"
            " while (i < n) { y[i] = 2.0f * x[i]; i += blockDim.x * gridDim.x; }",
            {"y": ("n",), "x": ("n",)},
        ),
        (
            "int r = blockIdx.x; float s = 0.0f; int k = 0;"
            " while (k < m) { s += x[r * m + k]; k++; } if (r < n) y[r] = s;",
            {"y": ("n",)},
        ),
        (
            "unsigned j = threadIdx.x; while (j <= m - 1) { y[j] = x[j + 1]; j = j + 128; }",
            {"y": ("m",), "x": ("1+m",)},
        ),
        (
            "int t = threadIdx.x; while (t < n && x[t] > 0.0f) { y[t] = 0.0f; ++t; }",
            {"y": ("n",), "x": ("n",)},
        ),
    ],
    ids=["grid-stride", "row", "inclusive", "conjoined"],
)
def test_a_stepped_while_loop_bounds_its_body(body: str, shapes: dict) -> None:
    got = _scan(body)
    for name, shape in shapes.items():
        assert got[name].shape == shape, name


@pytest.mark.parametrize(
    "body",
    [
        "int i = threadIdx.x; while (i < n) { i += 2; y[i] = 1.0f; }",  # stepped before use
        "int i = threadIdx.x; while (i < n) { y[i] = 1.0f; if (x[i] > 0.f) i = 0; i += 1; }",
        "int i = threadIdx.x; do { y[i] = 1.0f; i += 128; } while (i < n);",  # runs once first
    ],
    ids=["step-first", "reset", "do-while"],
)
def test_other_while_loops_bound_nothing(body: str) -> None:
    assert _scan(body)["y"].shape is None


def test_a_pointer_the_loop_moves_stays_unknown() -> None:
    body = (
        "const float* p = x; int i = threadIdx.x; while (i < n) { y[i] = p[0]; p += m; i += 128; }"
    )
    got = _scan(body)
    assert got["y"].shape == ("n",) and got["x"].shape is None
