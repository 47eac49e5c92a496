"""Complementary index conditions that bound no single axis (the causal triangle of attention
scores: ``key > query`` against ``key <= query``) port through a recogniser on both targets as
one select, whatever the spelling: if/else on positions split from a flat index, a ternary with
the kept side first, two separate ifs on a 3-D grid; and causal softmaxes whose normalising loop
over the whole row reads back the exponentials an earlier loop over the past stored."""

from __future__ import annotations

import pytest

from cuda2nki.ir.nodes import Binary, Const, FloorDiv, IndexValue, Mod, Sym, Unary
from cuda2nki.ir.ops import Op, Role
from cuda2nki.passes._masked_select import complementary
from tests.port.acceptance import CORPUS, check_kernel

TARGETS = ["nki", "legacy"]

FORMS = {
    "basic/causal_scale_flat": "map",  # flat (B, NH, T, T), within re-assigned, if/else, inout
    "basic/causal_mask_rows": "map",  # 2-D grid, q = row % T, ternary kept side first, out
    "basic/causal_fill_3d": "map",  # 3-D grid, two separate ifs, a scalar shift
    # exponentials stored, then read back by a loop over the whole row that zeroes the future
    "norm/causal_softmax_thread_row": "softmax",  # flat row index split, aliases, if/else
    "norm/causal_softmax_ternary_zero": "softmax",  # 2-D grid, fmaxf, ternary divide-or-zero
    "norm/causal_softmax_future_first": "softmax",  # r % T, temperature, future tested first
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rel", sorted(FORMS))
def test_causal_masks_match_through_a_recogniser(rel, target, tmp_path) -> None:
    out = check_kernel(CORPUS / f"{rel}.cu", target, tmp_path, max_points=3)
    assert out.status == "match", out
    assert out.idiom == FORMS[rel]
    assert len(out.shapes) == 3


def _iv(e) -> IndexValue:
    return IndexValue(e)


def _cmp(op: Op, a, b) -> Binary:
    return Binary(op, _iv(a), _iv(b))


II, JJ, TT = Sym("i"), Sym("j"), Sym("T")


@pytest.mark.parametrize(
    ("g", "h"),
    [
        (_cmp(Op.LT, II, JJ), _cmp(Op.LT, JJ, II + Const(1))),  # i < j  vs  j < i + 1
        (_cmp(Op.LT, II, JJ), _cmp(Op.GE, II, JJ)),
        (_cmp(Op.GT, JJ, II), _cmp(Op.LE, JJ, II)),
        (_cmp(Op.EQ, II, Const(0)), _cmp(Op.NE, II, Const(0))),
        (
            _cmp(Op.LT, Mod(FloorDiv(II, TT), TT), Mod(II, TT)),
            _cmp(Op.LT, Mod(II, TT), Const(1) + Mod(FloorDiv(II, TT), TT)),
        ),
        (_cmp(Op.LT, II, JJ), Unary(Op.LNOT, _cmp(Op.LT, II, JJ))),
    ],
)
def test_complementary_conditions(g, h) -> None:
    assert complementary(g, h)
    assert complementary(h, g)


@pytest.mark.parametrize(
    ("g", "h"),
    [
        (_cmp(Op.LT, II, JJ), _cmp(Op.LT, JJ, II)),  # the diagonal is in neither
        (_cmp(Op.LT, II, JJ), _cmp(Op.LE, II, JJ)),
        (_cmp(Op.LT, II, JJ), _cmp(Op.GE, II, JJ + Const(1))),
    ],
)
def test_overlapping_or_gapped_conditions_are_not_complements(g, h) -> None:
    assert not complementary(g, h)


def _rows_kernel(role: Role):
    from cuda2nki.ir.nodes import (
        Access,
        Axis,
        Compute,
        Domain,
        Kernel,
        Lit,
        Read,
        ScalarDecl,
        TensorDecl,
    )

    n = Sym("n")
    decls = (
        TensorDecl("y", (n, n), "float32", role),
        TensorDecl("x", (n, n), "float32", Role.IN),
        ScalarDecl("n", "int32"),
    )
    dom = Domain((Axis("i", n), Axis("j", n)))
    whole = Compute(Access("y", (II, JJ)), dom, Read("x", (II, JJ)))
    twice = Binary(Op.MUL, Read("y", (II, JJ)), Lit(2.0))
    upper = Compute(Access("y", (II, JJ)), dom.replace(guard=_cmp(Op.LT, II, JJ)), twice)
    return Kernel("k", decls, (whole, upper))


def test_a_guarded_write_reading_its_out_target_is_not_merged() -> None:
    from cuda2nki.passes._masked_select import merge_complements

    # ``y`` is out: the second statement reads what the first wrote, which a select of the two
    # expressions would not see; an inout ``y`` is read as its input, before either write
    assert len(merge_complements(_rows_kernel(Role.OUT))) == 2
    assert len(merge_complements(_rows_kernel(Role.INOUT))) == 1
