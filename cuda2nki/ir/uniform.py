"""Conditions on scalar parameters alone, decided when a kernel is traced.

A CUDA statement guarded by a flag (``if (i < n && apply)``, ``switch (mode)``) guards every
element alike: the port branches once, in Python, while the kernel is traced, instead of
selecting element by element.  The scheduled IR carries such a condition on a loop
(``Loop.cond``); this module says which expressions qualify, evaluates them (the tile
evaluator) and spells them as Python (code generation).

Only comparisons, ``&&``/``||``/``!`` and ``+ - *`` of scalar parameters, literals and index
values over parameters qualify: they mean the same in C and in Python on the integer and float
values parameters take (no division, whose rounding differs between the two).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

from cuda2nki.ir import nodes as n
from cuda2nki.ir.ops import Op

_BINARY: dict[Op, tuple[str, Callable[[Any, Any], Any]]] = {
    Op.EQ: ("==", operator.eq),
    Op.NE: ("!=", operator.ne),
    Op.LT: ("<", operator.lt),
    Op.LE: ("<=", operator.le),
    Op.GT: (">", operator.gt),
    Op.GE: (">=", operator.ge),
    Op.LAND: ("and", lambda a, b: bool(a) and bool(b)),
    Op.LOR: ("or", lambda a, b: bool(a) or bool(b)),
    Op.ADD: ("+", operator.add),
    Op.SUB: ("-", operator.sub),
    Op.MUL: ("*", operator.mul),
}
_UNARY: dict[Op, tuple[str, Callable[[Any], Any]]] = {
    Op.LNOT: ("not ", lambda a: not a),
    Op.NEG: ("-", operator.neg),
}


def is_branch(loop: n.Loop) -> bool:
    """``loop`` is a branch: one trip, taken where its condition holds (``if cond:``)."""
    return (
        loop.cond is not None
        and loop.start == n.Const(0)
        and loop.stop == n.Const(1)
        and loop.step == 1
    )


def is_uniform(e: object, scalars: set[str] | frozenset[str]) -> bool:
    """``e`` reads only the scalar parameters ``scalars`` and literals, with operators that mean
    the same in C and Python."""
    if isinstance(e, n.Lit):
        return isinstance(e.value, bool | int | float)
    if isinstance(e, n.Param):
        return e.name in scalars
    if isinstance(e, n.IndexValue):
        return e.expr.free_syms() <= set(scalars)
    if isinstance(e, n.Binary):
        return e.op in _BINARY and is_uniform(e.a, scalars) and is_uniform(e.b, scalars)
    if isinstance(e, n.Unary):
        return e.op in _UNARY and is_uniform(e.x, scalars)
    return False


def evaluate(e: n.Expr, scalars: Mapping[str, Any]) -> Any:
    """The value of a uniform expression for the given parameter values."""
    if isinstance(e, n.Lit):
        return e.value
    if isinstance(e, n.Param):
        return scalars[e.name]
    if isinstance(e, n.IndexValue):
        return e.expr.evaluate(scalars)
    if isinstance(e, n.Binary):
        return _BINARY[e.op][1](evaluate(e.a, scalars), evaluate(e.b, scalars))
    if isinstance(e, n.Unary):
        return _UNARY[e.op][1](evaluate(e.x, scalars))
    raise TypeError(f"not a uniform expression: {type(e).__name__}")


def spell(e: n.Expr, name: Callable[[str], str], size: Callable[[n.SizeExpr], str]) -> str:
    """Python source of a uniform expression (``name`` spells a parameter, ``size`` an index
    value); operands that are operations themselves are parenthesised."""
    if isinstance(e, n.Binary) and e.op in (Op.LAND, Op.LOR):
        word = f" {_BINARY[e.op][0]} "
        return word.join(_operand(x, name, size) for x in _chain(e, e.op))
    if isinstance(e, n.Binary):
        return f"{_operand(e.a, name, size)} {_BINARY[e.op][0]} {_operand(e.b, name, size)}"
    if isinstance(e, n.Unary):
        x = e.x
        if e.op == Op.LNOT and isinstance(x, n.Binary) and x.op in (Op.EQ, Op.NE):
            return spell(x.replace(op=Op.NE if x.op == Op.EQ else Op.EQ), name, size)
        return f"{_UNARY[e.op][0]}{_operand(x, name, size)}"
    if isinstance(e, n.Lit):
        return repr(e.value)
    if isinstance(e, n.Param):
        return name(e.name)
    if isinstance(e, n.IndexValue):
        text = size(e.expr)
        return text if text.isidentifier() or text.lstrip("-").isdigit() else f"({text})"
    raise TypeError(f"not a uniform expression: {type(e).__name__}")


def _operand(e: n.Expr, name: Callable[[str], str], size: Callable[[n.SizeExpr], str]) -> str:
    text = spell(e, name, size)
    return f"({text})" if isinstance(e, n.Binary | n.Unary) else text


def _chain(e: n.Expr, op: Op) -> list[n.Expr]:
    """The operands of a chain of one logical operator (``a and b and c``)."""
    if isinstance(e, n.Binary) and e.op == op:
        return _chain(e.a, op) + _chain(e.b, op)
    return [e]


def conjuncts(e: n.Expr) -> list[n.Expr]:
    """The operands of a chain of ``&&``."""
    if isinstance(e, n.Binary) and e.op == Op.LAND:
        return conjuncts(e.a) + conjuncts(e.b)
    return [e]


def conjunction(parts: list[n.Expr]) -> n.Expr | None:
    out = None
    for x in parts:
        out = x if out is None else n.Binary(Op.LAND, out, x, loc=x.loc)
    return out


def split(guard: n.Expr | None, scalars: set[str] | frozenset[str]) -> tuple:
    """``(uniform, rest)``: the conjuncts of ``guard`` on scalar parameters alone, and the
    others (each ``None`` when there are none)."""
    if guard is None:
        return None, None
    parts = conjuncts(guard)
    uni = [x for x in parts if is_uniform(x, scalars)]
    rest = [x for x in parts if not is_uniform(x, scalars)]
    return conjunction(uni), conjunction(rest)


# --------------------------------------------------------------------------- branches

#: the most branches one statement is split into (a switch over a handful of modes)
MAX_BRANCHES = 8


def branches(expr: n.Expr, scalars: set[str] | frozenset[str]) -> list[tuple] | None:
    """``expr`` with its selects on scalar parameters decided: ``[(condition, expr), ...]``, one
    per combination of their outcomes (exactly one condition holds for any parameter values),
    or None when ``expr`` has no such select or would need more than :data:`MAX_BRANCHES`.

    Deciding one condition decides the others it implies: with ``mode == 2`` true, ``mode == 1``
    is false (a ``switch`` lifts to a chain of such selects)."""
    if _first_open(expr, scalars, {}, {}) is None:
        return None
    out: list[tuple] = []
    if not _split(expr, scalars, {}, {}, [], out):
        return None
    return out


def _split(e, scalars, known: dict, values: dict, path: list, out: list) -> bool:
    e = _decide(e, scalars, known, values)
    cond = _first_open(e, scalars, known, values)
    if cond is None:
        # a condition the pinned parameter values already decide (mode != 2 once mode == 1)
        kept = [c for c in path if not (_params(c) <= set(values) and not _pins(c))]
        out.append((conjunction(kept), e))
        return len(out) <= MAX_BRANCHES
    key = strip(cond)
    for truth in (True, False):
        k, v = dict(known), dict(values)
        k[key] = truth
        if truth:
            v.update(_pinned(cond))
        c = cond if truth else n.Unary(Op.LNOT, cond, loc=cond.loc)
        if not _split(e, scalars, k, v, [*path, c], out):
            return False
    return True


def _first_open(e, scalars, known: dict, values: dict):
    """The condition of the first select on parameters alone not yet decided, or None."""
    from cuda2nki.rewrite import nodes

    for x in nodes(e):
        if isinstance(x, n.Select) and is_uniform(x.cond, scalars):
            if _truth(x.cond, known, values) is None:
                return x.cond
    return None


def _decide(e, scalars, known: dict, values: dict):
    from cuda2nki.rewrite import transform

    def fn(x):  # noqa: ANN001, ANN202
        if isinstance(x, n.Select) and is_uniform(x.cond, scalars):
            t = _truth(x.cond, known, values)
            if t is not None:
                return x.a if t else x.b
        return x

    return transform(e, fn)


def _truth(cond, known: dict, values: dict) -> bool | None:
    got = known.get(strip(cond))
    if got is not None:
        return got
    if isinstance(cond, n.Unary) and cond.op == Op.LNOT:
        inner = _truth(cond.x, known, values)
        return None if inner is None else not inner
    if isinstance(cond, n.Binary) and cond.op in (Op.LAND, Op.LOR):
        a, b = _truth(cond.a, known, values), _truth(cond.b, known, values)
        if cond.op == Op.LAND:
            return False if False in (a, b) else (True if a and b else None)
        return True if True in (a, b) else (False if a is False and b is False else None)
    if _params(cond) <= set(values):
        return bool(evaluate(cond, values))
    return None


def _pins(cond) -> bool:
    """``cond`` is a ``p == constant`` that pins a parameter (kept: it is what decides)."""
    return bool(_pinned(cond))


def _pinned(cond) -> dict:
    """Parameter values a true ``p == constant`` fixes."""
    if not (isinstance(cond, n.Binary) and cond.op == Op.EQ):
        return {}
    for p, c in ((cond.a, cond.b), (cond.b, cond.a)):
        name = _param_name(p)
        if name is not None and not _params(c):
            return {name: evaluate(c, {})}
    return {}


def _param_name(e) -> str | None:
    if isinstance(e, n.Param):
        return e.name
    if isinstance(e, n.IndexValue) and isinstance(e.expr, n.Sym):
        return e.expr.name
    return None


def _params(e) -> set[str]:
    if isinstance(e, n.Param):
        return {e.name}
    if isinstance(e, n.IndexValue):
        return set(e.expr.free_syms())
    if isinstance(e, n.Binary):
        return _params(e.a) | _params(e.b)
    if isinstance(e, n.Unary):
        return _params(e.x)
    return set()


def strip(e):
    from cuda2nki.rewrite import strip_locs

    return strip_locs(e)


def size_is(size: n.SizeExpr, value: int, loc: n.SourceLoc = n.UNKNOWN_LOC) -> n.Expr:
    """The condition ``size == value`` on a size expression (decided when the kernel is traced:
    sizes are known then)."""
    return n.Binary(Op.EQ, n.IndexValue(size, loc=loc), n.Lit(value, "int32", loc=loc), loc=loc)


def choose(
    cond: n.Expr, then: tuple, otherwise: tuple, loc: n.SourceLoc = n.UNKNOWN_LOC
) -> list[n.Stmt]:
    """``if cond: then`` beside ``if not cond: otherwise``: two branches (one-trip loops on a
    uniform condition) of which the traced kernel keeps one; the body it picks alone where
    ``cond`` reads no parameter (all sizes constant)."""
    if is_uniform(cond, frozenset()):
        return list(then if evaluate(cond, {}) else otherwise)
    return [
        n.Loop("_when", n.Const(0), n.Const(1), 1, body=then, loc=loc, cond=cond),
        n.Loop(
            "_when",
            n.Const(0),
            n.Const(1),
            1,
            body=otherwise,
            loc=loc,
            cond=n.Unary(Op.LNOT, cond, loc=loc),
        ),
    ]
