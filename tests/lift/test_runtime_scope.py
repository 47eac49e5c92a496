"""The body of a runtime loop shares with the code around it only the carried tiles it rebinds
first and writes back (:mod:`cuda2nki.lift.literal.runtime_scope`): anything else would be a
trace-time value the simulator recomputes per iteration but NKI traces once."""

from __future__ import annotations

import pytest

from cuda2nki.lift.literal.program import Branch, Instr, LiteralProgram, Loop
from cuda2nki.lift.literal.runtime_scope import check_runtime_loops, runtime_loop_line
from cuda2nki.lift.literal.state import LiteralRefusal


def _let(dst: str, value: str) -> Instr:
    return Instr("let", (("dst", dst), ("value", value)), 3)


def _call(expr: str) -> Instr:
    return Instr("call", (("expr", expr),), 3)


def _program(body: tuple, after: tuple = ()) -> LiteralProgram:
    loop = Loop("def", "_c2n_wloop9(_r)", body, 7)
    nodes = (_let("v", "start()"), _let("_cv1", "_c2n_carry(v)"), _let("_reg2", "lanes()"),
             loop, _call("nl.while_loop(_reg2, _c2n_wloop9)"), *after)  # fmt: skip
    block = Loop("def", "_c2n_block(_bx, _by, _bz)", nodes, 1)
    return LiteralProgram("k", (), 4, 1, "", (block,))


_CARRIED = (_let("v", "_cv1"), _let("v", "step(v)"), _call("_c2n_keep(_cv1, v)"),
            Instr("ret", (("value", "lanes(_cv1)"),)))  # fmt: skip


def test_a_body_that_rebinds_its_carried_tiles_first_passes():
    prog = _program(_CARRIED, (_let("v", "_cv1"), _call("store(v)")))
    assert check_runtime_loops(prog) is prog
    assert runtime_loop_line(prog.body) == 7


@pytest.mark.parametrize(
    ("body", "after", "says"),
    [
        # a name read before the body assigns it: the previous iteration's trace-time value
        ((_let("w", "grow(v2)"), _let("v2", "step(w)"), *_CARRIED), (), "'v2'"),
        # read after the loop without the carried tile rebound: the older value
        (_CARRIED, (_call("store(v)"),), "'v'"),
        # a temporary of the body read after the loop
        ((_let("t", "f()"), *_CARRIED), (_let("v", "_cv1"), _call("store(t)")), "'t'"),
        # only one side of a branch rebinds it
        (_CARRIED, (Branch("flag", (_let("v", "_cv1"),)), _call("store(v)")), "'v'"),
    ],
)
def test_values_shared_past_an_iteration_are_refused(body, after, says):
    with pytest.raises(LiteralRefusal) as exc:
        check_runtime_loops(_program(body, after))
    assert says in exc.value.construct and "(line 3)" in exc.value.construct


def test_a_body_that_mutates_a_list_of_the_enclosing_code_is_refused():
    body = (_let("acc[0]", "tile()"), *_CARRIED)
    with pytest.raises(LiteralRefusal) as exc:
        check_runtime_loops(_program(body, (_let("v", "_cv1"),)))
    assert "changes 'acc'" in exc.value.construct
