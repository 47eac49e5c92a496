"""Counters bumped inside counted loops, for the extent scan (:mod:`cuda2nki.lift.extents`).

A kernel may walk an array with a running position instead of an index expression: a scalar
parameter or local that starts at some value and is only ever bumped by a positive constant,
``++index`` once per iteration of ``for (j = 0; j < w; j++)`` inside ``for (i = 0; i < k; i++)``
(``bm[index]`` then reads ``k * w`` consecutive elements from the starting ``index``).  Whatever
branches the bumps sit under, the counter never exceeds its start plus the bumps all loops
could make: ``start + sum(c * trips of the loops around each bump)``.  The scan reads such a
counter as an atom below that bound plus one (a read after the last bump included).

A counter also assigned another way (``=``, ``-=``, ``--``, through its address), or bumped in
a loop whose trip count is not its bound (a ``while`` loop, a loop that steps otherwise than by
one or starts elsewhere than at 0, or 1 for ``<=``), is left to the scan as before (opaque).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk

_BUMP = ("pre++", "post++")
_CHANGE = ("pre--", "post--", "&")


@dataclass(frozen=True)
class _Bump:
    amount: int
    loops: tuple[A.For | None, ...]  # the loops around it, innermost last (None: not counted)


def counter_bounds(fn: A.Function, poly: Callable[[A.Expr], object]) -> dict[str, object]:
    """Counter name -> its exclusive upper bound (a polynomial by ``poly``, which evaluates a
    loop bound or a start value, raising for one it cannot).  Parameters start at their own
    value, locals at their initialiser."""
    bumps: dict[str, list[_Bump]] = {}
    spoiled: set[str] = set()
    _collect(fn.body, (), bumps, spoiled)
    starts = _starts(fn)
    out: dict[str, object] = {}
    for name, got in bumps.items():
        if name in spoiled or name not in starts:
            continue
        try:
            total = poly(starts[name]) + 1  # type: ignore[operator]
            for b in got:
                total = total + _trips(b.loops, poly) * b.amount
        except Exception:  # noqa: BLE001 - a bound the scan cannot read: no counter
            continue
        out[name] = total
    return out


def _starts(fn: A.Function) -> dict[str, A.Expr]:
    """Integer scalars that may be counters: parameters (starting at themselves) and locals
    declared once with an initialiser."""
    out: dict[str, A.Expr] = {}
    for p in fn.params:
        if isinstance(p.ty, A.ScalarType) and not p.ty.is_float:
            out[p.name] = A.Name(loc=p.loc, name=p.name)
    seen: dict[str, int] = {}
    for n in walk(fn.body):
        if isinstance(n, A.VarDecl):
            seen[n.name] = seen.get(n.name, 0) + 1
            if isinstance(n.ty, A.ScalarType) and not n.ty.is_float and n.init is not None:
                out[n.name] = n.init
    return {
        k: v for k, v in out.items() if seen.get(k, 0) <= 1 and not (k in seen and k in _params(fn))
    }


def _params(fn: A.Function) -> set[str]:
    return {p.name for p in fn.params}


def _collect(st: A.Stmt, loops: tuple, bumps: dict, spoiled: set[str]) -> None:
    """The bumps and other changes of scalars in ``st`` (inside ``loops``)."""
    if isinstance(st, A.Block):
        for s in st.body:
            _collect(s, loops, bumps, spoiled)
    elif isinstance(st, A.If):
        _exprs(st.cond, loops, bumps, spoiled)
        _collect(st.then, loops, bumps, spoiled)
        if st.else_ is not None:
            _collect(st.else_, loops, bumps, spoiled)
    elif isinstance(st, A.For):
        for s in st.init:
            _collect(s, loops, bumps, spoiled)
        inner = (*loops, st if _counted(st) else None)
        if st.cond is not None:
            _exprs(st.cond, inner, bumps, spoiled)
        if st.step is not None:
            _exprs(st.step, inner, bumps, spoiled)
        _collect(st.body, inner, bumps, spoiled)
    elif isinstance(st, A.While | A.DoWhile):
        _exprs(st.cond, (*loops, None), bumps, spoiled)
        _collect(st.body, (*loops, None), bumps, spoiled)
    elif isinstance(st, A.Switch):
        _exprs(st.cond, loops, bumps, spoiled)
        for c in st.cases:
            for s in c.body:
                _collect(s, loops, bumps, spoiled)
    elif isinstance(st, A.VarDecl):
        if st.init is not None:
            _exprs(st.init, loops, bumps, spoiled)
    elif isinstance(st, A.ExprStmt):
        _exprs(st.expr, loops, bumps, spoiled)
    elif isinstance(st, A.Return) and st.value is not None:
        _exprs(st.value, loops, bumps, spoiled)


def _exprs(e: A.Expr, loops: tuple, bumps: dict, spoiled: set[str]) -> None:
    for n in walk(e):
        if isinstance(n, A.Unary) and isinstance(n.operand, A.Name):
            if n.op in _BUMP:
                bumps.setdefault(n.operand.name, []).append(_Bump(1, loops))
            elif n.op in _CHANGE:
                spoiled.add(n.operand.name)
        elif isinstance(n, A.Assign) and isinstance(n.target, A.Name):
            step = n.value.value if isinstance(n.value, A.IntLit) else 0
            if n.op == "+=" and step > 0:
                bumps.setdefault(n.target.name, []).append(_Bump(step, loops))
            else:
                spoiled.add(n.target.name)


def _counted(st: A.For) -> bool:
    """``for (v = a; v < b; v++)`` (``<=``, ``++v``, ``v += 1``): its trips are ``b - a``."""
    var = _loop_var(st)
    c = st.cond
    if var is None or not isinstance(c, A.Binary) or c.op not in ("<", "<="):
        return False
    if not (isinstance(c.left, A.Name) and c.left.name == var):
        return False
    s = st.step
    if isinstance(s, A.Unary) and s.op in _BUMP and isinstance(s.operand, A.Name):
        return s.operand.name == var
    return (
        isinstance(s, A.Assign)
        and s.op == "+="
        and isinstance(s.target, A.Name)
        and s.target.name == var
        and isinstance(s.value, A.IntLit)
        and s.value.value == 1
    )


def _loop_var(st: A.For) -> str | None:
    if len(st.init) != 1:
        return None
    s = st.init[0]
    if isinstance(s, A.VarDecl) and s.init is not None:
        return s.name
    if isinstance(s, A.ExprStmt) and isinstance(s.expr, A.Assign) and s.expr.op == "=":
        t = s.expr.target
        return t.name if isinstance(t, A.Name) else None
    return None


def _start(st: A.For) -> A.Expr:
    s = st.init[0]
    return s.init if isinstance(s, A.VarDecl) else s.expr.value  # type: ignore[attr-defined,return-value]


def _trips(loops: tuple, poly: Callable[[A.Expr], object]) -> object:
    """The product of the trip counts of ``loops``; raises for a loop not counted."""
    total: object = 1
    for lp in loops:
        if lp is None:
            raise ValueError("a loop without a trip count")
        c = lp.cond
        start = _start(lp)
        first = start.value if isinstance(start, A.IntLit) else None
        if first not in ((0, 1) if c.op == "<=" else (0,)):  # a count never below zero
            raise ValueError("a loop that may run a negative number of times")
        trips = poly(c.right) + (1 - first if c.op == "<=" else 0)  # type: ignore[operator]
        total = trips * total  # type: ignore[operator]
    return total
