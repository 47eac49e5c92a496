"""Lifting an elementwise loop with a data-dependent exit that a counter bounds.

``do { prev = r; r = 0.5f * (r + a / r); ++it; } while (fabsf(r - prev) > tol && it < 60);``
runs a different number of iterations in every thread, decided by the data.  It is still a map
when a counter bounds it (:func:`cuda2nki.lift.literal.bound.counter_bound`: a conjunct
``it < K`` of the condition whose counter starts at a literal, is incremented by one exactly once
per iteration and written nowhere else, ``K`` uniform): at most ``K - it0`` iterations run.  The
body is executed once symbolically with every local it assigns (and that holds a value before the
loop) as a :class:`~cuda2nki.lift.values.Carried` placeholder; the locals' values after the
loop are :class:`~cuda2nki.lift.values.Iterate` values -- one per local, sharing one loop -- of
the values before the loop, the updated values and the loop test, both spelled in the values at
the start of an iteration.  A ``while`` loop also records its test on the values before the loop
(``enter``).

Refused (the caller's C2N2019 stands): no counter bound, a nested loop, ``break`` /
``continue`` / ``return`` inside, a store or a shared-memory write inside.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda2nki.frontend import ast as A
from cuda2nki.lift import affine as af
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Poly
from cuda2nki.lift.literal.bound import counter_bound, nodes

if TYPE_CHECKING:
    from cuda2nki.lift.symexec import Executor

_CONTROL = (A.For, A.While, A.DoWhile, A.Break, A.Continue, A.Return)


def exec_bounded(ex: Executor, s: A.While | A.DoWhile) -> bool:
    """Execute ``s`` as a bounded elementwise iteration; False (nothing executed) where it is
    not one."""
    from cuda2nki.lift.symexec import CondVal, PtrVal, Refusal, SharedArr, VecVal, _varying

    if any(isinstance(x, _CONTROL) for x in nodes(s.body)):
        return False
    enter = None
    if isinstance(s, A.While):
        first = ex.eval(s.cond)
        if not isinstance(first, V.DExpr):
            return False  # an index-level test: the loop is a counted loop, or refused as such
        enter = _as_bool(ex, first, s)

    def uniform(e: A.Expr) -> bool:
        if any(isinstance(x, (A.Call, A.Assign, A.Unary)) for x in nodes(e)):
            return False
        v = ex.eval(e)
        return isinstance(v, Poly) and not _varying(v)

    def start_of(name: str) -> A.Expr | None:
        v = ex.env.get(name)
        if isinstance(v, Poly) and v.is_const:
            return A.IntLit(loc=s.loc, value=int(v.const_value))
        return None

    tb = counter_bound(s.cond, s.body, (), start_of, uniform)
    if tb is None:
        return False
    limit = ex.eval(tb.limit)
    start = int(start_of(tb.counter).value)  # type: ignore[union-attr]
    trips = limit - start + (1 if tb.inclusive else 0)
    if trips.is_const and trips.const_value < 0:
        trips = af.ZERO

    from cuda2nki.lift.symexec import _assigned_names

    before = dict(ex.env)
    assigned = _assigned_names(s.body)
    names = sorted(
        n
        for n in assigned
        if n in before
        and before[n] is not None
        and not isinstance(before[n], (PtrVal, SharedArr, tuple))
    )
    init: dict[str, V.DExpr] = {}
    for n in names:
        old = before[n]
        if isinstance(old, (CondVal, VecVal)):
            raise Refusal(
                "C2N2011", s.loc, var=n, why="a condition or vector carried across iterations"
            )
        init[n] = ex.as_data(old, s.loc)
        ex.env[n] = V.Carried(init[n].dtype, n)
    saved_depths = {n: ex.decl_depth.get(n, 0) for n in names}
    for n in names:  # assignments in the body are relative to the iteration start
        ex.decl_depth[n] = len(ex.guards) + 1
    nstores = len(ex.stores)
    nshared = sum(len(a.writes) for a in ex.shared.values())
    ex.carry_scope.append(dict(init))
    ex.guards.append(af.TRUE)
    try:
        ex.exec_block(s.body)
        cond = _as_bool(ex, ex.eval(s.cond), s)
    finally:
        ex.guards.pop()
        ex.carry_scope.pop()
        ex.decl_depth.update(saved_depths)
    if len(ex.stores) != nstores or sum(len(a.writes) for a in ex.shared.values()) != nshared:
        raise Refusal(
            "C2N2019", s.loc, what="a store inside a loop whose trip count the data decide"
        )
    update = []
    for n in names:
        new = ex.as_data(ex.env[n], s.loc, init[n].dtype)
        update.append(new if new.dtype == init[n].dtype else V.Cast(init[n].dtype, new))
    first = tuple(init[n] for n in names)
    for k, n in enumerate(names):
        ex.env[n] = V.Iterate(
            init[n].dtype, tuple(names), first, tuple(update), cond, enter, trips, k
        )
    for n in assigned - set(names):  # written in the loop, never read after one iteration
        if n in before:
            ex.env[n] = None
    return True


def _as_bool(ex: Executor, v: object, s: A.Stmt) -> V.DExpr:
    c = ex.as_cond(v, s.loc)
    return c if isinstance(c, V.DExpr) else V.Pred("bool", c)
