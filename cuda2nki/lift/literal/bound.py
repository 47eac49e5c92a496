"""A bound on the trip count of a loop whose condition depends on data (literal lowering).

A loop such as ``do { ...; ++it; } while (err > tol && it < 60);`` stops for every thread after
at most ``60 - it0`` iterations when ``it`` starts at a uniform ``it0``, is incremented by exactly
one once per iteration (unconditionally, at the top level of the body or in a ``for`` step) and
written nowhere else in the loop: the conjunct ``it < 60`` fails by then.  The literal lowering
then runs that many iterations at trace time with a per-thread active mask, which computes what
CUDA computes (a thread that left the loop keeps its values).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from cuda2nki.frontend import ast as A

_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


@dataclass(frozen=True)
class TripBound:
    counter: str
    limit: A.Expr  # the uniform bound K in ``counter < K`` (or ``<=``)
    inclusive: bool  # ``counter <= K``
    start: A.Expr  # the counter's uniform value when the loop starts


def conjuncts(e: A.Expr) -> list[A.Expr]:
    if isinstance(e, A.Binary) and e.op == "&&":
        return conjuncts(e.left) + conjuncts(e.right)
    return [e]


def nodes(x: object) -> Iterator[A.Node]:
    """Every AST node inside ``x`` (statements and expressions), depth first."""
    if isinstance(x, A.Node):
        yield x
        for f in dataclasses.fields(x):
            if f.name not in ("loc", "ty", "to", "of"):
                yield from nodes(getattr(x, f.name))
    elif isinstance(x, tuple | list):
        for item in x:
            yield from nodes(item)


def writes(x: object, name: str) -> list[A.Expr]:
    """The assignments and increments of local ``name`` inside ``x`` (declarations of a local
    of that name count as writes: the name would then be another variable)."""
    out: list[A.Expr] = []
    for n in nodes(x):
        if isinstance(n, A.Assign) and isinstance(n.target, A.Name) and n.target.name == name:
            out.append(n)
        elif (
            isinstance(n, A.Unary)
            and n.op in ("pre++", "post++", "pre--", "post--", "&")
            and isinstance(n.operand, A.Name)
            and n.operand.name == name
        ):
            out.append(n)
        elif isinstance(n, A.VarDecl) and n.name == name:
            out.append(A.Name(loc=n.loc, name=name))
    return out


def is_increment(e: A.Expr, name: str) -> bool:
    """``++c``, ``c++``, ``c += 1``, ``c = c + 1`` or ``c = 1 + c``."""
    if isinstance(e, A.Unary):
        return e.op in ("pre++", "post++")
    if not isinstance(e, A.Assign):
        return False
    if e.op == "+=":
        return _is_one(e.value)
    if e.op == "=" and isinstance(e.value, A.Binary) and e.value.op == "+":
        a, b = e.value.left, e.value.right
        return (_is_name(a, name) and _is_one(b)) or (_is_name(b, name) and _is_one(a))
    return False


def _is_one(e: A.Expr) -> bool:
    return isinstance(e, A.IntLit) and e.value == 1


def _is_name(e: A.Expr, name: str) -> bool:
    return isinstance(e, A.Name) and e.name == name


def trip_bound(
    cond: A.Expr,
    body: A.Stmt,
    step: tuple[A.Stmt, ...],
    preceding: list[A.Stmt],
    uniform: Callable[[A.Expr], bool],
) -> TripBound | None:
    """The counter conjunct of ``cond`` that bounds the loop, or None.  ``preceding`` are the
    statements executed before the loop since the innermost enclosing loop began (in order)
    where the counter's start value is found; ``uniform(e)`` says whether ``e`` is uniform over
    the block and free of effects."""
    return counter_bound(cond, body, step, lambda name: _start(preceding, name), uniform)


def counter_bound(
    cond: A.Expr,
    body: A.Stmt,
    step: tuple[A.Stmt, ...],
    start_of: Callable[[str], A.Expr | None],
    uniform: Callable[[A.Expr], bool],
) -> TripBound | None:
    """:func:`trip_bound` with the counter's start value given by ``start_of(name)`` (an integer
    literal, or None where it is not known): the lifter reads it from its symbolic state."""
    for c in conjuncts(cond):
        if not (isinstance(c, A.Binary) and c.op in _FLIP):
            continue
        op, left, right = c.op, c.left, c.right
        if op not in ("<", "<="):  # ``K > c``: the counter is on the right
            op, left, right = _FLIP[op], right, left
        if not isinstance(left, A.Name):
            continue
        name = left.name
        if not uniform(right) or _written_names(right, (body, step, cond)):
            continue
        if not _counts_once(body, step, name) or writes(cond, name):
            continue
        start = start_of(name)
        if start is not None and _int_literal(start):
            return TripBound(name, right, op == "<=", start)
    return None


def _written_names(e: A.Expr, where: object) -> bool:
    """Whether a local that ``e`` reads is written in ``where`` (then ``e`` is not constant)."""
    return any(isinstance(n, A.Name) and writes(where, n.name) for n in nodes(e))


def _counts_once(body: A.Stmt, step: tuple[A.Stmt, ...], name: str) -> bool:
    """``name`` is incremented by one exactly once per iteration, at the top level of the body
    or in the step, and written nowhere else in the loop."""
    top = list(body.body) if isinstance(body, A.Block) else [body]
    found = [
        s
        for s in (*top, *step)
        if isinstance(s, A.ExprStmt)
        and is_increment(s.expr, name)
        and writes(s.expr, name) == [s.expr]
    ]
    return len(found) == 1 and len(writes((body, step), name)) == 1


def _start(preceding: list[A.Stmt], name: str) -> A.Expr | None:
    """The integer literal ``name`` holds when the loop starts: its declaration's initialiser
    (or a plain assignment) among the statements before the loop, with no write in between."""
    for s in reversed(preceding):
        value: A.Expr | None = None
        if isinstance(s, A.VarDecl) and s.name == name:
            value = s.init
        elif isinstance(s, A.ExprStmt) and isinstance(s.expr, A.Assign) and s.expr.op == "=":
            if _is_name(s.expr.target, name):
                value = s.expr.value
        if value is not None or (isinstance(s, A.VarDecl) and s.name == name):
            return value if _int_literal(value) else None
        if writes(s, name):
            return None
    return None


def _int_literal(e: A.Expr | None) -> bool:
    if isinstance(e, A.Unary) and e.op == "-":
        e = e.operand
    return isinstance(e, A.IntLit)
