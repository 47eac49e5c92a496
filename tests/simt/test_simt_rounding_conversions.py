"""Conversion intrinsics with a rounding mode (``__double2int_rd``, ``__int2float_ru``,
``__ull2double_rz``, ``__double2float_rd`` ...): each rounds exactly as its suffix says."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from tests.simt.simt_helpers import run

_FLOAT = {"float": np.float32, "double": np.float64}
_INT = {"int": np.int32, "uint": np.uint32, "ll": np.int64, "ull": np.uint64}
_CTYPE = {
    "float": "float",
    "double": "double",
    "int": "int",
    "uint": "unsigned int",
    "ll": "long long",
    "ull": "unsigned long long",
}


def _step(f, dt, toward: float):
    return dt(np.nextafter(dt(f), dt(toward)))


def _float_ref(x: int | float, dt, mode: str) -> float:
    """The float of type ``dt`` that ``mode`` rounds the exact ``x`` to, found by walking."""
    exact, big = Fraction(x), Fraction(float(np.finfo(dt).max))
    if abs(exact) > big:  # beyond the largest float: the largest one or infinity
        near, far = float(np.finfo(dt).max), math.inf
        down, up = (near, far) if exact > 0 else (-far, -near)
        return {"rd": down, "ru": up}.get(mode, near if exact > 0 else -near)
    with np.errstate(over="ignore"):
        f = dt(float(x))  # a start close by
    if not np.isfinite(f):
        f = dt(np.finfo(dt).max) * np.sign(f)
    while Fraction(float(f)) > exact:
        f = _step(f, dt, -math.inf)
    while np.isfinite(_step(f, dt, math.inf)) and Fraction(float(_step(f, dt, math.inf))) <= exact:
        f = _step(f, dt, math.inf)
    down = f  # the largest float <= x
    up = down if Fraction(float(down)) == exact else _step(down, dt, math.inf)
    if mode == "rd":
        return float(down)
    if mode == "ru":
        return float(up)
    return float(down if exact >= 0 else up)  # rz


def _int_ref(x: float, it, mode: str) -> int:
    if math.isnan(x):
        return 0
    r = {"rn": round, "rz": math.trunc, "rd": math.floor, "ru": math.ceil}[mode]
    v = r(Fraction(x)) if math.isfinite(x) else (1 if x > 0 else -1) * 2**80
    info = np.iinfo(it)
    return int(min(max(v, info.min), info.max))


def _kernel(fn: str, src: str, dst: str) -> str:
    return f"""__global__ void cvt(const {_CTYPE[src]}* xs, {_CTYPE[dst]}* ys, int n) {{
    for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += blockDim.x * gridDim.x)
        ys[i] = {fn}(xs[i]);
}}
"""


_INT_SAMPLES = {
    "int": [0, 1, -1, 16777217, -16777217, 2**31 - 1, -(2**31), 123456789, -987654321],
    "uint": [0, 1, 16777217, 2**32 - 1, 2**31 + 3, 4000000001],
    "ll": [0, -5, 2**53 + 1, -(2**53 + 1), 2**63 - 1, -(2**63), 2**62 + 12345, 16777217],
    "ull": [0, 7, 2**64 - 1, 2**53 + 1, 2**63 + 2049, 16777219],
}


@pytest.mark.parametrize("mode", ["rz", "rd", "ru"])
@pytest.mark.parametrize(
    "src,dst",
    [
        ("int", "float"),
        ("uint", "float"),
        ("ll", "float"),
        ("ull", "float"),
        ("ll", "double"),
        ("ull", "double"),
    ],
)
def test_integer_to_float(src: str, dst: str, mode: str) -> None:
    xs = np.array(_INT_SAMPLES[src], _INT[src])
    fn = f"__{src}2{dst}_{mode}"
    got = run(
        _kernel(fn, src, dst),
        grid=(2,),
        block=(4,),
        xs=xs,
        ys=np.zeros(xs.size, _FLOAT[dst]),
        n=xs.size,
    )["ys"]
    want = [_float_ref(int(x), _FLOAT[dst], mode) for x in xs]
    assert [float(g) for g in got] == want, fn


_FLOAT_SAMPLES = [
    0.0,
    -0.0,
    0.5,
    1.5,
    2.5,
    -0.5,
    -2.5,
    2.7,
    -2.7,
    1e10,
    -1e10,
    3e9,
    4.2e9,
    1e19,
    2e19,
    -1e19,
    float("inf"),
    float("-inf"),
    float("nan"),
    0.49999997,
]


@pytest.mark.parametrize("mode", ["rn", "rz", "rd", "ru"])
@pytest.mark.parametrize("src", ["float", "double"])
@pytest.mark.parametrize("dst", ["int", "uint", "ll", "ull"])
def test_float_to_integer(src: str, dst: str, mode: str) -> None:
    xs = np.array(_FLOAT_SAMPLES, _FLOAT[src])
    fn = f"__{src}2{dst}_{mode}"
    got = run(
        _kernel(fn, src, dst),
        grid=(3,),
        block=(4,),
        xs=xs,
        ys=np.zeros(xs.size, _INT[dst]),
        n=xs.size,
    )["ys"]
    want = [_int_ref(float(x), _INT[dst], mode) for x in xs]
    assert [int(g) for g in got] == want, fn


@pytest.mark.parametrize("mode", ["rn", "rz", "rd", "ru"])
def test_double_to_float(mode: str) -> None:
    xs = np.array([0.1, -0.1, 1.0 / 3.0, -2.0 / 3.0, 1e300, -1e300, 1.0, 3.5e38, 1e-46], np.float64)
    got = run(
        _kernel(f"__double2float_{mode}", "double", "float"),
        grid=(1,),
        block=(16,),
        xs=xs,
        ys=np.zeros(xs.size, np.float32),
        n=xs.size,
    )["ys"]
    if mode == "rn":
        with np.errstate(over="ignore"):
            want = [float(np.float32(x)) for x in xs]
    else:
        want = [_float_ref(float(x), np.float32, mode) for x in xs]
    assert [float(g) for g in got] == want
