"""Whether the writes already passed cover every reader but those a write's condition holds for.

A shared tile filled under a guard with an ``else`` branch (``if (g) s[t] = x[k]; else s[t] =
0;``, the guard possibly split over nested ``if``s) is written once per element by complementary
writes.  Resolving a read walks the writes latest first; once the conditions of the writes passed
(``covered``) exclude every reader that the next write does not serve, that write's value is the
one read, unconditionally: the chain ends there instead of falling through to an earlier loop
iteration (which the resolution would have to refuse as a recurrence).  The chain of zero fills
in front of it then folds into one masked load, ``g ? x[k] : 0``, the form a ternary gives."""

from __future__ import annotations

from cuda2nki.lift import affine as af
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Cmp, Cond


def follows(cond: Cond, covered: tuple) -> bool:
    """``cond`` holds for every reader none of the ``covered`` conditions holds for."""
    if not covered:
        return False
    known = _facts([c.negate() for c in covered])
    return known is not None and _holds(cond, *known)


def _holds(cond: Cond, facts: dict, pending: list) -> bool:
    """``cond`` follows from the comparisons ``facts`` and the disjunctions ``pending``."""
    if cond.kind == "true":
        return True
    if cond.kind == "cmp":
        return cond.cmp in facts
    if cond.kind == "and":
        return all(_holds(a, facts, pending) for a in cond.args)
    if cond.kind == "or":
        if any(_holds(a, facts, pending) for a in cond.args):
            return True
        return any(all(a in cond.args or _refuted(a, facts) for a in d.args) for d in pending)
    return False


def masked(e: V.DExpr) -> V.DExpr:
    """``c1 ? z : (c2 ? z : ... x)`` (the same constant ``z`` written under each ``ci``) as
    ``g ? x : z`` with ``g`` the conjunction of the negated ``ci``, simplified by unit
    propagation; anything else unchanged."""
    conds: list[Cond] = []
    fill = None
    x = e
    while (
        isinstance(x, V.Select)
        and isinstance(x.cond, V.Pred)
        and isinstance(x.then, V.Const)
        and fill in (None, x.then)
    ):
        fill = x.then
        conds.append(x.cond.cond)
        x = x.else_
    if fill is None or isinstance(x, V.Const):
        return e
    known = _facts([c.negate() for c in conds])
    if known is None:  # no reader gets past the fills
        return fill
    facts, pending = known
    guard = af.conj([*(Cond.of(c) for c in facts), *pending])
    return V.Select(e.dtype, V.Pred("bool", guard), x, fill)


def _facts(conds: list) -> tuple[dict[Cmp, None], list[Cond]] | None:
    """The comparisons the conjunction of ``conds`` implies by unit propagation (each
    disjunction with all but one disjunct contradicted by a known comparison contributes the
    one left), and the disjunctions left over (``None``: the conjunction is contradictory)."""
    facts: dict[Cmp, None] = {}  # ordered: the guard's conjuncts keep their order
    pending: list[Cond] = []
    for c in conds:
        _add(c, facts, pending)
    changed = True
    while changed:
        changed = False
        for d in list(pending):
            left = [a for a in d.args if not _refuted(a, facts)]
            if not left:
                return None
            if len(left) == 1:
                pending.remove(d)
                _add(left[0], facts, pending)
                changed = True
    return facts, pending


def _add(c: Cond, facts: dict, pending: list) -> None:
    if c.kind == "cmp":
        facts[c.cmp] = None
    elif c.kind == "and":
        for a in c.args:
            _add(a, facts, pending)
    elif c.kind == "or":
        pending.append(c)


def _refuted(c: Cond, facts: dict) -> bool:
    """``c`` contradicts a known comparison (its negation is one, or, for a conjunction, one
    of its parts is refuted)."""
    if c.kind == "cmp":
        return c.cmp.negate() in facts
    if c.kind == "and":
        return any(_refuted(a, facts) for a in c.args)
    if c.kind == "false":
        return True
    return False


__all__ = ["follows"]
