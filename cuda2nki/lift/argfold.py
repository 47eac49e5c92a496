"""Index-valued reductions (argmax / argmin) in the symbolic execution.

A loop that keeps a running extremum and the index where it was found::

    if (x > best) { best = x; best_i = v; }

leaves ``best = select(x > best', x, best')`` and ``best_i = select(x > best', v, best_i')``.
The value folds to a ``max`` like any running maximum; the index becomes an index-valued
reduction over the same loop: the first (strict comparison) or last (``>=``) position whose
value equals the maximum, expressed with documented tile operations only -- a ``max`` (``min``)
reduction, an equality against it and a ``min`` (``max``) reduction of the position (``iota``)
where it holds::

    M      = max(best0, max_k x(k))
    best_i = found ? min_k select(x(k) == M, v(k), BIG) : best_i0

``found`` is whether any element beat the initial value (``M > best0`` for a strict comparison,
``max_k x(k) >= best0`` otherwise), so a row that never beats the initial value keeps the initial
index exactly as the loop does.  NaN elements never win in CUDA's loop; the ``max`` reduction
propagates them (the same caveat as any running maximum).
"""

from __future__ import annotations

from dataclasses import dataclass

from cuda2nki.lift import affine as af
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Poly

#: extremum op and whether the comparison is strict, by the comparison ``x cmp acc``
_BY_CMP = {"gt": ("max", True), "ge": ("max", False), "lt": ("min", True), "le": ("min", False)}
_FLIP = {"gt": "lt", "ge": "le", "lt": "gt", "le": "ge"}
INT32_MAX = 2**31 - 1
INT32_MIN = -(2**31)


@dataclass(frozen=True)
class ArgPair:
    """``index`` follows ``value``'s running extremum ``op`` over the loop."""

    index: str
    value: str
    op: str  # max | min
    strict: bool
    term: V.DExpr  # the candidate value x(k)
    pos: V.DExpr  # the candidate index v(k) (data)
    coeff: int  # d pos / dk: its sign says whether the first k has the least pos


def _strip(e: V.DExpr) -> V.DExpr:
    while isinstance(e, V.Cast):
        e = e.operand
    return e


def _extremum(new: V.DExpr, car: V.Carried) -> tuple[V.Op, str, bool, V.DExpr] | None:
    """``select(x cmp acc, x, acc)`` (either operand order): (condition, op, strict, x)."""
    if not (isinstance(new, V.Select) and new.else_ == car and isinstance(new.cond, V.Op)):
        return None
    c = new.cond
    if c.op not in _BY_CMP or len(c.args) != 2 or V.has_carried(new.then):
        return None
    a, b = c.args
    if (a, b) == (new.then, car):
        op, strict = _BY_CMP[c.op]
    elif (a, b) == (car, new.then):
        op, strict = _BY_CMP[_FLIP[c.op]]
    else:
        return None
    return c, op, strict, new.then


def _position(e: V.DExpr, var: str) -> tuple[V.DExpr, int] | None:
    """An index value affine in the loop variable with a constant non-zero slope."""
    s = _strip(e)
    if not isinstance(s, V.IntVal):
        return None
    slope = af.coefficient(s.poly, var)
    if not slope.is_const or slope.const_value == 0:
        return None
    if af.coefficient(s.poly - slope * af.sym(var), var) != af.ZERO:
        return None
    return s, slope.const_value


def pairs(env: dict, carried: dict, ints: set[str], var: str) -> dict[str, ArgPair]:
    """The index locals of ``ints`` that follow a carried running extremum, by name."""
    found: dict[str, ArgPair] = {}
    ext = {}
    for m in carried:  # the value may be an integer key too (``int best = INT_MAX``)
        got = _extremum(env.get(m), V.Carried(env[m].dtype, m)) if env.get(m) else None
        if got is not None:
            ext[m] = got
    for n in ints:
        new = env.get(n)
        if not isinstance(new, V.Select) or new.else_ != V.Carried(new.dtype, n):
            continue
        for m, (cond, op, strict, term) in ext.items():
            if new.cond != cond:
                continue
            pos = _position(new.then, var)
            if pos is not None and n != m:
                found[n] = ArgPair(n, m, op, strict, term, pos[0], pos[1])
    return found


def index_fold(
    p: ArgPair, total: V.DExpr, init_value: V.DExpr, init_index: V.DExpr, ctx: object
) -> V.DExpr:
    """The index after the loop (``total``: the value local's folded result)."""
    dt = init_index.dtype
    first = p.strict == (p.coeff > 0)  # the least position wins
    pick = "min" if first else "max"
    big = V.Const(dt, INT32_MAX if first else INT32_MIN)
    pos = p.pos if p.pos.dtype == dt else V.Cast(dt, p.pos)
    body = V.Select(dt, V.Op("bool", "eq", (p.term, total)), pos, big)
    if ctx.guard != af.TRUE:  # the loop's own bound: the fold's domain
        body = V.Select(dt, V.Pred("bool", ctx.guard), body, big)
    fold = V.Fold(dt, pick, ctx.var, af.ZERO, ctx.extent, af.ONE, body)
    over = _over_loop(total, p.op)
    cmp = ("gt" if p.op == "max" else "lt") if p.strict else ("ge" if p.op == "max" else "le")
    found = V.Op("bool", cmp, (over, init_value))
    return V.Select(dt, found, fold, init_index)


def _over_loop(total: V.DExpr, op: str) -> V.DExpr:
    """The loop's own extremum inside ``total = op(init, fold)`` (or ``total`` itself)."""
    if isinstance(total, V.Op) and total.op == op and len(total.args) == 2:
        if isinstance(total.args[1], V.Fold):
            return total.args[1]
    return total


def int_init(v: object) -> bool:
    return isinstance(v, Poly)


# --------------------------------------------------------------------------- lane ladders


@dataclass(frozen=True)
class Ladder:
    """A (value, index) pair merged across lanes with shuffles, one offset per step."""

    op: str  # max | min of the value
    tie: str  # min | max of the index among equal values
    kind: str  # the shuffle function
    width: int
    offsets: frozenset
    base: tuple  # (value, index) each lane held before the first step
    now: tuple  # (value, index) after the last step seen
    #: the offsets in step order and, for a plain comparison (``tie == "shape"``: equal values
    #: are settled by the ladder's shape, :mod:`cuda2nki.lift.movetree`), whether it is strict
    order: tuple = ()
    strict: bool = True


def _cmp(e: V.DExpr) -> tuple[str, V.DExpr, V.DExpr] | None:
    """``a < b`` / ``a <= b`` / ``a == b`` in a canonical spelling."""
    if not (isinstance(e, V.Op) and len(e.args) == 2):
        return None
    a, b = e.args
    if e.op in ("lt", "le", "eq"):
        return e.op, a, b
    if e.op in ("gt", "ge"):
        return _FLIP[e.op], b, a
    return None


def _lex(c: V.DExpr, o, a0, oi, b0) -> tuple[str, str] | None:
    """``o beats a0 || (o == a0 && oi beats b0)`` (any operand order): (value op, index tie)."""
    if not (isinstance(c, V.Op) and c.op == "lor" and len(c.args) == 2):
        return None
    for first, second in (c.args, c.args[::-1]):
        win = _cmp(first)
        if win is None or win[0] != "lt" or {win[1], win[2]} != {o, a0}:
            continue
        op = "max" if win[2] == o else "min"
        if not (isinstance(second, V.Op) and second.op == "land" and len(second.args) == 2):
            continue
        for eq, idx in (second.args, second.args[::-1]):
            e, t = _cmp(eq), _cmp(idx)
            if e is None or e[0] != "eq" or {e[1], e[2]} != {o, a0}:
                continue
            if t is None or t[0] != "lt" or {t[1], t[2]} != {oi, b0}:
                continue
            return op, "min" if t[1] == oi else "max"
    return None


def ladder_step(info: dict, ladders: dict, va, a0, vb, b0) -> Ladder | None:
    """One ``if (lex(other, mine)) { mine = other; mine_i = other_i; }`` step of a lane ladder
    (``info``: the executor's shuffle records): the ladder so far, or None."""
    if not (isinstance(va, V.Select) and isinstance(vb, V.Select) and va.cond is vb.cond):
        return None
    if va.else_ != a0 or vb.else_ != b0:
        return None
    o, oi = va.then, vb.then
    ia, ib = info.get(id(o)), info.get(id(oi))
    if ia is None or ib is None or ia[3] is not o or ib[3] is not oi:
        return None
    if ia[2] != a0 or ib[2] != b0 or ia[0] != ib[0] or ia[1] != ib[1] or ia[4] != ib[4]:
        return None
    got = _lex(va.cond, o, a0, oi, b0)
    strict = True
    if got is None:
        plain = _plain(va.cond, o, a0)
        if plain is None:
            return None
        got, strict = (plain[0], "shape"), plain[1]
    op, tie = got
    kind, off, width = ia[0], ia[1], ia[4]
    st = ladders.get(id(a0))
    if (
        st is not None
        and st.now[0] is a0
        and st.now[1] is b0
        and (st.op, st.tie, st.kind, st.width, st.strict) == (op, tie, kind, width, strict)
        and off not in st.offsets
    ):
        return Ladder(
            op, tie, kind, width, st.offsets | {off}, st.base, (va, vb), (*st.order, off), strict
        )
    return Ladder(op, tie, kind, width, frozenset({off}), (a0, b0), (va, vb), (off,), strict)


def _plain(c: V.DExpr, o: V.DExpr, a0: V.DExpr) -> tuple[str, bool] | None:
    """``o`` beats ``a0`` by a plain comparison: (value op, strict)."""
    if not (isinstance(c, V.Op) and c.op in _BY_CMP and len(c.args) == 2):
        return None
    if c.args == (o, a0):
        return _BY_CMP[c.op]
    if c.args == (a0, o):
        return _BY_CMP[_FLIP[c.op]]
    return None


def complete(st: Ladder) -> bool:
    return st.offsets == frozenset(1 << k for k in range(st.width.bit_length() - 1))


def _split_index(e: V.DExpr) -> tuple | None:
    """``found ? fold : init`` as :func:`index_fold` builds it: (cmp, over, init value, fold,
    init index)."""
    if not (isinstance(e, V.Select) and isinstance(e.cond, V.Op) and isinstance(e.then, V.Fold)):
        return None
    c = e.cond
    if c.op not in _BY_CMP or len(c.args) != 2 or not isinstance(e.then.body, V.Select):
        return None
    return c.op, c.args[0], c.args[1], e.then, e.else_


_PLACE = V.Carried("float32", "%argmax-total")


def lane_index(st: Ladder, subs, fold_lanes, total: V.DExpr, dt: str) -> V.DExpr:
    """The index the ladder leaves: among the lanes whose value equals ``total`` (the value's
    fold over the lanes), the least (``tie``) index.  ``subs(e)`` is ``e`` as lane ``t`` holds
    it, ``fold_lanes(op, body)`` the fold over the lanes.  Where each lane's index is itself an
    index fold over a loop (:func:`index_fold`) with the same tie rule, the two merge into one
    index fold over all the elements."""
    base_a, base_b = st.base
    big = V.Const(dt, INT32_MAX if st.tie == "min" else INT32_MIN)
    parts = _split_index(base_b)
    if parts is not None:
        cmp, over, init_v, fold, init_i = parts
        atoms = V.index_atoms(init_v) | V.index_atoms(init_i)
        body = V.transform(fold.body, lambda x: _PLACE if x == base_a else None)
        if fold.op == st.tie and not atoms & set(af.THREAD) and _PLACE in V.walk(body):
            inner = V.Fold(dt, fold.op, fold.var, fold.start, fold.stop, fold.step, body)
            idx = fold_lanes(st.tie, subs(inner))
            idx = V.transform(idx, lambda x: total if x == _PLACE else None)
            found = V.Op("bool", cmp, (fold_lanes(st.op, subs(over)), init_v))
            return V.Select(dt, found, idx, init_i)
    hit = V.Op("bool", "eq", (subs(base_a), total))
    return fold_lanes(st.tie, V.Select(dt, hit, subs(base_b), big))
