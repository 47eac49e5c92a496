"""``record-rows``: the fields of a tile of records move in one DMA of the record rows.

An array of records (``struct { float x, y, z; }``, ``float3``) binds as a ``[n, W]`` tensor, and
a kernel reading ``p[i].y`` of consecutive records lifts to one statement per field.  Lowered
one by one, each field is a strided DMA of one element per record: ``W`` small transfers where
the rows of the tile are ``W * F`` contiguous elements per partition.

Loads of the fields of the same rows, each into a whole ``[P, F]`` tile, become one load of
the rows into a ``[P, F * W]`` tile when they are at least half of the record's fields (every
field ``0 .. W-1``, or two of three: one DMA moves at most twice what is read, where a DMA per
field moves one element per descriptor); field ``f`` is the columns ``f, f + W, ...``.
Stores of every field of the same rows from ``[P, F]`` views become writes into a
``[P, F * W]`` tile and one store of it, after the last of them (no read of the tensor comes
between): the instruction computing a field (its tile read by the store alone) writes the field
in place, any other field is copied there.  It runs after the passes that recognise
instruction patterns on whole tiles (``row-moments``)::

    a = sbuf[P, F]; dma a <- x[r0:r0+P*F, 0]      w = sbuf[P, 2F]; dma w <- x rows r0.. (2F each)
    b = sbuf[P, F]; dma b <- x[r0:r0+P*F, 1]  ->  o = sbuf[P, 2F]
    s = a + 1.0; dma y[r0:r0+P*F, 0] <- s         o[:, 0:2F:2] = w[:, 0:2F:2] + 1.0
    dma y[r0:r0+P*F, 1] <- b                      o[:, 1:2F:2] = copy(w[:, 1:2F:2])
                                                  dma y rows r0.. <- o

Only loads of ``in`` and ``inout`` tensors are merged (an ``inout``'s loads read its
kernel-entry value: the port stores to a separate output); a field tile must be written by its
load alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from cuda2nki.ir.nodes import (
    Alloc,
    At,
    Const,
    Kernel,
    Load,
    Loop,
    Rows,
    Slice,
    Store,
    TensorCopy,
    View,
)
from cuda2nki.passes._load_groups import merge_grouped_loads, merge_kernel_loads
from cuda2nki.passes.base import Pass, PassContext
from cuda2nki.passes.common_tiles import _whole
from cuda2nki.passes.fold_sizes import fold_size
from cuda2nki.passes.interleaved_loads import _fresh, _moved
from cuda2nki.rewrite import nodes


@dataclass(frozen=True)
class RecordRowsPass(Pass):
    name: ClassVar[str] = "record-rows"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        widths = _record_widths(kernel)
        if not widths:
            return kernel
        kernel = merge_kernel_loads(
            kernel,
            lambda body, writes, inputs, used, moved: _loads(
                body, writes, inputs, used, moved, widths
            ),
            _moved,
            entry=True,
        )
        used = {x.name for x in nodes(kernel.body) if isinstance(x, Alloc)} | set(kernel.tensors)
        dtypes = {n: t.dtype for n, t in kernel.tensors.items() if n in widths}
        return kernel.replace(body=_stores(kernel.body, widths, dtypes, used))


def _record_widths(kernel: Kernel) -> dict[str, int]:
    """Tensors of two dims whose last is a constant ``W > 1``: their records' field counts."""
    out = {}
    for name, t in kernel.tensors.items():
        shape = getattr(t, "shape", ())
        if len(shape) == 2:
            w = fold_size(shape[1])
            if isinstance(w, Const) and w.value > 1:
                out[name] = w.value
    return out


def _field(v: View, widths: dict[str, int]) -> tuple[Slice, int] | None:
    """``(rows, field)`` of a view ``t[r0:r0+k, f]`` of a record tensor, else None."""
    if v.tensor not in widths or len(v.dims) != 2:
        return None
    rows, at = v.dims
    if not (isinstance(rows, Slice) and rows.step == 1 and isinstance(at, At)):
        return None
    f = fold_size(at.index)
    return (rows, f.value) if isinstance(f, Const) else None


def _fits(rows: Slice, p: Any, f: Any) -> bool:
    """The ``rows`` spread over a ``[p, f]`` tile, ``f`` per partition."""
    return rows.size == p * f or fold_size(rows.size) == fold_size(p * f)


def _rows(rows: Slice, p: Any, f: Any, w: int) -> Rows:
    """The HBM side of the ``[p, f * w]`` tile holding ``rows``' records: partition ``q`` holds
    the ``f * w`` contiguous elements of records ``r0 + q * f ...``."""
    width = fold_size(Const(w) * f)
    return Rows(fold_size(rows.start * Const(w)), p, width, width)


# ------------------------------------------------------------------ loads


@dataclass(frozen=True)
class _Part:
    load: Load
    alloc: Alloc
    field: int


def _loads(body: tuple, writes: dict, inputs: set, used: set, moved: dict, widths: dict) -> tuple:
    return merge_grouped_loads(
        body,
        key=lambda s, allocs: _load_key(s, allocs, writes, inputs, widths),
        group=lambda loads, allocs: _load_parts(loads, allocs, widths),
        merge=lambda out, parts: _merge_loads(out, parts, used, moved, widths),
    )


def _load_key(s: Any, allocs: dict, writes: dict, inputs: set, widths: dict) -> Any:
    if not isinstance(s, Load) or s.src.tensor not in inputs:
        return None
    got = _field(s.src, widths)
    alloc = allocs.get(s.dst.tensor)
    if got is None or alloc is None or len(alloc.shape) != 2 or writes.get(alloc.name) != 1:
        return None
    if not _whole(s.dst, alloc) or not _fits(got[0], *alloc.shape):
        return None
    return (s.src.tensor, got[0], alloc.shape, alloc.dtype, alloc.buffer)


def _load_parts(loads: list[Load], allocs: dict, widths: dict) -> list[_Part] | None:
    fields = [_field(ld.src, widths)[1] for ld in loads]  # type: ignore[index]
    if not _most_fields(fields, widths[loads[0].src.tensor]):
        return None
    return [_Part(ld, allocs[ld.dst.tensor], f) for ld, f in zip(loads, fields)]


def _most_fields(fields: list[int], w: int) -> bool:
    """Distinct fields making up at least half of each record: one DMA of the whole records
    moves at most twice what the kernel reads, where a DMA per field moves one element per
    descriptor."""
    return len(set(fields)) == len(fields) >= 2 and 2 * len(fields) >= w


def _merge_loads(out: list, parts: list[_Part], used: set, moved: dict, widths: dict) -> list:
    first = min(parts, key=lambda p: out.index(p.load))
    tensor = first.load.src.tensor
    w = widths[tensor]
    p, f = first.alloc.shape
    rows = _field(first.load.src, widths)[0]  # type: ignore[index]
    wide = _fresh(f"{first.load.dst.tensor}_rec", used)
    width = fold_size(Const(w) * f)
    merged = [
        Alloc(wide, (p, width), first.alloc.dtype, first.alloc.buffer, loc=first.alloc.loc),
        Load(
            View(wide, (Slice(Const(0), p), Slice(Const(0), width))),
            View(tensor, (_rows(rows, p, f, w),)),
            loc=first.load.loc,
        ),
    ]
    gone = {id(q.load) for q in parts} | {id(q.alloc) for q in parts}
    at = out.index(first.alloc) if first.alloc in out else out.index(first.load)
    for q in parts:
        moved[q.load.dst.tensor] = (wide, q.field, w)
    kept = [s for i, s in enumerate(out) if id(s) not in gone or i == at]
    i = next(k for k, s in enumerate(kept) if s is out[at])
    return kept[:i] + merged + kept[i + 1 :]


# ------------------------------------------------------------------ stores


def _stores(body: tuple, widths: dict, dtypes: dict, used: set) -> tuple:
    """``body`` with, in every block, the stores of all fields of the same rows merged."""
    out = [
        s.replace(body=_stores(s.body, widths, dtypes, used)) if isinstance(s, Loop) else s
        for s in body
    ]
    groups: dict[Any, list[Store]] = {}
    for s in out:
        key = _store_key(s, widths)
        if key is not None:
            groups.setdefault(key, []).append(s)
    for stores in groups.values():
        fields = [_field(s.dst, widths)[1] for s in stores]  # type: ignore[index]
        if sorted(fields) == list(range(widths[stores[0].dst.tensor])) and _apart(out, stores):
            dtype = dtypes[stores[0].dst.tensor]
            out = _merge_stores(out, stores, fields, widths[stores[0].dst.tensor], dtype, used)
    return tuple(out)


def _store_key(s: Any, widths: dict) -> Any:
    if not isinstance(s, Store) or s.accumulate is not None:
        return None
    got = _field(s.dst, widths)
    if got is None or len(s.src.dims) != 2 or not all(isinstance(d, Slice) for d in s.src.dims):
        return None
    p, f = (d.size for d in s.src.dims)
    if not _fits(got[0], p, f):
        return None
    return (s.dst.tensor, got[0], p, f)


def _apart(out: list, stores: list[Store]) -> bool:
    """No statement between the first and the last of ``stores`` touches their tensor other than
    them (so the one store may come after the last)."""
    ids = {id(s) for s in stores}
    at = [i for i, s in enumerate(out) if id(s) in ids]
    tensor = stores[0].dst.tensor
    for s in out[at[0] : at[-1] + 1]:
        if id(s) not in ids and any(isinstance(v, View) and v.tensor == tensor for v in nodes(s)):
            return False
    return True


def _merge_stores(
    out: list, stores: list[Store], fields: list[int], w: int, dtype: str, used: set
) -> list:
    tensor = stores[0].dst.tensor
    p, f = (d.size for d in stores[0].src.dims)
    rows = stores[0].dst.dims[0]
    wide = _fresh(f"{tensor}_rec", used)
    width = fold_size(Const(w) * f)
    copies = {
        id(s): TensorCopy(View(wide, (Slice(Const(0), p), Slice(Const(k), f, w))), s.src, loc=s.loc)
        for s, k in zip(stores, fields)
    }
    ids = [i for i, s in enumerate(out) if id(s) in copies]
    last = stores[0].replace(
        dst=View(tensor, (_rows(rows, p, f, w),)),
        src=View(wide, (Slice(Const(0), p), Slice(Const(0), width))),
    )
    new: list = []
    for i, s in enumerate(out):
        new.append(copies.get(id(s), s))
        if i == ids[-1]:
            new.append(last.replace(loc=s.loc))
    new = _retargeted(new, list(copies.values()), dtype)
    first = min(
        (
            k
            for k, s in enumerate(new)
            if any(isinstance(v, View) and v.tensor == wide for v in nodes(s))
        )
    )
    new.insert(first, Alloc(wide, (p, width), dtype, loc=new[first].loc))
    return new


def _retargeted(out: list, copies: list[TensorCopy], dtype: str) -> list:
    """``out`` where each field copy whose source tile is written by one engine instruction of
    this block and read by the copy alone has that instruction write the field instead."""
    for cp in copies:
        tile = cp.src.tensor
        alloc = next((s for s in out if isinstance(s, Alloc) and s.name == tile), None)
        if (
            alloc is None
            or alloc.dtype != dtype
            or len(alloc.shape) != 2
            or not _whole(cp.src, alloc)
        ):
            continue
        views = [v for s in out for v in nodes(s) if isinstance(v, View) and v.tensor == tile]
        writers = [s for s in out if getattr(s, "dst", None) is not None and s.dst.tensor == tile]
        if len(views) != 2 or len(writers) != 1 or isinstance(writers[0], Load | Store | Loop):
            continue
        if not _whole(writers[0].dst, alloc):
            continue
        out = [
            writers[0].replace(dst=cp.dst) if s is writers[0] else s
            for s in out
            if s is not cp and s is not alloc
        ]
    return out
