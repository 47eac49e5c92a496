"""Rewrites of folds once trees are folded: nested folds fused into one over a mixed-radix
variable, guards tightened into extents, invariant scales and halves merged, and
``exp`` differences rebased."""

from __future__ import annotations

from cuda2nki.lift import affine as af
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Cond, Poly
from cuda2nki.lift.solve import radix_order
from cuda2nki.lift.valmap import _all_polys, _map_polys

#: the identity of each combining operation
_IDENT = {"add": 0.0, "max": float("-inf"), "min": float("inf")}


def _invariant_scale(f: V.Fold) -> tuple[V.Fold, str, V.DExpr] | None:
    """``fold(add, v: x(v) / c)`` (or ``* c``) with ``c`` free of ``v``: (``fold(add, v: x(v))``,
    the op, ``c``).  Float sums are order-independent at the intent level; scaling the total
    instead of each partial (a per-block ``sum / n`` added up with atomics) is the same sum."""
    b = f.body
    if f.op != "add" or not isinstance(b, V.Op) or b.op not in ("div", "mul") or len(b.args) != 2:
        return None
    if not f.dtype.startswith("float"):
        return None
    pairs = [(b.args[0], b.args[1])] + ([(b.args[1], b.args[0])] if b.op == "mul" else [])
    for x, c in pairs:
        if f.var in {str(a) for a in V.index_atoms(c)} or V.has_carried(c):
            continue
        if not any(isinstance(n, V.Fold) for n in V.walk(x)):
            continue  # only to expose a nested sum; a plain scaled body stays as it is
        return V.Fold(f.dtype, "add", f.var, f.start, f.stop, f.step, x), b.op, c
    return None


def split_nested(f: V.Fold) -> tuple[V.Fold, ...] | None:
    """``fold(op, v: a(v) op fold(op, k: b(v, k)))`` as the folds ``fold(op, v: a(v))`` and
    ``fold(op, v: fold(op, k: b(v, k)))``, to be combined with ``op``; None when the body is not
    such a combination.

    A block-stride loop seeded from each thread's own first element, then a tree over the
    threads, executes to that shape; split, the nested pair fuses into one fold over the row
    (:func:`fuse_vars`).  ``add``, ``max`` and ``min`` are associative and commutative (float
    folds are order-independent at the intent level), so the split is the same combination.
    Every leaf must move with ``v`` (a ``v``-free one is ``n`` times itself under ``add``)."""
    if f.op not in _IDENT or not (isinstance(f.body, V.Op) and f.body.op == f.op):
        return None
    leaves = _leaves(f.body, f.op)
    if len(leaves) < 2 or not any(isinstance(x, V.Fold) and x.op == f.op for x in leaves):
        return None
    if any(f.var not in {str(a) for a in V.index_atoms(x)} or V.has_carried(x) for x in leaves):
        return None
    return tuple(V.Fold(f.dtype, f.op, f.var, f.start, f.stop, f.step, x) for x in leaves)


def join_ranges(folds: list) -> V.Fold | None:
    """Two folds of one ``op`` over adjacent column ranges of one row as one fold over the row.

    A thread's seed ``j < W ? x(j) : y`` for ``j < B``, and the rest of its block-stride loop
    fused over the threads, ``x(B + k)`` for ``k < W - B``, cover ``x(c)`` for ``c < W``: the
    seed's stand-in ``y`` is the identity of ``op``, or (``max``/``min``, which ignore a
    repeat) the row's first element ``x(0)``; the rest is empty when ``W <= B``."""
    if len(folds) != 2:
        return None
    for seed, rest in (folds, folds[::-1]):
        whole = _join_pair(seed, rest)
        if whole is not None:
            return whole
    return None


def _join_pair(seed: V.Fold, rest: V.Fold) -> V.Fold | None:
    if not all(
        isinstance(f, V.Fold) and f.start == af.ZERO and f.step == af.ONE for f in (seed, rest)
    ):
        return None
    if seed.op != rest.op or seed.dtype != rest.dtype or not seed.stop.is_const:
        return None
    b, j = seed.body, seed.var
    if not (isinstance(b, V.Select) and isinstance(b.cond, V.Pred)):
        return None
    cmps = b.cond.cond.conjuncts()
    if not cmps or len(cmps) != 1 or cmps[0].op != "<":
        return None
    width = af.sym(j) - cmps[0].poly  # the guard is j < width
    if width.depends_on((j,)) or rest.stop != width - seed.stop:
        return None
    row = b.then
    shifted = V.simplify(V.subs_poly(row, {j: af.sym(rest.var) + seed.stop}))
    if shifted != V.simplify(rest.body) or not _stand_in(b.else_, row, j, seed.op):
        return None
    return V.Fold(seed.dtype, seed.op, j, af.ZERO, width, af.ONE, row)


def _stand_in(y: V.DExpr, row: V.DExpr, j: str, op: str) -> bool:
    """``y`` changes nothing in an ``op`` fold over a row ``row(j)`` of at least one element."""
    if isinstance(y, V.Const) and y.value == _IDENT[op]:
        return True
    first = V.simplify(V.subs_poly(row, {j: af.ZERO}))
    return op in ("max", "min") and V.simplify(y) == first


def _leaves(e: V.DExpr, op: str) -> list:
    if isinstance(e, V.Op) and e.op == op and len(e.args) == 2:
        return _leaves(e.args[0], op) + _leaves(e.args[1], op)
    return [e]


def _neutral(c: V.DExpr, op: str) -> bool:
    """``c op x == x`` for every ``x`` of the dtype (0 for add, the dtype's lowest for max)."""
    if not isinstance(c, V.Const):
        return False
    if c.value == _IDENT.get(op):
        return True
    if c.dtype.startswith(("int", "uint")) and op in ("max", "min"):
        import numpy as np

        info = np.iinfo(c.dtype)
        return c.value == (info.min if op == "max" else info.max)
    return False


def _merge_halves(f: V.Fold) -> V.Fold:
    """``fold(v < E: g(v) op g(v + E))`` -> ``fold(v < 2E: g(v))`` (each thread combining two
    elements a block apart before the tree: one fold over twice the block)."""
    if not (
        isinstance(f.body, V.Op)
        and f.body.op == f.op
        and len(f.body.args) == 2
        and f.start == af.ZERO
        and f.step == af.ONE
    ):
        return f
    for lo, hi in (f.body.args, f.body.args[::-1]):
        with af.bounds({f.var: 2 * f.stop}):
            moved = V.simplify(V.subs_poly(lo, {f.var: af.sym(f.var) + f.stop}))
            if moved == V.simplify(hi):
                return V.Fold(f.dtype, f.op, f.var, f.start, 2 * f.stop, f.step, lo)
    return f


def _rebase_exp(e: V.DExpr) -> V.DExpr | None:
    """``S * exp(A - B)`` where ``S`` is a sum of folds of ``exp(u - A)`` -> the same folds of
    ``exp(u - B)`` (``exp(u - A) * exp(A - B) == exp(u - B)``): the rescaling by which online
    softmax merges partial normalisers, undone so that the partial sums form one fold."""
    if not (isinstance(e, V.Op) and e.op == "mul" and len(e.args) == 2):
        return None
    for s, f in (e.args, e.args[::-1]):
        ab = _exp_sub(f)
        if ab is not None:
            got = _rebased(s, ab[0], ab[1])
            if got is not None:
                return got
    return None


def _rebased(s: V.DExpr, a: V.DExpr, b: V.DExpr) -> V.DExpr | None:
    if isinstance(s, V.Op) and s.op == "add" and len(s.args) == 2:
        x, y = (_rebased(t, a, b) for t in s.args)
        return None if x is None or y is None else V.Op(s.dtype, "add", (x, y))
    if isinstance(s, V.Fold) and s.op == "add":
        body = _rebased_term(s.body, a, b)
        return None if body is None else V.rebuild(s, (body,))
    return None


def _rebased_term(t: V.DExpr, a: V.DExpr, b: V.DExpr) -> V.DExpr | None:
    if isinstance(t, V.Select) and isinstance(t.else_, V.Const) and t.else_.value == 0:
        inner = _rebased_term(t.then, a, b)
        return None if inner is None else V.Select(t.dtype, t.cond, inner, t.else_)
    ub = _exp_sub(t)
    if ub is None or ub[1] != a:
        return None
    return V.Op(t.dtype, "exp", (V.Op(t.dtype, "sub", (ub[0], b)),))


def _exp_sub(e: V.DExpr) -> tuple | None:
    """``(a, b)`` for ``exp(a - b)``."""
    if isinstance(e, V.Op) and e.op == "exp" and isinstance(e.args[0], V.Op):
        inner = e.args[0]
        if inner.op == "sub" and len(inner.args) == 2:
            return inner.args
    return None


def _guarded_term(e: V.DExpr) -> V.DExpr | None:
    """``c ? a + b : a`` -> ``a + (c ? b : 0)`` (``s = x[i]; if (i + B < n) s += x[i + B]``):
    each term then carries its own guard, as a padded load does."""
    if not (isinstance(e, V.Select) and isinstance(e.then, V.Op) and e.then.op == "add"):
        return None
    a, b = e.then.args
    zero = V.Const(e.dtype, 0.0)
    if b == e.else_:
        a, b = b, a
    elif a != e.else_:
        return None
    return V.Op(e.dtype, "add", (a, V.Select(e.dtype, e.cond, b, zero)))


def fuse_vars(extents: dict, body: V.DExpr, name: str):
    """Replace variables that only occur as one mixed-radix combination (up to a common factor
    per use: ``k + 16*t`` in ``A[row*K + k + 16*t]`` and ``(k + 16*t)*N`` in ``B``) by a single
    variable.  Returns ``(var, extent, body)`` or None."""
    vs = set(extents)
    norm = None
    for _, p in _all_polys(body):
        aff = af.affine(p, vs)
        if aff is None or any(k not in vs for k in aff.coeffs):
            return None
        if not aff.coeffs:
            continue
        if set(aff.coeffs) != vs:
            return None
        order = radix_order(aff.coeffs, extents)
        if order is None:
            return None
        c0 = aff.coeffs[order[0]]
        unit = {}
        for v in order:
            q = af._exact_div(aff.coeffs[v], c0)
            if q is None:
                return None
            unit[v] = q
        key = tuple(sorted((str(k), v) for k, v in unit.items()))
        if norm is None:
            norm = (key, order, unit)
        elif norm[0] != key:
            return None
    if norm is None:
        return None
    _, order, unit = norm
    ext = Poly.const(1)
    for v in order:
        ext = ext * extents[v]

    def rw(p: Poly) -> Poly:
        aff = af.affine(p, vs)
        if not aff.coeffs:
            return p
        c0 = aff.coeffs[order[0]]
        return p - sum((aff.coeffs[v] * af.sym(v) for v in order), af.ZERO) + c0 * af.sym(name)

    return name, ext, _map_polys(body, rw)


def _hoist_common_guard(body: V.DExpr) -> V.DExpr:
    """``(c1 && g ? a : 0) * (c2 && g ? b : 0)`` -> ``g ? (c1 ? a : 0) * (c2 ? b : 0) : 0``
    (exact: with ``g`` false both factors are 0)."""
    if not (isinstance(body, V.Op) and body.op == "mul"):
        return body
    sels = body.args
    if not all(
        isinstance(x, V.Select)
        and isinstance(x.cond, V.Pred)
        and isinstance(x.else_, V.Const)
        and x.else_.value == 0
        for x in sels
    ):
        return body
    cs = [x.cond.cond.conjuncts() for x in sels]
    if any(c is None for c in cs):
        return body
    common = [c for c in cs[0] if c in cs[1]]
    if not common:
        return body

    def rest(x: V.Select, cc: list) -> V.DExpr:
        left = [c for c in cc if c not in common]
        if not left:
            return x.then
        return V.Select(x.dtype, V.Pred("bool", af.conj(Cond.of(c) for c in left)), x.then, x.else_)

    prod = V.Op(body.dtype, "mul", (rest(sels[0], cs[0]), rest(sels[1], cs[1])))
    return V.Select(
        body.dtype,
        V.Pred("bool", af.conj(Cond.of(c) for c in common)),
        prod,
        V.Const(body.dtype, 0.0),
    )


def _tighten(f: V.Fold) -> V.Fold:
    """``fold(v < c*ceil(X/c): cond(v < X) ? b : id)`` -> ``fold(v < X: b)``."""
    body = _hoist_common_guard(f.body) if f.op == "add" else f.body
    if not (isinstance(body, V.Select) and isinstance(body.cond, V.Pred)):
        return f
    if not _neutral(body.else_, f.op):
        return f
    cmps = body.cond.cond.conjuncts()
    if cmps is None:
        return f
    for c in cmps:
        if c.op != "<" or af.coefficient(c.poly, f.var) != af.ONE:
            continue
        x = -(c.poly - af.sym(f.var))  # v < x
        if x.depends_on({f.var}) or not _covers(f.stop, x):
            continue
        rest = [Cond.of(o) for o in cmps if o is not c]
        nb = (
            body.then
            if not rest
            else V.Select(body.dtype, V.Pred("bool", af.conj(rest)), body.then, body.else_)
        )
        return V.Fold(f.dtype, f.op, f.var, f.start, x, f.step, nb)
    return f


def _covers(ext: Poly, x: Poly) -> bool:
    """``ext >= x`` for ``ext = c * ((x + c - 1) / c)`` (or ``ext == x``)."""
    if ext == x or (ext.is_const and x.is_const and x.const_value <= ext.const_value):
        return True
    for m, c in ext.terms:
        if len(ext.terms) == 1 and len(m) >= 1:
            divs = [a for a in m if isinstance(a, af.DivAtom)]
            if len(divs) != 1:
                return False
            d = divs[0]
            factor = Poly(((tuple(a for a in m if a is not d), c),))
            return d.den == factor and d.num == x + factor - 1
    return False
