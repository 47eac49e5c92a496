"""Online softmax normalisers merged across lanes with shuffles.

Each lane holds a running maximum ``m`` and a normaliser ``d = sum exp(v - m)`` of its share of
a row; one ladder step merges it with another lane's pair::

    mn = max(m, m_o);  d = d * exp(m - mn) + d_o * exp(m_o - mn);  m = mn

Once the offsets cover the group (xor: every lane; down: the first lane) the normaliser is
``sum_t d_t * exp(m_t - M)`` over the lanes ``t``, ``M`` the lanes' maximum -- a fold that the
finaliser rebases (``exp(v - m_t) * exp(m_t - M) = exp(v - M)``) into one sum over the row.
"""

from __future__ import annotations

from dataclasses import dataclass

from cuda2nki.lift import values as V


@dataclass(frozen=True)
class Online:
    kind: str  # the shuffle function
    width: int
    offsets: frozenset
    base: tuple  # (d, m) each lane held before the first step
    now: V.DExpr  # the normaliser after the last step seen


def _scaled(e: V.DExpr) -> tuple[V.DExpr, V.DExpr, V.DExpr] | None:
    """``d * exp(m - mn)`` (either factor order): ``(d, m, mn)``."""
    if not (isinstance(e, V.Op) and e.op == "mul" and len(e.args) == 2):
        return None
    for d, f in (e.args, e.args[::-1]):
        if isinstance(f, V.Op) and f.op == "exp" and isinstance(f.args[0], V.Op):
            inner = f.args[0]
            if inner.op == "sub" and len(inner.args) == 2:
                return d, inner.args[0], inner.args[1]
    return None


def step(info: dict, ladders: dict, states: dict, a: V.DExpr, b: V.DExpr) -> Online | None:
    """``d * exp(m - mn) + d_o * exp(m_o - mn)`` with ``d_o``, ``m_o`` one shuffle of ``d``,
    ``m`` and ``mn`` their maximum (the max ladder's step): the online ladder so far."""
    for mine, other in ((a, b), (b, a)):
        x, y = _scaled(mine), _scaled(other)
        if x is None or y is None or x[2] is not y[2] and x[2] != y[2]:
            continue
        (d0, m0, mn), (do, mo, _) = x, y
        di, mi = info.get(id(do)), info.get(id(mo))
        if di is None or mi is None or di[3] is not do or mi[3] is not mo:
            continue
        if not (di[2] is d0 or di[2] == d0) or not (mi[2] is m0 or mi[2] == m0):
            continue
        if di[0] != mi[0] or di[1] != mi[1] or di[4] != mi[4]:
            continue
        kind, off, width = di[0], di[1], di[4]
        # mn is max(m, m_o): the max ladder's step (or its completed fold)
        lad = ladders.get(id(mn))
        if lad is None or lad[5] is not mn or lad[0] != "max" or lad[1] != kind:
            continue
        st = states.get(id(d0))
        if st is not None and st.now is d0 and (st.kind, st.width) == (kind, width):
            if lad[3] is not st.base[1] and lad[3] != st.base[1]:
                continue
            return Online(kind, width, st.offsets | {off}, st.base, None)
        if lad[3] is not m0 and lad[3] != m0:
            continue
        return Online(kind, width, frozenset({off}), (d0, m0), None)
    return None


def complete(st: Online) -> bool:
    return st.offsets == frozenset(1 << k for k in range(st.width.bit_length() - 1))
