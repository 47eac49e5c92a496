"""Soundness and sharpness of the IR-derived error bound (see cuda2nki.ir.evaluate)."""

import ml_dtypes
import numpy as np
import pytest

from cuda2nki.ir.evaluate import analyse, error_bound, evaluate, gamma
from cuda2nki.ir.parser import parse

from .kernels import ALL, kernel

RNG = np.random.default_rng(7)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def within(approx, exact, bound):
    approx, exact = np.asarray(approx, np.float64), np.asarray(exact, np.float64)
    with np.errstate(invalid="ignore"):
        diff = np.where(approx == exact, 0.0, np.abs(approx - exact))
    return bool(np.all(diff <= bound))


def test_gamma():
    assert gamma(10, 2.0**-24) == pytest.approx(10 * 2.0**-24 / (1 - 10 * 2.0**-24))
    assert np.isinf(gamma(2**24, 2.0**-24))


@pytest.mark.parametrize("mkn", [(64, 300, 48), (16, 1024, 16)])
def test_matmul_fp32_error_within_bound_and_perturbation_exceeds(mkn):
    m, k, n = mkn
    a, b = f32(m, k), f32(k, n)
    k_ir = kernel("MATMUL")
    exact = a.astype(np.float64) @ b.astype(np.float64)
    bound = error_bound(k_ir, {"A": a, "B": b}, c=1.0)["C"]
    assert within(a @ b, exact, bound)
    # componentwise: (2 u_in + u_mul + gamma_K(u)) |A||B|
    u = 2.0**-24
    mag = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    np.testing.assert_allclose(bound, (3 * u + gamma(k, u)) * mag, rtol=1e-6)
    assert not within((a @ b) * np.float32(1 + 1e-3), exact, bound)
    # accumulating in bfloat16 is a real defect: it must not fit the fp32 tolerance
    bf = a.astype(ml_dtypes.bfloat16).astype(np.float32) @ b.astype(ml_dtypes.bfloat16).astype(
        np.float32
    )
    two_impl = error_bound(k_ir, {"A": a, "B": b}, c=2.0)["C"]
    assert not within(bf, exact, two_impl)
    # ... but it fits the bf16-input hypothesis, which is how a checker names the precision loss
    hyp = error_bound(k_ir, {"A": a, "B": b}, c=2.0, u_in=2.0**-8)["C"]
    assert within(bf, exact, hyp)
    acc = error_bound(k_ir, {"A": a, "B": b}, u_acc=2.0**-8)["C"]
    assert np.all(acc > bound) and np.all(hyp > two_impl)


def test_softmax_fp32_within_bound_and_perturbation_exceeds():
    x = (f32(64, 512) * 4).astype(np.float32)
    exact = evaluate(kernel("SOFTMAX"), {"x": x})["y"]
    bound = error_bound(kernel("SOFTMAX"), {"x": x}, c=1.0)["y"]
    e = np.exp(x - x.max(axis=1, keepdims=True))
    y32 = e / e.sum(axis=1, keepdims=True)
    assert y32.dtype == np.float32
    assert within(y32, exact, bound)
    assert not within(y32 * np.float32(1.001), exact, bound)
    assert np.all(bound < 1e-4 * np.abs(exact) + 1e-30)  # and it is not vacuous


def test_sequential_fp32_sum_within_bound():
    x = np.abs(f32(20000)) + 1
    k = kernel("TOTAL")
    exact = evaluate(k, {"x": x})["out"]
    bound = error_bound(k, {"x": x}, c=1.0)["out"]
    seq = np.cumsum(x, dtype=np.float32)[-1:]  # strictly sequential accumulation
    assert abs(float(seq[0]) - float(exact[0])) > 0  # fp32 really does lose digits here
    assert within(seq, exact, bound)
    assert not within(seq + bound * 3, exact, bound)


def test_layernorm_fp32_within_bound():
    x, g, b = f32(32, 256) * 3 + 1, f32(256), f32(256)
    x = x.astype(np.float32)
    k = kernel("LAYERNORM")
    eps = np.float32(1e-5)
    exact = evaluate(k, {"x": x, "g": g, "b": b}, {"eps": 1e-5})["y"]
    bound = error_bound(k, {"x": x, "g": g, "b": b}, {"eps": 1e-5}, c=1.0)["y"]
    n = np.float32(256)
    mu = x.sum(axis=1, keepdims=True, dtype=np.float32) / n
    var = ((x - mu) ** 2).sum(axis=1, keepdims=True, dtype=np.float32) / n
    y = (x - mu) * (np.float32(1) / np.sqrt(var + eps)) * g + b
    assert y.dtype == np.float32
    assert within(y, exact, bound)


def test_elementwise_math_within_bound():
    k = parse("""
    kernel act(x: in float32[N], y: out float32[N], N: int32) {
      map: y[i] = tanh(x[i]) * sigmoid(x[i]) + exp(x[i] * 0.5) - sqrt(abs(x[i])) for i < N;
    }""")
    x = f32(5000) * 3
    exact = evaluate(k, {"x": x})["y"]
    bound = error_bound(k, {"x": x}, c=1.0)["y"]
    sig = np.float32(1) / (np.float32(1) + np.exp(-x))
    y = np.tanh(x) * sig + np.exp(x * np.float32(0.5)) - np.sqrt(np.abs(x))
    assert y.dtype == np.float32
    assert within(y, exact, bound)


@pytest.mark.parametrize("name", sorted(set(ALL) - {"HISTOGRAM"}))
def test_declared_mode_lies_within_the_bound_of_every_kernel(name):
    k = kernel(name)
    inputs, scalars = {}, {"alpha": 1.5, "eps": 1e-5, "scale": 0.125, "B": 8}
    dims = {"N": 40, "R": 6, "C": 33, "M": 9, "K": 70, "V": 12, "D": 5, "S": 4, "T": 6}
    for t in k.inputs:
        shape = tuple(dims[s.name] for s in t.shape)
        if t.dtype.startswith("int"):
            inputs[t.name] = RNG.integers(0, dims.get("V", 8), size=shape).astype(t.dtype)
        else:
            inputs[t.name] = f32(*shape)
    scalars.update({k_: v for k_, v in dims.items() if k_ in k.scalars})
    exact = analyse(k, inputs, scalars)
    declared = evaluate(k, inputs, scalars, mode="declared")
    for out in exact.values:
        assert within(declared[out], exact.values[out], exact.bound[out]), out


# ---------------------------------------------------------------- property: random elementwise math

from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from cuda2nki.ir import nodes as n  # noqa: E402
from cuda2nki.ir.ops import Op  # noqa: E402

_UNARY = [
    Op.EXP,
    Op.TANH,
    Op.SIGMOID,
    Op.SQRT,
    Op.ABS,
    Op.NEG,
    Op.SQUARE,
    Op.RSQRT,
    Op.LOG,
    Op.SIN,
    Op.COS,
    Op.RECIPROCAL,
    Op.RELU,
    Op.GELU_TANH,
    Op.SILU,
    Op.ERF,
    Op.ATAN,
]
_BINARY = [Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.MAX, Op.MIN]
_LEAVES = st.sampled_from([n.Read("x", ("i",)), n.Read("y", ("i",)), n.Lit(0.75), n.Lit(-1.5)])


def _elementwise():
    def extend(child):
        return st.one_of(
            st.builds(n.Unary, st.sampled_from(_UNARY), child),
            st.builds(n.Binary, st.sampled_from(_BINARY), child, child),
            st.builds(n.Select, st.builds(n.Binary, st.just(Op.GT), child, child), child, child),
        )

    return st.recursive(_LEAVES, extend, max_leaves=6)


def _kernel(expr, reduce=False):
    body = n.Reduce(Op.ADD, (n.Axis("i", "N", "reduction"),), expr, "float32") if reduce else expr
    domain = n.Domain(()) if reduce else n.Domain((n.Axis("i", "N"),))
    target = n.Access("z", (0,) if reduce else ("i",))
    return n.Kernel(
        "prop",
        (
            n.TensorDecl("x", ("N",), "float32", "in"),
            n.TensorDecl("y", ("N",), "float32", "in"),
            n.TensorDecl("z", (1,) if reduce else ("N",), "float32", "out"),
            n.ScalarDecl("N"),
        ),
        (n.Compute(target, domain, body),),
    )


_X = np.random.default_rng(11).uniform(-3, 3, 400).astype(np.float32)
_Y = np.random.default_rng(12).uniform(0.1, 4, 400).astype(np.float32)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_elementwise(), st.booleans())
def test_declared_fp32_evaluation_lies_within_the_bound(expr, reduce):
    k = _kernel(expr, reduce)
    inputs = {"x": _X, "y": _Y}
    an = analyse(k, inputs)
    exact = an.values["z"]
    assume(np.all(np.isfinite(exact)) and np.all(np.abs(exact) < 1e30))
    declared = evaluate(k, inputs, mode="declared")["z"]
    assert within(declared, exact, an.bound["z"])


def test_float_binned_histogram_bound_counts_only_borderline_samples():
    k = parse("""
    kernel hist(x: in float32[N], h: out int32[B], N: int32, B: int32) {
      scatter: h[$(cast(x[i] * 8.0, int32))] add= 1 for i < N;
    }""")
    x = (np.arange(4000, dtype=np.float32) + 0.5) / 4000  # well inside the bins
    an = analyse(k, {"x": x}, {"B": 8})
    np.testing.assert_array_equal(an.values["h"], np.full(8, 500))
    assert np.all(an.bound["h"] == 0)
    x[:3] = np.float32(0.25)  # exactly on a bin edge: the bin may move in a rounding
    an = analyse(k, {"x": x}, {"B": 8})
    assert np.all(an.bound["h"] == 3)  # each bin may gain or lose the three edge samples


def test_regressions_found_by_the_property():
    # a contraction with an exactly-zero factor; a select whose untaken branch is NaN
    zero = n.Binary(Op.MUL, n.Read("x", ("i",)), n.Binary(Op.SUB, n.Lit(0.75), n.Lit(0.75)))
    for mode in ("fp64", "declared"):
        assert evaluate(_kernel(zero, True), {"x": _X, "y": _Y}, mode=mode)["z"][0] == 0
    x = n.Read("x", ("i",))
    sel = n.Select(n.Binary(Op.GT, x, x), n.Unary(Op.SQRT, x), x)
    an = analyse(_kernel(sel), {"x": _X, "y": _Y})
    assert not np.isnan(an.bound["z"]).any()


@pytest.mark.parametrize(
    ("dtype", "spelling"),
    [
        ("int32", "A[i, k] * B[k, j]"),
        ("int32", "B[k, j] * A[i, k]"),
        ("uint32", "A[i, k] * B[k, j]"),
        ("int64", "A[i, k] * B[k, j]"),
    ],
)
def test_an_integer_contraction_is_one_einsum_exact_modulo_its_width(
    dtype: str, spelling: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An integer sum of products wraps the same in any order: it is evaluated (and bounded,
    exactly: 0) as one contraction, not element block by element block, at any size."""
    from cuda2nki.ir import evaluate as ev

    k_ir = parse(
        f"kernel imm(A: in {dtype}[M, K], B: in {dtype}[K, N], C: out {dtype}[M, N],\n"
        "            M: int32, N: int32, K: int32) {\n"
        f"  contract: C[i, j] = reduce(add, k < K: {spelling}; acc {dtype}) for i < M, j < N;\n"
        "}\n"
    )

    def chunked(*_a: object, **_k: object) -> None:
        raise AssertionError("an integer contraction went through the chunked reduction")

    monkeypatch.setattr(ev._Evaluator, "_reduce_chunked", chunked)
    info = np.iinfo(np.dtype(dtype))
    a = RNG.integers(info.min, info.max, size=(9, 70), dtype=dtype, endpoint=True)
    b = RNG.integers(info.min, info.max, size=(70, 11), dtype=dtype, endpoint=True)
    got = evaluate(k_ir, {"A": a, "B": b})["C"]
    # the wrapped sum, computed with Python integers
    width = 2 ** (8 * np.dtype(dtype).itemsize)
    exact = [
        [sum(int(a[i, k]) * int(b[k, j]) for k in range(70)) for j in range(11)] for i in range(9)
    ]
    wrapped = np.array(exact, dtype=object) % width
    if info.min < 0:
        wrapped = np.where(wrapped > info.max, wrapped - width, wrapped)
    assert got.dtype == np.dtype(dtype)
    assert np.array_equal(got.astype(object), wrapped)
    assert not np.any(error_bound(k_ir, {"A": a, "B": b})["C"])
