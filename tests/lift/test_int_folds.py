"""An int accumulator carried across a loop (``int acc = 0; acc += a[k] * w[k]``) folds like a
float one -- sum, product, max, min of data -- where it was refused as "an integer carried across
iterations"; an int that follows an extremum stays an argfold pair, and any other carried int
is still refused.  A read of a shared int element that no thread writes on a path the guards
keep away lowers to a placeholder, not an internal error."""

from __future__ import annotations

import pytest

from cuda2nki.pipeline import port_file
from tests.port.acceptance import grid_binding, port_variant, tensor_param

TAPS = """
__global__ void k(const int* x, const int* w, int* y, int n, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int acc = 0;
    for (int t = 0; t < m; ++t) {
        int at = i + t - m / 2;
        if (at >= 0 && at < n) acc += x[at] * w[t];
    }
    y[i] = acc;
}
"""
TAPS_WHILE = """
__global__ void k(const int* x, const int* w, int* y, int n, int m) {
    int i = threadIdx.x + blockDim.x * blockIdx.x;
    if (i < n) {
        int s = 7;
        int t = 0;
        while (t < m) {
            if (i + t < n) s = s + w[t] * x[i + t];
            t++;
        }
        y[i] = s;
    }
}
"""
TAPS_MIN = """
__global__ void k(const int* x, const int* w, int* y, int n, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int lo = 1 << 30;
    for (int t = 0; t < m; t++) lo = min(lo, (i + t < n ? x[i + t] : 0) - w[t]);
    y[i] = lo;
}
"""


def _binding() -> dict:
    params = {
        "x": tensor_param(["n"], "in", "int32", [-40, 40]),
        "w": tensor_param(["m"], "in", "int32", [-5, 5]),
        "y": tensor_param(["n"], "out", "int32"),
        "n": 1000,
        "m": 5,
    }
    return grid_binding(["ceil_div(n, 128)"], params, [{"n": 300, "m": 3}, {"n": 5, "m": 7}])


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("src", [TAPS, TAPS_WHILE, TAPS_MIN], ids=["sum", "while", "min"])
def test_int_accumulator_ports_through_a_recogniser(src, target, tmp_path) -> None:
    res, run, points = port_variant("stencil/int_fold", src, _binding(), target, tmp_path)
    assert not res.literal, [d.message for d in res.diagnostics]
    assert len(points) >= 2 and not run.mismatches, run.mismatches  # exact: tol 0


def test_other_carried_ints_are_still_refused(tmp_path) -> None:
    from cuda2nki.binding import binding_from_dict
    from cuda2nki.lift import lift_kernel

    src = TAPS.replace("acc += x[at] * w[t]", "acc = acc * 2 + x[at]")
    cu = tmp_path / "k.cu"
    cu.write_text(src)
    from cuda2nki.frontend import parse_source

    tu = parse_source(src, str(cu))
    b = binding_from_dict({"kernel": "k", **_binding()}, path=str(cu))
    res = lift_kernel(tu, "k", b)
    assert not res.claimed
    assert any(d.code == "C2N2011" for d in res.diagnostics), res.diagnostics


HALO = """
#define RAD 3
#define BS 32
__global__ void k(const int* x, int* y) {
    __shared__ int buf[BS + 2 * RAD];
    int g = blockIdx.x * BS + threadIdx.x + RAD;
    int l = threadIdx.x + RAD;
    buf[l] = x[g];
    if (threadIdx.x < RAD) {
        buf[l - RAD] = x[g - RAD];
        buf[l + BS] = x[g + BS];
    }
    __syncthreads();
    int s = 0;
    for (int o = -RAD; o <= RAD; o++) s += buf[l + o];
    y[g - RAD] = s;
}
void go(const int* x, int* y) { k<<<8, BS>>>(x, y); }
"""


def test_unwritten_int_shared_element_is_no_internal_error(tmp_path) -> None:
    cu = tmp_path / "halo.cu"
    cu.write_text(HALO)
    b = {
        "kernel": "k",
        "launch": {"grid": [8], "block": [32]},
        "params": {
            "x": tensor_param([262], "in", "int32"),
            "y": tensor_param([256], "out", "int32"),
        },
    }
    from cuda2nki.binding import binding_from_dict

    res = port_file(cu, binding=binding_from_dict(b, path=str(cu)))
    assert res.source is not None and not res.literal, [d.message for d in res.diagnostics]
