"""Every operator of the evaluator against an independent NumPy/math spelling, both modes."""

import math

import numpy as np
import pytest

from cuda2nki.ir.evaluate import evaluate
from cuda2nki.ir.parser import parse

RNG = np.random.default_rng(99)
X = RNG.uniform(-3, 3, 64).astype(np.float32)
Y = RNG.uniform(0.5, 2, 64).astype(np.float32)
IA = RNG.integers(-100, 100, 64).astype(np.int32)
IB = RNG.integers(1, 9, 64).astype(np.int32) * np.where(RNG.random(64) < 0.5, -1, 1).astype(
    np.int32
)

FLOAT_CASES = {
    "neg(x[i])": lambda x, y: -x,
    "abs(x[i])": np.abs,
    "sign(x[i])": np.sign,
    "exp(x[i])": np.exp,
    "exp2(x[i])": np.exp2,
    "log(y[i])": lambda x, y: np.log(y),
    "log2(y[i])": lambda x, y: np.log2(y),
    "log1p(y[i])": lambda x, y: np.log1p(y),
    "expm1(x[i])": np.expm1,
    "sqrt(y[i])": lambda x, y: np.sqrt(y),
    "rsqrt(y[i])": lambda x, y: 1 / np.sqrt(y),
    "reciprocal(y[i])": lambda x, y: 1 / y,
    "square(x[i])": lambda x, y: x * x,
    "sin(x[i])": np.sin,
    "cos(x[i])": np.cos,
    "tan(x[i])": np.tan,
    "atan(x[i])": np.arctan,
    "tanh(x[i])": np.tanh,
    "sigmoid(x[i])": lambda x, y: 1 / (1 + np.exp(-x)),
    "relu(x[i])": lambda x, y: np.maximum(x, 0),
    "gelu(x[i])": lambda x, y: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2))),
    "gelu_tanh(x[i])": lambda x, y: (
        0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    ),
    "silu(x[i])": lambda x, y: x / (1 + np.exp(-x)),
    "erf(x[i])": lambda x, y: np.vectorize(math.erf)(x),
    "floor(x[i])": np.floor,
    "ceil(x[i])": np.ceil,
    "trunc(x[i])": np.trunc,
    "round(x[i])": lambda x, y: np.sign(x) * np.floor(np.abs(x) + 0.5),
    "copy(x[i])": lambda x, y: x,
    "x[i] + y[i]": lambda x, y: x + y,
    "x[i] - y[i]": lambda x, y: x - y,
    "x[i] * y[i]": lambda x, y: x * y,
    "x[i] / y[i]": lambda x, y: x / y,
    "x[i] % y[i]": np.fmod,
    "pow(y[i], x[i])": lambda x, y: y**x,
    "max(x[i], y[i])": np.maximum,
    "min(x[i], y[i])": np.minimum,
    "atan2(x[i], y[i])": np.arctan2,
    "select(x[i] > 0.0, x[i], y[i])": lambda x, y: np.where(x > 0, x, y),
    "cast(x[i] > y[i], float32)": lambda x, y: (x > y).astype(float),
    "cast(cast(x[i], int32), float32)": lambda x, y: np.trunc(x),
}


def _run(expr: str, dtype: str, inputs: dict, mode: str):
    k = parse(f"""
    kernel op(x: in {dtype}[N], y: in {dtype}[N], z: out {"float32" if dtype == "float32" else "int32"}[N],
              N: int32) {{
      map: z[i] = {expr} for i < N;
    }}""")
    return evaluate(k, inputs, mode=mode)["z"]


@pytest.mark.parametrize("expr", sorted(FLOAT_CASES))
def test_float_ops(expr):
    fn = FLOAT_CASES[expr]
    xd, yd = X.astype(np.float64), Y.astype(np.float64)
    ref = fn(xd, yd)
    got = _run(expr, "float32", {"x": X, "y": Y}, "fp64")
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    dec = _run(expr, "float32", {"x": X, "y": Y}, "declared")
    assert dec.dtype == np.float32
    np.testing.assert_allclose(dec, ref, rtol=2e-6, atol=2e-6)


INT_CASES = {
    "x[i] / y[i]": lambda a, b: np.trunc(a / b).astype(int),
    "x[i] % y[i]": lambda a, b: a - np.trunc(a / b).astype(int) * b,
    "x[i] & y[i]": np.bitwise_and,
    "x[i] | y[i]": np.bitwise_or,
    "x[i] ^ y[i]": np.bitwise_xor,
    "x[i] << 3": lambda a, b: a * 8,
    "x[i] >> 2": lambda a, b: np.floor(a / 4).astype(int),
    "bitnot(x[i])": lambda a, b: -a - 1,
    "cast(lnot(x[i]), int32)": lambda a, b: (a == 0).astype(int),
    "cast(x[i] < y[i] && x[i] > 0, int32)": lambda a, b: ((a < b) & (a > 0)).astype(int),
    "cast(x[i] == y[i] || x[i] != 0, int32)": lambda a, b: ((a == b) | (a != 0)).astype(int),
    "max(x[i], y[i])": np.maximum,
    "abs(x[i])": np.abs,
}


@pytest.mark.parametrize("expr", sorted(INT_CASES))
@pytest.mark.parametrize("mode", ["fp64", "declared"])
def test_int_ops_follow_c(expr, mode):
    got = _run(expr, "int32", {"x": IA, "y": IB}, mode)
    ref = INT_CASES[expr](IA.astype(np.int64), IB.astype(np.int64))
    np.testing.assert_array_equal(got.astype(np.int64), ref)


def test_reductions_scans_and_where():
    k = parse("""
    kernel r(x: in float32[R, C], mx: out float32[R], pr: out float32[R], cnt: out int32[R],
             two: out float32[1], ex: out float32[R, C], R: int32, C: int32) {
      reduce: mx[i] = reduce(min, j < C: x[i, j]) for i < R;
      reduce: pr[i] = reduce(mul, j < C: x[i, j]; where x[i, j] > 0.0) for i < R;
      reduce: cnt[i] = reduce(add, j < C: cast(x[i, j] > 0.0, int32)) for i < R;
      reduce: two[0] = reduce(add, i < R, j < C: x[i, j] * x[i, j]);
      scan: ex[i, j] = scan(mul, j: x[i, j]; exclusive) for i < R, scan j < C;
    }""")
    x = RNG.uniform(-1.5, 1.5, (5, 7)).astype(np.float32)
    xd = x.astype(np.float64)
    out = evaluate(k, {"x": x})
    np.testing.assert_allclose(out["mx"], xd.min(1))
    np.testing.assert_allclose(out["pr"], np.where(xd > 0, xd, 1).prod(1), rtol=1e-12)
    np.testing.assert_array_equal(out["cnt"], (xd > 0).sum(1))
    np.testing.assert_allclose(out["two"], [(xd * xd).sum()], rtol=1e-12)
    excl = np.concatenate([np.ones((5, 1)), np.cumprod(xd, 1)[:, :-1]], axis=1)
    np.testing.assert_allclose(out["ex"], excl, rtol=1e-12)


def test_nested_reduction_and_chunked_path(monkeypatch):
    import cuda2nki.ir.evaluate as ev

    monkeypatch.setattr(ev, "CHUNK_ELEMENTS", 64)  # force many chunks
    k = parse("""
    kernel n(x: in float32[R, C], y: out float32[1], R: int32, C: int32) {
      reduce: y[0] = reduce(max, i < R: reduce(add, j < C: abs(x[i, j])));
    }""")
    x = RNG.standard_normal((40, 30)).astype(np.float32)
    for mode in ("fp64", "declared"):
        got = evaluate(k, {"x": x}, mode=mode)["y"]
        np.testing.assert_allclose(got, [np.abs(x.astype(np.float64)).sum(1).max()], rtol=1e-6)
