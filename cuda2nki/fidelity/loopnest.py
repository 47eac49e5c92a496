"""Matmul-shaped work read from the CUDA kernel's loop nest, for when the kernel does not lift.

A contraction loop is a ``for`` loop whose body accumulates a product of two loads that both
move with the loop's counter: ``acc += A[row * K + k] * B[k * N + col]``, ``sum = sum + As[ty][k]
* Bs[k][tx]``, ``acc = fmaf(sA[ty][k], sB[k][tx], acc)``, ``acc += a[k] * bt[k]`` through aliases into the tensors, with any guard (``if
(bias != NULL)``), cast, conversion or cache-hinted load around it.  It is matmul-shaped
when both factors are two-dimensional (a binding tensor of rank 2 or more, or a 2-D array such as
a shared tile) and the kernel writes a two-dimensional output: a matrix-vector product (one
factor a vector) is bandwidth-bound and not the tensor engine's work.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from cuda2nki.frontend import ast as A


@dataclass(frozen=True)
class Contraction:
    line: int  # the accumulating statement
    counter: str  # the loop's counter
    factors: tuple[str, str]  # the arrays multiplied


def contraction(tu: Any, kernel: str, ranks: Mapping[str, int]) -> Contraction | None:
    """The first matmul-shaped contraction loop of ``kernel``; ``ranks``: the binding's tensors
    and their ranks (outputs included)."""
    fn = next((f for f in getattr(tu, "functions", ()) if f.name == kernel), None)
    if fn is None or fn.body is None:
        return None
    arrays = dict(ranks)
    for node in _walk(fn.body):
        if isinstance(node, A.VarDecl) and isinstance(node.ty, A.ArrayType):
            arrays[node.name] = _array_rank(node.ty)
        elif isinstance(node, A.VarDecl) and isinstance(node.ty, A.PointerType) and node.init:
            # an alias into a tensor (``const float* a = A + row * K``) keeps the tensor's rank
            ranks_in = [arrays.get(n.name, 0) for n in _walk(node.init) if isinstance(n, A.Name)]
            arrays[node.name] = max(ranks_in, default=0)
    for loop in _walk(fn.body):
        if not isinstance(loop, A.For):
            continue
        counter = _counter(loop)
        if counter is None:
            continue
        for node in _walk(loop.body):
            found = _accumulated_product(node, counter)
            if found is None:
                continue
            a, b = found
            if arrays.get(a, 0) >= 2 and arrays.get(b, 0) >= 2:
                return Contraction(node.loc.line, counter, (a, b))
    return None


def _walk(node: Any) -> Iterator[Any]:
    """Every AST node under ``node`` (statements and expressions), depth first."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, tuple | list):
            stack.extend(reversed(n))
            continue
        if not isinstance(n, A.Node):
            continue
        yield n
        for name in getattr(n, "__dataclass_fields__", {}):
            if name in ("loc", "ty", "to", "of"):
                continue
            child = getattr(n, name, None)
            if isinstance(child, A.Node | tuple | list):
                stack.append(child)


def _array_rank(t: Any) -> int:
    rank = 0
    while isinstance(t, A.ArrayType):
        rank += len(getattr(t, "dims", ()) or (1,))
        t = t.elem
    return rank


def _counter(loop: A.For) -> str | None:
    for s in loop.init:
        if isinstance(s, A.VarDecl):
            return s.name
        if isinstance(s, A.ExprStmt) and isinstance(s.expr, A.Assign):
            if isinstance(s.expr.target, A.Name):
                return s.expr.target.name
    return None


def _accumulated_product(node: Any, counter: str) -> tuple[str, str] | None:
    """``t += x * y``, ``t = t + x * y`` or ``t = fmaf(x, y, t)`` with x and y loads indexed by
    ``counter``: their arrays."""
    if not isinstance(node, A.ExprStmt) or not isinstance(node.expr, A.Assign):
        return None
    e = node.expr
    fma = _strip(e.value) if e.op == "=" else None
    if isinstance(fma, A.Call) and fma.func in _FMA and len(fma.args) == 3:
        if not _same_place(_strip(fma.args[2]), e.target):
            return None
        a, b = _load(_strip(fma.args[0]), counter), _load(_strip(fma.args[1]), counter)
        return (a, b) if a and b else None
    if e.op == "+=":
        value = e.value
    elif e.op == "=" and isinstance(e.value, A.Binary) and e.value.op == "+":
        same = _same_place(e.value.left, e.target)
        value = e.value.right if same else e.value.left
        if not same and not _same_place(e.value.right, e.target):
            return None
    else:
        return None
    value = _strip(value)
    if not isinstance(value, A.Binary) or value.op != "*":
        return None
    a, b = _load(_strip(value.left), counter), _load(_strip(value.right), counter)
    return (a, b) if a and b else None


#: fused multiply-adds: ``acc = fmaf(x, y, acc)``
_FMA = ("fmaf", "fma", "__fmaf_rn", "__fma_rn")


def _strip(e: Any) -> Any:
    """``e`` without the casts, conversions and cache-hinted loads around it."""
    while isinstance(e, A.Cast) or (isinstance(e, A.Call) and _passes_through(e)):
        e = e.operand if isinstance(e, A.Cast) else e.args[0]
    return e


def _passes_through(c: A.Call) -> bool:
    name = c.func
    return len(c.args) == 1 and (name.startswith("__ld") or name.endswith(("2float", "2double")))


def _load(e: Any, counter: str) -> str | None:
    """The array ``e`` loads from, when one of its indices uses ``counter``."""
    if not isinstance(e, A.Index):
        return None
    uses = False
    while isinstance(e, A.Index):
        uses = uses or any(isinstance(n, A.Name) and n.name == counter for n in _walk(e.index))
        e = e.base
    return e.name if uses and isinstance(e, A.Name) else None


def _same_place(a: Any, b: Any) -> bool:
    return isinstance(a, A.Name) and isinstance(b, A.Name) and a.name == b.name


__all__ = ["Contraction", "contraction"]
