"""What a ``__device__`` function does with a pointer it is passed: reads it, writes it, or both.

The index-expression scan (:mod:`cuda2nki.lift.extents`) sees ``SetElement(Csub, row, col, v)``
pass a pointer to a helper; what the helper does with it decides the pointer's role.  The
programming guide's matrix helpers (``GetElement`` reads, ``SetElement`` writes) are the common
case; a helper that hands the pointer on to another one is followed a few calls deep.
"""

from __future__ import annotations

from collections.abc import Callable

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk

#: helpers handing a pointer on are followed this many calls deep
_MAX_DEPTH = 4


def callee_roles(tu: A.TranslationUnit) -> Callable[[str, int], str]:
    """``role(function, i)``: ``"r"``, ``"w"`` or ``"rw"``, what device function ``function``
    does through its ``i``-th parameter (``"r"`` when it is not a function of ``tu``), ``""``
    when it only computes addresses from it (``&A.elements[r * A.stride + c]``)."""
    memo: dict[tuple[str, int], str] = {}

    def role(name: str, i: int, depth: int = 0) -> str:
        key = (name, i)
        if key not in memo:
            memo[key] = "r"  # a recursive helper: what the other calls show
            memo[key] = _role(tu, name, i, depth, role)
        return memo[key]

    return lambda name, i: role(name, i)


def _role(tu: A.TranslationUnit, name: str, i: int, depth: int, role) -> str:  # noqa: ANN001
    fn = tu.function(name)
    if fn is None or i >= len(fn.params) or not isinstance(fn.params[i].ty, A.PointerType):
        return "r"
    p = fn.params[i].name
    writes = reads = False
    for n in walk(fn.body):
        if isinstance(n, A.Assign) and _through(n.target, p):
            writes = True
            reads = reads or n.op != "="
        elif isinstance(n, A.Unary) and n.op[-2:] in ("++", "--") and _through(n.operand, p):
            writes = reads = True
        elif isinstance(n, A.Call) and n.target is not None and depth < _MAX_DEPTH:
            for j, a in enumerate(n.args):
                if isinstance(a, A.Name) and a.name == p:
                    got = role(n.target, j, depth + 1)
                    writes = writes or "w" in got
                    reads = reads or "r" in got
    reads = reads or _read_elsewhere(fn, p)
    if not writes:
        return "r" if reads or _escapes(fn, p) else ""
    return "rw" if reads else "w"


def _escapes(fn: A.Function, p: str) -> bool:
    """Whether ``fn`` hands ``p`` on where this module does not follow it: to an intrinsic, or
    stored in memory.  A pointer only offset (``&p[i]``, ``p + i``) into a local or an
    out-parameter is not an access."""
    for n in walk(fn.body):
        if isinstance(n, A.Call) and n.target is None:
            if any(_names(a, p) or _address_in(a, p) for a in n.args):
                return True
    return False


def _address_in(e: A.Expr, p: str) -> bool:
    return isinstance(e, A.Unary) and e.op == "&" and _through(_element(e.operand), p)


def _through(t: A.Expr, p: str) -> bool:
    """Whether ``t`` is an element reached through pointer ``p`` (``p[i]``, ``*p``, ``*(p + i)``,
    ``p[i].x``)."""
    while isinstance(t, A.Member):
        t = t.base
    if isinstance(t, A.Index):
        return _names(t.base, p)
    if isinstance(t, A.Unary) and t.op == "*":
        return _names(t.operand, p)
    return False


def _names(e: A.Expr, p: str) -> bool:
    if isinstance(e, A.Name):
        return e.name == p
    if isinstance(e, A.Binary) and e.op in ("+", "-"):
        return _names(e.left, p) or _names(e.right, p)
    if isinstance(e, A.Cast):
        return _names(e.operand, p)
    if isinstance(e, A.Unary) and e.op == "&" and isinstance(e.operand, A.Index):
        return _names(e.operand.base, p)  # `((float4*)&p[i])[0]`: an element of p, widened
    return False


def _read_elsewhere(fn: A.Function, p: str) -> bool:
    """Whether ``fn`` reads an element through ``p`` outside the left side of an ``=``."""
    targets = {id(_element(n.target)) for n in walk(fn.body) if isinstance(n, A.Assign)}
    # an address taken (`&p[i]`) reads nothing
    targets |= {
        id(_element(n.operand)) for n in walk(fn.body) if isinstance(n, A.Unary) and n.op == "&"
    }
    for n in walk(fn.body):
        if id(n) in targets or not isinstance(n, A.Index | A.Unary):
            continue
        if (isinstance(n, A.Index) or n.op == "*") and _through(n, p):
            return True
    return False


def _element(t: A.Expr) -> A.Expr:
    while isinstance(t, A.Member):
        t = t.base
    return t
