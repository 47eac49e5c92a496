"""Warp votes in the symbolic execution: ``__any``/``__any_sync``, ``__all``/``__all_sync`` and
the count of a ballot, ``__popc(__ballot(p))`` (``__ballot_sync`` too), as folds over the 32
lanes of the thread's warp -- the largest, smallest and sum of the lanes' 0/1 predicates, as
:meth:`cuda2nki.lift.symcalls.CallExecution.warp_reduce` folds a group reduction.

Only the lanes that take part vote: the lanes the thread's index guards admit (a lane outside
them adds the fold's identity), which is what ``__activemask()`` names.  A ballot's bit mask is
kept only to be counted: any other use of it is refused, as is a vote under a data-dependent
condition or of a loop-carried value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from cuda2nki.frontend import ast as A
from cuda2nki.lift import affine as af
from cuda2nki.lift import values as V
from cuda2nki.lift.symbase import Refusal

if TYPE_CHECKING:
    from cuda2nki.lift.symexec import Executor

#: vote -> (fold operator, identity); the ``_sync`` spellings take the mask first
VOTES: dict[str, tuple[str, int]] = {"any": ("max", 0), "all": ("min", 1), "ballot": ("add", 0)}
COUNTS = frozenset({"__popc", "__popcll"})
#: the lanes of a warp
Poly32 = af.Poly.const(32)


@dataclass(frozen=True)
class BallotVal:
    """A ballot's bit mask, held as the number of its set bits (what ``__popc`` reads)."""

    count: V.DExpr


def vote_of(func: str, nargs: int) -> str | None:
    """The vote a call of ``func`` with ``nargs`` arguments casts, if it is one."""
    base = func.removeprefix("__").removesuffix("_sync")
    if base not in VOTES or not func.startswith("__"):
        return None
    return base if nargs == (2 if func.endswith("_sync") else 1) else None


def vote(ex: Executor, e: A.Call, kind: str) -> object:
    """The vote ``e`` of the predicate (its last argument) over the thread's warp."""
    tid = ex._warp_lanes(e)
    c = ex.as_cond(ex.eval(e.args[-1]), e.loc)
    p = V.Pred("bool", c) if isinstance(c, af.Cond) else c
    if ex.dguards or V.has_carried(p):
        raise Refusal("C2N2015", e.loc, what=f"'{e.func}' under a data-dependent condition")
    op, identity = VOTES[kind]
    none = V.Const("int32", identity)
    body: V.DExpr = V.Cast("int32", p)  # the predicate as 0/1
    body = V.Select("int32", V.Pred("bool", ex.guard()), body, none)  # lanes that take part
    t = ex.fresh("lane")
    lane = af.sym(t)
    body = V.subs_poly(body, {"threadIdx.x": Poly32 * af.floordiv(tid, Poly32) + lane})
    fold = V.Fold("int32", op, t, af.ZERO, Poly32, af.ONE, body)
    return BallotVal(fold) if kind == "ballot" else fold


def count(ex: Executor, e: A.Call) -> V.DExpr | None:
    """``__popc`` of a ballot: its count; None: another ``__popc``."""
    if len(e.args) != 1:
        return None
    v = ex.eval(e.args[0])
    return v.count if isinstance(v, BallotVal) else None


__all__ = ["COUNTS", "BallotVal", "count", "vote", "vote_of"]
