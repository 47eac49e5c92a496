"""Matching the leaves of a combination tree against per-thread templates: instances of a
template at consecutive thread coordinates, anti-unification of two leaves, and the
memoised walks over value DAGs the matching needs."""

from __future__ import annotations

from cuda2nki.lift import affine as af
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Cond, Poly

_AU = "%leaf"


def _antiunify(a: V.DExpr, b: V.DExpr, atom: str) -> V.DExpr | None:
    """A tree ``t`` with ``t[atom := 0] == a`` and ``t[atom := 1] == b``: equal parts kept,
    index polynomials that differ by a constant ``d`` become ``p + d*atom``; None otherwise."""
    if type(a) is not type(b) or a.dtype != b.dtype:
        return None
    if a == b:
        return a
    if isinstance(a, V.Load):
        p = _au_poly(a.index, b.index, atom)
        return None if p is None or a.tensor != b.tensor else V.Load(a.dtype, a.tensor, p)
    if isinstance(a, V.IntVal):
        p = _au_poly(a.poly, b.poly, atom)
        return None if p is None else V.IntVal(a.dtype, p)
    if isinstance(a, V.Pred):
        ca, cb = a.cond.conjuncts(), b.cond.conjuncts()
        if ca is None or cb is None or len(ca) != len(cb):
            return None
        out = []
        for x, y in zip(ca, cb):
            p = _au_poly(x.poly, y.poly, atom)
            if p is None or x.op != y.op:
                return None
            out.append(Cond.of(af.Cmp(p, x.op)))
        return V.Pred(a.dtype, af.conj(out))
    if isinstance(a, V.Fold):
        if (a.op, a.var, a.start, a.stop, a.step) != (b.op, b.var, b.start, b.stop, b.step):
            return None
    elif isinstance(a, V.Op) and (a.op != b.op or len(a.args) != len(b.args)):
        return None
    kids = V.children(a)
    if not kids:
        return None
    new = tuple(_antiunify(x, y, atom) for x, y in zip(kids, V.children(b)))
    return None if any(k is None for k in new) else V.rebuild(a, new)


def _nearest(leaves: list) -> V.DExpr | None:
    """The leaf whose first differing index is closest to the first leaf's (its neighbour in
    thread order, whatever order the tree combined them in)."""
    best, dist = None, None
    for leaf in leaves[1:65]:
        d = _first_diff(leaves[0], leaf)
        if d is not None and d != 0 and (dist is None or abs(d) < dist):
            best, dist = leaf, abs(d)
    return best


def _first_diff(a: V.DExpr, b: V.DExpr) -> int | None:
    if a is b or type(a) is not type(b):
        return None
    if isinstance(a, V.Load):
        d = b.index - a.index
        return d.const_value if d.is_const else None
    for x, y in zip(V.children(a), V.children(b)):
        d = _first_diff(x, y)
        if d:
            return d
    return None


def _au_poly(p: Poly, q: Poly, atom: str) -> Poly | None:
    d = q - p
    return p + d * af.sym(atom) if d.is_const else None


def _flatten(e: V.DExpr, op: str) -> list:
    if isinstance(e, V.Op) and e.op == op and len(e.args) == 2:
        return _flatten(e.args[0], op) + _flatten(e.args[1], op)
    return [e]


def _combine(op: str, dtype: str, xs: list) -> V.DExpr:
    """``xs`` combined pairwise, as a balanced tree (stays shallow for a block's worth)."""
    if len(xs) == 1:
        return xs[0]
    if len(xs) == 2:
        return V.Op(dtype, op, (xs[0], xs[1]))
    half = len(xs) // 2
    return V.Op(dtype, op, (_combine(op, dtype, xs[:half]), _combine(op, dtype, xs[half:])))


def _thread_atoms(e: V.DExpr) -> list:
    atoms = index_atoms(e)
    return [t for t in af.THREAD if t in atoms]


def _polys(e: V.DExpr) -> list:
    """Index polynomials of ``e`` in preorder (loads, shared reads, integer values)."""
    out = []
    for n in V.walk(e):
        if isinstance(n, V.Load):
            out.append((n.tensor, n.index))
        elif isinstance(n, V.IntVal):
            out.append(("#int", n.poly))
    return out


def _instance(tpl: V.DExpr, leaf: V.DExpr, atom: str) -> Poly | None:
    """``c`` with ``tpl[atom := c] == leaf``, or None.  A structural match (both trees walked in
    step, only the index polynomials that use ``atom`` substituted) answers most leaves; what it
    cannot decide is checked by substituting into and simplifying the whole template."""
    pairs = _pair_up(tpl, leaf, atom)
    V.spend(1 + (len(pairs) if pairs else 0))
    if pairs is not None:
        c = _seed(pairs, atom)
        if c is not None and _agree(pairs, atom, c):
            return c
    return _instance_slow(tpl, leaf, atom)


def _pair_up(t: V.DExpr, x: V.DExpr, atom: str, ctx: tuple = (), out: list | None = None):
    """Nodes of ``t`` that use ``atom`` in an index, each with the node of ``x`` at the same
    place and the fold bounds around it; None when the trees differ elsewhere."""
    out = [] if out is None else out
    if t is x and atom not in index_atoms(t):
        return out
    if type(t) is not type(x) or t.dtype != x.dtype:
        return None
    if isinstance(t, (V.Load, V.IntVal, V.Pred)):
        if atom in _node_atoms(t):
            out.append((t, x, ctx))
            return out
        return out if t == x else None
    if isinstance(t, V.Op) and (t.op != x.op or len(t.args) != len(x.args)):
        return None
    if isinstance(t, V.Fold):
        if (t.op, t.var) != (x.op, x.var):
            return None
        if any(atom in p.atoms() for p in (t.start, t.stop, t.step)):
            out.append((t, x, ctx))
        elif (t.start, t.stop, t.step) != (x.start, x.stop, x.step):
            return None
        return _pair_up(t.body, x.body, atom, ctx + ((x.var, x.stop),), out)
    kids = V.children(t)
    if not kids:
        return out if t == x else None
    for a, b in zip(kids, V.children(x)):
        if _pair_up(a, b, atom, ctx, out) is None:
            return None
    return out


def _node_atoms(n: V.DExpr) -> set:
    if isinstance(n, V.Load):
        return n.index.atoms()
    if isinstance(n, V.IntVal):
        return n.poly.atoms()
    return n.cond.atoms()


def _seed(pairs: list, atom: str) -> Poly | None:
    """The value of ``atom`` read off the first index that uses it linearly."""
    for t, x, _ in pairs:
        if isinstance(t, V.Load) and t.tensor == x.tensor:
            p, q = t.index, x.index
        elif isinstance(t, V.IntVal):
            p, q = t.poly, x.poly
        else:
            continue
        a = af.coefficient(p, atom)
        if a == af.ZERO:
            continue
        num = q - (p - a * af.sym(atom))
        c = num if a == af.ONE else af._exact_div(num, a)
        if c is not None and not c.depends_on({atom}):
            return c
    return None


def _agree(pairs: list, atom: str, c: Poly) -> bool:
    """Each paired template node, with ``atom := c`` and simplified, equals the leaf's node."""
    sub = {atom: c}
    for t, x, ctx in pairs:
        with af.bounds(dict(ctx)):
            if isinstance(t, V.Load):
                ok = t.tensor == x.tensor and V.renorm(t.index.subs(sub)) == x.index
            elif isinstance(t, V.IntVal):
                ok = V.renorm(t.poly.subs(sub)) == x.poly
            elif isinstance(t, V.Pred):
                ok = V.simplify(V.Pred(t.dtype, t.cond.subs(sub))) == x
            else:
                ok = (t.start.subs(sub), t.stop.subs(sub), t.step.subs(sub)) == (
                    x.start,
                    x.stop,
                    x.step,
                )
        if not ok:
            return False
    return True


def index_atoms(e: V.DExpr, memo: dict | None = None) -> frozenset:
    """:func:`cuda2nki.lift.values.index_atoms`, visiting each shared subtree once."""
    memo = _ATOMS_MEMO if memo is None else memo
    got = memo.get(e)
    if got is None:
        if len(memo) > 200_000:
            memo.clear()
        kids = V.children(e)
        if kids:
            own = V.index_atoms(V.rebuild(e, tuple(V.Const(k.dtype, 0) for k in kids)))
            got = frozenset(own).union(*(index_atoms(k, memo) for k in kids))
        else:
            got = frozenset(V.index_atoms(e))
        memo[e] = got
    return got


_ATOMS_MEMO: dict = {}


def tree_size(e: V.DExpr, memo: dict | None = None) -> int:
    """Nodes of ``e`` as a tree (shared subtrees counted at each use), memoised per node."""
    memo = _SIZE_MEMO if memo is None else memo
    got = memo.get(e)
    if got is None:
        if len(memo) > 200_000:
            memo.clear()
        got = memo[e] = 1 + sum(tree_size(k, memo) for k in V.children(e))
    return got


_SIZE_MEMO: dict = {}


def _may_become(tpl: V.DExpr, leaf: V.DExpr) -> bool:
    """Whether simplifying an instance of ``tpl`` can give a tree with ``leaf``'s root:
    substitution keeps every node, simplification only drops selects (and folds constants)."""
    if isinstance(tpl, V.Select):
        return (
            isinstance(leaf, V.Select)
            or _may_become(tpl.then, leaf)
            or _may_become(tpl.else_, leaf)
        )
    if isinstance(leaf, V.Const):
        return isinstance(tpl, (V.Const, V.Pred)) or (
            isinstance(tpl, V.Op) and tpl.op in ("neg", "lnot", "land")
        )
    if type(tpl) is not type(leaf):
        return False
    if isinstance(tpl, V.Op):
        return tpl.op == leaf.op
    if isinstance(tpl, V.Load):
        return tpl.tensor == leaf.tensor
    return True


def _instance_slow(tpl: V.DExpr, leaf: V.DExpr, atom: str) -> Poly | None:
    if tree_size(leaf) > tree_size(tpl) or not _may_become(tpl, leaf):
        return None
    V.spend(tree_size(tpl))
    tp = [(k, p) for k, p in _polys(tpl) if af.coefficient(p, atom) != af.ZERO]
    lp = _polys(leaf)
    tried = set()
    for k, p in tp[:2]:
        a = af.coefficient(p, atom)
        rest = p - a * af.sym(atom)
        for k2, q in lp:
            if k2 != k:
                continue
            num = q - rest
            if a == af.ONE:
                c = num
            else:
                c = af._exact_div(num, a)
                if c is None:
                    continue
            if c in tried or c.depends_on({atom}):
                continue
            tried.add(c)
            if V.simplify(V.subs_poly(tpl, {atom: c})) == leaf:
                return c
            if len(tried) > 4:
                return None
    return None
