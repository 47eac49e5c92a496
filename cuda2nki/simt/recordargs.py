"""Arrays of structs given as their bytes to a kernel that takes one array per member.

The front end splits an array of a mixed-type struct into one parameter per member
(:mod:`cuda2nki.frontend.recordsplit`): ``Particle* ps`` becomes ``ps_x, ps_y, ps_cell``, each
carrying the struct's C layout (:attr:`A.Param.record_at`: the member's byte offset, the
struct's size with its padding, the member's elements per record).  A caller may still pass the
struct array as the C program holds it, under the original name (``ps``: any NumPy array, read
as bytes): each member is then read out of those bytes at its offset, and the members the
kernel writes are written back into a copy of them, padding bytes untouched.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from cuda2nki.frontend import ast as A
from cuda2nki.simt.numeric import np_dtype

Outputs = dict[str, np.ndarray]


def from_bytes(
    fn: A.Function, args: Mapping[str, object]
) -> tuple[dict[str, object], Callable[[Outputs], Outputs]] | None:
    """``args`` with each struct array given as bytes (under its original name) replaced by
    its member arrays, and the function that folds the kernel's member outputs back into
    those bytes; None when no struct array is given so."""
    groups: dict[str, list[A.Param]] = {}
    for p in fn.params:
        if p.record and p.record_at:
            groups.setdefault(p.record, []).append(p)
    given = {
        r: ps
        for r, ps in groups.items()
        if isinstance(args.get(r), np.ndarray) and not any(p.name in args for p in ps)
    }
    if not given:
        return None
    new = {k: v for k, v in args.items() if k not in given}
    for r, ps in given.items():
        raw = _bytes(args[r])  # type: ignore[arg-type]
        for p in ps:
            new[p.name] = _view(raw, p).copy().reshape(-1)

    def back(outputs: Outputs) -> Outputs:
        out = dict(outputs)
        for r, ps in given.items():
            whole = np.array(args[r], copy=True)
            raw = _bytes(whole)
            for p in ps:
                got = out.pop(p.name, None)
                if got is not None:
                    view = _view(raw, p)
                    view[...] = np.asarray(got).reshape(view.shape)
            out[r] = whole
        return out

    return new, back


def _bytes(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8)


def _view(raw: np.ndarray, p: A.Param) -> np.ndarray:
    """The member ``p`` of every whole record in ``raw``: ``[records, elements, lanes]``, a
    view (the elements ``stride`` bytes apart: inside an array member of structs)."""
    off, size, count = p.record_at[:3]
    pointee = p.ty.pointee  # type: ignore[union-attr]
    width = pointee.width if isinstance(pointee, A.VectorType) else 1
    dt = np_dtype(pointee.base if isinstance(pointee, A.VectorType) else pointee)
    stride = p.record_at[3] if len(p.record_at) > 3 else width * dt.itemsize
    records = raw.size // size if size else 0
    return np.ndarray(
        shape=(records, count, width),
        dtype=dt,
        buffer=raw,
        offset=off,
        strides=(size, stride, dt.itemsize),
    )
