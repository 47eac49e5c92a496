"""``while (i < n) { ...; i += step; }`` for the extent scan (:mod:`cuda2nki.lift.extents`): a
while loop whose body ends by stepping the one variable its condition bounds, and assigns it
nowhere else, is a counted loop: inside the body the variable is a counter below the bound (the
step comes last, so every use sees a value the condition admitted), whatever its start.
"""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk
from cuda2nki.lift.affine import Poly


def stepped_counter(st: A.While) -> str | None:
    """The variable ``i`` of ``while (i < n) { ...; i += s; }`` (also ``i++``, ``i = i + s``),
    assigned only by that last statement; None for another loop."""
    body = st.body.body if isinstance(st.body, A.Block) else (st.body,)
    if not body or not isinstance(body[-1], A.ExprStmt):
        return None
    name = _stepped(body[-1].expr)
    if name is None or not _bounded_by(st.cond, name):
        return None
    writes = [n for n in walk(st.body) if _assigns(n) == name]
    if len(writes) != 1 or any(isinstance(n, A.VarDecl) and n.name == name for n in walk(st.body)):
        return None
    if any(isinstance(n, A.Unary) and n.op == "&" and _named(n.operand, name) for n in walk(st)):
        return None  # its address taken: written where the scan does not look
    return name


def scan_while(scan, st: A.While, name: str) -> None:
    """Scan the body of ``st`` with ``name`` a counter bounded by the loop's condition."""
    atom = f"%{name}"
    saved_hi = dict(scan.hi)
    for p in scan._moving(st.body, None):  # a pointer the body moves: offset unknown, as before
        base, _, w = scan.alias.get(p, (p, None, 1))
        scan.alias[p] = (base, None, w)
    scan.env[name] = Poly.atom(atom)
    scan.hi.pop(atom, None)
    _tested(scan, st.cond)
    scan.loop_depth += 1
    try:
        scan._stmt(st.body)
    finally:
        scan.loop_depth -= 1
        scan.hi = saved_hi
        scan.env.pop(name, None)  # past the loop: a value the scan does not know


def _tested(scan, cond: A.Expr) -> None:
    """Record the reads of ``cond`` as C evaluates it (``t < n && x[t] > 0``: ``x[t]`` only once
    ``t < n`` held) and leave its guards in force."""
    if isinstance(cond, A.Binary) and cond.op == "&&":
        _tested(scan, cond.left)
        _tested(scan, cond.right)
        return
    scan._accesses(cond, "r")
    scan._guard(cond, negate=False)


def _stepped(e: A.Expr) -> str | None:
    if isinstance(e, A.Unary) and e.op in ("pre++", "post++") and isinstance(e.operand, A.Name):
        return e.operand.name
    if isinstance(e, A.Assign) and isinstance(e.target, A.Name):
        name = e.target.name
        if e.op == "+=":
            return name
        v = e.value
        if e.op == "=" and isinstance(v, A.Binary) and v.op == "+" and _named(v.left, name):
            return name
    return None


def _bounded_by(cond: A.Expr | None, name: str) -> bool:
    """Whether ``cond`` is ``name < e`` / ``name <= e`` (or so conjoined with others)."""
    if isinstance(cond, A.Binary) and cond.op == "&&":
        return _bounded_by(cond.left, name) or _bounded_by(cond.right, name)
    if isinstance(cond, A.Binary) and cond.op in ("<", "<="):
        return _named(cond.left, name)
    if isinstance(cond, A.Binary) and cond.op in (">", ">="):
        return _named(cond.right, name)
    return False


def _assigns(n: object) -> str | None:
    t = None
    if isinstance(n, A.Assign):
        t = n.target
    elif isinstance(n, A.Unary) and n.op in ("pre++", "pre--", "post++", "post--"):
        t = n.operand
    return t.name if isinstance(t, A.Name) else None


def _named(e: A.Expr, name: str) -> bool:
    while isinstance(e, A.Cast):
        e = e.operand
    return isinstance(e, A.Name) and e.name == name
