"""Matmul operands read from fp32 copies of the caller's arrays, widened once per run.

A tiled matmul loads each tile of its inputs many times (a ``lhsT`` tile once per output column
block, a ``rhs`` tile once per output row block) and the TensorE reads it in fp32.  Converting
every loaded tile again (bf16 -> fp32) and copying it into its SBUF tile cost as much as the
GEMMs themselves.  A load from a caller's array into a whole new tile is deferred
(``Storage.lazy``: the tile keeps the source view; the caller's array never changes during a
run, writes go to a copy), so a matmul operand that is such a tile can be read from an fp32
copy of the whole source array instead, made once per run: the same values (widening to fp32
is exact), no per-tile conversion or copy, and the tile itself stays deferred.

The copies are immutable views; deferred GEMMs keep them without copying (``keeps``), and
consecutive K tiles of one source are adjacent rows of it, so the deferred GEMM reads them as
one view (``join_rows``) instead of concatenating them.
"""

from __future__ import annotations

import numpy as np

from cuda2nki.nkisim import dtypes as dt


class Widened:
    """The fp32 copies of one run's caller arrays (``SimState.widened``)."""

    __slots__ = ("by_flat", "copies")

    def __init__(self) -> None:
        self.by_flat: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # id(flat) -> (flat, copy)
        self.copies: dict[int, np.ndarray] = {}  # id(copy) -> copy

    def of(self, flat: np.ndarray) -> np.ndarray:
        """The fp32 values of ``flat`` (a caller's array: unchanged for the run), made once."""
        ent = self.by_flat.get(id(flat))
        if ent is None or ent[0] is not flat:
            if flat.dtype == dt.F32:
                w = flat.view()
            elif dt.is_bf16(flat.dtype):
                w = dt.bf16_to_f32(flat)
            else:
                w = flat.astype(np.float32)
            w.flags.writeable = False
            ent = self.by_flat[id(flat)] = (flat, w)
            self.copies[id(w)] = w
        return ent[1]

    def view(self, src: np.ndarray, flat: np.ndarray, boff: int) -> np.ndarray | None:
        """``src`` (a view ``boff`` bytes into ``flat``, of its dtype) read in fp32; ``None`` when
        ``src`` has another dtype or a stride that is not a whole number of elements."""
        isz = flat.itemsize
        if src.dtype != flat.dtype or boff % isz or any(s % isz for s in src.strides):
            return None
        w = self.of(flat)
        return np.ndarray(
            src.shape, np.float32, w, boff // isz * 4, tuple(s // isz * 4 for s in src.strides)
        )

    def keeps(self, x: np.ndarray) -> bool:
        """Whether ``x`` is a view of one of the fp32 copies (immutable for the run)."""
        b = x.base
        return b is not None and self.copies.get(id(b)) is b


def join_rows(arrs: list[np.ndarray]) -> np.ndarray:
    """``np.concatenate(arrs)`` of 2-D arrays; one view, without a copy, when they are
    consecutive row blocks of one buffer (the K tiles of one source column block)."""
    a0 = arrs[0]
    if len(arrs) == 1:
        return a0
    base = a0.base
    if base is not None and a0.ndim == 2 and a0.strides[0] > 0:
        rs = a0.strides[0]
        start = a0.ctypes.data
        rows = a0.shape[0]
        for x in arrs[1:]:
            if (
                x.base is not base
                or x.ndim != 2
                or x.strides != a0.strides
                or x.shape[1] != a0.shape[1]
                or x.ctypes.data != start + rows * rs
            ):
                return np.concatenate(arrs)
            rows += x.shape[0]
        off = start - base.ctypes.data
        if off >= 0:
            try:
                return np.ndarray((rows, a0.shape[1]), a0.dtype, base, off, a0.strides)
            except (TypeError, ValueError):  # not a buffer holding them all
                pass
    return np.concatenate(arrs)
