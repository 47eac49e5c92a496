"""Notes on a scheduled port, read off the scheduled IR with the binding's concrete sizes.

* C2N2513 -- the CUDA launch grid became loops inside the kernel: which loops, how many trips for
  the binding's sizes.
* C2N2514 -- a scalar parameter the port keeps as a (compile-time) keyword argument.
* C2N2509 -- a tensor whose DMAs move fewer than 2 KiB per partition because the problem itself
  is too small for more (NKI.md section 14.7): said so that nobody mistakes it for a defect.

None of these changes the port; :func:`port_notes` only reports.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cuda2nki.codegen import spell
from cuda2nki.codegen.emit import signature
from cuda2nki.diagnostics import Diagnostic, SourceLoc, make
from cuda2nki.ir import uniform
from cuda2nki.ir.nodes import Alloc, Kernel, Load, Loop, ScalarDecl, SizeExpr, Slice, Store, View

DMA_TARGET = 2048  # bytes per partition per transfer (NKI.md section 10 / 14.7)
PMAX = 128


@dataclass(frozen=True)
class _Dma:
    tensor: str  # the HBM tensor
    tile: View  # the on-chip side
    env: dict[str, Any]  # sizes and loop variables at the first iteration
    loc: SourceLoc


def port_notes(
    kernel: Kernel,
    env: Mapping[str, Any],
    grid: Sequence[Any] = (),
    block: Sequence[Any] = (),
    shapes: Mapping[str, Sequence[int]] | None = None,
) -> list[Diagnostic]:
    """The notes for a scheduled ``kernel``; ``env`` holds the binding's sizes and scalar values,
    ``grid``/``block`` its launch, ``shapes`` its tensors' concrete shapes."""
    out = _grid_notes(kernel, env, grid, block)
    out += _scalar_notes(kernel, env)
    out += _small_transfer_notes(kernel, env, shapes or {})
    return out


# --------------------------------------------------------------------------- grid -> loops


def _dims(vals: Sequence[Any]) -> str:
    return "(" + ", ".join(str(v) for v in vals) + ")"


def _trips(loop: Loop, env: Mapping[str, Any]) -> int | None:
    try:
        start, stop = int(loop.start.evaluate(env)), int(loop.stop.evaluate(env))
    except (KeyError, TypeError, ValueError, ZeroDivisionError, NotImplementedError):
        return None
    return max(0, -(-(stop - start) // max(loop.step, 1)))


#: a loop bound longer than this is named in a note line, not in the message
LONG_BOUND = 32


def _loop_text(loop: Loop, env: Mapping[str, Any]) -> tuple[str, str | None]:
    """The loop as the message names it (``t < (N + 127) // 128 (2 trips)``, or ``t (1 trip)``
    when the bound is long) and, for a long bound, the note line that spells it."""
    bound = spell.size(loop.stop)
    trips = _trips(loop, env)
    first = (
        f"{loop.var} < {bound}"
        if spell.size(loop.start) == "0"
        else f"{loop.var} in [{spell.size(loop.start)}, {bound})"
    )
    count = "" if trips is None else f" ({trips} trip{'' if trips == 1 else 's'})"
    if len(first) - len(loop.var) - 3 <= LONG_BOUND:
        return first + count, None
    return (loop.var + count if count else first), f"loop {first}"


def _calls(text: str) -> list[str]:
    """Every ``name(...)`` call in ``text`` with balanced parentheses, outermost first."""
    out = []
    for m in re.finditer(r"\b[A-Za-z_]\w*\(", text):
        depth = 0
        for j in range(m.end() - 1, len(text)):
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            if depth == 0:
                out.append(text[m.start() : j + 1])
                break
    return out


def name_repeated(lines: Sequence[str], name: str = "F") -> tuple[list[str], str | None]:
    """``lines`` with the call spelled more than once among them whose naming shortens them the
    most (a long call said twice, or a shorter one inside it said more often) replaced by
    ``name``, and the line defining it (``F = min(512, ...)``); unchanged when nothing repeats or ``name``
    is already in use."""
    joined = "\n".join(lines)
    if re.search(rf"\b{name}\b", joined):
        return list(lines), None
    repeated = [c for c in set(_calls(joined)) if len(c) > 12 and joined.count(c) > 1]
    if not repeated:
        return list(lines), None
    # the lines plus the definition, shortest: what naming the call saves, less its definition
    sub = max(repeated, key=lambda c: (joined.count(c) * (len(c) - len(name)) - len(c), c))
    return [ln.replace(sub, name) for ln in lines], f"{name} = {sub}"


def _branches_opened(stmts: Sequence[Any], env: Mapping[str, Any]) -> list[Any]:
    """``stmts`` with each branch on parameters (a one-trip loop with a condition) the binding's
    values take replaced by its body, the others left out: the loops the launch grid became."""
    out: list[Any] = []
    for s in stmts:
        if isinstance(s, Loop) and uniform.is_branch(s):
            if _taken(s, env):
                out.extend(_branches_opened(s.body, env))
        else:
            out.append(s)
    return out


def _taken(loop: Loop, env: Mapping[str, Any]) -> bool:
    """Whether the binding's parameter values run ``loop`` (True when they cannot say)."""
    if loop.cond is None:
        return True
    try:
        return bool(uniform.evaluate(loop.cond, env))
    except (KeyError, TypeError, ValueError, ZeroDivisionError, NotImplementedError):
        return True


def _tile_nest(loop: Loop) -> list[Loop]:
    """The loop and the loops directly nested in it, outermost first (the tile loops)."""
    chain = [loop]
    while True:
        inner = [s for s in chain[-1].body if isinstance(s, Loop)]
        if len(inner) != 1:
            return chain
        chain.append(inner[0])


def _grid_notes(
    kernel: Kernel, env: Mapping[str, Any], grid: Sequence[Any], block: Sequence[Any]
) -> list[Diagnostic]:
    if not grid or not block:
        return []
    by_line: dict[SourceLoc, list[str]] = {}
    bounds: dict[SourceLoc, list[str]] = {}
    for s in _branches_opened(kernel.body, env):
        if isinstance(s, Loop):
            texts = [_loop_text(lp, env) for lp in _tile_nest(s)]
            by_line.setdefault(s.loc, []).append(" x ".join(t for t, _ in texts))
            bounds.setdefault(s.loc, []).extend(n for _, n in texts if n)
    out = []
    for loc, nests in by_line.items():
        lines, definition = name_repeated(bounds[loc])
        out.append(
            make(
                "C2N2513",
                loc,
                notes=(*lines, *([f"where {definition}"] if definition else [])),
                grid=_dims(grid),
                block=_dims(block),
                tiles="; ".join(nests),
            )
        )
    return out


# --------------------------------------------------------------------------- kept scalars


def _scalar_notes(kernel: Kernel, env: Mapping[str, Any]) -> list[Diagnostic]:
    sig = signature(kernel, {k: v for k, v in env.items() if k in kernel.scalars})
    decls = kernel.scalars
    out = []
    for name, _default in sig.keywords:
        decl: ScalarDecl | None = decls.get(name)
        loc = decl.loc if decl is not None and decl.loc.line > 0 else kernel.loc
        value = env.get(name)
        notes = (
            (f"the binding's value is {value!r}; each other value compiles another kernel",)
            if value is not None
            else ()
        )
        out.append(make("C2N2514", loc, notes=notes, name=name))
    return out


# --------------------------------------------------------------------------- small transfers


def _walk(stmts: Sequence[Any], env: dict[str, Any], where: SourceLoc) -> Iterator[_Dma]:
    """The DMAs the binding's sizes execute, with the sizes at their first iteration; a DMA
    without a CUDA position takes its loop's."""
    for s in stmts:
        if isinstance(s, Loop) and not _taken(s, env):
            continue  # a branch the binding's values do not take
        if isinstance(s, Loop):
            inner = dict(env)
            try:
                inner[s.var] = int(s.start.evaluate(env))
            except (KeyError, TypeError, ValueError, ZeroDivisionError, NotImplementedError):
                continue
            if not _trips(s, env):
                continue  # a tail loop the binding's sizes never enter
            yield from _walk(s.body, inner, s.loc if s.loc.line > 0 else where)
        elif isinstance(s, Load):
            yield _Dma(s.src.tensor, s.dst, env, s.loc if s.loc.line > 0 else where)
        elif isinstance(s, Store):
            yield _Dma(s.dst.tensor, s.src, env, s.loc if s.loc.line > 0 else where)


def _free_elems(view: View, tiles: Mapping[str, Alloc], env: Mapping[str, Any]) -> int | None:
    """Elements per partition of the on-chip side of a DMA (``None`` when not evaluable)."""
    try:
        if view.dims:
            n = 1
            for d in view.dims[1:]:
                if isinstance(d, Slice):
                    n *= int(d.size.evaluate(env))
            return n
        alloc = tiles.get(view.tensor)
        if alloc is None:
            return None
        return int(np.prod([int(e.evaluate(env)) for e in alloc.shape[1:]], dtype=np.int64))
    except (KeyError, TypeError, ValueError, ZeroDivisionError, NotImplementedError):
        return None


def _size(e: SizeExpr, env: Mapping[str, Any]) -> int | None:
    try:
        return int(e.evaluate(env))
    except (KeyError, TypeError, ValueError, ZeroDivisionError, NotImplementedError):
        return None


def _small_transfer_notes(
    kernel: Kernel, env: Mapping[str, Any], shapes: Mapping[str, Sequence[int]]
) -> list[Diagnostic]:
    tensors = kernel.tensors
    allocs = _allocs(kernel)
    largest: dict[str, tuple[int, SourceLoc]] = {}
    for dma in _walk(kernel.body, dict(env), kernel.loc):
        decl = tensors.get(dma.tensor)
        elems = _free_elems(dma.tile, allocs, dma.env)
        if decl is None or not elems:
            continue
        nbytes = elems * np.dtype(_np_name(decl.dtype)).itemsize
        if nbytes > largest.get(dma.tensor, (0, dma.loc))[0]:
            largest[dma.tensor] = (nbytes, dma.loc)
    out = []
    for name, (nbytes, loc) in largest.items():
        decl = tensors[name]
        dims = shapes.get(name) or [_size(e, env) for e in decl.shape]
        if any(d is None for d in dims):
            continue
        total = int(np.prod(dims, dtype=np.int64)) * np.dtype(_np_name(decl.dtype)).itemsize
        spread = total / PMAX  # the whole tensor spread over every partition
        if nbytes < DMA_TARGET and spread < DMA_TARGET:
            out.append(
                make(
                    "C2N2509",
                    loc,
                    notes=(
                        f"'{name}' is {total} bytes in all: {spread:.0f} bytes per partition "
                        f"even spread over all {PMAX} partitions",
                    ),
                    tensor=name,
                    bytes=nbytes,
                )
            )
    return out


def _allocs(kernel: Kernel) -> dict[str, Alloc]:
    found: dict[str, Alloc] = {}

    def visit(stmts: Sequence[Any]) -> None:
        for s in stmts:
            if isinstance(s, Alloc):
                found[s.name] = s
            elif isinstance(s, Loop):
                visit(s.body)

    visit(kernel.body)
    return found


def _np_name(dtype: str) -> str:
    return {"bfloat16": "uint16", "float8_e4m3": "uint8", "float8_e5m2": "uint8"}.get(dtype, dtype)
