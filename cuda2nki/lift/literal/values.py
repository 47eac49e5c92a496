"""Port-time values of the literal lowering and the small expression algebra on their spellings.

Every CUDA value is one of:

* :class:`Uni` -- uniform over the block (literals, scalar parameters, blockIdx, blockDim, loop
  counters of uniform loops): a Python expression evaluated when the kernel is traced;
* :class:`Lin` -- a per-thread integer affine in the thread's tile position,
  ``b + p*row + f*col`` with uniform ``b``, ``p``, ``f`` (threadIdx and everything built from it
  with ``+``, ``-`` and a uniform factor); loads and stores at such addresses are strided DMA views;
* :class:`Idx` -- a per-thread integer known at trace time (index arithmetic that is not affine);
* :class:`Tile` -- anything else per thread (data, non-affine integers, masks): a (P, F) tile;
* :class:`Ptr` -- a pointer: a tensor (or ``__shared__`` scratch) plus an affine element offset;
* :class:`DynPtr` -- a pointer whose element offset depends on data (``bins + key``,
  ``&hist[keys[i]]``): the per-thread flat element addresses as an int32 tile;
* :class:`Local` -- a per-thread local array: a Python list of tiles indexed by uniform values.

``ty`` is ``"int"``, ``"float"`` or ``"bool"`` (a mask tile holds 0.0/1.0 in fp32).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

_INT = re.compile(r"-?\d+")


@dataclass(frozen=True)
class Uni:
    expr: str
    ty: str


@dataclass(frozen=True)
class Lin:
    b: str
    p: str
    f: str

    @property
    def uniform(self) -> bool:
        return self.p == "0" and self.f == "0"


@dataclass(frozen=True)
class Idx:
    """A per-thread integer (or, ``ty == "bool"``, condition) computed from thread and block
    indices only, so its value is known when the kernel is traced: a NumPy (P, F) array
    expression.  Non-affine index arithmetic (division by a size, min/max clamps) lives here;
    accesses at such addresses are split into as few strided DMAs as the values allow."""

    expr: str
    ty: str = "int"
    # a condition that is a conjunction of comparisons of affine values with uniform bounds,
    # kept so that its mask tile can be computed on the engines: ((nl op, Lin, bound), ...)
    parts: tuple = ()


@dataclass(frozen=True)
class Tile:
    expr: str
    ty: str
    unsigned: bool = False  # an int tile holding unsigned 32-bit values (as bit patterns)


@dataclass(frozen=True)
class Ptr:
    tensor: str
    off: Lin
    ty: str  # element class: "float" or "int"
    dims: tuple[int, ...] = ()  # array extents after the first (row-major), for a[i][j]


@dataclass(frozen=True)
class DynPtr:
    """A pointer into ``tensor`` at per-thread flat element addresses read from data (an int32
    tile ``addr``): reads are indirect (gather) DMAs, ``atomicAdd`` a scatter-add DMA."""

    tensor: str
    addr: str
    ty: str


@dataclass(frozen=True)
class Local:
    expr: str
    dims: tuple[int, ...]
    ty: str


Value = Uni | Lin | Idx | Tile | Ptr | DynPtr | Local


def is_int(s: str) -> bool:
    return bool(_INT.fullmatch(s))


def paren(s: str) -> str:
    return s if is_int(s) or s.isidentifier() or _balanced_call(s) else f"({s})"


def _balanced_call(s: str) -> bool:
    if not (s.endswith(")") and "(" in s):
        return False
    head = s[: s.index("(")]
    if not head.replace(".", "").replace("_", "a").isalnum():
        return False
    depth = 0
    for i, c in enumerate(s[len(head) :]):
        depth += c == "("
        depth -= c == ")"
        if depth == 0 and i != len(s) - len(head) - 1:
            return False
    return True


def add(a: str, b: str) -> str:
    if is_int(a) and is_int(b):
        return str(int(a) + int(b))
    if a == "0":
        return b
    if b == "0":
        return a
    if b.startswith("-") and is_int(b):
        return f"{a} - {b[1:]}"
    return f"{a} + {b}"


def const_int(expr: str) -> int | None:
    """The value of ``expr`` when it is integer arithmetic on literals only (``64 * 4``,
    ``(256 + 1) // 2``), else ``None``: emitted code then shows the number, not the sum."""
    try:
        tree = ast.parse(expr.strip(), mode="eval").body
    except SyntaxError:
        return None
    return _const_int(tree)


_INT_OPS = {ast.Add: int.__add__, ast.Sub: int.__sub__, ast.Mult: int.__mul__}


def _const_int(n: ast.AST) -> int | None:
    if isinstance(n, ast.Constant):
        return n.value if type(n.value) is int else None
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
        v = _const_int(n.operand)
        return None if v is None else -v
    if isinstance(n, ast.BinOp):
        a, b = _const_int(n.left), _const_int(n.right)
        if a is None or b is None:
            return None
        if isinstance(n.op, ast.FloorDiv):
            return a // b if b else None
        op = _INT_OPS.get(type(n.op))
        return None if op is None else op(a, b)
    return None


def neg(a: str) -> str:
    if is_int(a):
        return str(-int(a))
    return f"-{paren(a)}"


def sub(a: str, b: str) -> str:
    if is_int(a) and is_int(b):
        return str(int(a) - int(b))
    if b == "0":
        return a
    if a == "0":
        return neg(b)
    return f"{a} - {paren(b)}"


def mul(a: str, b: str) -> str:
    if is_int(a) and is_int(b):
        return str(int(a) * int(b))
    if a == "0" or b == "0":
        return "0"
    if a == "1":
        return b
    if b == "1":
        return a
    return f"{paren(a)} * {paren(b)}"


def lin_add(x: Lin, y: Lin) -> Lin:
    return Lin(add(x.b, y.b), add(x.p, y.p), add(x.f, y.f))


def lin_sub(x: Lin, y: Lin) -> Lin:
    return Lin(sub(x.b, y.b), sub(x.p, y.p), sub(x.f, y.f))


def lin_scale(x: Lin, k: str) -> Lin:
    return Lin(mul(x.b, k), mul(x.p, k), mul(x.f, k))


def as_lin(v: Uni | Lin) -> Lin:
    return v if isinstance(v, Lin) else Lin(v.expr, "0", "0")
