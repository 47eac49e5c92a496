"""Online softmax normalisers written with a branch on a new maximum.

A serial online softmax is often spelled with an ``if`` instead of ``fmaxf``::

    if (v > m) { d = d * exp(m - v) + 1;  m = v; }    // (or exp(v - v) after m = v)
    else       { d += exp(v - m); }

which executes to ``m' = select(v > m, v, m)`` and ``d' = select(v > m, A, B)``.  Both branches
are the one update ``d' = d * exp(m - m') + exp(v - m')`` at ``m' = v`` and ``m' = m``; when they
are (checked by evaluating each branch against it at sample points), the pair is rewritten to
that form with ``m' = max(m, v)``, which the loop's online-sum fold then takes.
"""

from __future__ import annotations

import math
import random

from cuda2nki.lift import values as V

_CMP = {"gt", "ge", "lt", "le"}


def _candidates(mnew: V.DExpr, m: V.Carried) -> list[V.DExpr]:
    """The values ``v`` that ``mnew`` compares with ``m`` (``max(m, v)``, ``v > m ? v : m``)."""
    out: list[V.DExpr] = []
    for e in V.walk(mnew):
        if isinstance(e, V.Op) and (e.op in _CMP or e.op == "max") and len(e.args) == 2:
            a, b = e.args
            for x, y in ((a, b), (b, a)):
                if y == m and not V.has_carried(x) and x not in out:
                    out.append(x)
    return out


class _Opaque(Exception):
    pass


def _eval(e: V.DExpr, leaves: dict) -> float:
    for k, x in leaves.items():
        if e == k:
            return x
    if isinstance(e, V.Const) and isinstance(e.value, int | float):
        return float(e.value)
    if isinstance(e, V.Cast):
        return _eval(e.operand, leaves)
    if isinstance(e, V.Select):
        return _eval(e.then if _eval(e.cond, leaves) else e.else_, leaves)
    if not isinstance(e, V.Op):
        raise _Opaque
    xs = [_eval(a, leaves) for a in e.args]
    fns = {
        "add": lambda a, b: a + b,
        "sub": lambda a, b: a - b,
        "mul": lambda a, b: a * b,
        "div": lambda a, b: a / b,
        "max": max,
        "min": min,
        "neg": lambda a: -a,
        "exp": math.exp,
        "gt": lambda a, b: float(a > b),
        "ge": lambda a, b: float(a >= b),
        "lt": lambda a, b: float(a < b),
        "le": lambda a, b: float(a <= b),
        "lnot": lambda a: float(not a),
    }
    fn = fns.get(e.op)
    if fn is None:
        raise _Opaque
    return float(fn(*xs))


def _same(e: V.DExpr, want, leaves: list[dict]) -> bool:
    try:
        return all(math.isclose(_eval(e, s), want(s), rel_tol=1e-9) for s in leaves)
    except (_Opaque, OverflowError, ZeroDivisionError):
        return False


def canonical_online(env: dict, carried: dict) -> None:
    """Rewrite, in ``env``, each branch-spelled online (sum, max) pair of carried locals to
    ``m' = max(m, v)``, ``d' = d * exp(m - m') + exp(v - m')``."""
    for n in carried:
        new = env.get(n)
        if not isinstance(new, V.Select):
            continue
        for mname in carried:
            if mname == n or not isinstance(env.get(mname), V.DExpr):
                continue
            got = _rewrite(env[n], env[mname], V.Carried(new.dtype, n), mname)
            if got is not None:
                env[n], env[mname] = got
                break


def _rewrite(new: V.DExpr, mnew: V.DExpr, d: V.Carried, mname: str):
    m = V.Carried(mnew.dtype, mname)
    rng = random.Random(0)
    samples = [
        (rng.uniform(0.5, 4.0), rng.uniform(-2.0, 2.0), rng.uniform(0.1, 2.0)) for _ in range(4)
    ]
    for v in _candidates(mnew, m):
        ups = [{d: s, m: mm, v: mm + gap} for s, mm, gap in samples]
        downs = [{d: s, m: mm, v: mm - gap} for s, mm, gap in samples]
        if not _same(mnew, lambda s, v=v: max(s[m], s[v]), ups + downs):
            continue
        if _same(new, _update(d, m, v, True), ups) and _same(new, _update(d, m, v, False), downs):
            dt = new.dtype
            top = V.Op(mnew.dtype, "max", (m, v))
            rescale = V.Op(dt, "exp", (V.Op(dt, "sub", (m, top)),))
            fresh = V.Op(dt, "exp", (V.Op(dt, "sub", (v, top)),))
            return V.Op(dt, "add", (V.Op(dt, "mul", (d, rescale)), fresh)), top
    return None


def _update(d: V.DExpr, m: V.DExpr, v: V.DExpr, at_v: bool):
    """``d * exp(m - m') + exp(v - m')`` at ``m' = v`` (``at_v``) or ``m' = m``."""

    def f(s: dict) -> float:
        top = s[v] if at_v else s[m]
        return s[d] * math.exp(s[m] - top) + math.exp(s[v] - top)

    return f
