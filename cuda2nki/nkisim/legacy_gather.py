"""The legacy ``nisa.local_gather`` (the form that returns its result).

The legacy reference states its semantics in NumPy: GpSimd core ``c`` serves partitions
``16c .. 16c+15``; it reads its 16 index partitions partition-first (``flatten(order='F')``),
keeps the first ``num_valid_indices`` as element offsets, and each of its partitions takes
``num_elem_per_idx`` contiguous elements of its own flattened free elements at each offset.  The
result has the source's partitions and ``(num_valid_indices, num_elem_per_idx)`` per partition.
"""

from __future__ import annotations

import numpy as np

from cuda2nki.nkisim.engine import mat, on_chip, record, write_mat
from cuda2nki.nkisim.errors import fail, invalid
from cuda2nki.nkisim.tensor import NkiTensor, sbuf

API = "nisa.local_gather"
GROUP = 16  # partitions served by one GpSimd core


def valid_count(index: NkiTensor, num_valid_indices: int | None) -> int:
    """Valid indices per core: the argument, at most (and by default) a core's index count."""
    cores = max(1, -(-index.shape[0] // GROUP))
    per_core = index.size // cores
    if num_valid_indices is None:
        return per_core
    nv = int(num_valid_indices)
    if not 0 < nv <= per_core:
        raise invalid(API, f"num_valid_indices={nv} must be in 1..{per_core} (indices per core)")
    return nv


def local_gather_into(out: NkiTensor, src: NkiTensor, index: NkiTensor, e: int, nv: int) -> None:
    """Fill ``out`` (``(P, nv, e)``) with the gather of ``src`` through ``index``."""
    if e not in (1, 2, 4, 8, 16, 32):
        raise invalid(API, "num_elem_per_idx must be 1, 2, 4, 8, 16 or 32")
    on_chip(src, API, "src_buffer", (sbuf,))
    on_chip(index, API, "index", (sbuf,))
    if index.dtype.is_float:
        raise invalid(API, f"index must be an integer tile, got {index.dtype.name}")
    p = src.shape[0]
    if index.shape[0] != p:
        raise invalid(API, f"index has {index.shape[0]} partitions, src_buffer {p}")
    x = mat(src, f32=False)  # (P, free elements)
    ix = mat(index, f32=False).astype(np.int64)
    res = np.empty((p, nv * e), x.dtype)
    span = np.arange(e, dtype=np.int64)
    for g0 in range(0, p, GROUP):
        offs = ix[g0 : g0 + GROUP].reshape(-1, order="F")[:nv]
        cols = (offs[:, None] + span[None, :]).reshape(-1)
        if cols.size and (cols.min() < 0 or cols.max() >= x.shape[1]):
            raise fail("C2N3019", detail=f"{API} index outside a partition's {x.shape[1]} elements")
        res[g0 : g0 + GROUP] = x[g0 : g0 + GROUP][:, cols]
    write_mat(out, res if res.dtype == out.dtype.np_dtype else res.astype(np.float32), API)
    record("gpsimd", "local_gather", (out, src, index), extra=(nv * e,))
