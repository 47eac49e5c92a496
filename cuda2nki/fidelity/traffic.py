"""What the computation needs against what a port moves: bytes and flops of the CUDA kernel.

The CUDA reference run counts the distinct bytes of every input the kernel reads (the SIMT
interpreter's read tracking) and the output bytes it writes: the least HBM traffic any port of
the kernel needs.  A port whose DMAs move many times that (whole probability rows loaded to use
one element of each) is wasting bandwidth: ``C2N5014``.  The same figures, with the kernel's
contraction flops (from the intent, or from the CUDA loop nest when it does not lift), give the
roofline a review measures the port against: the kernel's minimum, never the port's own traffic,
so a port that moves or computes more than it must does not look more efficient for it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from cuda2nki.diagnostics import Diagnostic, SourceLoc, make
from cuda2nki.fidelity.intensity import _is_product, reductions
from cuda2nki.fidelity.tracefind import ProblemSize, TraceSummary, _is_dma, port_lines
from cuda2nki.ir.nodes import Compute

#: a port moving this many times the bytes the kernel needs (times the reuse a tiled
#: contraction legitimately has) is reported
WASTE_RATIO = 4.0
#: and only when the excess is worth a DMA's fixed cost many times over (NKI.md §14.7)
WASTE_MIN_BYTES = 64 * 1024


@dataclass(frozen=True)
class Traffic:
    """The CUDA kernel's own traffic at one test point."""

    read: int  # distinct input bytes the kernel reads
    written: int  # output bytes the kernel writes
    flops: int = 0  # floating-point operations of its contractions (2 per multiply-add)
    flops_from: str = ""  # where ``flops`` comes from: "intent" | "loop nest" | ""

    @property
    def needed(self) -> int:
        return self.read + self.written


def from_run(
    binding: Any,
    read_bytes: Mapping[str, int],
    refs: Mapping[str, np.ndarray],
    dont_care: Mapping[str, np.ndarray],
) -> Traffic:
    """The kernel's traffic from its reference run: bytes of the inputs it read, and of the
    outputs it wrote (elements left as the canary are not written)."""
    read = written = 0
    for t in binding.tensors:
        if t.role in ("in", "inout"):
            read += int(read_bytes.get(t.name, 0))
        if t.role != "in" and t.name in refs:
            a = np.asarray(refs[t.name])
            skip = dont_care.get(t.name)
            n = a.size - (int(np.count_nonzero(skip)) if skip is not None else 0)
            written += n * a.dtype.itemsize
    return Traffic(read, written)


def intent_flops(kernel: Any, scalars: Mapping[str, Any], shapes: Mapping[str, tuple]) -> int:
    """2 x the multiply-adds of the intent's contractions (sum reductions of a product); 0 when
    it has none or a size cannot be evaluated."""
    if kernel is None:
        return 0
    env = {k: int(v) for k, v in scalars.items() if float(v).is_integer()}
    total = 0
    for c in kernel.body:
        if not isinstance(c, Compute):
            continue
        for red in reductions(c.expr):
            if not _is_product(red.body):
                continue
            try:
                points = 1
                for a in (*c.domain.axes, *red.axes):
                    points *= int(a.extent.evaluate(env))
            except (KeyError, TypeError, ValueError):
                return 0
            total += 2 * points
    return total


def nest_flops(factors: tuple[str, str], r: Any) -> int:
    """2 x the multiply-adds of a matmul-shaped CUDA loop nest over ``factors`` at ``r`` (a
    resolved binding).  The operands are the factors where they are the binding's tensors, else
    (shared-memory tiles, aliases) the binding's two inputs of rank 2 or more.  The contraction
    axes are the size names both operands carry and the output does not (``[M, K] x [K, N] ->
    [M, N]`` or ``[b, M, K] x [b, N, K] -> [b, M, N]``: ``K``), whatever the layout; where the
    shapes are not written with names, ``|A| |B| / |C| = K^2`` for a single matmul."""
    tensors = {t.name: t for t in r.binding.tensors}
    ops = [tensors[f] for f in factors if f in tensors]
    if len(ops) != 2:
        ops = [t for t in r.binding.tensors if t.role == "in" and len(t.shape) >= 2]
    outs = [t for t in r.binding.tensors if t.role != "in"]
    if len(ops) != 2 or not outs:
        return 0
    out = max(outs, key=lambda t: math.prod(int(d) for d in r.shapes[t.name]))
    out_elems = math.prod(int(d) for d in r.shapes[out.name])
    a, b = (math.prod(int(d) for d in r.shapes[t.name]) for t in ops)
    if not out_elems or not a or not b:
        return 0
    left = Counter(map(str, ops[0].shape)) + Counter(map(str, ops[1].shape))
    left -= Counter(map(str, out.shape))
    shared = [name for name, n in left.items() if n >= 2]
    env = {k: int(v) for k, v in r.scalars.items() if float(v).is_integer()}
    if shared and all(name in env or name.isdigit() for name in shared):
        k = math.prod(int(env.get(name, name)) for name in shared)
    else:
        k = max(1, round(math.sqrt(a * b / out_elems)))
    return 2 * out_elems * k


def findings(s: TraceSummary, need: Traffic, size: ProblemSize, port_path: str) -> list[Diagnostic]:
    """C2N5014 where the port's DMAs move many times the bytes the kernel needs."""
    moved = s.dma_bytes
    if not need.needed or not moved:
        return []
    allowed = WASTE_RATIO * max(size.reuse, 1.0) * need.needed
    if moved < allowed or moved - need.needed < WASTE_MIN_BYTES:
        return []
    ratio = moved / need.needed
    lines = {ln: ls for ln, ls in port_lines(s, port_path).items() if _is_dma(ls.engine, ls.op)}
    loc = SourceLoc(port_path, 1, 1)
    where = ""
    if lines:
        line, ls = max(lines.items(), key=lambda kv: (kv[1].dma_bytes, -kv[0]))
        loc = SourceLoc(port_path, line, 1)
        where = (
            f"; line {line} alone moves {ls.dma_bytes:,} bytes in {ls.count} DMA(s) "
            f"({ls.dma_bytes / moved:.0%} of the traffic)"
        )
    return [
        make(
            "C2N5014",
            loc,
            evidence=(
                f"the port's DMAs move {moved:,} bytes, {ratio:.1f}x the {need.needed:,} bytes "
                f"the computation needs (the CUDA kernel reads {need.read:,} distinct input "
                f"bytes and writes {need.written:,})" + where
            ),
        )
    ]


def roofline_fields(need: Traffic) -> dict[str, Any]:
    """The kernel's minimum traffic and flops, for the report's trace summary."""
    out: dict[str, Any] = {"needed_bytes": need.needed, "needed_read_bytes": need.read}
    if need.flops:
        out["kernel_flops"] = need.flops
        out["kernel_flops_from"] = need.flops_from
    return out
