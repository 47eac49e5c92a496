"""Loads and stores through pointers, with bounds, alignment and null checks."""

from __future__ import annotations

import numpy as np

from cuda2nki.diagnostics import SourceLoc, error
from cuda2nki.frontend.ast import CType, ScalarType, VectorType
from cuda2nki.simt.affine import Aff, mat
from cuda2nki.simt.chunk import Box, Chunk
from cuda2nki.simt.memory import Ptr, VarBuffer, Vec
from cuda2nki.simt.numeric import np_dtype

_I64 = ScalarType(name="int64")
_OR = np.bitwise_or.reduce
_SPACE = {"global": "global", "shared": "shared", "local": "local", "constant": "constant"}


def elem_layout(t: CType) -> tuple[np.dtype, int]:
    """(dtype of one lane, number of lanes) of a loadable type (remembered per type: every load
    and store asks)."""
    hit = _LAYOUTS.get(t)
    if hit is None:
        if isinstance(t, VectorType):
            hit = np_dtype(t.base), t.width
        elif isinstance(t, ScalarType):
            hit = np_dtype(t), 1
        else:
            raise TypeError(t)
        _LAYOUTS[t] = hit
    return hit


_LAYOUTS: dict[CType, tuple[np.dtype, int]] = {}


def _align(t: CType, esz: int, size: int) -> int:
    """Alignment of ``t`` in bytes: a vector type's size (a power of two; else its lane's), a
    record struct's own (see :mod:`cuda2nki.frontend.records`)."""
    if isinstance(t, VectorType) and t.align:
        return t.align
    return size if size & (size - 1) == 0 else esz


def element_index(c: Chunk, act, ptr: Ptr, t: CType, loc: SourceLoc, access: str):
    """Index of the first lane of ``t`` at ``ptr`` in ``ptr.buf.view(dtype)`` (checked)."""
    buf = ptr.buf
    if buf is None:
        raise c.fault("C2N1509", loc, act, 0)
    if isinstance(buf, VarBuffer):
        raise error(
            "C2N1505", loc, what=f"an {access} of local variable '{buf.name}' through a pointer"
        )
    dt, lanes = elem_layout(t)
    esz = dt.itemsize
    size = esz * lanes
    off = ptr.off
    if (
        buf.seg
        and c.launch.fast
        and not isinstance(off, np.ndarray | Aff)
        and (act is None or isinstance(act, Box))
    ):
        off = Aff(c, int(off), (0,) * 6, _I64)  # uniform offset into per-block/thread segments
        if act is not None:
            off = off.on(act)
    if isinstance(off, Aff):
        e = _affine_index(c, buf, off, esz, size, t)
        if e is not None:
            return e, dt, lanes
        off = off.values().astype(np.int64)  # fall back: exact per-thread checks and messages
    if isinstance(off, np.ndarray):
        lo, hi = (int(off.min()), int(off.max())) if len(off) else (0, 0)
        if lo < 0 or hi + size > buf.limit:
            j = int(np.flatnonzero((off < 0) | (off + size > buf.limit))[0])
            raise _oob(c, act, j, buf, int(off[j]), size, t, loc, access)
        align = _align(t, esz, size)
        # alignments are powers of two: some offset has a low bit set iff their OR has it (one
        # reduction, no temporary array)
        if align > 1 and int(_OR(off)) & (align - 1):
            j = int(np.flatnonzero(off & (align - 1))[0])
            raise _misaligned(c, act, j, buf, int(off[j]), size, t, loc, access)
        e = off // esz if esz > 1 else off
    else:
        o = int(off)
        if o < 0 or o + size > buf.limit:
            raise _oob(c, act, 0, buf, o, size, t, loc, access)
        align = _align(t, esz, size)
        if o % align:
            raise _misaligned(c, act, 0, buf, o, size, t, loc, access)
        e = np.int64(o // esz)
    if buf.seg:
        seg_elems = buf.seg // esz
        if buf.kind == "shared":
            segs = c.blk if act is None else c.blk[act]
        else:
            segs = np.arange(c.T, dtype=np.int64) if act is None else np.asarray(act)
        e = segs * seg_elems + e
    return e, dt, lanes


def _affine_index(c: Chunk, buf, off: Aff, esz: int, size: int, t: CType) -> Aff | None:
    """Element index as an Aff (segment base included) when in bounds and aligned, else None."""
    lo, hi = off.range()
    if lo < 0 or hi + size > buf.limit:
        return None
    align = _align(t, esz, size)
    if off.c0 % align or any(k % align for k in off.co):
        return None
    c0, co = off.c0 // esz, [k // esz for k in off.co]
    if buf.seg:
        se = buf.seg // esz
        ny, nx = c.ny, c.nx
        # block number in the chunk: ((bz - z0) * ny + (by - y0)) * nx + (bx - x0)
        bco = (ny * nx, nx, 1)
        c0 -= (c.z0 * ny * nx + c.y0 * nx + c.x0) * se if buf.kind == "shared" else 0
        if buf.kind == "shared":
            for ax in range(3):
                co[ax] += bco[ax] * se
        else:  # per-thread segment: k = blk * tpb + (tz * by + ty) * bx + tx
            bx_, by_, _ = c.launch.block
            tpb = c.tpb
            c0 -= (c.z0 * ny * nx + c.y0 * nx + c.x0) * tpb * se
            for ax in range(3):
                co[ax] += bco[ax] * tpb * se
            co[3] += by_ * bx_ * se
            co[4] += bx_ * se
            co[5] += se
    return off.with_(c0, tuple(co), _I64)


def _strided(view: np.ndarray, e: Aff) -> np.ndarray:
    """The 6-D strided view of ``view`` that ``e`` addresses (one element per thread of the box)."""
    isz = view.itemsize
    return np.ndarray(
        e.shape,
        view.dtype,
        buffer=view,
        offset=e.base() * isz,
        strides=tuple(k * isz for k in e.co),
    )


def _oob(c, act, j, buf, off, size, t, loc, access):
    n = c.count(act)
    j = min(j, max(n - 1, 0))
    return c.fault(
        "C2N1500",
        loc,
        act,
        j,
        space=_SPACE.get(buf.kind, buf.kind),
        access=access,
        buffer=buf.name,
        index=off // size
        if off >= 0
        else -((-off) // size)
        if off % size == 0
        else f"(byte {off})",
        limit=buf.limit // size,
    )


def _misaligned(c, act, j, buf, off, size, t, loc, access):
    from cuda2nki.frontend.typesys import type_str

    return c.fault(
        "C2N1501",
        loc,
        act,
        j,
        access=access,
        size=size,
        what=type_str(t),
        buffer=buf.name,
        offset=off,
    )


def _var_access(c: Chunk, act, ptr: Ptr, t: CType, loc: SourceLoc, access: str) -> None:
    """Check an access through a pointer to a local variable: only offset 0 is the variable."""
    off = np.asarray(mat(ptr.off))
    if np.any(off != 0):
        j = int(np.flatnonzero(np.broadcast_to(off != 0, (c.count(act),)))[0]) if off.ndim else 0
        o = int(off.reshape(-1)[j]) if off.ndim else int(off)
        size = max(ptr.buf.limit, 1)
        raise _oob(c, act, j, ptr.buf, o, size, t, loc, access)


def _var_lane(ptr: Ptr, t: CType) -> int | None:
    """The lane of a local vector variable a scalar access through a pointer to it reaches
    (``m.y`` of a ``float3& m``), or None when the access is not to one lane."""
    vt = ptr.buf.ty  # type: ignore[union-attr]
    if not isinstance(vt, VectorType) or not isinstance(t, ScalarType) or t.bits != vt.base.bits:
        return None
    off = np.unique(np.asarray(mat(ptr.off)))
    esz = vt.base.bits // 8
    if off.size != 1 or int(off[0]) % esz or not 0 <= int(off[0]) // esz < vt.width:
        return None
    return int(off[0]) // esz


def _as_bits(x, source: CType, target: CType):
    """A local scalar read (or written) through a pointer to another scalar type of its size
    (``*(int*)&f``): the same bits, read as that type."""
    if not isinstance(source, ScalarType) or not isinstance(target, ScalarType):
        return x
    if source.name == target.name or source.bits != target.bits:
        return x
    sd, dd = np_dtype(source), np_dtype(target)
    x = mat(x)
    if isinstance(x, np.ndarray):
        return x.astype(sd, copy=False).view(dd)
    return np.asarray(x, sd).reshape(1).view(dd)[0]


def load(c: Chunk, act, ptr: Ptr, t: CType, loc: SourceLoc):
    if isinstance(ptr.buf, VarBuffer):
        from cuda2nki.simt.compiler import var_load

        lane = _var_lane(ptr, t)
        if lane is not None:
            b = ptr.buf
            return var_load(b.frame, b.owned_flags, b.slot, b.ty, act).lanes[lane]
        _var_access(c, act, ptr, t, loc, "read")
        b = ptr.buf
        return _as_bits(var_load(b.frame, b.owned_flags, b.slot, b.ty, act), b.ty, t)
    e, dt, lanes = element_index(c, act, ptr, t, loc, "read")
    if ptr.buf.reads is not None:
        _mark_read(ptr.buf.reads, e, dt, lanes)
    view = ptr.buf.view(dt)
    one = isinstance(t, VectorType)  # a one-lane vector (a one-member record) is still a Vec
    if isinstance(e, Aff):
        ro = ptr.buf.readonly
        if lanes == 1:
            x = _read_strided(view, e, ro)
            return Vec((x,)) if one else x
        return Vec(tuple(_read_strided(view, e.with_(e.c0 + j, e.co), ro) for j in range(lanes)))
    if lanes == 1:
        return Vec((view[e],)) if one else view[e]
    return Vec(tuple(view[e + j] for j in range(lanes)))


_MARK = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _mark_read(mask: np.ndarray, e, dt: np.dtype, lanes: int) -> None:
    """Set the bytes of ``lanes`` elements of ``dt`` at element index ``e`` in the byte mask."""
    word = _MARK.get(dt.itemsize)
    if word is None:  # no unsigned word of that size: count the whole buffer as read
        mask[:] = 1
        return
    view = mask[: mask.size - mask.size % dt.itemsize].view(word)
    ones = np.iinfo(word).max
    for j in range(lanes):
        if isinstance(e, Aff):
            ej = e.with_(e.c0 + j, e.co)
            if any(ej.co):
                _strided(view, ej)[...] = ones
            else:
                view[ej.base()] = ones
        else:
            view[e + j] = ones


def _read_strided(view: np.ndarray, e: Aff, readonly: bool) -> np.ndarray:
    if not any(e.co):
        return view[e.base()]  # every thread reads one address: a uniform value
    v = _strided(view, e).reshape(-1)
    if readonly and not v.flags.writeable:
        return v  # a view of a buffer nobody writes (reshape copied if it was not contiguous)
    return np.array(v, copy=True) if np.may_share_memory(v, view) else v


def store(c: Chunk, act, ptr: Ptr, t: CType, value, loc: SourceLoc) -> None:
    if isinstance(ptr.buf, VarBuffer):
        from cuda2nki.simt.compiler import var_load, var_store

        lane = _var_lane(ptr, t)
        if lane is not None:  # one lane of a local vector: the others keep their values
            b = ptr.buf
            lanes = list(var_load(b.frame, b.owned_flags, b.slot, b.ty, act).lanes)
            lanes[lane] = value
            var_store(c, b.frame, b.owned_flags, b.slot, act, Vec(tuple(lanes)), loc)
            return
        _var_access(c, act, ptr, t, loc, "write")
        b = ptr.buf
        var_store(c, b.frame, b.owned_flags, b.slot, act, _as_bits(value, t, b.ty), loc)
        return
    if ptr.buf is not None and ptr.buf.kind == "constant":
        raise error(
            "C2N1511", loc, space="__constant__ memory", buffer=ptr.buf.name, kernel=c.launch.kernel
        )
    e, dt, lanes = element_index(c, act, ptr, t, loc, "write")
    ptr.buf.for_write()
    view = ptr.buf.view(dt)
    n = c.count(act)
    value = mat(value) if not isinstance(value, Vec) else Vec(tuple(mat(x) for x in value.lanes))
    if isinstance(e, Aff):
        vals = value.lanes if isinstance(value, Vec) else (value,) * lanes
        for j in range(lanes):
            _write_strided(view, e.with_(e.c0 + j, e.co), vals[j], dt)
        return
    if lanes == 1:
        _put(view, e, value.lanes[0] if isinstance(value, Vec) else value, dt, n)
        return
    vals = value.lanes if isinstance(value, Vec) else (value,) * lanes
    for j in range(lanes):
        _put(view, e + j, vals[j], dt, n)


def _write_strided(view: np.ndarray, e: Aff, v, dt: np.dtype) -> None:
    if isinstance(v, np.ndarray | np.generic) and v.dtype != dt:
        v = v.astype(dt)
    if not any(e.co):  # every thread writes one address: the last thread wins
        view[e.base()] = v[-1] if isinstance(v, np.ndarray) else v
        return
    dst = _strided(view, e)
    if isinstance(v, np.ndarray):
        dst[...] = v.reshape(e.shape)
    else:
        dst[...] = v


def _put(view: np.ndarray, e, value, dt: np.dtype, n: int) -> None:
    v = value
    if isinstance(v, np.ndarray | np.generic) and v.dtype != dt:
        v = v.astype(dt)
    if isinstance(e, np.ndarray):
        view[e] = v
    elif isinstance(v, np.ndarray):
        # every active thread writes the same address: the last one (in thread order) wins
        view[e] = v[-1] if len(v) else view[e]
    else:
        view[e] = v
