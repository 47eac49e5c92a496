"""How many multiply-adds each input element of a contraction takes part in (from the intent IR).

The tensor engine pays off when operands are reused: a matmul ``M x N x K`` does ``M N K``
multiply-adds on ``M K + K N`` input elements (``N`` and ``M`` uses each), a matrix-vector product
``M K`` on ``M K + K`` (about one use each).  A sum of products (a complex product, the byte
fields of packed integers multiplied pairwise) is that many contractions: each product counts
its multiply-adds and streams its own operands.  A contraction whose inputs are used about once is
bound by the DMA that streams them: the vector engine keeps up with it, and the tensor engine
would first need the matrix transposed so that ``K`` lies on the partitions.  ``C2N5002``
("contraction without the tensor engine") is judged only where reuse makes the engine matter.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from cuda2nki.ir.nodes import Binary, Cast, Compute, Kernel, Read, Reduce
from cuda2nki.ir.ops import Op

# below this many multiply-adds per input element, a contraction is bandwidth-bound on Trainium
# (the vector engine processes 128 lanes per cycle, about the rate DMA delivers fp32 elements)
MIN_PE_REUSE = 4.0


def contraction_reuse(
    kernel: Kernel | None, scalars: Mapping[str, int | float], shapes: Mapping[str, tuple]
) -> float | None:
    """Multiply-adds per input element over the kernel's contractions (the largest figure);
    ``None`` when the kernel has none or a size cannot be evaluated."""
    if kernel is None:
        return None
    env = {k: int(v) for k, v in scalars.items() if float(v).is_integer()}
    best = None
    for c in kernel.body:
        if not isinstance(c, Compute):
            continue
        for red in reductions(c.expr):
            got = _reuse(c, red, env, shapes)
            if got is not None and (best is None or got > best):
                best = got
    return best


def _reuse(
    c: Compute, red: Reduce, env: dict[str, int], shapes: Mapping[str, tuple]
) -> float | None:
    terms = _product_terms(red.body)
    if red.op != Op.ADD or not terms:
        return None
    try:
        points = 1
        for a in c.domain.axes:
            points *= int(a.extent.evaluate(env))
        for a in red.axes:
            points *= int(a.extent.evaluate(env))
    except (KeyError, TypeError, ValueError):
        return None
    elems = 0
    for term in terms:  # each product streams its operands (fields of one element count apart)
        for t in {r.tensor for r in _reads(term)}:
            shape = shapes.get(t)
            if shape is None:
                return None
            n = 1
            for d in shape:
                n *= int(d)
            elems += n
    return points * len(terms) / elems if elems else None


def _is_product(e: Any) -> bool:
    while isinstance(e, Cast):
        e = e.x
    return isinstance(e, Binary) and e.op == Op.MUL


def _product_terms(e: Any) -> list[Any]:
    """The products ``e`` sums (``a * b``; ``a0 * b0 + a1 * b1 - ...``: a complex product, or
    the byte fields of packed integers multiplied pairwise); [] when ``e`` is not such a sum."""
    while isinstance(e, Cast):
        e = e.x
    if isinstance(e, Binary) and e.op == Op.MUL:
        return [e]
    if isinstance(e, Binary) and e.op in (Op.ADD, Op.SUB):
        a, b = _product_terms(e.a), _product_terms(e.b)
        return a + b if a and b else []
    return []


def _children(e: Any) -> Iterator[Any]:
    for name in getattr(e, "__dataclass_fields__", ()):
        if name == "loc":
            continue
        v = getattr(e, name)
        if isinstance(v, tuple):
            yield from v
        else:
            yield v


def _nodes(e: Any) -> Iterator[Any]:
    yield e
    for x in _children(e):
        if hasattr(x, "__dataclass_fields__"):
            yield from _nodes(x)


def reductions(e: Any) -> list[Reduce]:
    return [x for x in _nodes(e) if isinstance(x, Reduce)]


def _reads(e: Any) -> list[Read]:
    return [x for x in _nodes(e) if isinstance(x, Read)]
