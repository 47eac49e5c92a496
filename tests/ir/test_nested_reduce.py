"""Reductions nested in another reduction's body are evaluated once per their own free indices.

The reference is the naive nested evaluation: every reduction evaluated afresh wherever it
occurs, its chunks sized by the whole frame around it (what the evaluator did before reductions
were kept per statement).  The values, bounds, magnitudes, reduction lengths and accumulation
dtypes must be bit-identical to it wherever no reduction is split into chunks (chunks are sized
by a reduction's own free indices now, by the whole frame around it before)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.ir import evaluate as ev
from cuda2nki.ir import evalvalues as evv
from cuda2nki.ir import nodes as n
from cuda2nki.ir.ops import Op
from cuda2nki.ir.parser import parse


class _Naive(ev._Evaluator):
    """Every reduction evaluated where it occurs, chunked by the whole frame's shape."""

    def x_Reduce(self, e: n.Reduce, frame: evv._Frame) -> evv.Val:
        return self._reduce(e, frame, None)


def _run(cls: type, kernel: n.Kernel, inputs: dict, mode: str, scalars: dict | None = None) -> Any:
    """(outputs or analysis fields) of ``kernel``, or the diagnostic code it stops with."""
    scalars = scalars or {}
    try:
        if mode == "analyse":
            e = cls(kernel, inputs, scalars, False, True)
        else:
            e = cls(kernel, inputs, scalars, mode == "declared", False)
        e.run()
    except DiagnosticError as exc:
        return exc.diagnostic.code
    outs = [t.name for t in kernel.outputs]
    got = {o: e.arrays[o] for o in outs}
    if mode == "analyse":
        for o in outs:
            shape = e.arrays[o].shape
            got[o + ".e"] = np.broadcast_to(e.errs[o], shape)
            got[o + ".m"] = np.broadcast_to(e.mags[o], shape)
            got[o + ".k"] = e.ks.get(o, 0)
            got[o + ".acc"] = e.accs.get(o)
    return got


@contextmanager
def _chunks(elements: int) -> Iterator[None]:
    saved = ev.CHUNK_ELEMENTS
    ev.CHUNK_ELEMENTS = elements
    try:
        yield
    finally:
        ev.CHUNK_ELEMENTS = saved


def _same(kernel: n.Kernel, inputs: dict, scalars: dict | None = None) -> None:
    """Bit-identical to the naive nesting where no reduction is split into chunks."""
    with _chunks(1 << 60):
        for mode in ("fp64", "declared", "analyse"):
            new = _run(ev._Evaluator, kernel, inputs, mode, scalars)
            old = _run(_Naive, kernel, inputs, mode, scalars)
            if isinstance(old, str) or isinstance(new, str):
                assert new == old, mode
                continue
            assert new.keys() == old.keys()
            for key, want in old.items():
                if isinstance(want, np.ndarray):
                    np.testing.assert_array_equal(new[key], want, err_msg=f"{mode} {key}")
                    assert new[key].dtype == want.dtype, (mode, key)
                else:
                    assert new[key] == want, (mode, key)


def _close(kernel: n.Kernel, inputs: dict, scalars: dict | None = None) -> None:
    """Where reductions are split into chunks, the chunk boundaries differ from the naive
    nesting's (they follow a reduction's own free indices, not the frame around it): the float64
    oracle and its bound are equal up to the order of float64 operations.  Relative to the largest
    element, as a sum cancels; a bound more loosely, as its rules cancel (``hi - lo`` of a product,
    ``exp(x + e) - exp(x)``), which turns an ulp of ``x`` into 1e-9 of the bound."""
    for mode in ("fp64", "analyse"):
        new = _run(ev._Evaluator, kernel, inputs, mode, scalars)
        old = _run(_Naive, kernel, inputs, mode, scalars)
        if isinstance(old, str) or isinstance(new, str):
            assert new == old, mode
            continue
        for key, want in old.items():
            if not isinstance(want, np.ndarray):
                assert new[key] == want, (mode, key)
                continue
            finite = np.abs(want[np.isfinite(want)]).astype(np.float64)
            scale = float(finite.max()) if finite.size else 0.0
            rtol = 1e-6 if key.endswith((".e", ".m")) else 1e-10
            np.testing.assert_allclose(
                new[key], want, rtol=rtol, atol=1e-12 * scale, err_msg=f"{mode} {key}"
            )


# ---------------------------------------------------------------- random nested reductions

R, C = 5, 7
_X = np.random.default_rng(3).uniform(-2, 2, (R, C)).astype(np.float32)
_Y = np.random.default_rng(4).uniform(0.25, 2, (R, C)).astype(np.float32)
_W = np.random.default_rng(5).uniform(-1, 1, (C,)).astype(np.float32)
_REDUCE_OPS = [Op.ADD, Op.MAX, Op.MIN, Op.MUL]
_UNARY = [Op.EXP, Op.TANH, Op.ABS, Op.NEG, Op.SQUARE]
_BINARY = [Op.ADD, Op.SUB, Op.MUL, Op.MAX, Op.DIV]


@st.composite
def _expr(draw: Any, cols: tuple[str, ...], depth: int, triangular: bool = True) -> n.Expr:
    """A float expression over row ``i`` and the column variables ``cols`` in scope; reductions
    over a full row or (``triangular``) up to a variable in scope."""
    kinds = ["read", "lit", "index"] + (["unary", "binary", "reduce", "reduce"] if depth else [])
    kind = draw(st.sampled_from(kinds))
    col = n.Sym(draw(st.sampled_from(cols)))
    if kind == "read":
        which = draw(st.sampled_from(["x", "y", "w"]))
        return n.Read(which, (col,) if which == "w" else (n.Sym("i"), col))
    if kind == "lit":
        return n.Lit(draw(st.sampled_from([0.5, -1.25, 2.0])))
    if kind == "index":
        return n.IndexValue(col, "float32")
    if kind == "unary":
        return n.Unary(draw(st.sampled_from(_UNARY)), draw(_expr(cols, depth - 1, triangular)))
    if kind == "binary":
        op = draw(st.sampled_from(_BINARY))
        a, b = draw(_expr(cols, depth - 1, triangular)), draw(_expr(cols, depth - 1, triangular))
        return n.Binary(op, a, b)
    var = f"r{depth}_{len(cols)}"
    extent: n.SizeExpr = n.Sym("C")
    if triangular and draw(st.booleans()):  # masked per element beyond the variable in scope
        extent = n.Add(col, n.Const(1))
    body = draw(_expr((*cols, var), depth - 1, triangular))
    where = None
    if draw(st.booleans()):
        where = n.Binary(Op.GT, n.Read("y", (n.Sym("i"), n.Sym(var))), n.Lit(0.8))
    op = draw(st.sampled_from(_REDUCE_OPS))
    return n.Reduce(op, (n.Axis(var, extent, "reduction"),), body, "float32", where)


def _kernel(expr: n.Expr) -> n.Kernel:
    return n.Kernel(
        "nested",
        (
            n.TensorDecl("x", ("R", "C"), "float32", "in"),
            n.TensorDecl("y", ("R", "C"), "float32", "in"),
            n.TensorDecl("w", ("C",), "float32", "in"),
            n.TensorDecl("z", ("R", "C"), "float32", "out"),
            n.ScalarDecl("R"),
            n.ScalarDecl("C"),
        ),
        (
            n.Compute(
                n.Access("z", ("i", "j")), n.Domain((n.Axis("i", "R"), n.Axis("j", "C"))), expr
            ),
        ),
    )


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_expr(("j",), 4))
def test_random_nested_reductions_evaluate_as_the_naive_nesting(expr: n.Expr) -> None:
    _same(_kernel(expr), {"x": _X, "y": _Y, "w": _W})


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_expr(("j",), 3, triangular=False))
def test_chunked_nested_reductions_agree_with_the_naive_nesting(expr: n.Expr) -> None:
    # (a triangular reduction's bound takes gamma of its longest row in the chunk, so it depends
    # on how the reductions around it are chunked, here as in the naive nesting: not compared)
    with _chunks(16):
        _close(_kernel(expr), {"x": _X, "y": _Y, "w": _W})


# ---------------------------------------------------------------- work done per statement

SOFTMAX = """
kernel softmax(x: in float32[N, C], y: out float32[N, C], N: int32, C: int32) {
  softmax: y[i, j] = exp(x[i, j] - reduce(max, k < C: x[i, k]))
      / reduce(add, l < C: exp(x[i, l] - reduce(max, m < C: x[i, m])); acc float32)
      for i < N, j < C;
}"""


@pytest.mark.parametrize("analysis", [False, True])
def test_a_row_max_inside_a_row_sum_is_evaluated_once(monkeypatch, analysis: bool) -> None:
    """The row max inside ``sum(exp(x - max(x)))`` does not depend on the sum's variable: it is
    reduced once, not once per chunk of the sum (chunks are sized by the rows alone)."""
    k = parse(SOFTMAX)
    x = np.random.default_rng(0).standard_normal((4, 64)).astype(np.float32)
    monkeypatch.setattr(ev, "CHUNK_ELEMENTS", 4096)
    blocks = []
    reduce_block = ev._Evaluator._reduce_block

    def counted(self, e, f, m, acc, limits):
        blocks.append(e.op)
        return reduce_block(self, e, f, m, acc, limits)

    monkeypatch.setattr(ev._Evaluator, "_reduce_block", counted)
    if analysis:
        got = ev.analyse(k, {"x": x}).values["y"]
    else:
        got = ev.evaluate(k, {"x": x})["y"]
    xd = x.astype(np.float64)
    e = np.exp(xd - xd.max(axis=1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=1, keepdims=True), rtol=1e-14)
    assert blocks == [Op.MAX, Op.ADD, Op.MAX], blocks


def test_a_reduction_over_the_enclosing_variable_is_evaluated_per_value_of_it() -> None:
    # the inner sum reads the outer reduction's variable l: one value per l, not one for all
    k = parse("""
    kernel k(x: in float32[N, C], y: out float32[N], N: int32, C: int32) {
      reduce: y[i] = reduce(max, l < C: reduce(add, m < l + 1: x[i, m]; acc float32)) for i < N;
    }""")
    x = np.random.default_rng(1).standard_normal((3, 9)).astype(np.float32)
    got = ev.evaluate(k, {"x": x})["y"]
    np.testing.assert_allclose(got, np.cumsum(x.astype(np.float64), axis=1).max(axis=1))
    _same(k, {"x": x})


def test_one_value_is_kept_per_reduction(monkeypatch) -> None:
    # the inner sum changes with each chunk of l: the values of the chunks passed are not kept
    k = parse("""
    kernel k(x: in float32[N, C], y: out float32[N], N: int32, C: int32) {
      reduce: y[i] = reduce(max, l < C: reduce(add, m < l + 1: x[i, m]; acc float32)) for i < N;
    }""")
    x = np.random.default_rng(2).standard_normal((3, 40)).astype(np.float32)
    monkeypatch.setattr(ev, "CHUNK_ELEMENTS", 8)
    kept = []
    reduce = ev._Evaluator._reduce

    def counted(self, e, frame, names):
        kept.append(len(self.reduced))
        return reduce(self, e, frame, names)

    monkeypatch.setattr(ev._Evaluator, "_reduce", counted)
    got = ev.evaluate(k, {"x": x})["y"]
    np.testing.assert_allclose(got, np.cumsum(x.astype(np.float64), axis=1).max(axis=1))
    assert len(kept) > 10 and max(kept) <= 2, kept


def test_free_indices_of_a_reduction() -> None:
    x_im = n.Read("x", (n.Sym("i"), n.Sym("m")))
    inner = n.Reduce(Op.MAX, (n.Axis("m", "C", "reduction"),), x_im)
    assert evv._free_vars(inner) == {"i", "C"}
    tri = n.Reduce(Op.ADD, (n.Axis("m", n.Add(n.Sym("l"), 1), "reduction"),), x_im)
    assert evv._free_vars(tri) == {"i", "l"}
    scan = n.Reduce(Op.ADD, (n.Axis("m", "C", "reduction"),), n.Scan(Op.ADD, "j", x_im))
    assert evv._free_vars(scan) is None  # a scan spans the whole frame
    carry = n.Reduce(Op.ADD, (n.Axis("m", "C", "reduction"),), n.Carry("v"))
    assert evv._free_vars(carry) is None  # an enclosing iteration's value
    own = n.Iterate(
        ("v",), ("float32",), (x_im,), (n.Binary(Op.MUL, n.Carry("v"), n.Param("a")),),
        n.Lit(True, "bool"), n.Const(3), "v",
    )  # fmt: skip
    assert evv._free_vars(n.Reduce(Op.ADD, (n.Axis("m", "C", "reduction"),), own)) == {
        "i",
        "a",
        "C",
    }


# ---------------------------------------------------------------- corpus kernels

ROOT = Path(__file__).resolve().parents[2]
#: kernels with nested or several reductions compared in the default run; the rest under -m slow
SAMPLE = {
    "norm/softmax_naive",
    "norm/softmax_online",
    "norm/causal_softmax_warp",
    "norm/layernorm",
    "misc/cross_entropy",
}
KERNELS = sorted(p for p in (ROOT / "corpus").glob("*/*.cu") if p.parent.name != "refuse")


def _has_reduce(node: Any) -> bool:
    if isinstance(node, n.Reduce):
        return True
    if isinstance(node, tuple):
        return any(_has_reduce(x) for x in node)
    fields = getattr(node, "__dataclass_fields__", None)
    return bool(fields) and any(_has_reduce(getattr(node, f)) for f in fields if f != "loc")


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(
            p,
            id=f"{p.parent.name}/{p.stem}",
            marks=() if f"{p.parent.name}/{p.stem}" in SAMPLE else pytest.mark.slow,
        )
        for p in KERNELS
    ],
)
def test_corpus_intents_evaluate_as_the_naive_nesting(path: Path) -> None:
    from cuda2nki.binding import generate_inputs, load_binding
    from cuda2nki.frontend import parse_file
    from cuda2nki.lift import lift_kernel

    binding = load_binding(path.with_suffix(".toml"))
    tu = parse_file(path)
    res = lift_kernel(tu, binding.kernel or tu.kernels[0].name, binding)
    if not res.claimed or res.kernel_ir is None:
        pytest.skip("not lifted")
    k = res.kernel_ir
    if not _has_reduce(k.body):
        pytest.skip("no reduction")
    resolved = binding.resolve()
    arrays = generate_inputs(resolved, seed=0)
    inputs = {}
    for t in k.params:
        if isinstance(t, n.TensorDecl) and t.name in arrays:
            shape = tuple(int(s.evaluate(resolved.scalars)) for s in t.shape)
            inputs[t.name] = np.asarray(arrays[t.name]).reshape(shape)
    _same(k, inputs, dict(resolved.scalars))
    _close(k, inputs, dict(resolved.scalars))


def test_a_reduction_shared_by_two_statements_sees_the_first_ones_write() -> None:
    # one Reduce node in both statements: its value is not kept across the write of t
    row_sum = n.Reduce(Op.ADD, (n.Axis("l", "C", "reduction"),), n.Read("t", ("i", "l")))
    k = n.Kernel(
        "shared",
        (
            n.TensorDecl("x", ("R", "C"), "float32", "in"),
            n.TensorDecl("z", ("R", "C"), "float32", "out"),
            n.ScalarDecl("R"),
            n.ScalarDecl("C"),
        ),
        (
            n.Compute(
                n.Access("t", ("i", "j")),
                n.Domain((n.Axis("i", "R"), n.Axis("j", "C"))),
                n.Binary(Op.ADD, n.Read("x", ("i", "j")), row_sum),
            ),
            n.Compute(
                n.Access("z", ("i", "j")),
                n.Domain((n.Axis("i", "R"), n.Axis("j", "C"))),
                n.Binary(Op.SUB, n.Read("t", ("i", "j")), row_sum),
            ),
        ),
        temps=(n.TensorDecl("t", ("R", "C"), "float32", "temp"),),
    )
    x = _X.astype(np.float64)
    t = x + 0.0  # t starts at zero: the first row sum is 0
    want = t - t.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(ev.evaluate(k, {"x": _X})["z"], want, rtol=1e-12, atol=1e-12)
    _same(k, {"x": _X})
