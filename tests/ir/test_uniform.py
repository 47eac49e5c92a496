"""Loops decided when the kernel is traced (``Loop.cond``) and the conditions on scalar
parameters they take (cuda2nki.ir.uniform)."""

from __future__ import annotations

import numpy as np

from cuda2nki.codegen import spell
from cuda2nki.ir import nodes as n
from cuda2nki.ir import uniform
from cuda2nki.ir.evaluate_tiles import evaluate_tiles
from cuda2nki.ir.ops import Op
from cuda2nki.ir.parser import parse
from cuda2nki.ir.printer import to_text
from cuda2nki.ir.verify import verify

BRANCH = """kernel k(x: in float32[128, 4], y: out float32[128, 4], mode: int32, s: float32) {
  for t = range(0, 1, 1) affine when COND {
    alloc a: float32[128, 4] sbuf;
    load(dst=a[...], src=x[...]);
    store(dst=y[...], src=a[...]);
  }
}
"""


def _kernel(cond: str) -> n.Kernel:
    return parse(BRANCH.replace("COND", cond), "k.ir")


def test_a_loop_condition_round_trips_and_verifies() -> None:
    k = _kernel("mode == 1 && s > 0.5 || lnot(mode != 3)")
    assert k.body[0].cond is not None
    assert parse(to_text(k), "k.ir") == k
    assert verify(k) == []


def test_the_loop_runs_only_where_its_condition_holds() -> None:
    k = _kernel("mode * 2 - 1 == 3 && s > 0.5")
    x = np.arange(512, dtype=np.float32).reshape(128, 4)
    taken = evaluate_tiles(k, {"x": x}, {"mode": 2, "s": 1.0})["y"]
    skipped = evaluate_tiles(k, {"x": x}, {"mode": 2, "s": 0.0})["y"]
    np.testing.assert_array_equal(taken, x)
    assert not skipped.any()


def test_a_condition_on_a_loop_variable_is_refused() -> None:
    for cond in ("t == 0", "mode / 2 == 1"):
        assert [d.code for d in verify(_kernel(cond))] == ["C2N2446"], cond


def parse_expr(text: str) -> n.Expr:
    """An intent expression over ``x[i]`` and int32 parameters mode, f0 .. f3."""
    flags = "".join(f", f{k}: int32" for k in range(4))
    src = f"kernel e(x: in float32[N], y: out float32[N], N: int32, mode: int32{flags}) {{\n"
    return parse(src + f"  map: y[i] = {text} for i < N;\n}}\n", "e.ir").body[0].expr


def _switch() -> n.Expr:
    """A switch over ``mode`` as the lifter writes it: a chain of selects."""
    return parse_expr(
        "select(index(mode) == index(2), x[i] * 3.0, "
        "select(index(mode) == index(1), select(index(mode) == index(2), 0.0, x[i] * 2.0), x[i]))"
    )


def test_a_switch_splits_into_one_branch_per_case() -> None:
    got = uniform.branches(_switch(), {"mode"})
    assert got is not None and len(got) == 3
    conds = [uniform.spell(c, str, spell.size) for c, _ in got]
    assert conds == ["mode == 2", "mode == 1", "(mode != 2) and (mode != 1)"]
    for c, e in got:  # no choice on the mode is left inside a branch
        assert not any(isinstance(x, n.Select) for x in _nodes(e)), (c, e)
    for mode, want in ((2, "x[i] * 3.0"), (1, "x[i] * 2.0"), (0, "x[i]"), (7, "x[i]")):
        taken = [e for c, e in got if uniform.evaluate(c, {"mode": mode})]
        assert len(taken) == 1 and to_text(taken[0], locs=False) == want


def test_selects_on_data_or_too_many_flags_stay_selects() -> None:
    assert uniform.branches(parse_expr("select(x[i] > 0.0, x[i], 0.0)"), {"mode"}) is None
    flags = [f"f{k}" for k in range(4)]
    e = parse_expr("x[i]")
    for f in flags:  # 16 combinations: more than MAX_BRANCHES
        e = n.Binary(Op.ADD, e, n.Select(parse_expr(f"index({f}) > index(0)"), e, e))
    assert uniform.branches(e, set(flags)) is None


def _nodes(e: n.Expr):
    from cuda2nki.rewrite import nodes

    return nodes(e)


def test_a_choice_on_a_size_keeps_the_one_branch_its_sizes_pick() -> None:
    """``choose(size_is(ceil(N / 512), 1), ...)``: the first body where N fits one 512 block,
    the second elsewhere; both branches decided at trace time and spelled as Python."""
    size = n.CeilDiv(n.Sym("N"), n.Const(512))
    cond = uniform.size_is(size, 1)
    one, more = uniform.choose(cond, ("one",), ("more",))
    assert all(uniform.is_branch(b) for b in (one, more))
    assert one.body == ("one",) and more.body == ("more",)
    for N, want in ((1, True), (512, True), (513, False), (4096, False)):
        assert uniform.evaluate(one.cond, {"N": N}) is want
        assert uniform.evaluate(more.cond, {"N": N}) is (not want)
    assert uniform.is_uniform(cond, {"N"}) and not uniform.is_uniform(cond, {"M"})

    def size_text(e: n.SizeExpr) -> str:
        return "(N + 511) // 512" if e == size else str(e)

    assert uniform.spell(one.cond, str, size_text) == "((N + 511) // 512) == 1"
    assert uniform.spell(more.cond, str, size_text) == "((N + 511) // 512) != 1"


def test_a_choice_on_constant_sizes_is_made_when_porting() -> None:
    wide = uniform.size_is(n.CeilDiv(n.Const(1100), n.Const(512)), 1)
    assert uniform.choose(wide, ("one",), ("more",)) == ["more"]
    narrow = uniform.size_is(n.CeilDiv(n.Const(300), n.Const(512)), 1)
    assert uniform.choose(narrow, ("one",), ("more",)) == ["one"]
