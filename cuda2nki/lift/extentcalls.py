"""Integer helpers in index expressions, for the extent scan (:mod:`cuda2nki.lift.extents`):
``i < ceil_div(V, 4)``, ``x[at(r, c, w)]`` with ``__device__ int at(int r, int c, int w) { return
r * w + c; }``.

A device function whose body is a single ``return`` of an integer expression over its own
parameters is the value of that expression with the arguments in place of the parameters.  Any
other call stays opaque (the scan does not model it).
"""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk
from cuda2nki.lift.affine import Poly

#: helpers expanded inside helpers this many calls deep
_MAX_DEPTH = 3


def returned(scan, e: A.Call) -> Poly | None:
    """The value of call ``e`` of a one-``return`` integer helper, None when it is not one (or an
    argument is not an integer the scan follows: the scan's own exception then propagates)."""
    g = scan.device(e.target) if scan.device is not None and e.target else None
    depth = scan.__dict__.setdefault("_returning", [])
    if g is None or len(depth) >= _MAX_DEPTH or e.target in depth:
        return None
    value = _single_return(g)
    if value is None or len(g.params) != len(e.args):
        return None
    names = {p.name for p in g.params}
    if not all(isinstance(p.ty, A.ScalarType) and not p.ty.is_float for p in g.params):
        return None
    if any(isinstance(n, A.Name) and n.name not in names for n in walk(value)):
        return None  # a global or a member: not a function of the arguments alone
    args = {p.name: scan._poly(a) for p, a in zip(g.params, e.args)}
    saved = scan.env
    scan.env = args
    depth.append(e.target)
    try:
        return scan._poly(value)
    finally:
        depth.pop()
        scan.env = saved


def _single_return(g: A.Function) -> A.Expr | None:
    """The returned expression of a body that is one ``return e;`` of an integer type."""
    if g.body is None or len(g.body.body) != 1:
        return None
    st = g.body.body[0]
    if not isinstance(st, A.Return) or st.value is None:
        return None
    if not isinstance(g.return_type, A.ScalarType) or g.return_type.is_float:
        return None
    return st.value


#: integer minimum functions: ``min(a, b)`` is at most each of its arguments
_MIN = frozenset({"min", "umin", "llmin", "ullmin"})


def clamped(scan, e: A.Call) -> Poly | None:
    """``min(a, b)`` as an atom of its own below ``b + 1`` (a clamp ``min(i, n - 1)``: the bound
    holds whatever ``i`` is), or below ``a + 1`` when neither argument is free of indices
    (``min(t, t3 + k)``, with ``t`` bounded by its loop); None when it is no integer ``min``."""
    if e.func not in _MIN or len(e.args) != 2 or e.target is not None:
        return None
    args = [scan._poly(a) for a in e.args]  # an opaque argument: the call is opaque
    free = [a for a in args if not a.depends_on(scan._index_atoms(a))]
    top = free[0] if free else args[0]
    atom = scan._fresh("?min")
    scan.hi[atom] = (top + 1, False)
    return Poly.atom(atom)
