"""factor-scales: a scalar factor of every term of a sum moves in front of the sum (one multiply
per result), so a GEMM written with the scale inside the product is a bare contraction."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.ir.evaluate import error_bound, evaluate
from cuda2nki.ir.nodes import Binary, Param, Reduce
from cuda2nki.ir.ops import Op
from cuda2nki.ir.parser import parse
from cuda2nki.passes import PassContext, parse_pipeline, run_pipeline
from cuda2nki.passes._analysis import contraction

HEAD = (
    "kernel k(a: in float32[M, K], b: in float32[K, N], c: inout float32[M, N], "
    "M: int32, N: int32, K: int32, alpha: float32, beta: float32) {\n"
)


def _kernel(stmt: str):
    return parse(HEAD + f"  contract: {stmt};\n}}\n", "k.ir")


def _run(before):
    return run_pipeline(before, parse_pipeline("factor-scales"), PassContext())


def _inputs():
    rng = np.random.default_rng(3)
    f = np.float32
    return {
        "a": rng.standard_normal((5, 7)).astype(f),
        "b": rng.standard_normal((7, 6)).astype(f),
        "c": rng.standard_normal((5, 6)).astype(f),
    }


SCALED = [
    "c[i, j] = c[i, j] * beta + reduce(add, k < K: alpha * a[i, k] * b[k, j]) for i < M, j < N",
    "c[i, j] = reduce(add, k < K: a[i, k] * b[k, j] * alpha) for i < M, j < N",
    "c[i, j] = reduce(add, k < K: a[i, k] * (alpha * 2.0) * b[k, j]) for i < M, j < N",
    "c[i, j] = reduce(add, k < K: (alpha * a[i, k]) * (b[k, j] * beta)) for i < M, j < N",
]


@pytest.mark.parametrize("stmt", SCALED)
def test_scales_leave_the_sum_and_leave_a_contraction(stmt: str) -> None:
    before = _kernel(stmt)
    assert contraction(before.body[0].expr) is None
    after = _run(before)
    r = contraction(after.body[0].expr)
    assert r is not None, stmt
    assert not any(isinstance(x, Param) for x in _factors(r.body))
    scalars = {"M": 5, "N": 6, "K": 7, "alpha": 1.5, "beta": -0.5}
    want = evaluate(before, _inputs(), scalars)["c"]
    got = evaluate(after, _inputs(), scalars)["c"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "stmt",
    [
        # the factor moves with the reduced axis
        "c[i, j] = reduce(add, k < K: a[i, k] * b[k, j] * a[j, k]) for i < M, j < N",
        # not a sum: a scale of a maximum would need the scale's sign
        "c[i, j] = reduce(max, k < K: alpha * a[i, k] * b[k, j]) for i < M, j < N",
        # a per-row read is the other layouts' business
        "c[i, j] = reduce(add, k < K: c[i, j] * a[i, k]) for i < M, j < N",
        # nothing but the scale: nothing left to sum
        "c[i, j] = reduce(add, k < K: alpha * beta) for i < M, j < N",
    ],
)
def test_sums_without_an_invariant_scalar_factor_stay(stmt: str) -> None:
    before = _kernel(stmt)
    assert _run(before) == before


def test_a_value_added_to_a_sum_widens_its_bound_as_a_starting_value() -> None:
    """CUDA accumulating into the output (``c *= beta; for k: c += ...``) adds every term to
    the scaled ``c``: the bound covers a large ``c`` whatever the association."""
    k = _kernel("c[i, j] = c[i, j] * beta + reduce(add, k < K: a[i, k] * b[k, j]) for i < M, j < N")
    inputs = _inputs()
    inputs["c"][:] = 1e6
    scalars = {"M": 5, "N": 6, "K": 7, "alpha": 1.0, "beta": 1.0}
    bound = error_bound(k, inputs, scalars)["c"]
    assert np.all(bound >= 7 * 2.0**-24 * 1e6)


def test_a_scale_that_widens_narrow_products_stays() -> None:
    """bf16 operands times an fp32 scale multiply in fp32; the bare product would be bf16."""
    head = (
        "kernel k(a: in bfloat16[M, K], b: in bfloat16[K, N], c: out float32[M, N], "
        "M: int32, N: int32, K: int32, alpha: float32) {\n"
    )
    stmt = "c[i, j] = reduce(add, k < K: alpha * a[i, k] * b[k, j]; acc float32) for i < M, j < N"
    before = parse(head + f"  contract: {stmt};\n}}\n", "k.ir")
    assert _run(before) == before


def _factors(e):
    if isinstance(e, Binary) and e.op == Op.MUL:
        return _factors(e.a) + _factors(e.b)
    return [e]


def test_reduce_type_is_kept() -> None:
    after = _run(_kernel(SCALED[1]))
    assert isinstance(after.body[0].expr, Binary)
    assert isinstance(after.body[0].expr.b, Reduce)
