"""Compare-and-move trees in shared memory: an arg-max / arg-min over a block.

A block keeps a value and what goes with it (its position, a second value) in shared memory and
halves the live range each step, moving the other half's pair only where its value wins::

    for (s = B / 2; s > 0; s >>= 1) {
        if (t < s && val[t + s] > val[t]) { val[t] = val[t + s]; pos[t] = pos[t + s]; }
        __syncthreads();
    }

The symbolic execution writes such a data-guarded element as ``cond ? new : old``
(:func:`guarded_shared_write`); :func:`move_tree` recognises the steps in the write log.  The value
left at ``val[0]`` is the extremum of the staged values; a companion channel (``pos``) holds the
staged companion of the winning element.  The winner among equal values is fixed by the tree's
shape: a strict comparison keeps the lower half on a tie at every step, so with the steps
``s = B/2, ..., 1`` the winner is the tied element whose bit-reversed index (``L = log2 B`` bits)
is least; a non-strict one takes the upper half, the greatest bit-reversed index.  In documented
tile operations::

    M    = max_j val0(j)
    key  = min_j (val0(j) == M ? rev(j) : BIG)     # the winner's bit-reversed index
    pos0 = max_j (rev(j) == key ? pos0(j) : SMALL)  # its companion (rev is a bijection)

Like any running maximum, a NaN value does not win in CUDA; the ``max`` fold propagates it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from cuda2nki.lift import affine as af
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Cond, Poly

_T = "threadIdx.x"
#: ``other cmp mine`` -> (extremum, strict)
_OTHER = {"gt": ("max", True), "ge": ("max", False), "lt": ("min", True), "le": ("min", False)}
_FLIP = {"gt": "lt", "ge": "le", "lt": "gt", "le": "ge"}
_INT_BIG = 2**31 - 1
REFUSED = "a shared-memory write under a data-dependent condition"


def guarded_shared_write(ex: object, arr: object, idx: tuple, d: V.DExpr, loc: object) -> V.DExpr:
    """The value a shared write under the executor's data conditions leaves: ``cond ? d : old``
    (the write's position is recorded: only a recognised tree may read it)."""
    cond = ex.dguards[0]
    for g in ex.dguards[1:]:
        cond = V.Op("bool", "land", (cond, g))
    old = ex.read_shared(arr, idx, loc)
    arr.guarded.append((len(arr.writes), loc))
    return V.Select(arr.dtype, cond, d, old)


@dataclass(frozen=True)
class _Move:
    """One write of a step: channel ``(array, offset)`` takes ``other`` where ``cond``."""

    channel: tuple
    cond: V.DExpr
    epoch: int


@dataclass(frozen=True)
class Tree:
    """A recognised tree: its value channel, the extremum op and strictness, the stride of its
    first step (``half``: the staged range is ``2 * half``), the write-log position before it and
    the epoch its first step reads in."""

    value: tuple
    op: str
    strict: bool
    half: int
    first: int
    epoch: int
    #: ``(array, offset, op, staged read)`` of the index whose least (``min``) or greatest
    #: value wins among equal values, where the comparison says so; None: the tree's shape
    tie: tuple | None = None


def _offset(e: V.DExpr, arr: str) -> int | None:
    """``c`` for a read of ``arr`` at ``c + t`` (constant ``c``)."""
    if not isinstance(e, V.SRead) or e.array != arr or len(e.index) != 1:
        return None
    p = e.index[0] - af.sym(_T)
    return None if p.atoms() else p.const_value


def _move(w: object, arr: str, s: int, live: Cond | None) -> _Move | None:
    """``if (t < s && cond) A[o + t] = A[o + t + s]`` (as ``cond ? A[o+t+s] : A[o+t]``)."""
    if len(w.index) != 1 or w.loops or w.accumulate is not None:
        return None
    o = w.index[0] - af.sym(_T)
    if o.atoms():
        return None
    o = o.const_value
    v = w.value
    if not isinstance(v, V.Select):
        return None
    if _offset(v.then, arr) != o + s or _offset(v.else_, arr) != o:
        return None
    facts = set(live.conjuncts() or []) if live is not None else set()
    cs = V.simplify_cond(w.guard).conjuncts()
    want = af.compare("<", af.sym(_T), Poly.const(s))
    if cs is None or want not in cs or any(c not in facts for c in cs if c != want):
        return None
    return _Move((arr, o), v.cond, v.then.epoch)


def _judge(cond: V.DExpr, s: int, bits: bool = False) -> tuple | None:
    """``(array, value offset, op, strict, staged read)`` for ``A[o + t + s] cmp A[o + t]``
    (either order); the staged read is ``A[o + t]`` as the step found it."""
    if not (isinstance(cond, V.Op) and cond.op in _OTHER and len(cond.args) == 2):
        return None
    x, y = cond.args
    if bits and all(isinstance(a, V.Bitcast) and a.dtype == "int32" for a in (x, y)):
        x, y = x.operand, y.operand  # integers read through an int pointer into a float buffer
    if not (isinstance(x, V.SRead) and isinstance(y, V.SRead) and x.array == y.array):
        return None
    a, b = _offset(x, x.array), _offset(y, y.array)
    if a is None or b is None:
        return None
    if a == b + s:
        return (x.array, b, *_OTHER[cond.op], y)
    if b == a + s:
        return (x.array, a, *_OTHER[_FLIP[cond.op]], x)
    return None


def _judge_lex(cond: V.DExpr, s: int) -> tuple | None:
    """``other wins || (other == mine && other's index wins)`` (either order of each part): the
    value comparison judged as :func:`_judge`, with the index channel and its tie op."""
    if not (isinstance(cond, V.Op) and cond.op == "lor" and len(cond.args) == 2):
        return None
    for first, second in (cond.args, cond.args[::-1]):
        win = _judge(first, s)
        if win is None or not win[3] or not _is_pair(second, "land"):
            continue
        for eq, idx in (second.args, second.args[::-1]):
            same = _judge(V.Op("bool", "ge", eq.args), s) if _is_pair(eq, "eq") else None
            if same is None or same[:2] != win[:2]:
                continue
            tie = _judge(idx, s, bits=True)
            if tie is None or not tie[3]:
                continue
            return (*win, (tie[0], tie[1], tie[2], tie[4]))
    return None


def _is_pair(e: V.DExpr, op: str) -> bool:
    return isinstance(e, V.Op) and e.op == op and len(e.args) == 2


def _steps(arr: object, r: V.SRead) -> list[tuple[int, list[_Move], tuple]]:
    """The tree steps the write log ends with before ``r`` (last step first): ``(position of
    the step's first write, its moves, its judged comparison)``."""
    k, s = r.upto - 1, 1
    steps: list = []
    while k >= 0:
        moves: list[_Move] = []
        while k >= 0:
            m = _move(arr.writes[k], arr.name, s, r.live)
            if m is None or (moves and (m.cond != moves[0].cond or m.epoch != moves[0].epoch)):
                break
            moves.append(m)
            k -= 1
        judged = None
        if moves:
            judged = _judge(moves[0].cond, s) or _judge_lex(moves[0].cond, s)
        chans = frozenset(m.channel for m in moves)
        if judged is None or len(chans) != len(moves):
            break
        if steps and (_sig(judged) != _sig(steps[0][2]) or chans != _chans(steps[0][1])):
            break
        steps.append((k + 1, moves, judged))
        s *= 2
    return steps


def _sig(judged: tuple) -> tuple:
    """What every step of one tree shares: the channels compared and how."""
    return judged[:4] + tuple(t[:3] for t in judged[5:])


def _chans(moves: list[_Move]) -> frozenset:
    return frozenset(m.channel for m in moves)


def find(shared: dict, arr: object, r: V.SRead, block: tuple | None) -> tuple | None:
    """``(tree, staged value read, staged read of r's channel)`` for the tree whose last step
    the write log ends with before ``r``; None where the log is not such a tree."""
    if not block or block[1:] != (1, 1) or len(r.index) != 1 or r.index[0].atoms():
        return None
    at = r.index[0].const_value
    steps = _steps(arr, r)
    size = 1 << len(steps)
    if len(steps) < 2 or size > block[0]:
        return None
    varr, vo, op, strict, _, *lex = steps[0][2]
    tie = lex[0] if lex else None
    chans = _chans(steps[0][1])
    offs = sorted(o for _, o in chans)
    if any(b - a < size for a, b in zip(offs, offs[1:])):  # the channels' ranges overlap
        return None
    if (arr.name, at) not in chans:
        return None
    if tie is not None and (arr.name, at) not in ((varr, vo), tie[:2]):
        return None  # with an index tie rule only the value and the index are followed
    for ch in ((varr, vo),) + ((tie[:2],) if tie else ()):
        if ch in chans:
            continue
        other = shared.get(ch[0])  # moved in their own array, under the same conditions
        conds = {getattr(w.value, "cond", None) for w in (other.writes if other else ())}
        if other is None or any(st[1][0].cond not in conds for st in steps):
            return None
    # every step reads what the previous one wrote after a barrier; the reader too
    epochs = [mv[0].epoch for _, mv, _ in steps]  # last step first
    if r.epoch <= max(_write_epochs(arr, steps[0])) or any(
        e <= max(_write_epochs(arr, st)) for e, st in zip(epochs[:-1], steps[1:])
    ):
        return None
    first = steps[-1]
    span = range(first[0], first[0] + len(first[1]))
    write = next(arr.writes[i] for i in span if _offset_of(arr.writes[i]) == at)
    tied = None if tie is None else (*tie[:3], first[2][5][3])
    tree = Tree((varr, vo), op, strict, size // 2, first[0], first[2][4].epoch, tied)
    return tree, first[2][4], write.value.else_


def _offset_of(w: object) -> int | None:
    p = w.index[0] - af.sym(_T)
    return None if p.atoms() else p.const_value


def _write_epochs(arr: object, step: tuple) -> list[int]:
    start, moves = step[0], step[1]
    return [arr.writes[start + i].epoch for i in range(len(moves))]


def bit_reversed(j: str, bits: int) -> V.DExpr:
    """The lowest ``bits`` bits of the (non-negative) fold variable ``j`` in reverse order."""
    return reverse_bits(V.IntVal("int32", af.sym(j)), bits)


def reverse_bits(x: V.DExpr, bits: int) -> V.DExpr:
    """The lowest ``bits`` bits of the non-negative integer ``x`` in reverse order, by shifts
    and masks."""
    out: V.DExpr | None = None
    for b in range(bits):
        d = bits - 1 - 2 * b
        bit = V.Op("int32", "bitand", (_shift(x, d) if d else x, _i(1 << (bits - 1 - b))))
        out = bit if out is None else V.Op("int32", "bitor", (out, bit))
    return out if out is not None else V.Const("int32", 0)


def _i(v: int) -> V.Const:
    return V.Const("int32", v)


def _shift(x: V.DExpr, d: int) -> V.DExpr:
    """``x << d`` (``d > 0``) or ``x >> -d``."""
    return V.Op("int32", "shl" if d > 0 else "shr", (x, _i(abs(d))))


def value_of(
    tree: Tree,
    reads: tuple,
    r: V.SRead,
    fresh: Callable[[str], str],
    resolve: Callable[[V.DExpr], V.DExpr],
) -> V.DExpr:
    """What ``r`` (element 0 of a channel) reads after the tree: the extremum of the staged
    values, or the staged companion of the winning element (``reads``: the staged value read
    and the staged read of ``r``'s channel, at ``offset + t``)."""
    size = 2 * tree.half
    value_read, own_read = reads

    def staged(tpl: V.SRead, j: str) -> V.SRead:
        idx = (tpl.index[0] - af.sym(_T) + af.sym(j),)
        # as the writes before the first step left it (the channels are disjoint ranges, so a
        # step's other writes before this read change nothing it reads)
        upto = tree.first if tpl.array == own_read.array else tpl.upto
        return V.SRead(
            tpl.dtype, tpl.array, idx, min(tpl.upto, upto), tpl.epoch, r.ctx, r.live, r.who
        )

    def companion(tpl: V.SRead, j: str) -> V.DExpr:
        """The staged companion at ``j``; integer bits kept in a float buffer (read through an
        int pointer) as the integers."""
        with af.bounds({j: Poly.const(size)}):
            got = V.simplify(resolve(staged(tpl, j)))
        return (_int_bits(got) or got) if got.dtype == "float32" else got

    def fold(dtype: str, op: str, j: str, body: V.DExpr) -> V.DExpr:
        return resolve(V.Fold(dtype, op, j, af.ZERO, Poly.const(size), af.ONE, body))

    j = fresh("t")
    top = fold(value_read.dtype, tree.op, j, staged(value_read, j))
    if own_read.array == value_read.array and own_read.index == value_read.index:
        return top
    if tree.tie is not None:
        j = fresh("t")
        moved = companion(tree.tie[3], j)
        hit = V.Op("bool", "eq", (staged(value_read, j), top))
        body = V.Select(moved.dtype, hit, moved, _extreme(moved.dtype, tree.tie[2] == "min"))
        return V.bitcast(own_read.dtype, fold(moved.dtype, tree.tie[2], j, body))
    bits = size.bit_length() - 1
    lowest = tree.strict  # a strict comparison keeps the lower half on a tie
    j = fresh("t")
    big = V.Const("int32", _INT_BIG if lowest else -1)
    hit = V.Op("bool", "eq", (staged(value_read, j), top))
    key = fold(
        "int32", "min" if lowest else "max", j, V.Select("int32", hit, bit_reversed(j, bits), big)
    )
    j = fresh("t")
    moved = companion(own_read, j)
    hit = V.Op("bool", "eq", (bit_reversed(j, bits), key))
    body = V.Select(moved.dtype, hit, moved, _extreme(moved.dtype, False))
    got = fold(moved.dtype, "max", j, body)  # the one element whose key is the winner's
    return V.bitcast(own_read.dtype, got)


def _int_bits(e: V.DExpr) -> V.DExpr | None:
    """``e`` (float32) as the int32 whose bits it holds, where every value it may take is an
    integer's bits (a bitcast, a choice between such); None otherwise."""
    if isinstance(e, V.Bitcast) and e.operand.dtype == "int32":
        return e.operand
    if isinstance(e, V.Select):
        a, b = _int_bits(e.then), _int_bits(e.else_)
        return None if a is None or b is None else V.Select("int32", e.cond, a, b)
    return None


def _extreme(dtype: str, top: bool) -> V.Const:
    """The greatest (``top``) or least value of ``dtype``: a fold's neutral filler."""
    if _is_int(dtype):
        return V.Const(dtype, 2**31 - 1 if top else -(2**31))
    return V.Const(dtype, math.inf if top else -math.inf)


def _is_int(dtype: str) -> bool:
    return dtype.startswith(("int", "uint"))


def lane_index(
    st: object, origin: Poly, reader: Poly, total: V.DExpr, dt: str, fresh: Callable[[str], str]
) -> V.DExpr:
    """The index a warp-shuffle ladder of plain comparisons (``if (ov > v) { v = ov;
    i = oi; }``, :class:`cuda2nki.lift.argfold.Ladder` with ``tie == "shape"``) leaves at lane
    ``reader`` of its group (``origin``: the group's first thread): the winner among the lanes
    whose value equals ``total``.  At step ``k`` (offset ``o_k``) the lanes whose bit ``o_k`` of
    ``lane ^ reader`` is clear keep theirs on a tie (strict) or take the other's, so the winner
    has the least (greatest) key ``sum_k bit(lane ^ reader, o_k) << k``."""
    width = st.width

    def at_lane(e: V.DExpr, t: str) -> V.DExpr:
        return V.subs_poly(e, {"threadIdx.x": origin + af.sym(t)})

    def key(t: str) -> V.DExpr:
        x = V.IntVal("int32", af.sym(t))
        if reader != af.ZERO:
            x = V.Op("int32", "bitxor", (x, V.IntVal("int32", reader)))
        out: V.DExpr | None = None
        for k, off in enumerate(st.order):
            b = off.bit_length() - 1
            bit = V.Op("int32", "bitand", (_shift(x, k - b) if k != b else x, _i(1 << k)))
            out = bit if out is None else V.Op("int32", "bitor", (out, bit))
        return out if out is not None else _i(0)

    def fold(op: str, t: str, body: V.DExpr) -> V.DExpr:
        return V.Fold(body.dtype, op, t, af.ZERO, Poly.const(width), af.ONE, body)

    value, index = st.base
    t = fresh("lane")
    hit = V.Op("bool", "eq", (at_lane(value, t), total))
    big = _i(_INT_BIG if st.strict else -1)
    best = fold("min" if st.strict else "max", t, V.Select("int32", hit, key(t), big))
    t = fresh("lane")
    body = V.Select(dt, V.Op("bool", "eq", (key(t), best)), at_lane(index, t), _extreme(dt, False))
    return fold("max", t, body)
