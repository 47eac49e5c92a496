"""Block prefix scans through shared memory (Hillis-Steele), recognised on the write log.

Each step of a Hillis-Steele scan writes, for every thread ``t`` of the block,
``A'[t] = t >= s ? A[t] + A[t - s] : A[t]`` (a double buffer: ``A`` and ``A'`` are two rows of
one array, or one array after a barrier) with ``s = 1, 2, 4, ...``.  After the step with offset
``s`` element ``t`` holds the sum of the ``2s`` elements ending at ``t`` (fewer at the start);
once ``2s`` covers the block, it holds the inclusive prefix ``sum_{j <= t} A0[j]`` of what the
first write staged.  The recogniser checks that shape step by step (every thread writes, each
step reads exactly the previous step's result after a barrier) and returns that prefix fold --
resolved once for a symbolic ``j`` instead of unrolling ``log2(B)`` levels of selects.
"""

from __future__ import annotations

from cuda2nki.lift import affine as af
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Poly

_T = "threadIdx.x"


def prefix_of(writes: list, r: V.SRead, block: tuple | None, fresh) -> V.DExpr | None:
    """``r`` (a read of element ``t`` by thread ``t``) as ``fold(add, j <= t: A0[j])``, or None
    when the writes before it are not a complete Hillis-Steele scan."""
    if not block or block[1:] != (1, 1) or not r.index:
        return None
    t = af.sym(_T)
    if r.index[-1] != t or any(not p.is_const for p in r.index[:-1]):
        return None
    want, k, offsets = tuple(r.index), r.upto, []
    epoch = r.epoch
    while True:
        got = _step(writes, k, want)
        if got is None:
            break
        s, src, k, read_epoch, write_epoch = got
        if write_epoch >= epoch:  # the step's result is read after a barrier
            return None
        offsets.append(s)
        want, epoch = src, read_epoch
    if not offsets or k < 1:
        return None
    if sorted(offsets) != [1 << n for n in range(len(offsets))] or offsets[-1] != 1:
        return None  # offsets 1, 2, 4, ... (last step first)
    if 2 * offsets[0] < block[0]:
        return None  # the windows do not cover the block yet
    first = writes[k - 1]
    if first.index != want or first.guard != af.TRUE or first.loops or first.accumulate:
        return None
    if first.epoch >= epoch or _reads_array(first.value):
        return None
    j = fresh("scan")
    body = V.subs_poly(first.value, {_T: af.sym(j)})
    return V.Fold(first.value.dtype, "add", j, af.ZERO, t + 1, af.ONE, body)


def _step(writes: list, upto: int, want: tuple):
    """The write(s) just before ``upto`` as one scan step into ``want``: ``(offset, the index
    read, the index of the step's first write, the reads' epoch, the writes' epoch)``.  A step
    is one write of ``t >= s ? A[t] + A[t - s] : A[t]`` or two guarded writes (``if``/``else``)."""
    if upto >= 1:
        got = _one_write(writes[upto - 1], upto - 1, want)
        if got is not None:
            return got
    if upto < 2:
        return None
    t = af.sym(_T)
    pair = writes[upto - 2 : upto]
    if any(w.index != want or w.loops or w.accumulate for w in pair):
        return None
    add = next((w for w in pair if isinstance(w.value, V.Op)), None)
    copy = next((w for w in pair if isinstance(w.value, V.SRead)), None)
    if add is None or copy is None or add.epoch != copy.epoch:
        return None
    got = _combine(add.value, copy.value, upto - 2, want)
    if got is None:
        return None
    s, src, epoch = got
    # the add where t >= s, the copy where t < s: every thread writes
    if add.guard != af.Cond.of(af.compare(">=", t, Poly.const(s))):
        return None
    if copy.guard != af.Cond.of(af.compare("<", t, Poly.const(s))):
        return None
    return s, src, upto - 2, epoch, add.epoch


def _one_write(w, k: int, want: tuple):
    """``A'[t] = t >= s ? A[t] + A[t - s] : A[t]`` in one write (a ternary, or a local chosen by
    an ``if`` and stored after a barrier)."""
    v = w.value
    if w.index != want or w.loops or w.accumulate or w.guard != af.TRUE:
        return None
    if not (isinstance(v, V.Select) and isinstance(v.cond, V.Pred)):
        return None
    t = af.sym(_T)
    for add, copy, cond in ((v.then, v.else_, ">="), (v.else_, v.then, "<")):
        if not (isinstance(add, V.Op) and isinstance(copy, V.SRead)):
            continue
        got = _combine(add, copy, k, want)
        if got is None:
            continue
        s, src, epoch = got
        if v.cond.cond != af.Cond.of(af.compare(cond, t, Poly.const(s))):
            continue
        if src == want and epoch >= w.epoch:
            return None  # in place: the reads must come before a barrier, then the write
        return s, src, k, epoch, w.epoch
    return None


def _combine(add: V.DExpr, copy: V.SRead, first: int, want: tuple):
    """``A[t] + A[t - s]`` beside the copy ``A[t]``, all reading what the writes before the step
    (index ``first``) left: ``(s, the index read, the reads' epoch)``."""
    t = af.sym(_T)
    if not (isinstance(add, V.Op) and add.op == "add" and len(add.args) == 2):
        return None
    src = copy.index
    if len(src) != len(want) or src[-1] != t or any(not p.is_const for p in src[:-1]):
        return None
    reads = add.args
    if not all(isinstance(x, V.SRead) and x.array == copy.array for x in reads):
        return None
    # the reads see the log up to this step (a read of the other buffer may come after the
    # step's first write: that write is to this buffer, a different row)
    seen = {x.upto for x in reads} | {copy.upto}
    if not (seen == {first} or (seen <= {first, first + 1} and src[:-1] != want[:-1])):
        return None
    idx = {x.index for x in reads}
    shifted = [x for x in idx if x != src]
    if src not in idx or len(shifted) != 1 or shifted[0][:-1] != src[:-1]:
        return None
    d = src[-1] - shifted[0][-1]
    if not d.is_const or d.const_value <= 0:
        return None
    epochs = {x.epoch for x in reads} | {copy.epoch}
    if len(epochs) != 1:
        return None
    return d.const_value, src, epochs.pop()


def _reads_array(v: V.DExpr) -> bool:
    return any(isinstance(n, V.SRead) for n in V.walk(v))
