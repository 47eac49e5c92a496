"""``fold-sizes``: constant size arithmetic folded, identities dropped, trivial loops resolved.

Tile sizes are built as formulas over the problem's sizes (``min(512, max(1, (N + 127) // 128))``);
where a size is a constant (a one-element result, a fixed block), the formula is a number and is
spelled as one.  A loop that runs no iteration is dropped, one that runs exactly one is replaced
by its body with the loop variable bound to its start.

Before::  for t in range(1 // (128 * min(512, max(1, (1 + 127) // 128)))): ...
          for u in range(min(1, 1 % 128)): body(u)
After::   body(0)

Rules (exact for integers of either sign): ``c1 op c2`` evaluated; ``x + 0``, ``x - 0``,
``x * 1``, ``x // 1``, ``ceil(x / 1)`` are ``x``; ``x * 0`` and ``x % 1`` are ``0``;
``min(x, x)`` and ``max(x, x)`` are ``x``, ``min(x, x - 1)`` is ``x - 1``, and so is
``min(c * ceil(x / c), x)`` (a round-up clipped to what it rounds); ``min(128, min(512, x))``
is ``min(128, x)``; ``c1 * (c2 * x)`` is ``(c1 c2) * x``; constant terms of a sum are
gathered into one and terms that cancel (``n - n % f + n % f``) are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from cuda2nki.ir.nodes import (
    Add,
    CeilDiv,
    Const,
    FloorDiv,
    Kernel,
    Loop,
    Max,
    Min,
    Mod,
    Mul,
    SizeExpr,
    Sub,
    Sym,
    _BinSize,
)
from cuda2nki.passes._analysis import transform
from cuda2nki.passes.base import Pass, PassContext
from cuda2nki.rewrite import nodes


@dataclass(frozen=True)
class FoldSizesPass(Pass):
    name: ClassVar[str] = "fold-sizes"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        folded = transform(kernel, _fold_node)
        return folded.replace(body=resolve_loops(folded.body))


def fold_size(e: SizeExpr) -> SizeExpr:
    """``e`` folded bottom-up."""
    return transform(e, _fold_node)


def _fold_node(x: Any) -> Any:
    return fold_one(x) if isinstance(x, _BinSize) else x


def fold_one(e: _BinSize) -> SizeExpr:
    """One node folded, its operands already folded."""
    a, b = e.a, e.b
    if isinstance(a, Const) and isinstance(b, Const):
        try:
            return Const(int(type(e).apply(a.value, b.value)))
        except ZeroDivisionError:
            return e
    if isinstance(e, Min | Max) and a == b:
        return a
    if isinstance(e, Min | Max) and isinstance(a, Const) and type(b) is type(e):
        if isinstance(b.a, Const):  # min(128, min(512, x)) is min(128, x)
            return fold_one(type(e)(Const(int(type(e).apply(a.value, b.a.value))), b.b))
    if isinstance(e, Min | Max):
        apart = _sum(Sub(a, b))  # min(n, n - 1) is n - 1: the two differ by a constant
        if isinstance(apart, Const):
            return b if (apart.value >= 0) == isinstance(e, Min) else a
    if isinstance(e, Min) and _rounds_up(a, b):
        return b
    if isinstance(e, Min) and _rounds_up(b, a):
        return a
    if isinstance(e, Add | Sub):
        return _sum(e)
    if isinstance(e, Mul):
        if Const(0) in (a, b):
            return Const(0)
        if isinstance(a, Const) and isinstance(b, Mul) and isinstance(b.a, Const):
            return fold_one(Mul(Const(a.value * b.a.value), b.b))  # 8 * (8 * x) is 64 * x
        return b if a == Const(1) else a if b == Const(1) else e
    if isinstance(e, FloorDiv | CeilDiv) and b == Const(1):
        return a
    if isinstance(e, Mod) and b in (Const(1), Const(-1)):
        return Const(0)
    return e


def _rounds_up(e: SizeExpr, x: SizeExpr) -> bool:
    """Whether ``e`` is ``x`` rounded up to a multiple of a positive constant ``c``:
    ``c * ((x + c - 1) // c)`` or ``c * ceil(x / c)``, never below ``x`` for any integer ``x``
    (so ``min(e, x)`` is ``x``: the rows a CUDA grid of ``c``-row blocks covers, clipped)."""
    if not (isinstance(e, Mul) and isinstance(e.a, Const) and e.a.value > 0):
        return False
    c, q = e.a.value, e.b
    if isinstance(q, CeilDiv):
        return q.a == x and q.b == Const(c)
    if not (isinstance(q, FloorDiv) and q.b == Const(c)):
        return False
    return q.a in (Add(x, Const(c - 1)), Add(Const(c - 1), x)) or (c == 1 and q.a == x)


def _sum(e: Add | Sub) -> SizeExpr:
    """``e`` with its constant terms gathered (``(x + 3) - 1`` is ``x + 2``; ``x + 0`` is ``x``)."""
    terms: list[tuple[SizeExpr, int]] = []
    _terms(e, 1, terms)
    const = sum(t.value * s for t, s in terms if isinstance(t, Const))
    rest = _cancel([(t, s) for t, s in terms if not isinstance(t, Const)])
    gathered = len(terms) - len(rest)
    if gathered == 0 or (gathered == 1 and const != 0):
        return e  # nothing to gather or cancel: keep the order it was written in
    rest.sort(key=lambda ts: ts[1] < 0)  # positive terms first, each side in written order
    out: SizeExpr | None = None
    if rest and rest[0][1] < 0 and const > 0:  # ``1 - 128 * t``, not ``0 - 128 * t + 1``
        out, const = Const(const), 0
    for t, s in rest:
        out = t if out is None and s > 0 else _join(out, t, s)
    if out is None:
        return Const(const)
    if const > 0:
        return Add(out, Const(const))
    return Sub(out, Const(-const)) if const < 0 else out


def _cancel(terms: list[tuple[SizeExpr, int]]) -> list[tuple[SizeExpr, int]]:
    """``terms`` without the pairs that cancel (``a - b + b`` is ``a``)."""
    out = list(terms)
    for t, s in terms:
        if (t, s) in out and (t, -s) in out:
            out.remove((t, s))
            out.remove((t, -s))
    return out


def _join(out: SizeExpr | None, t: SizeExpr, s: int) -> SizeExpr:
    if out is None:
        return Sub(Const(0), t)
    return Add(out, t) if s > 0 else Sub(out, t)


def _terms(e: SizeExpr, sign: int, out: list[tuple[SizeExpr, int]]) -> None:
    if isinstance(e, Add):
        _terms(e.a, sign, out)
        _terms(e.b, sign, out)
    elif isinstance(e, Sub):
        _terms(e.a, sign, out)
        _terms(e.b, -sign, out)
    else:
        out.append((e, sign))


def resolve_loops(body: tuple) -> tuple:
    """``body`` with constant-trip loops resolved: none run (dropped), one run (inlined)."""
    out: list = []
    for s in body:
        if not isinstance(s, Loop):
            out.append(s)
            continue
        s = s.replace(start=fold_size(s.start), stop=fold_size(s.stop), body=resolve_loops(s.body))
        trips = _trips(s)
        if trips == 0 and s.cond is None:
            continue
        if trips == 1 and s.cond is None and not _named_elsewhere(s.body, s.var):
            bound = _bound(s.body, s.var, s.start)
            out.extend(resolve_loops(transform(bound, _fold_node)))
            continue
        out.append(s)
    return tuple(out)


def _trips(loop: Loop) -> int | None:
    if not (isinstance(loop.start, Const) and isinstance(loop.stop, Const)):
        return None
    span = loop.stop.value - loop.start.value
    return max(0, -(-span // loop.step))


def _named_elsewhere(body: tuple, var: str) -> bool:
    """Whether ``var`` occurs in ``body`` other than as a size symbol (a scalar operand
    ``Param(var)``): such a loop is kept, its variable stays defined."""
    return any(not isinstance(x, Sym) and getattr(x, "name", None) == var for x in nodes(body))


def _bound(body: tuple, var: str, value: SizeExpr) -> tuple:
    """``body`` with the size symbol ``var`` replaced by ``value``."""
    return transform(body, lambda x: value if isinstance(x, Sym) and x.name == var else x)
