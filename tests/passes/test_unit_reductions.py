"""unit-reductions on IR: a reduction's axes of extent 1 take the value 0 and disappear; a
comparison of constant index values is decided and its select resolved; a masked reduction over
only unit axes, and reductions over longer axes, are kept."""

from __future__ import annotations

from cuda2nki.ir.nodes import (
    Axis,
    Binary,
    Cast,
    Const,
    IndexValue,
    Kernel,
    Lit,
    Read,
    Reduce,
    Select,
    Sym,
    TensorDecl,
)
from cuda2nki.ir.ops import AxisKind, Op
from cuda2nki.ir.types import TypeEnv
from cuda2nki.passes.unit_reductions import unfold

RED = AxisKind.REDUCTION
ENV = TypeEnv(
    Kernel(
        "k",
        (
            TensorDecl("x", (Sym("N"), Sym("C")), "float32", "in"),
            TensorDecl("h", (Sym("N"), Sym("C")), "bfloat16", "in"),
        ),
    )
)
inner = Reduce(Op.ADD, (Axis("k", Sym("N"), RED),), Read("x", (Sym("k"), Sym("i"))), "float32")


def test_a_one_trip_level_with_a_decided_select_is_its_inner_sum() -> None:
    cond = Binary(Op.EQ, IndexValue(Const(0)), IndexValue(Sym("j")))
    outer = Reduce(
        Op.ADD, (Axis("j", Const(1), RED),), Select(cond, inner, Lit(float("nan"))), "float32"
    )
    assert unfold(outer, ENV) == inner


def test_the_unit_axis_takes_zero_in_indices_and_others_stay() -> None:
    body = Read("x", (Sym("k"), Const(32) * Sym("j") + Sym("i")))
    r = Reduce(Op.MAX, (Axis("j", Const(1), RED), Axis("k", Sym("N"), RED)), body, "float32")
    got = unfold(r, ENV)
    assert isinstance(got, Reduce) and [a.name for a in got.axes] == ["k"]
    assert "j" not in {s for ix in got.body.index for s in ix.free_syms()}


def test_the_accumulator_dtype_is_kept() -> None:
    r = Reduce(Op.ADD, (Axis("j", Const(1), RED),), Read("h", (Sym("j"), Sym("i"))), "float32")
    got = unfold(r, ENV)
    assert isinstance(got, Cast) and got.dtype == "float32"


def test_masked_and_longer_reductions_are_kept() -> None:
    masked = Reduce(
        Op.ADD,
        (Axis("j", Const(1), RED),),
        Read("x", (Sym("j"), Sym("i"))),
        "float32",
        where=Binary(Op.LT, IndexValue(Sym("i")), IndexValue(Const(4))),
    )
    assert unfold(masked, ENV) == masked
    assert unfold(inner, ENV) == inner
