"""Inline suppressions the generator writes where the CUDA kernel's own shape forbids better.

A finding of ``check`` that the port cannot avoid -- the kernel's data dependences fix the size
of a transfer, whatever the tiling -- is suppressed at its line by a comment that says why
(``# cuda2nki: ignore[ID] reason``, the syntax of :func:`cuda2nki.fidelity.portscan.scan`).
``check`` still counts suppressed findings (C2N5013), so none disappears silently.

Only performance findings (``C2N5xxx``) may be suppressed: a numerics finding says the port
computes something else, and no shape of the kernel excuses that.

* :func:`comment` -- the comment text for some finding ids and a reason (for any generator).
* :func:`note` -- the same as a scheduled-IR ``Note`` placed before the statement it covers.
* :data:`DATA_ADDRESS` -- the reason the literal lowering's helpers carry at their indirect
  DMAs (:mod:`cuda2nki.codegen.literal`).
* :func:`annotate` -- the scheduled kernel with the suppressions the lowering's own constructs
  justify, each placed before the DMA it covers: the tiles of an element gather (a flat
  gather into a tensor's elements, or a gather from a 1-D tensor), and the stores of a kernel
  whose only outputs are one result per row (each computed from a row held on one partition,
  so a row tile stores one element per partition; the reason names the tensors and sizes).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from cuda2nki.diagnostics import SourceLoc
from cuda2nki.ir.nodes import Const, Indirect, Kernel, Load, Loop, Note, Store, View

#: the marker the port scanner reads (``# cuda2nki: ignore[...]``)
MARKER = "cuda2nki"
_PERF = re.compile(r"C2N5\d{3}")

#: why the tiles of an element gather carry one element per partition row
ELEMENT_GATHER = (
    "element gather: the indirect DMA takes one data-dependent offset per partition, "
    "so its tiles hold one element per partition row"
)
#: what an element gather makes unavoidable: narrow DMAs, and many of them
ELEMENT_GATHER_IDS = ("C2N5001", "C2N5007")
#: why the literal lowering's indirect DMAs (elements gathered, counters taken and elements
#: stored at addresses the kernel reads from data) move one element per partition row: where
#: one of them is the narrowest DMA line, the kernel's own data-chosen accesses make the
#: average transfer small, whatever the tiling of its contiguous reads
DATA_ADDRESS = (
    "element gather or scatter at addresses read from data: the indirect DMA takes one "
    "data-dependent offset per partition, so it moves one element per partition row"
)
DATA_ADDRESS_IDS = ("C2N5007",)


def comment(codes: Iterable[str], reason: str) -> str:
    """``cuda2nki: ignore[ID,...] reason`` (without the ``#``); only performance ids."""
    ids = sorted(set(codes))
    bad = [c for c in ids if not _PERF.fullmatch(c)]
    if not ids or bad:
        raise ValueError(f"only performance findings (C2N5xxx) are suppressed, not {bad or ids}")
    return f"{MARKER}: ignore[{','.join(ids)}] {' '.join(reason.split())}"


def note(codes: Iterable[str], reason: str, loc: SourceLoc) -> Note:
    """:func:`comment` as a ``Note`` statement (rendered ``# cuda2nki: ignore[...] reason``)."""
    text = comment(codes, reason)
    return Note(MARKER, text[len(MARKER) + 2 :], loc=loc)


def annotate(kernel: Kernel) -> Kernel:
    """``kernel`` with a suppression before each DMA that the lowering's constructs force narrow
    (see :func:`_block` and :mod:`cuda2nki.codegen._row_results`)."""
    from cuda2nki.codegen._row_results import mark_row_results

    return mark_row_results(kernel.replace(body=_block(kernel.body)))


def _block(body: tuple) -> tuple:
    """In a block that gathers elements (a load through a flat ``Indirect``, or through the one
    dim of a 1-D tensor), every DMA of a one-column tile moves one element per partition row,
    in the block and in the loops inside it (a guarded part of the tile): the gather fixes the
    tiles' layout."""
    if any(isinstance(s, Load) and _element_gather(s.src) for s in body):
        return _mark(body)
    return tuple(s.replace(body=_block(s.body)) if isinstance(s, Loop) else s for s in body)


def _mark(body: tuple) -> tuple:
    out: list = []
    for s in body:
        if isinstance(s, Loop):
            out.append(s.replace(body=_mark(s.body)))
            continue
        tile = s.dst if isinstance(s, Load) else s.src if isinstance(s, Store) else None
        if tile is not None and _one_column(tile):
            out.append(note(ELEMENT_GATHER_IDS, ELEMENT_GATHER, s.loc))
        out.append(s)
    return tuple(out)


def _element_gather(v: View) -> bool:
    """One element per offset: a flat ``Indirect`` into a tensor's elements, or an ``Indirect``
    that is the whole view (the rows of a 1-D tensor are its elements)."""
    if not v.dims or not isinstance(v.dims[0], Indirect):
        return False
    return v.dims[0].flat or len(v.dims) == 1


def _one_column(tile: View) -> bool:
    return len(tile.dims) == 2 and getattr(tile.dims[1], "size", None) == Const(1)
