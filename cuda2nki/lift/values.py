"""Symbolic data values of one CUDA thread: what the lifter's symbolic execution produces.

A value is an expression tree over loads of kernel tensors (at :class:`~cuda2nki.lift.affine.Poly`
flat indices), scalar parameters, constants, arithmetic (:class:`Op` named by the tile-IR op
spelling), selects, casts and folds over loop variables (:class:`Fold`).  Trees are immutable and
structurally comparable, so two spellings of the same computation produce the same tree.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from cuda2nki.lift.affine import WORK, Atom, BudgetExceeded, Cond, OpaqueAtom, Poly


@dataclass(frozen=True)
class DExpr:
    dtype: str


def _cached_hash(self: DExpr) -> int:
    h = self.__dict__.get("_hash")
    if h is None:
        h = hash((type(self).__name__,) + tuple(getattr(self, f) for f in self._fieldnames))
        object.__setattr__(self, "_hash", h)
    return h


def _install_cached_hash(cls: type) -> type:
    """Trees are hashed often (memo tables); cache each node's hash."""
    import dataclasses

    cls._fieldnames = tuple(f.name for f in dataclasses.fields(cls))
    cls.__hash__ = _cached_hash
    return cls


@dataclass(frozen=True)
class Const(DExpr):
    value: float | int | bool


@dataclass(frozen=True)
class Scalar(DExpr):
    """A scalar kernel parameter used as data."""

    name: str


@dataclass(frozen=True)
class IntVal(DExpr):
    """An index-level integer used as data (e.g. ``out[i] = i``)."""

    poly: Poly


@dataclass(frozen=True)
class Pred(DExpr):
    """An index-level condition used as data (``bool``)."""

    cond: Cond


@dataclass(frozen=True)
class Load(DExpr):
    tensor: str
    index: Poly  # flat element index into the pointer parameter


@dataclass(frozen=True)
class Op(DExpr):
    op: str  # cuda2nki.ir.ops.Op value
    args: tuple


@dataclass(frozen=True)
class Select(DExpr):
    cond: DExpr
    then: DExpr
    else_: DExpr


@dataclass(frozen=True)
class Cast(DExpr):
    operand: DExpr


@dataclass(frozen=True)
class Bitcast(DExpr):
    """The bits of ``operand`` read as ``dtype`` (same width): see :func:`bitcast`."""

    operand: DExpr


@dataclass(frozen=True)
class Fold(DExpr):
    """``op``-combination of ``body`` over ``var`` in ``start, start+step, ... < stop`` (identity
    when empty).  Float folds are order-independent at the intent level."""

    op: str
    var: str
    start: Poly
    stop: Poly
    step: Poly
    body: DExpr


@dataclass(frozen=True)
class Carried(DExpr):
    """Placeholder for a loop-carried local's value at the start of an iteration."""

    name: str


@dataclass(frozen=True)
class Iterate(DExpr):
    """The value of carried local ``names[result]`` after an elementwise loop with a
    data-dependent exit that a counter bounds (``do { ... ++it; } while (err > tol && it < K)``).

    The locals start at ``init``; an iteration computes ``update`` and ``cond`` from the values at
    its start (:class:`Carried` placeholders: ``cond`` is the loop test after the body, spelled in
    those values), the locals take the updated values where the element is still active, and it
    stays active while ``cond`` holds.  ``enter`` (None for a do-while loop) decides whether the
    first iteration runs.  At most ``trips`` iterations run (the counter's conjunct fails then)."""

    names: tuple  # tuple[str, ...]
    init: tuple  # tuple[DExpr, ...]
    update: tuple  # tuple[DExpr, ...] over Carried
    cond: DExpr  # over Carried
    enter: DExpr | None
    trips: Poly
    result: int


@dataclass(frozen=True)
class Undef(DExpr):
    """A value the analysis does not model (a lane's partial shuffle sum); lifting fails if it
    reaches a store."""


@dataclass(frozen=True)
class SRead(DExpr):
    """A read of shared array ``array`` at ``index`` (reader's coordinates), seeing the first
    ``upto`` writes of the array's write log; ``epoch`` counts the reader's barriers.  Resolved
    lazily (:mod:`cuda2nki.lift.finalize`), after the reader's coordinates are known."""

    array: str
    index: tuple
    upto: int
    epoch: int
    ctx: tuple = ()  # loop variables around the reader
    live: Cond | None = None  # the reader's own guard (holds wherever the read matters)
    #: the reader's thread coordinates (x, y, z) once substituted (a guard ``tid == 0`` pins
    #: them); empty: the reader's own ``threadIdx`` symbols
    who: tuple = ()


for _c in (
    Const, Scalar, IntVal, Pred, Load, Op, Select, Cast, Bitcast, Fold, Carried, SRead, Undef,
    Iterate,
):  # fmt: skip
    _install_cached_hash(_c)


def bitcast(dtype: str, x: DExpr) -> DExpr:
    """``x``'s bits read as ``dtype``: ``x`` itself for its own type, the original value for
    the bits of a bitcast read back as the type they came from (a float stored through an
    ``int*`` view of a buffer and read through a ``float*`` one)."""
    if x.dtype == dtype:
        return x
    if isinstance(x, Bitcast) and x.operand.dtype == dtype:
        return x.operand
    return Bitcast(dtype, x)


# --------------------------------------------------------------------------- traversal


def children(e: DExpr) -> tuple[DExpr, ...]:
    if isinstance(e, Op):
        return e.args
    if isinstance(e, Select):
        return (e.cond, e.then, e.else_)
    if isinstance(e, Cast | Bitcast):
        return (e.operand,)
    if isinstance(e, Fold):
        return (e.body,)
    if isinstance(e, Iterate):
        return (*e.init, *e.update, e.cond) + (() if e.enter is None else (e.enter,))
    return ()


def rebuild(e: DExpr, kids: tuple[DExpr, ...]) -> DExpr:
    if isinstance(e, Op):
        return Op(e.dtype, e.op, kids)
    if isinstance(e, Select):
        return Select(e.dtype, *kids)
    if isinstance(e, Cast):
        return Cast(e.dtype, kids[0])
    if isinstance(e, Bitcast):
        return bitcast(e.dtype, kids[0])
    if isinstance(e, Fold):
        return Fold(e.dtype, e.op, e.var, e.start, e.stop, e.step, kids[0])
    if isinstance(e, Iterate):
        k = len(e.names)
        enter = kids[2 * k + 1] if e.enter is not None else None
        return Iterate(
            e.dtype, e.names, kids[:k], kids[k : 2 * k], kids[2 * k], enter, e.trips, e.result
        )
    return e


def walk(e: DExpr):
    """Every node of ``e`` in pre-order, each once: a value is a DAG (a shuffle ladder or an
    online recurrence reads each step's value several times), walked in time linear in its
    number of distinct nodes, not in the size of the tree it unfolds to."""
    seen: set[int] = set()
    stack = [e]
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        yield x
        kids = children(x)
        if kids:
            stack.extend(reversed(kids))


def transform(e: DExpr, fn: Callable[[DExpr], DExpr | None]) -> DExpr:
    """Bottom-up rewrite: ``fn`` returns a replacement or None to keep the (rebuilt) node.
    A node shared by several parents (a DAG) is rewritten once."""
    done: dict[int, tuple[DExpr, DExpr]] = {}  # id -> (node, its rewrite): the node kept alive

    def go(x: DExpr) -> DExpr:
        hit = done.get(id(x))
        if hit is not None:
            return hit[1]
        spend()
        kids = children(x)
        y = x
        if kids:
            new = tuple(go(k) for k in kids)
            if new != kids:
                y = rebuild(x, new)
        r = fn(y)
        out = y if r is None else r
        done[id(x)] = (x, out)
        return out

    return go(e)


def subs_poly(e: DExpr, mapping: Mapping[Atom, Poly]) -> DExpr:
    """Substitute index atoms everywhere (load indices, integer values, conditions, fold bounds)."""
    if not mapping:
        return e

    def fn(n: DExpr) -> DExpr | None:
        if isinstance(n, Load):
            spend(len(n.index.terms))
            return Load(n.dtype, n.tensor, _subs_index(n.index, mapping))
        if isinstance(n, IntVal):
            return IntVal(n.dtype, _subs_index(n.poly, mapping))
        if isinstance(n, Pred):
            return Pred(n.dtype, n.cond.subs(mapping))
        if isinstance(n, SRead):
            live = None if n.live is None else n.live.subs(mapping)
            who = tuple(p.subs(mapping) for p in reader_coords(n))
            return SRead(
                n.dtype,
                n.array,
                tuple(i.subs(mapping) for i in n.index),
                n.upto,
                n.epoch,
                n.ctx,
                live,
                who,
            )
        if isinstance(n, Fold):  # loop variables are unique names: no shadowing
            return Fold(
                n.dtype,
                n.op,
                n.var,
                n.start.subs(mapping),
                n.stop.subs(mapping),
                n.step.subs(mapping),
                n.body,
            )
        return None

    return transform(e, fn)


def subs_poly_dag(e: DExpr, mapping: Mapping[Atom, Poly], memo: dict | None = None) -> DExpr:
    """:func:`subs_poly` visiting each shared subtree once (``memo``: node -> result, shared
    between calls with the same ``mapping``); one unit of work per node."""
    memo = {} if memo is None else memo
    got = memo.get(e)
    if got is None:
        spend()
        kids = children(e)
        if not kids:
            got = subs_poly(e, mapping)
        else:
            new = tuple(subs_poly_dag(k, mapping, memo) for k in kids)
            got = rebuild(e, new) if any(a is not b for a, b in zip(new, kids)) else e
            if isinstance(got, Fold):
                got = Fold(
                    got.dtype,
                    got.op,
                    got.var,
                    got.start.subs(mapping),
                    got.stop.subs(mapping),
                    got.step.subs(mapping),
                    got.body,
                )
        memo[e] = got
    return got


def index_atoms_dag(e: DExpr, memo: dict | None = None) -> frozenset:
    """:func:`index_atoms` visiting each shared subtree once."""
    memo = {} if memo is None else memo
    got = memo.get(e)
    if got is None:
        kids = children(e)
        if kids:
            own = index_atoms(rebuild(e, tuple(Const(k.dtype, 0) for k in kids)))
            got = frozenset(own).union(*(index_atoms_dag(k, memo) for k in kids))
        else:
            got = frozenset(index_atoms(e))
        memo[e] = got
    return got


def reader_coords(r: SRead) -> tuple:
    """The reading thread's ``(threadIdx.x, threadIdx.y, threadIdx.z)`` as polynomials."""
    if r.who:
        return r.who
    return tuple(Poly.atom(f"threadIdx.{d}") for d in "xyz")


def _subs_index(p: Poly, mapping: Mapping[Atom, Poly]) -> Poly:
    out = p.subs(mapping)
    # opaque atoms carry the data value they stand for: substitute inside it too
    rep = {}
    for a in out.top_atoms():
        if isinstance(a, OpaqueAtom) and isinstance(a.payload, DExpr):
            new = subs_poly(a.payload, mapping)
            if new != a.payload:
                rep[a] = Poly.atom(opaque_of(new))
    return out.subs(rep) if rep else out


#: the text of a value that names an opaque atom: longer values are named by a hash
_KEY_CHARS = 2000


def opaque_of(e: DExpr) -> OpaqueAtom:
    """The index atom standing for an integer data value (a gather index)."""
    text = short(e, _KEY_CHARS)
    if text.endswith("..."):  # a long value: its text's start and a digest of the whole
        text += f"#{digest(e)}"
    return OpaqueAtom(key="data:" + text, payload=e)


def digest(e: DExpr) -> str:
    """A stable digest of ``e``'s structure, in time linear in its distinct nodes (the same in
    every process, unlike ``hash``)."""
    memo: dict[int, str] = {}
    stack: list[tuple[DExpr, bool]] = [(e, False)]
    while stack:  # post-order: a node's children are digested before it
        x, ready = stack.pop()
        if id(x) in memo:
            continue
        kids = children(x)
        if not ready:
            stack.append((x, True))
            stack.extend((k, False) for k in kids if id(k) not in memo)
            continue
        own = short(x, 200) if not kids else f"{type(x).__name__}:{_own_fields(x)}"
        text = own + "(" + ",".join(memo[id(k)] for k in kids) + ")"
        memo[id(x)] = hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()[:16]
    return memo[id(e)]


def _own_fields(x: DExpr) -> str:
    """The fields of ``x`` that are not child values, as text."""
    kids = {id(k) for k in children(x)}
    parts = []
    for f in dataclasses.fields(x):
        v = getattr(x, f.name)
        if id(v) in kids or (isinstance(v, tuple) and v and all(id(i) in kids for i in v)):
            continue
        parts.append(f"{f.name}={v}")
    return ";".join(parts)


def index_atoms(e: DExpr) -> set:
    out: set = set()
    for n in walk(e):
        if isinstance(n, (Load, IntVal)):
            p = n.index if isinstance(n, Load) else n.poly
            out |= p.atoms()
            for a in p.atoms():
                if isinstance(a, OpaqueAtom) and isinstance(a.payload, DExpr):
                    out |= index_atoms(a.payload)
        elif isinstance(n, Pred):
            out |= n.cond.atoms()
        elif isinstance(n, SRead):
            for i in n.index:
                out |= i.atoms()
        elif isinstance(n, Fold):
            out |= n.start.atoms() | n.stop.atoms() | n.step.atoms()
    return out


def loads(e: DExpr) -> list[Load]:
    out = []
    for n in walk(e):
        if isinstance(n, Load):
            out.append(n)
            for a in n.index.atoms():
                if isinstance(a, OpaqueAtom) and isinstance(a.payload, DExpr):
                    out.extend(loads(a.payload))
    return out


def has_carried(e: DExpr, names: set[str] | None = None) -> bool:
    return any(isinstance(n, Carried) and (names is None or n.name in names) for n in walk(e))


class _TooLong(Exception):
    pass


def short(e: DExpr, limit: int | None = None) -> str:
    """Compact text (diagnostics, opaque-atom keys, tests).  ``limit``: stop after about that
    many characters and end the text with ``...`` -- a value is a DAG whose text can be
    exponentially longer than its nodes (a chain of registers each the sum of two earlier ones),
    so anything shown or used as a key is bounded."""
    budget = [limit if limit is not None else -1]
    out: list[str] = []
    try:
        _short(e, out, budget)
    except _TooLong:
        return "".join(out)[:limit] + "..."
    return "".join(out)


def _put(text: str, out: list[str], budget: list[int]) -> None:
    out.append(text)
    if budget[0] >= 0:
        budget[0] -= len(text)
        if budget[0] < 0:
            raise _TooLong


def _short(e: DExpr, out: list[str], budget: list[int]) -> None:  # noqa: PLR0912
    if isinstance(e, Const):
        _put(repr(e.value), out, budget)
    elif isinstance(e, Scalar):
        _put(e.name, out, budget)
    elif isinstance(e, IntVal):
        _put(f"int({e.poly})", out, budget)
    elif isinstance(e, Pred):
        _put(f"[{e.cond}]", out, budget)
    elif isinstance(e, Load):
        _put(f"{e.tensor}[{e.index}]", out, budget)
    elif isinstance(e, Op):
        _put(f"{e.op}(", out, budget)
        _args(e.args, out, budget)
        _put(")", out, budget)
    elif isinstance(e, Select):
        _put("select(", out, budget)
        _args((e.cond, e.then, e.else_), out, budget)
        _put(")", out, budget)
    elif isinstance(e, Bitcast):
        _put(f"bits_{e.dtype}(", out, budget)
        _short(e.operand, out, budget)
        _put(")", out, budget)
    elif isinstance(e, Cast):
        _put(f"{e.dtype}(", out, budget)
        _short(e.operand, out, budget)
        _put(")", out, budget)
    elif isinstance(e, Fold):
        _put(f"fold_{e.op}({e.var}={e.start}..{e.stop} step {e.step}: ", out, budget)
        _short(e.body, out, budget)
        _put(")", out, budget)
    elif isinstance(e, Carried):
        _put(f"carried({e.name})", out, budget)
    elif isinstance(e, SRead):
        _put(f"{e.array}@{e.upto}[" + ", ".join(map(str, e.index)) + "]", out, budget)
    else:
        _put(type(e).__name__, out, budget)


def _args(args: tuple[DExpr, ...], out: list[str], budget: list[int]) -> None:
    for i, a in enumerate(args):
        if i:
            _put(", ", out, budget)
        _short(a, out, budget)


# --------------------------------------------------------------------------- simplification


_COND_MEMO: dict = {}


def simplify_cond(c: Cond) -> Cond:
    """Decide comparisons that hold or fail over the known atom ranges."""
    from cuda2nki.lift import affine as af

    key = (c, tuple(sorted((af.atom_key(k), str(v)) for k, v in af._BOUNDS.get().items())))
    got = _COND_MEMO.get(key)
    if got is None:
        if len(_COND_MEMO) > 200_000:
            _COND_MEMO.clear()
        got = _COND_MEMO[key] = _simplify_cond(c)
    return got


def _simplify_cond(c: Cond) -> Cond:
    from cuda2nki.lift import affine as af

    if c.kind == "cmp":
        p, op = c.cmp.poly, c.cmp.op
        if op == "<":
            if af.provably_neg(p):
                return af.TRUE
            if af.provably_nonneg(p):
                return af.FALSE
            return c
        if p.is_const:
            return af.TRUE if (p.const_value == 0) == (op == "==") else af.FALSE
        if af.provably_neg(p) or af.provably_neg(-p):
            return af.FALSE if op == "==" else af.TRUE
        return c
    if c.kind == "and":
        return af.conj(simplify_cond(a) for a in c.args)
    if c.kind == "or":
        return af.disj(simplify_cond(a) for a in c.args)
    return c


def renorm(p: Poly) -> Poly:
    """Recompute the div/mod atoms of ``p`` under the current atom bounds."""
    if not any(not isinstance(a, str) for a in p.top_atoms()):
        return p
    return p.subs({"%renorm%": 0})


def _renorm_cond(c: Cond) -> Cond:
    if c.kind == "cmp":
        from cuda2nki.lift.affine import Cmp

        return Cond.of(Cmp(renorm(c.cmp.poly), c.cmp.op))
    if c.kind in ("and", "or"):
        return Cond(c.kind, tuple(_renorm_cond(a) for a in c.args))
    return c


_SIMP_MEMO: dict = {}
#: ``WORK`` (imported from :mod:`cuda2nki.lift.affine`): work units left to the running
#: analysis (set by the finaliser's budget; unbounded otherwise).  A unit is one tree node
#: simplified, substituted or resolved, one index term substituted, or one polynomial built:
#: what grows when cooperative code blows up.  Counting work, not seconds, keeps the outcome
#: the same on a loaded machine.  ``BudgetExceeded`` is raised when it is spent.


def reset_memos() -> None:
    """Forget the simplification memos: what an analysis is charged then depends only on the
    kernel analysed, not on the kernels analysed before it in this process."""
    _SIMP_MEMO.clear()
    _COND_MEMO.clear()


def spend(units: int = 1) -> None:
    """Charge ``units`` of work to the running budget (:class:`BudgetExceeded` when spent)."""
    WORK[0] -= units
    if WORK[0] < 0:
        raise BudgetExceeded()


def _bounds_key() -> tuple:
    from cuda2nki.lift import affine as af

    return tuple(sorted((af.atom_key(k), str(v)) for k, v in af._BOUNDS.get().items()))


def simplify(e: DExpr) -> DExpr:
    """Constant-fold index conditions and the selects they decide; inside a fold its variable's
    range is known.  Memoised per node and atom-bounds context."""
    if len(_SIMP_MEMO) > 300_000:
        _SIMP_MEMO.clear()
    return _simp(e, _bounds_key())


def _simp(e: DExpr, bkey: tuple) -> DExpr:
    key = (e, bkey)
    got = _SIMP_MEMO.get(key)
    if got is None:
        got = _SIMP_MEMO[key] = _simp1(e, bkey)
    return got


def _simp1(e: DExpr, bkey: tuple) -> DExpr:
    from cuda2nki.lift import affine as af

    spend()

    if isinstance(e, Fold):
        with af.bounds({e.var: e.stop}):
            body = _simp(e.body, _bounds_key())
        return e if body is e.body else Fold(e.dtype, e.op, e.var, e.start, e.stop, e.step, body)
    if isinstance(e, Load):
        idx = renorm(e.index)
        return e if idx == e.index else Load(e.dtype, e.tensor, idx)
    if isinstance(e, IntVal):
        p = renorm(e.poly)
        return e if p == e.poly else IntVal(e.dtype, p)
    if isinstance(e, Pred):
        c = simplify_cond(_renorm_cond(e.cond))
        if c.kind in ("true", "false"):
            return Const("bool", c.kind == "true")
        return Pred(e.dtype, c) if c != e.cond else e
    kids = children(e)
    if not kids:
        return e
    if isinstance(e, Select):
        c = _simp(e.cond, bkey)
        if isinstance(c, Const):
            return _simp(e.then if c.value else e.else_, bkey)
        t, f = _simp(e.then, bkey), _simp(e.else_, bkey)
        if t == f:
            return t
        if (
            isinstance(c, Pred)
            and isinstance(f, Select)
            and isinstance(f.cond, Pred)
            and f.cond.cond.negate() == c.cond
        ):
            f = f.then  # p ? x : (!p ? y : z)  ->  p ? x : y
        if isinstance(c, Pred) and c.cond.kind == "or":  # keep conditions conjunctive
            return Select(e.dtype, Pred(c.dtype, c.cond.negate()), f, t)
        return Select(e.dtype, c, t, f)
    new = tuple(_simp(k, bkey) for k in kids)
    n = rebuild(e, new) if new != kids else e
    if (
        isinstance(n, Op)
        and n.op == "neg"
        and isinstance(n.args[0], Const)
        and not isinstance(n.args[0].value, bool)
    ):
        return Const(n.dtype, -n.args[0].value)
    if isinstance(n, Op) and n.op == "lnot" and isinstance(n.args[0], Const):
        return Const("bool", not n.args[0].value)
    if isinstance(n, Op) and n.op == "land":
        a, b = n.args
        for x, y in ((a, b), (b, a)):
            if isinstance(x, Const):
                return y if x.value else Const("bool", False)
    return n
