"""split-sums: a reduction of a sum of products is the sum of one contraction per product, so
fused GEMMs (``A B^T + B A^T``, complex products on split planes) reach the tensor engine; other
sums stay one reduction."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.ir.evaluate import evaluate
from cuda2nki.ir.nodes import Reduce
from cuda2nki.ir.parser import parse
from cuda2nki.passes import PassContext, parse_pipeline, run_pipeline
from cuda2nki.passes._analysis import contractions, reductions

HEAD = (
    "kernel k(a: in float32[M, K], b: in float32[M, K], x: in float32[K], "
    "c: inout float32[M, M], y: out float32[M], "
    "M: int32, K: int32, alpha: float32, beta: float32) {\n"
)


def _kernel(stmt: str):
    return parse(HEAD + f"  reduce: {stmt};\n}}\n", "k.ir")


def _run(before, spec: str = "split-sums"):
    return run_pipeline(before, parse_pipeline(spec), PassContext())


def _inputs():
    rng = np.random.default_rng(5)
    f = np.float32
    return {
        "a": rng.standard_normal((6, 9)).astype(f),
        "b": rng.standard_normal((6, 9)).astype(f),
        "x": rng.standard_normal((9,)).astype(f),
        "c": rng.standard_normal((6, 6)).astype(f),
    }


SCALARS = {"M": 6, "K": 9, "alpha": 1.5, "beta": -0.5}

FUSED = [
    # syr2k: a scale inside each product, the transposed operands swapped in the second
    (
        "c[i, j] = c[i, j] * beta + reduce(add, k < K: alpha * a[i, k] * b[j, k] "
        "+ alpha * b[i, k] * a[j, k]) for i < M, j < M",
        2,
    ),
    # a difference of products (the real part of a complex product)
    ("c[i, j] = reduce(add, k < K: a[i, k] * a[j, k] - b[i, k] * b[j, k]) for i < M, j < M", 2),
    # three products, the middle one subtracted
    (
        "c[i, j] = reduce(add, k < K: a[i, k] * b[j, k] - b[i, k] * a[j, k] "
        "+ a[i, k] * a[j, k]) for i < M, j < M",
        3,
    ),
]


@pytest.mark.parametrize("stmt,parts", FUSED)
def test_sum_of_products_becomes_a_sum_of_contractions(stmt: str, parts: int) -> None:
    before = _kernel(stmt)
    after = _run(before, "split-sums,factor-scales")
    assert len(reductions(before.body[0].expr)) == 1
    assert len(contractions(after.body[0].expr)) == parts
    want = evaluate(before, _inputs(), SCALARS)["c"]
    got = evaluate(after, _inputs(), SCALARS)["c"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


KEPT = [
    # a row sum of two reads: two reductions would read the row twice
    "y[i] = reduce(add, k < K: a[i, k] + b[i, k]) for i < M",
    # one product and one plain read
    "y[i] = reduce(add, k < K: a[i, k] * x[k] + b[i, k]) for i < M",
    # a maximum does not distribute over a sum
    "y[i] = reduce(max, k < K: a[i, k] * x[k] + b[i, k] * x[k]) for i < M",
    # a term that is no product (the constant) keeps the loop's form
    "c[i, j] = reduce(add, k < K: 0.0 - a[i, k] * b[j, k] + b[i, k] * a[j, k]) for i < M, j < M",
]


@pytest.mark.parametrize("stmt", KEPT)
def test_other_sums_stay_one_reduction(stmt: str) -> None:
    before = _kernel(stmt)
    after = _run(before)
    assert after == before
    assert sum(isinstance(r, Reduce) for r in reductions(after.body[0].expr)) == 1
