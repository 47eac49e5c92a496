"""Null pointer arguments and the branches they make dead (literal lowering).

A device function often takes an optional output: ``void put(float* out, float* extra, ...)``
writes ``extra`` only under ``if (extra != NULL)``, and a caller passes ``NULL`` for it.  When
the lowering inlines such a call, the parameter is replaced by the constant ``0`` in the
inlined body (:func:`with_null_params`), so the test folds to a constant that
:func:`known_truth` reads, and only the branch C would run is lowered: the stores through the
null pointer, which no thread reaches, never need a tensor.
"""

from __future__ import annotations

import ast
import dataclasses

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk

_INT = A.ScalarType(name="int32")


def with_null_params(fn: A.Function, nulls: set[str]) -> A.Function:
    """``fn`` with each pointer parameter of ``nulls`` (passed a null constant and never
    assigned in the body) read as the constant 0."""
    assigned = {
        n.target.name
        for n in walk(fn.body)
        if isinstance(n, A.Assign) and isinstance(n.target, A.Name)
    } | {
        n.operand.name
        for n in walk(fn.body)
        if isinstance(n, A.Unary) and isinstance(n.operand, A.Name) and n.op != "*"
        and n.op not in ("-", "+", "!", "~")
    }  # fmt: skip
    names = {p.name for p in fn.params if p.name in nulls and isinstance(p.ty, A.PointerType)}
    names -= assigned
    declared = {n.name for n in walk(fn.body) if isinstance(n, A.VarDecl)}
    names -= declared  # a local of the same name would be replaced too
    if not names:
        return fn
    return dataclasses.replace(fn, body=_replace(fn.body, names))  # type: ignore[arg-type]


def _replace(x: object, names: set[str]) -> object:
    if isinstance(x, tuple):
        return tuple(_replace(y, names) for y in x)
    if isinstance(x, A.Name) and x.name in names:
        return A.IntLit(loc=x.loc, value=0, ty=_INT)
    if not isinstance(x, A.Node):
        return x
    changes = {}
    for f in dataclasses.fields(x):
        if f.name in ("loc", "ty", "to", "of"):
            continue
        old = getattr(x, f.name)
        new = _replace(old, names)
        if new is not old:
            changes[f.name] = new
    return dataclasses.replace(x, **changes) if changes else x


def known_truth(expr: str) -> bool | None:
    """The truth of the uniform condition ``expr`` when it is made of integer constants only
    (``int(0 != 0)``, ``(0 == 0) and (1 < 2)``), else None."""
    try:
        tree = ast.parse(expr.strip(), mode="eval").body
    except SyntaxError:
        return None
    got = _value(tree)
    return None if got is None else bool(got)


def _value(n: ast.AST) -> int | None:  # noqa: PLR0911
    if isinstance(n, ast.Constant):
        return int(n.value) if type(n.value) in (int, bool) else None
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("int", "bool"):
        if len(n.args) != 1 or n.keywords:
            return None
        return _value(n.args[0])
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not | ast.USub):
        v = _value(n.operand)
        return None if v is None else (int(not v) if isinstance(n.op, ast.Not) else -v)
    if isinstance(n, ast.BoolOp):
        vals = [_value(v) for v in n.values]
        if any(v is None for v in vals):
            return None
        return int(all(vals) if isinstance(n.op, ast.And) else any(vals))
    if isinstance(n, ast.Compare) and len(n.ops) == 1:
        a, b = _value(n.left), _value(n.comparators[0])
        if a is None or b is None:
            return None
        ops = {ast.Eq: a == b, ast.NotEq: a != b, ast.Lt: a < b, ast.LtE: a <= b,
               ast.Gt: a > b, ast.GtE: a >= b}  # fmt: skip
        got = ops.get(type(n.ops[0]))
        return None if got is None else int(got)
    return None
