"""A loop or guard that bounds a counter plus an offset (``for (o = 0; o + step <= n; o += step)``,
``while``-free counted loops over ``r + m <= n``) bounds the counter by ``n`` less the offset, so the accesses it covers get a
shape rather than none."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.extents import extents


def _scan(body: str, launch: dict | None = None):
    src = f"__global__ void k(float* y, const float* x, int n, int m) {{ {body} }}"
    tu = parse_source(src, "k.cu")
    return extents(tu.function("k"), launch or {"grid": [1], "block": [1]})


@pytest.mark.parametrize(
    "loop",
    [
        "for (int o = 0; o + 4 <= n; o += 4)",
        "for (unsigned o = 0; o + 4 <= n; o += 4)",
        "for (int o = 0; 4 + o <= n; o += 4)",
        "for (int o = 0; n >= o + 4; o += 4)",
        "for (int o = 0; o + 3 < n; o += 4)",
    ],
)
def test_a_loop_bounding_its_counter_plus_a_constant(loop: str) -> None:
    """``o + 4 <= n`` bounds ``o`` below ``n - 3``."""
    got = _scan(f"{loop} {{ y[o] = x[o] + x[o + 3]; }}")
    assert got["x"].shape == ("n",) and got["x"].role == "in"
    # o runs below n - 3 in steps of 4: y covers the steps whole, x[o + 3] reaches n - 1
    assert got["y"].shape == ("n",) and got["y"].role == "out"


def test_a_loop_bounding_its_counter_plus_a_size() -> None:
    got = _scan("for (int r = 0; r + m <= n; ++r) y[r] = x[r + m - 1];")
    assert got["y"].shape == ("1-m+n",)
    assert got["x"].shape == ("n",)


def test_two_counters_in_one_bound_stay_a_bound_on_their_sum() -> None:
    got = _scan("for (int a = 0; a < n; ++a) for (int b = 0; a + b < n; ++b) y[a + b] = x[a];")
    assert got["y"].shape == ("n",) and got["x"].shape == ("n",)
