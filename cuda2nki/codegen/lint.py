"""Readability findings on generated NKI source: constant arithmetic left unfolded and
instructions that return their input unchanged.  Generated ports must have none (a test over the
corpus); the findings name the line so a regression is easy to find."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from cuda2nki.ir.ops import Op
from cuda2nki.passes._identity import is_identity

#: ``nl.<name>`` spellings of the ops that have an identity operand
_NL_OPS = {
    "add": Op.ADD,
    "subtract": Op.SUB,
    "multiply": Op.MUL,
    "divide": Op.DIV,
    "maximum": Op.MAX,
    "minimum": Op.MIN,
}
_PY_OPS = {ast.Add: Op.ADD, ast.Sub: Op.SUB, ast.Mult: Op.MUL, ast.FloorDiv: Op.DIV}
#: bitwise ops whose immediate 0 returns the (integer) input: ``x | 0``, ``x ^ 0``, ``x << 0``
_NL_BIT_ZERO = frozenset({"bitwise_or", "bitwise_xor", "left_shift", "right_shift"})


@dataclass(frozen=True)
class Untidy:
    line: int
    kind: str  # "constant" | "identity"
    text: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.kind}: {self.text}"


def untidy(source: str) -> list[Untidy]:
    """Every unfolded constant expression and identity operation in ``source``."""
    out: list[Untidy] = []
    for node in ast.walk(ast.parse(source)):
        kind = _kind(node)
        if kind is not None:
            out.append(Untidy(node.lineno, kind, ast.unparse(node)))
    return sorted(set(out), key=lambda u: (u.line, u.text))


def _kind(node: ast.AST) -> str | None:
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Pow) and _const(node.left) == 2:
            return None  # 2 ** 31: a bit width, clearer than the number it folds to
        if _const(node.left) is not None and _const(node.right) is not None:
            return "constant"
        if _zero_led(node):
            return "constant"
        return "identity" if _python_identity(node) else None
    if isinstance(node, ast.Call):
        name = _dotted(node.func)
        if name in ("min", "max") and node.args and all(_const(a) is not None for a in node.args):
            return "constant"
        if name in ("min", "max") and _nested_bound(node, name):
            return "constant"
        if name.endswith("tensor_scalar") and _scalar_identity(node):
            return "identity"
        if name.endswith("tensor_copy") and _self_copy(node):
            return "identity"
    return None


def _self_copy(call: ast.Call) -> bool:
    """``tensor_copy(dst=x, src=x)``: a tile copied onto itself."""
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    dst, src = kw.get("dst"), kw.get("src")
    return dst is not None and src is not None and ast.dump(dst) == ast.dump(src)


def _zero_led(node: ast.BinOp) -> bool:
    """``0 - x + 1``: a constant added to a difference from zero (``1 - x`` folds both)."""
    inner = node.left
    return (
        isinstance(node.op, ast.Add | ast.Sub)
        and _const(node.right) is not None
        and isinstance(inner, ast.BinOp)
        and isinstance(inner.op, ast.Sub)
        and _const(inner.left) == 0
    )


def _nested_bound(node: ast.Call, name: str) -> bool:
    """``min(128, min(512, x))``: two constant bounds of one kind, one of them folds away."""
    consts = [a for a in node.args if _const(a) is not None]
    inner = [
        a
        for a in node.args
        if isinstance(a, ast.Call)
        and _dotted(a.func) == name
        and any(_const(x) is not None for x in a.args)
    ]
    return bool(consts and inner)


def _python_identity(node: ast.BinOp) -> bool:
    op = _PY_OPS.get(type(node.op))
    if op is None:
        return False
    right, left = _const(node.right), _const(node.left)
    return (right is not None and is_identity(op, right)) or (
        left is not None and is_identity(op, left, on_left=True)
    )


def _scalar_identity(call: ast.Call) -> bool:
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    for i in ("0", "1"):
        op = _NL_OPS.get(_dotted(kw.get(f"op{i}")).removeprefix("nl."))
        value = _const(kw.get(f"operand{i}"))
        reverse = isinstance(kw.get(f"reverse{i}"), ast.Constant) and kw[f"reverse{i}"].value
        if op is not None and value is not None and is_identity(op, value, bool(reverse)):
            return True
        bits = _dotted(kw.get(f"op{i}")).removeprefix("nl.") in _NL_BIT_ZERO
        if bits and value == 0 and not reverse:
            return True
    return False


def _const(node: ast.AST | None) -> float | None:
    """The number ``node`` spells as a literal (``3``, ``-1.5``, ``float("-inf")``), else None."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _const(node.operand)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    if isinstance(node, ast.Call) and _dotted(node.func) == "float" and len(node.args) == 1:
        arg = node.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            try:
                return float(arg.value)
            except ValueError:
                return None
    return None


def _dotted(node: ast.AST | None) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


__all__ = ["Untidy", "untidy"]
