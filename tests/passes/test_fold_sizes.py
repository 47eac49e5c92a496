"""fold-sizes and drop-identities: constant size arithmetic folds, trivial loops resolve, identity
operations disappear, and what they must leave alone (names, conversions, live loops)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from cuda2nki.ir.evaluate import evaluate
from cuda2nki.ir.nodes import (
    Add,
    Alloc,
    Binary,
    CeilDiv,
    Const,
    FloorDiv,
    Loop,
    Max,
    Min,
    Mod,
    Mul,
    Slice,
    Sub,
    Sym,
)
from cuda2nki.ir.parser import parse
from cuda2nki.passes import PassContext, parse_pipeline, run_pipeline
from cuda2nki.passes._analysis import walk
from cuda2nki.passes._identity import is_identity
from cuda2nki.passes.fold_sizes import fold_size, resolve_loops

N, C1, C128 = Sym("N"), Const(1), Const(128)


def _tile_size(n):  # min(512, max(1, (n + 127) // 128)), as the tile-size pass builds it
    return Min(Const(512), Max(C1, FloorDiv(Add(n, Const(127)), C128)))


def test_the_issue_example_folds_to_a_number() -> None:
    loop_stop = FloorDiv(C1, Mul(C128, _tile_size(C1)))
    assert fold_size(loop_stop) == Const(0)
    assert fold_size(Mod(C1, Mul(C128, _tile_size(C1)))) == Const(1)


@pytest.mark.parametrize(
    ("expr", "want"),
    [
        (Add(N, Const(0)), N),
        (Add(Const(0), N), N),
        (Sub(N, Const(0)), N),
        (Mul(C1, N), N),
        (Mul(N, C1), N),
        (Mul(Const(0), N), Const(0)),
        (FloorDiv(N, C1), N),
        (CeilDiv(N, C1), N),
        (Mod(N, C1), Const(0)),
        (Min(N, N), N),
        (Max(Sym("M"), Sym("M")), Sym("M")),
        (Sub(Add(N, Const(3)), Const(1)), Add(N, Const(2))),
        (Add(Const(-1), Add(N, C1)), N),
        (Sub(Add(N, Const(1)), Const(3)), Sub(N, Const(2))),
        (Add(Sub(N, Mod(N, Sym("f"))), Mod(N, Sym("f"))), N),
        (Sub(Add(Sym("a"), N), Add(N, Const(0))), Sym("a")),
        # a CUDA grid's rows rounded up to whole blocks, clipped to the rows: the rows
        (Min(Mul(Const(64), FloorDiv(Add(Const(63), N), Const(64))), N), N),
        (Min(N, Mul(Const(8), FloorDiv(Add(N, Const(7)), Const(8)))), N),
        (Min(Mul(Const(8), Mul(Const(8), FloorDiv(Add(Const(63), N), Const(64)))), N), N),
        (Min(Mul(Const(32), CeilDiv(N, Const(32))), N), N),
        (Mul(Const(8), Mul(Const(4), N)), Mul(Const(32), N)),
        # bounds a constant apart: the smaller (larger) one
        (Min(N, Sub(N, C1)), Sub(N, C1)),
        (Min(Add(N, Const(2)), N), N),
        (Max(Sub(N, Const(3)), Add(N, C1)), Add(N, C1)),
        # nested bounds by constants: the tighter constant
        (Min(C128, Min(Const(512), Sub(N, Sym("g")))), Min(C128, Sub(N, Sym("g")))),
        (Min(Const(512), Min(C128, N)), Min(C128, N)),
        (Max(C1, Max(Const(4), N)), Max(Const(4), N)),
        # a difference from zero plus a constant: the constant leads (``1 - 128 * t``)
        (Add(Sub(Const(0), Mul(C128, Sym("t"))), C1), Sub(C1, Mul(C128, Sym("t")))),
        (Add(Sub(Sub(Const(0), Sym("t")), Const(2)), Add(N, Const(3))), Add(Sub(N, Sym("t")), C1)),
    ],
)
def test_identity_and_constant_rules(expr, want) -> None:
    assert fold_size(expr) == want


@pytest.mark.parametrize(
    "expr",
    [
        Add(Const(-8), N),  # one constant: written order kept
        Sub(N, Sym("M")),
        Min(Const(512), N),
        FloorDiv(N, Const(0)),  # division by zero is left for the verifier to report
        Max(C1, FloorDiv(Add(N, Const(127)), C128)),
        # rounded to another multiple, or rounded down: below N for some N
        Min(Mul(Const(32), FloorDiv(Add(N, Const(63)), Const(64))), N),
        Min(Mul(Const(64), FloorDiv(N, Const(64))), N),
        Min(Mul(Const(64), CeilDiv(N, Const(32))), N),
        Min(Mul(Const(64), FloorDiv(Add(Sym("M"), Const(63)), Const(64))), N),
    ],
)
def test_expressions_without_a_fold_stay_as_written(expr) -> None:
    assert fold_size(expr) == expr


def test_folding_keeps_the_value_for_every_size() -> None:
    a, b = Sym("a"), Sym("b")
    exprs = [
        Sub(Add(Add(a, Const(3)), Mul(C1, b)), Add(Const(2), Const(1))),
        Mod(Add(Sub(a, Const(0)), Mul(b, Const(0))), Mul(C1, Add(Const(3), Const(4)))),
        CeilDiv(Sub(Add(Const(5), a), Const(5)), Mul(Const(2), C1)),
        Sub(Const(0), Sub(a, Add(b, Const(2)))),
        Add(Sub(Sub(a, Mod(a, Const(3))), b), Add(Mod(a, Const(3)), b)),
        Min(Mul(Const(4), FloorDiv(Add(Const(3), a), Const(4))), a),
        Min(b, Mul(Const(3), CeilDiv(b, Const(3)))),
        Mul(Const(-2), Mul(Const(3), a)),
        Min(a, Sub(a, Const(1))),
        Max(Add(b, Const(2)), Sub(b, Const(5))),
        Min(Const(3), Min(Const(-2), a)),
        Max(Const(-4), Max(Const(1), b)),
    ]
    for e, (x, y) in itertools.product(exprs, itertools.product(range(-9, 10, 4), range(-5, 6))):
        env = {"a": x, "b": y}
        assert fold_size(e).evaluate(env) == e.evaluate(env), (e, env)


def _loop(var: str, start, stop, body=()) -> Loop:
    return Loop(var, start, stop, body=tuple(body))


def test_a_loop_of_no_iteration_is_dropped_and_one_of_one_is_inlined() -> None:
    inner = Alloc("t", (Mul(Sym("u"), Const(4)), Sym("N")), "float32")
    body = (
        _loop("t", Const(0), FloorDiv(C1, C128), [Alloc("dead", (C1,), "float32")]),
        _loop("u", Const(2), Const(3), [inner]),
        _loop("w", Const(0), N, [Alloc("kept", (C1,), "float32")]),
    )
    got = resolve_loops(body)
    assert got[0] == Alloc("t", (Const(8), N), "float32")  # u bound to 2, then folded
    assert isinstance(got[1], Loop) and got[1].var == "w"
    assert len(got) == 2


def test_a_strided_loop_counts_its_trips() -> None:
    one = _loop("s", Const(0), Const(5), [Alloc("a", (Sym("s"),), "float32")]).replace(step=8)
    two = one.replace(stop=Const(9))
    assert resolve_loops((one,)) == (Alloc("a", (Const(0),), "float32"),)
    assert resolve_loops((two,)) == (two,)


HEAD = "kernel k(x: in float32[R, C], y: out float32[R, C], R: int32, C: int32) {\n"


def _kernel(*stmts: str):
    return parse(HEAD + "".join(f"  map: {s};\n" for s in stmts) + "}\n", "k.ir")


IDENTITIES = [
    "y[i, j] = 0.0 + 2.0 * x[i, j] for i < R, j < C",
    "y[i, j] = x[i, j] * 1.0 - 0.0 for i < R, j < C",
    "y[i, j] = 1.0 * (x[i, j] / 1.0) for i < R, j < C",
    "y[i, j] = x[i, j] - max(-inf, reduce(max, k < C: x[i, k])) for i < R, j < C",
    "y[i, j] = min(x[i, j], inf) + 0.0 for i < R, j < C",
]


@pytest.mark.parametrize("stmt", IDENTITIES)
def test_identity_operations_are_dropped_with_the_same_meaning(stmt: str) -> None:
    before = _kernel(stmt)
    after = run_pipeline(before, parse_pipeline("drop-identities"), PassContext())
    for e in walk(after.body[0].expr):
        if isinstance(e, Binary):
            for unit, left in ((e.b, False), (e.a, True)):
                value = getattr(unit, "value", None)
                assert value is None or not is_identity(e.op, value, left), stmt
    x = np.random.default_rng(5).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_array_equal(evaluate(before, {"x": x})["y"], evaluate(after, {"x": x})["y"])


@pytest.mark.parametrize(
    "stmt",
    [
        "y[i, j] = 0.0 - x[i, j] for i < R, j < C",  # a negation, not an identity
        "y[i, j] = 1.0 / x[i, j] for i < R, j < C",  # a reciprocal
        "y[i, j] = max(x[i, j], 0.0) for i < R, j < C",  # relu
    ],
)
def test_ops_that_only_look_like_identities_stay(stmt: str) -> None:
    before = _kernel(stmt)
    assert run_pipeline(before, parse_pipeline("drop-identities"), PassContext()) == before


def test_an_identity_that_converts_the_dtype_stays() -> None:
    head = "kernel k(n: in int32[R], y: out float32[R], R: int32) {\n"
    before = parse(head + "  map: y[i] = 0.0 + n[i] for i < R;\n}\n", "k.ir")
    assert run_pipeline(before, parse_pipeline("drop-identities"), PassContext()) == before


def test_a_one_trip_loop_whose_variable_is_an_operand_stays() -> None:
    from cuda2nki.ir.nodes import Param, TensorScalar, View
    from cuda2nki.ir.ops import Op

    tile = View("s", (Slice(Const(0), C1),))
    use = TensorScalar(tile, tile, Op.MUL, Param("u"))
    loop = _loop("u", Const(0), Const(1), [use])
    assert resolve_loops((loop,)) == (loop,)
