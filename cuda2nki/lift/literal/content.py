"""Port-time facts about uniform integer expressions: a known divisor ("content").

The literal lowering keeps ``x / 32`` affine when it can prove the division exact over the
block, e.g. ``(blockIdx.x * 128 + threadIdx.x) / 32`` with 32 threads on the free axis is
``blockIdx.x * 4 + p``.  That needs to know that ``blockIdx.x * 128`` is a multiple of 32:
:func:`content` returns an integer known to divide a spelled expression (0 for the literal 0).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping

from cuda2nki.frontend import ast as A


def content(expr: str, known: Mapping[str, int]) -> int:
    try:
        tree = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return 1
    return _content(tree, known)


def _content(n: ast.AST, known: Mapping[str, int]) -> int:
    if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
        return abs(n.value)
    if isinstance(n, ast.Name):
        return known.get(n.id, 1)
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
        return _content(n.operand, known)
    if isinstance(n, ast.BinOp):
        a, b = _content(n.left, known), _content(n.right, known)
        if isinstance(n.op, ast.Mult):
            return a * b
        if isinstance(n.op, ast.Add | ast.Sub):
            return math.gcd(a, b)
        if isinstance(n.op, ast.LShift) and isinstance(n.right, ast.Constant):
            return a << int(n.right.value)
    return 1


def divides(d: int, expr: str, known: Mapping[str, int]) -> bool:
    c = content(expr, known)
    return c == 0 or c % d == 0


def decl_key(d: A.VarDecl) -> str:
    return f"{d.name}@{d.loc.line}:{d.loc.col}"


def write_counts(body: A.Stmt) -> tuple[dict[str, int], dict[str, int]]:
    """Per local declaration (:func:`decl_key`): (all writes, writes that may change an affine
    value's thread coefficients).  ``+=``/``-=``/``++``/``--`` by a literal or blockDim keep the
    coefficients (loop steps).  C block scoping is followed, so two loops that each declare
    ``int k`` count separately."""
    writes: dict[str, int] = {}
    reshape: dict[str, int] = {}
    scopes: list[dict[str, str]] = [{}]

    def key(name: str) -> str | None:
        for frame in reversed(scopes):
            if name in frame:
                return frame[name]
        return None

    def bump(name: str, coeff: bool) -> None:
        k = key(name)
        if k is None:
            return
        writes[k] = writes.get(k, 0) + 1
        if coeff:
            reshape[k] = reshape.get(k, 0) + 1

    def keeps(op: str, v: A.Expr) -> bool:
        return op in ("+=", "-=") and _uniform_literal(v)

    def expr(x: object) -> None:
        if isinstance(x, A.Assign) and isinstance(x.target, A.Name):
            bump(x.target.name, not keeps(x.op, x.value))
        elif isinstance(x, A.Unary) and x.op.endswith(("++", "--")):
            if isinstance(x.operand, A.Name):
                bump(x.operand.name, False)
        if isinstance(x, A.Expr):
            for f in x.__dataclass_fields__:
                v = getattr(x, f)
                for item in v if isinstance(v, tuple) else (v,):
                    if isinstance(item, A.Expr):
                        expr(item)

    def stmt(x: A.Stmt) -> None:
        if isinstance(x, A.VarDecl):
            if x.init is not None:
                expr(x.init)
            scopes[-1][x.name] = decl_key(x)
            if x.init is not None:
                bump(x.name, True)
        elif isinstance(x, A.Block):
            scopes.append({})
            for c in x.body:
                stmt(c)
            scopes.pop()
        elif isinstance(x, A.For):
            scopes.append({})
            for c in x.init:
                stmt(c)
            if x.cond is not None:
                expr(x.cond)
            stmt(x.body)
            if x.step is not None:
                expr(x.step)
            scopes.pop()
        elif isinstance(x, A.ExprStmt):
            expr(x.expr)
        elif isinstance(x, A.If):
            expr(x.cond)
            stmt(x.then)
            if x.else_ is not None:
                stmt(x.else_)
        elif isinstance(x, A.While | A.DoWhile):
            expr(x.cond)
            stmt(x.body)
        elif isinstance(x, A.Switch):
            expr(x.cond)
            for c in x.cases:
                scopes.append({})
                for b in c.body:
                    stmt(b)
                scopes.pop()
        elif isinstance(x, A.Return) and x.value is not None:
            expr(x.value)

    stmt(body)
    return writes, reshape


def _uniform_literal(v: A.Expr) -> bool:
    if isinstance(v, A.IntLit):
        return True
    if isinstance(v, A.Builtin):
        return v.name in ("blockDim", "gridDim", "warpSize")
    if isinstance(v, A.Binary):
        return _uniform_literal(v.left) and _uniform_literal(v.right)
    return False
