"""Warp-matrix (wmma) operations on fragments (front-end lowering in :mod:`cuda2nki.frontend.wmma`).

A fragment is a local array of ``num_elements`` elements per thread; lane ``l`` of a warp holds
the elements ``l * num_elements + i`` of the fragment's matrix in row-major order.  Fill, load
and store are per-lane (each lane moves its own elements, through its own pointer);
``mma_sync`` gathers the three operand matrices of each warp from its 32 lanes, computes
``a @ b + c`` with exact products and fp64 sums rounded once to the accumulator type (tf32
operands rounded to tf32 first; 8-bit integers in int64, wrapped to int32) and scatters the
result.  ``mma_sync`` executed by part of a warp, or in a block whose size is not a multiple of
32, is refused (C2N1505): all lanes of a warp must take part.
"""

from __future__ import annotations

import numpy as np

from cuda2nki.diagnostics import SourceLoc
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.wmma import FLOAT_TO_TF32, WMMA_FILL, WMMA_LOAD, WMMA_MMA, WMMA_STORE
from cuda2nki.simt import access
from cuda2nki.simt.chunk import Chunk
from cuda2nki.simt.memory import Ptr
from cuda2nki.simt.numeric import convert, np_dtype

VOID = A.ScalarType(name="void")
F32 = A.ScalarType(name="float32")
I64 = A.ScalarType(name="int64")


def _unsupported(loc: SourceLoc, what: str):
    from cuda2nki.simt.compiler import unsupported

    return unsupported(loc, what)


def _frag_type(fc, e: A.Expr) -> tuple[A.ScalarType, int]:
    t = fc.type_of(e)
    if not isinstance(t, A.ArrayType) or len(t.dims) != 1 or not isinstance(t.elem, A.ScalarType):
        raise _unsupported(e.loc, "a wmma operand that is not a fragment")
    return A.ScalarType(name=t.elem.name), int(t.dims[0])


def _frag_ptr(fc, e: A.Expr):
    t = fc.type_of(e)
    return fc.rvalue(e, A.PointerType(pointee=t.elem))


def _at(p: Ptr, elems, size: int) -> Ptr:
    off = p.off + np.asarray(elems, dtype=np.int64) * size
    return Ptr(p.buf, off)


def _int(v) -> np.ndarray:
    return np.asarray(v).astype(np.int64)


def _lanes(c: Chunk, act) -> np.ndarray:
    return c.lane if act is None else c.lane[act]


def _fill(fc, e: A.Call):
    et, ne = _frag_type(fc, e.args[0])
    pf = _frag_ptr(fc, e.args[0])
    vf, vt = fc.rvalue(e.args[1]), fc.type_of(e.args[1])
    size = np.dtype(np_dtype(et)).itemsize
    loc = e.loc

    def f(c, a):
        p, v = pf(c, a), convert(vf(c, a), vt, et)
        for i in range(ne):
            access.store(c, a, _at(p, i, size), et, v, loc)
        return None

    return f, VOID


def _offsets(lanes: np.ndarray, i: int, ne: int, cols: int, ldm, col_major: bool):
    flat = lanes * ne + i
    r, cc = flat // cols, flat % cols
    return cc * ldm + r if col_major else r * ldm + cc


def _load_store(store: bool):
    def build(fc, e: A.Call):
        fa, ma = (e.args[1], e.args[0]) if store else (e.args[0], e.args[1])
        et, ne = _frag_type(fc, fa)
        pf, mf = _frag_ptr(fc, fa), fc.rvalue(ma)
        mt = fc.type_of(ma)
        if not isinstance(mt, A.PointerType) or not isinstance(mt.pointee, A.ScalarType):
            raise _unsupported(e.loc, "a wmma load/store through a non-pointer")
        st = A.ScalarType(name=mt.pointee.name)
        ldf = fc.rvalue(e.args[2])
        cols, col_major = int(e.args[4].value), bool(e.args[5].value)
        fsize = np.dtype(np_dtype(et)).itemsize
        msize = np.dtype(np_dtype(st)).itemsize
        loc = e.loc

        def f(c, a):
            p, m, ldm = pf(c, a), mf(c, a), _int(ldf(c, a))
            lanes = _lanes(c, a)
            for i in range(ne):
                at = _at(m, _offsets(lanes, i, ne, cols, ldm, col_major), msize)
                if store:
                    v = access.load(c, a, _at(p, i, fsize), et, loc)
                    access.store(c, a, at, st, convert(v, et, st), loc)
                else:
                    v = access.load(c, a, at, st, loc)
                    access.store(c, a, _at(p, i, fsize), et, convert(v, st, et), loc)
            return None

        return f, VOID

    return build


def round_tf32(x: np.ndarray) -> np.ndarray:
    """fp32 values rounded to nearest (ties to even) with a 10-bit mantissa."""
    x = np.asarray(x, dtype=np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    finite = (bits & 0x7F800000) != 0x7F800000
    bias = ((bits >> 13) & 1) + 0xFFF
    out = np.where(finite, (bits + bias) & 0xFFFFE000, bits)
    return (out & 0xFFFFFFFF).astype(np.uint32).view(np.float32)


def _float_to_tf32(fc, e: A.Call):
    xf = fc.rvalue(e.args[0], F32)

    def f(c, a):
        x = xf(c, a)
        r = round_tf32(np.atleast_1d(x))
        return r if np.ndim(x) else r[0]

    return f, F32


def _gather_frag(c: Chunk, a, p: Ptr, et, ne: int, loc) -> np.ndarray:
    """The fragment's elements as ``(warps, 32 * ne)`` in lane order (inactive lanes: 0)."""
    size = np.dtype(np_dtype(et)).itemsize
    out = np.zeros((c.nwarps, 32, ne), dtype=np_dtype(et))
    w = c.warp if a is None else c.warp[a]
    ln = _lanes(c, a)
    for i in range(ne):
        out[w, ln, i] = access.load(c, a, _at(p, i, size), et, loc)
    return out.reshape(c.nwarps, 32 * ne)


def _check_warps(c: Chunk, a, loc) -> None:
    if c.tpb % 32:
        raise _unsupported(loc, f"wmma::mma_sync in a block of {c.tpb} threads (whole warps only)")
    if a is None:
        return
    got = np.bincount(c.warp[a], minlength=c.nwarps)
    bad = np.flatnonzero((got > 0) & (got < 32))
    if len(bad):
        raise _unsupported(
            loc, f"wmma::mma_sync executed by {int(got[bad[0]])} of the 32 lanes of a warp"
        )


def _mma(fc, e: A.Call):
    ops = [(_frag_type(fc, x), _frag_ptr(fc, x)) for x in e.args[:4]]
    m, n, k, tf32 = (int(x.value) for x in e.args[4:8])
    loc = e.loc
    dty, _ = ops[0][0]
    integer = not dty.is_float

    def f(c, a):
        _check_warps(c, a, loc)
        ptrs = [pf(c, a) for _, pf in ops]
        mats = [_gather_frag(c, a, p, t, ne, loc) for ((t, ne), _), p in zip(ops, ptrs)]
        wide = np.int64 if integer else np.float64
        am = mats[1].astype(wide).reshape(-1, m, k)
        bm = mats[2].astype(wide).reshape(-1, k, n)
        if tf32:
            am = round_tf32(am.astype(np.float32)).astype(np.float64)
            bm = round_tf32(bm.astype(np.float32)).astype(np.float64)
        cm = mats[3].astype(wide).reshape(-1, m, n)
        d = np.matmul(am, bm) + cm
        d = d.reshape(c.nwarps, 32, -1)
        ne = ops[0][0][1]
        size = np.dtype(np_dtype(dty)).itemsize
        w = c.warp if a is None else c.warp[a]
        ln = _lanes(c, a)
        for i in range(ne):
            v = d[w, ln, i]
            v = convert(v, I64 if integer else A.ScalarType(name="float64"), dty)
            access.store(c, a, _at(ptrs[0], i, size), dty, v, loc)
        return None

    return f, VOID


def register(reg) -> None:
    note = (
        "warp-matrix fragment operation: lane l holds elements l*num_elements.. of the row-major "
        "matrix (CUDA leaves the mapping unspecified)"
    )
    reg(WMMA_FILL, _fill, "exact", note)
    reg(WMMA_LOAD, _load_store(False), "exact", note)
    reg(WMMA_STORE, _load_store(True), "exact", note)
    reg(
        WMMA_MMA,
        _mma,
        "ideal",
        "d = a @ b + c per warp: exact products, sums in fp64 rounded once to the accumulator "
        "type (a tensor core's order and rounding of the sums are unspecified); tf32 operands "
        "rounded to tf32",
    )
    reg(FLOAT_TO_TF32, _float_to_tf32, "exact", "round to nearest even on a 10-bit mantissa")


__all__ = ["register", "round_tf32"]
