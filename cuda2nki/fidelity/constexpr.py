"""Constants written as expressions, on both sides of a check.

A kernel's constant is not always one literal: ``sqrtf(2.0f / M_PI)`` (llm.c's GELU scaling
factor, often behind a ``#define``), ``1.0f / sqrtf((float)D)`` with ``D`` a scalar parameter
known at the test point, ``(float)M_SQRT1_2``.  A port writes its constants the same ways
(``math.sqrt(2.0 / math.pi)``, ``1 / math.sqrt(64)``).  This module finds such expressions and
folds them to a value, so that ``constants.changed_constant`` can pair a CUDA constant with the
port's and re-run the CUDA kernel with the whole expression replaced.

* CUDA side: maximal float-valued spans of literals, ``math.h`` constants (``M_PI``, ...), the
  file's object-like macros with constant bodies, known scalar parameters, casts, the four
  arithmetic operators and a few ``math.h`` functions; a span is only taken where its value is
  what the surrounding expression uses (not the ``b / c`` of ``a / b / c``).
* Port side: maximal float-valued expressions of constants, ``math``/``numpy`` constants and
  functions and the arithmetic operators.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

#: math.h constants
_MATH_CONSTANTS: Mapping[str, float] = {
    "M_PI": math.pi,
    "M_PI_2": math.pi / 2,
    "M_PI_4": math.pi / 4,
    "M_1_PI": 1 / math.pi,
    "M_2_PI": 2 / math.pi,
    "M_2_SQRTPI": 2 / math.sqrt(math.pi),
    "M_SQRT2": math.sqrt(2.0),
    "M_SQRT1_2": math.sqrt(0.5),
    "M_E": math.e,
    "M_LN2": math.log(2.0),
    "M_LN10": math.log(10.0),
    "M_LOG2E": 1 / math.log(2.0),
    "M_LOG10E": 1 / math.log(10.0),
}

#: math functions of one or two arguments, by their C and Python names
_FUNCS: Mapping[str, Callable[..., float]] = {
    "sqrt": math.sqrt,
    "rsqrt": lambda x: 1.0 / math.sqrt(x),
    "exp": math.exp,
    "log": math.log,
    "tanh": math.tanh,
    "erf": math.erf,
    "pow": math.pow,
    "fabs": math.fabs,
    "abs": abs,
    "sin": math.sin,
    "cos": math.cos,
}

_CAST_TYPES = frozenset({"float", "double"})
_INT_TYPES = frozenset({"int", "unsigned", "long", "size_t"})

_TOKEN = re.compile(
    r"(?P<num>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?[fFuUlL]*)"
    r"|(?P<id>[A-Za-z_]\w*)"
    r"|(?P<op>->|\+\+|--|<<=?|>>=?|[<>=!]=|&&|\|\||[-+*/%()\[\]{},;.<>=!&|^~?:#])"
)
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+(.+)$", re.M)


@dataclass(frozen=True)
class ConstExpr:
    value: float
    line: int
    text: str
    span: tuple[int, int]  # offsets in the source text
    is_float: bool  # written in float (a ``f`` literal or an ``f`` function): no promotion


@dataclass(frozen=True)
class _Tok:
    kind: str
    text: str
    start: int
    end: int


class _NotConstant(Exception):
    pass


def _tokens(code: str) -> list[_Tok]:
    return [_Tok(m.lastgroup or "", m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(code)]


def _number(text: str) -> tuple[float, bool]:
    """(value, is floating) of a C numeric literal."""
    body = text.rstrip("fFuUlL")
    floating = any(ch in body for ch in ".eE") or text[-1:] in "fF" and "." in body
    return (float(body) if floating else float(int(body))), floating


class _Parser:
    """Recursive descent over constant C expressions; values carry whether they are floating."""

    def __init__(self, toks: list[_Tok], names: Mapping[str, tuple[float, bool]]) -> None:
        self.toks, self.names = toks, names
        self.pos = 0
        self.ops = 0  # operators and calls seen
        self.top = ""  # the outermost binary operator of the last expression parsed

    def peek(self, k: int = 0) -> _Tok | None:
        i = self.pos + k
        return self.toks[i] if i < len(self.toks) else None

    def take(self, text: str) -> bool:
        t = self.peek()
        if t is not None and t.text == text:
            self.pos += 1
            return True
        return False

    def expr(self) -> tuple[float, bool]:
        """An additive expression; ``self.top`` says its outermost operator ("+", "*" or "")."""
        v, top = self.term()
        while (t := self.peek()) is not None and t.text in "+-" and t.kind == "op":
            saved = (self.pos, self.ops)
            self.pos += 1
            self.ops += 1
            try:
                w, _ = self.term()
            except _NotConstant:  # ``k + x``: the constant ends before the operator
                self.pos, self.ops = saved
                break
            v = (v[0] + w[0] if t.text == "+" else v[0] - w[0], v[1] or w[1])
            top = "+"
        self.top = top
        return v

    def term(self) -> tuple[tuple[float, bool], str]:
        v = self.unary()
        top = ""
        while (t := self.peek()) is not None and t.text in "*/" and t.kind == "op":
            saved = (self.pos, self.ops)
            self.pos += 1
            self.ops += 1
            try:
                w = self.unary()
            except _NotConstant:
                self.pos, self.ops = saved
                break
            if t.text == "*":
                v = (v[0] * w[0], v[1] or w[1])
            elif w[0] == 0:
                raise _NotConstant
            elif v[1] or w[1]:
                v = (v[0] / w[0], True)
            else:
                v = (float(math.trunc(v[0] / w[0])), False)
            top = "*"
        return v, top

    def unary(self) -> tuple[float, bool]:
        if self.take("-"):
            v = self.unary()
            return (-v[0], v[1])
        if self.take("+"):
            return self.unary()
        t, t1, t2 = self.peek(), self.peek(1), self.peek(2)
        if t and t1 and t2 and t.text == "(" and t2.text == ")":
            if t1.text in _CAST_TYPES | _INT_TYPES:
                self.pos += 3
                self.ops += 1
                v = self.unary()
                if t1.text in _INT_TYPES:
                    return (float(math.trunc(v[0])), False)
                return (v[0], True)
        return self.primary()

    def primary(self) -> tuple[float, bool]:
        t = self.peek()
        if t is None:
            raise _NotConstant
        if t.kind == "num":
            self.pos += 1
            return _number(t.text)
        if t.text == "(":
            self.pos += 1
            v = self.expr()
            if not self.take(")"):
                raise _NotConstant
            return v
        if t.kind == "id":
            nxt = self.peek(1)
            if nxt is not None and nxt.text == "(":
                return self.call(t.text)
            if t.text in self.names:
                self.pos += 1
                return self.names[t.text]
        raise _NotConstant

    def call(self, name: str) -> tuple[float, bool]:
        base = name[:-1] if name.endswith("f") and name[:-1] in _FUNCS else name
        fn = _FUNCS.get(base)
        if fn is None:
            raise _NotConstant
        self.pos += 2
        self.ops += 1
        args = [self.expr()]
        while self.take(","):
            args.append(self.expr())
        if not self.take(")"):
            raise _NotConstant
        try:
            value = float(fn(*(a[0] for a in args)))
        except (ValueError, TypeError, OverflowError, ZeroDivisionError) as exc:
            raise _NotConstant from exc
        return value, True


def _macros(code: str) -> dict[str, tuple[float, bool]]:
    """Object-like macros whose bodies are constant (``#define K0 0.79f``)."""
    out: dict[str, tuple[float, bool]] = {}
    for m in _DEFINE.finditer(code):
        toks = _tokens(m.group(2))
        p = _Parser(toks, {**_constant_names(), **out})
        try:
            v = p.expr()
        except _NotConstant:
            continue
        if p.pos == len(toks):
            out[m.group(1)] = v
    return out


def _constant_names() -> dict[str, tuple[float, bool]]:
    return {k: (v, True) for k, v in _MATH_CONSTANTS.items()}


def _operand(t: _Tok | None) -> bool:
    return t is not None and (t.kind in ("num", "id") or t.text in (")", "]"))


def cuda_constant_exprs(
    text: str, scalars: Mapping[str, float | int] = {}
) -> tuple[ConstExpr, ...]:
    """The float-valued constant expressions of CUDA source ``text`` (comments skipped):
    maximal spans with at least one operator, cast or call whose value the surrounding
    expression uses as a whole.  ``scalars`` are the kernel's scalar parameters at a test point."""
    code = _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    names = _constant_names()
    names.update({k: (float(v), isinstance(v, float)) for k, v in scalars.items()})
    names.update(_macros(code))
    out: list[ConstExpr] = []
    for line_start, line in _code_lines(code):
        toks = _tokens(line)
        i = 0
        while i < len(toks):
            found = _span_at(toks, i, names)
            if found is None:
                i += 1
                continue
            end, value, floating = found
            a, b = toks[i].start, toks[end - 1].end
            out.append(
                ConstExpr(
                    value,
                    code.count("\n", 0, line_start) + 1,
                    text[line_start + a : line_start + b],
                    (line_start + a, line_start + b),
                    floating,
                )
            )
            i = end
    return tuple(out)


def _code_lines(code: str) -> list[tuple[int, str]]:
    """(offset, text) of each line that holds code: ``#define`` bodies, no other directive."""
    out, offset = [], 0
    for line in code.split("\n"):
        stripped = line.lstrip()
        if not stripped.startswith("#"):
            out.append((offset, line))
        else:
            m = _DEFINE.match(line)
            if m:
                body = m.start(2)
                out.append((offset + body, line[body:]))
        offset += len(line) + 1
    return out


def _span_at(
    toks: list[_Tok], i: int, names: Mapping[str, tuple[float, bool]]
) -> tuple[int, float, bool] | None:
    """(end, value, floating) of the longest constant expression starting at token ``i``, when
    it holds an operator, cast or call, has a floating value and stands alone in its context."""
    prev = toks[i - 1] if i else None
    if prev is not None and prev.kind == "id" and toks[i].text == "(":
        return None  # a call's argument list, or a declarator
    if prev is not None and prev.text in (".", "->", "[", "#"):
        return None
    if toks[i].text in ("+", "-") and _operand(prev):
        return None  # a binary operator, not the start of an operand
    p = _Parser(toks[i:], names)
    try:
        value, floating = p.expr()
    except _NotConstant:
        return None
    end = i + p.pos
    if not p.ops or not floating or not math.isfinite(value):
        return None
    nxt = toks[end] if end < len(toks) else None
    if nxt is not None and (nxt.text in ("(", "[", ".", "->") or nxt.kind in ("num", "id")):
        return None
    binary_prev = (
        prev is not None and prev.kind == "op" and _operand(toks[i - 2] if i > 1 else None)
    )
    additive = p.top == "+"
    if binary_prev and prev is not None and prev.text in ("/", "%"):
        return None
    if additive and binary_prev and prev is not None and prev.text in ("*", "-"):
        return None
    if additive and nxt is not None and nxt.text in ("*", "/", "%"):
        return None
    return end, value, floating


# --------------------------------------------------------------------------- the port


_PY_CONSTANTS: Mapping[str, float] = {"pi": math.pi, "e": math.e}
_PY_MODULES = frozenset({"math", "np", "numpy"})


def _fold(node: ast.AST) -> float | None:
    """The value of a constant Python expression (None: not constant)."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return float(node.value)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        if node.value.id in _PY_MODULES:
            return _PY_CONSTANTS.get(node.attr)
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        v = _fold(node.operand)
        return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
    if isinstance(node, ast.BinOp):
        a, b = _fold(node.left), _fold(node.right)
        if a is None or b is None:
            return None
        try:
            return _binop(node.op, a, b)
        except (ZeroDivisionError, OverflowError, ValueError):
            return None
    if isinstance(node, ast.Call) and not node.keywords:
        fn = _py_func(node.func)
        args = [_fold(a) for a in node.args]
        if fn is None or not args or any(a is None for a in args):
            return None
        try:
            return float(fn(*args))
        except (ValueError, TypeError, OverflowError, ZeroDivisionError):
            return None
    return None


def _binop(op: ast.operator, a: float, b: float) -> float | None:
    if isinstance(op, ast.Add):
        return a + b
    if isinstance(op, ast.Sub):
        return a - b
    if isinstance(op, ast.Mult):
        return a * b
    if isinstance(op, ast.Div):
        return a / b
    if isinstance(op, ast.Pow):
        return float(a**b)
    return None


def _py_func(func: ast.AST) -> Callable[..., float] | None:
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        if func.value.id in _PY_MODULES:
            return _FUNCS.get(func.attr)
        return None
    if isinstance(func, ast.Name) and func.id in ("float", "abs"):
        return float if func.id == "float" else abs
    return None


def _composite(node: ast.AST) -> bool:
    return isinstance(node, ast.BinOp | ast.Call) or (
        isinstance(node, ast.Attribute) and _fold(node) is not None
    )


def port_constant_exprs(port_text: str) -> tuple[tuple[float, int, str, int], ...]:
    """(value, line, text, statement line) of the port's maximal constant expressions that are
    more than one literal (``math.sqrt(2.0 / math.pi)``, ``1 / math.sqrt(64)``, ``math.pi``)."""
    try:
        tree = ast.parse(port_text)
    except SyntaxError:
        return ()
    stmt_of: dict[int, int] = {}
    parent: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parent[id(child)] = node
        if isinstance(node, ast.stmt) and not isinstance(node, ast.FunctionDef | ast.ClassDef):
            for child in ast.walk(node):
                stmt_of.setdefault(id(child), node.lineno)
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.expr) or not _composite(node):
            continue
        up = parent.get(id(node))
        if isinstance(up, ast.expr) and _fold(up) is not None:
            continue  # not maximal
        v = _fold(node)
        if v is None or not math.isfinite(v) or float(v).is_integer():
            continue
        text = ast.get_source_segment(port_text, node) or ""
        out.append((v, node.lineno, text, stmt_of.get(id(node), node.lineno)))
    return tuple(sorted(out, key=lambda t: t[1]))


__all__ = ["ConstExpr", "cuda_constant_exprs", "port_constant_exprs"]
