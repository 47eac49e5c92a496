"""``nisa.nonzero_with_count``: the indices of the nonzero elements of a row, and their count.

Each of the eight GpSimd cores reads and writes only the first of its 16 SBUF partitions, so the
instruction works on the partitions whose SBUF index is a multiple of 16 and leaves the others of
``dst`` unchanged.  On such a partition, with ``T`` elements in ``src``, ``dst`` (``T + 1``
elements) receives the indices (plus ``index_offset``) of the ``N`` nonzero elements in order,
``padding_val`` in the next ``T - N`` places and ``N`` in the last one.  NeuronCore-v3 and newer.
"""

from __future__ import annotations

import math

import numpy as np

from cuda2nki.nkisim import state as st
from cuda2nki.nkisim.engine import mat, no_extra_kw, on_chip, record, tensor_arg, write_mat
from cuda2nki.nkisim.errors import fail, invalid, unsupported
from cuda2nki.nkisim.tensor import NkiTensor, sbuf

#: partitions per GpSimd core; each core works on the first of its partitions
_CORE_PARTITIONS = 16


def _start_partition(t: NkiTensor) -> int:
    """The SBUF partition of ``t``'s first row."""
    stg = t.storage
    if t.pdim != 0 or stg.pdim != 0:
        return 0
    return t.offset // (math.prod(stg.shape[1:]) or 1)


def _int32(x, api: str, what: str) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise invalid(api, f"{what} must be an int32 value, got {x!r}")
    if not -(2**31) <= int(x) < 2**31:
        raise invalid(api, f"{what} {x} does not fit int32")
    return int(x)


def nonzero_with_count(dst, src, index_offset=0, padding_val=-1, **kw) -> None:
    api = "nisa.nonzero_with_count"
    no_extra_kw(api, kw)
    if st.current().target.nc_version < 3:
        raise unsupported(api, "NeuronCore-v3 (trn2) and newer only")
    dst = on_chip(tensor_arg(dst, api, "dst"), api, "dst", allowed=(sbuf,))
    src = on_chip(tensor_arg(src, api, "src"), api, "src", allowed=(sbuf,))
    if src.dtype.name not in ("float32", "int32"):
        raise fail("C2N3016", api=api, detail=f"src dtype {src.dtype.name} (float32 or int32)")
    if dst.dtype.name != "int32":
        raise fail("C2N3016", api=api, detail=f"dst dtype {dst.dtype.name} (int32)")
    p, t = src.partitions(), src.free_size()
    if dst.partitions() != p:
        raise fail(
            "C2N3014",
            api=api,
            detail=f"src and dst partitions differ: {src.describe()} vs {dst.describe()}",
        )
    if dst.free_size() != t + 1:
        raise fail(
            "C2N3014",
            api=api,
            detail=f"dst needs {t + 1} elements per partition (src's plus the count), "
            f"got {dst.describe()}",
        )
    offset = _int32(index_offset, api, "index_offset")
    pad = _int32(padding_val, api, "padding_val")
    first = _start_partition(src)
    rows = [i for i in range(p) if (first + i) % _CORE_PARTITIONS == 0]
    x = mat(src, f32=False)
    out = np.zeros((p, t + 1), np.int64)
    for i in rows:
        idx = np.flatnonzero(x[i])
        out[i, : idx.size] = idx + offset
        out[i, idx.size : t] = pad
        out[i, t] = idx.size
    keep = np.zeros((p, t + 1), bool)
    keep[rows] = True
    if dst.pdim != 0:
        raise unsupported(api, "a dst whose partition axis is not its first")
    write_mat(dst, out, api, where=keep.reshape(dst.shape))
    record("gpsimd", "nonzero_with_count", (dst, src))
