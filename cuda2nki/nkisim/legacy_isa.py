"""Legacy ``neuronxcc.nki.isa`` (beta 1): instructions return their result tile.

Each wrapper allocates the result (SBUF, or PSUM for TensorE results) with ``dtype=`` or the
input's dtype, then runs the current-API implementation with ``mask=``.
"""

from __future__ import annotations

import numpy as np

from cuda2nki.nkisim import dtypes as dt
from cuda2nki.nkisim import fastpath as _fp
from cuda2nki.nkisim import isa as _isa
from cuda2nki.nkisim import legacy_gather as _gather
from cuda2nki.nkisim import ops
from cuda2nki.nkisim.engine import (
    dge_mode,
    engine,
    matmul_perf_mode,
    nc_version,
    no_extra_kw,
    oob_mode,
    record,
    reduce_cmd,
)
from cuda2nki.nkisim.engine import tensor_arg as _tensor_arg
from cuda2nki.nkisim.errors import invalid, unsupported
from cuda2nki.nkisim.ops import op_name as _op_name
from cuda2nki.nkisim.tensor import IndexExpr, NkiTensor, allocate, psum, sbuf

# enums re-exported as part of the legacy nisa namespace
ENUMS = (dge_mode, oob_mode, nc_version, matmul_perf_mode, reduce_cmd)

tensor_engine, scalar_engine, gpsimd_engine, vector_engine, unknown_engine = (
    engine.tensor,
    engine.scalar,
    engine.gpsimd,
    engine.vector,
    engine.unknown,
)

get_nc_version = _isa.get_nc_version
dma_copy = _isa.dma_copy  # keyword form dma_copy(dst=, src=, mask=, dst_rmw_op=)
dma_compute = _isa.dma_compute


def _box(mask, ndim: int):
    """Per-axis (size, lo, hi) if ``mask`` selects a box of index ranges, "empty", or ``None``.

    Legacy masks are compile-time predicates and the instruction is emitted with the reduced shape
    (reference 4.2), so a box mask is simulated by running the instruction on sliced operands.
    """
    from cuda2nki.nkisim.tensor import Mask

    whole = _scalar_mask(mask)
    if whole is not None:
        return [(1, 0, 1)] * ndim if whole else "empty"
    if isinstance(mask, Mask) and len(mask.factors) > 1:
        box = _separable_box(mask.factors, ndim)
        if box is not None:
            return box
    m = mask.arr if isinstance(mask, Mask) else np.asarray(mask, dtype=bool)
    if m.ndim > ndim:
        return None
    m = m.reshape((1,) * (ndim - m.ndim) + m.shape)
    box = []
    prod = np.ones((1,) * m.ndim, dtype=bool)
    for a in range(m.ndim):
        other = tuple(i for i in range(m.ndim) if i != a)
        sel = m.any(axis=other) if other else m
        span = _span(sel)
        if span is None or span == "empty":
            return span
        lo, hi = span
        shp = [1] * m.ndim
        shp[a] = sel.size
        prod = prod & sel.reshape(shp)
        box.append((sel.size, lo, hi))
    full = np.broadcast_shapes(prod.shape, m.shape)
    if not np.array_equal(np.broadcast_to(prod, full), np.broadcast_to(m, full)):
        return None
    return box


def _scalar_mask(mask) -> bool | None:
    """The value of a mask that is one predicate for the whole instruction (a Python or NumPy
    bool, e.g. a causal test on loop variables, or a mask of size-1 factors); ``None`` for a
    mask that varies over the elements."""
    if isinstance(mask, (bool, np.bool_)):
        return bool(mask)
    factors = getattr(mask, "factors", None)
    if factors is not None and all(f.size == 1 for f in factors):
        return all(bool(f.reshape(-1)[0]) for f in factors)
    return None


def _span(sel: np.ndarray):
    """``(lo, hi)`` when the selected positions of ``sel`` are the range ``lo:hi``, "empty" when
    none is, else ``None``."""
    idx = np.flatnonzero(sel)
    if idx.size == 0:
        return "empty"
    lo, hi = int(idx[0]), int(idx[-1]) + 1
    return (lo, hi) if hi - lo == idx.size else None


def _separable_box(factors: tuple[np.ndarray, ...], ndim: int):
    """``_box`` of the AND of ``factors`` when each varies along one axis at most (a scalar
    factor selects all or nothing); ``None``: build the whole mask instead."""
    if any(f.ndim > ndim for f in factors):
        return None
    axes: list[np.ndarray | None] = [None] * ndim
    for f in factors:
        f = f.reshape((1,) * (ndim - f.ndim) + f.shape)
        varying = [a for a, n in enumerate(f.shape) if n != 1]
        if not varying:
            if not f.reshape(-1)[0]:
                return "empty"
            continue
        if len(varying) > 1:
            return None
        a = varying[0]
        sel = f.reshape(-1)
        prev = axes[a]
        if prev is not None and prev.size != sel.size:
            return None  # shapes that do not broadcast: the general path reports it
        axes[a] = sel if prev is None else prev & sel
    box = []
    for sel in axes:
        if sel is None:
            box.append((1, 0, 1))
            continue
        span = _span(sel)
        if span is None or span == "empty":
            return span
        box.append((sel.size, *span))
    return box


def _slice_to(t, box):
    if not isinstance(t, NkiTensor) or t.ndim != len(box):
        return t
    key = []
    for n, (size, lo, hi) in zip(t.shape, box):
        key.append(slice(lo, hi) if size > 1 and n == size and (lo, hi) != (0, n) else slice(None))
    return t[tuple(key)]


_TAKES_MASK = {
    "activation",
    "tensor_tensor",
    "tensor_scalar",
    "scalar_tensor_tensor",
    "tensor_reduce",
    "tensor_copy",
    "reciprocal",
    "memset",
    "activation_reduce",
}


def _call(fn, mask, out, *args, **kw) -> None:
    """Run a current-API instruction for a legacy call with ``mask=``."""
    if mask is None:
        fn(out, *args, **kw)
        return
    box = _box(mask, out.ndim)
    if box == "empty":
        _track_produced(out)
        return
    if box is not None and all(size == 1 for size, _, _ in box):
        fn(out, *args, **kw)  # a mask true for the whole instruction: as without one
        return
    if box is None:
        if fn.__name__ not in _TAKES_MASK:
            raise invalid(f"nisa.{fn.__name__}", "mask= must select a box of index ranges")
        fn(out, *args, mask=mask, **kw)
        return
    _track_produced(out)
    part = _slice_to(out, box)
    fn(part, *[_slice_to(a, box) for a in args], **{k: _slice_to(v, box) for k, v in kw.items()})
    # the box is what the instruction produced, whichever path wrote it (the fp32 fast paths
    # compute straight into the destination, past the bookkeeping of ``assign``)
    if isinstance(part, NkiTensor) and part.storage.produced is not None:
        part._note_produced(None)


def _track_produced(out: NkiTensor) -> None:
    """Before a masked instruction writes part of its fresh result tile: note which elements
    it produces, so that ``t[...] = result`` writes only those (``NkiTensor.produced_view``)."""
    stg = out.storage
    if stg.fresh and stg.buffer.on_chip and stg.produced is None:
        stg.produced = np.zeros(stg.flat.size, dtype=bool)


def _out(shape, dtype, default, api, buffer=sbuf) -> NkiTensor:
    """The result tile of a legacy instruction (called by the public function: its two
    simulator frames are skipped in the search for the port's call site)."""
    d = dt.as_dtype(dtype) if dtype is not None else default
    return allocate(shape, d, buffer, api=api, sim_callers=2)


_ENGINE_UNKNOWN = engine.unknown


def _dst_or_new(dst, shape, dtype, default, api) -> NkiTensor:
    """The tile a legacy instruction writes: ``dst=`` where given (the late legacy form, which
    writes it in place and returns nothing), else a fresh result tile."""
    if dst is None:
        return _out(shape, dtype, default, api)
    if not isinstance(dst, NkiTensor):
        raise invalid(api, f"dst= must be a tile, got {type(dst).__name__}")
    if dtype is not None and dt.as_dtype(dtype) != dst.dtype:
        raise invalid(api, "dtype= must be dst's dtype")
    return dst


def _pdt(*xs) -> dt.NkiDType:
    res = None
    for x in xs:
        d = x.dtype if isinstance(x, NkiTensor) else None
        if d is not None:
            res = d if res is None else dt.promote(res, d)
    return res or dt.float32


def _via_sbuf(t):
    """A PSUM matmul operand (e.g. an ``nc_transpose`` result) copied to SBUF, as the legacy
    compiler does for it (the copy is a recorded instruction); other operands unchanged."""
    if isinstance(t, NkiTensor) and t.buffer is psum:
        return tensor_copy(t)
    return t


def nc_matmul(
    stationary,
    moving,
    is_stationary_onezero=False,
    is_moving_onezero=False,
    is_transpose=False,
    perf_mode=None,
    *,
    mask=None,
    dtype=None,
    tile_position=(),
    tile_size=(),
    **kw,
) -> NkiTensor:
    no_extra_kw("nisa.nc_matmul", kw)
    stationary, moving = _via_sbuf(stationary), _via_sbuf(moving)
    m = stationary.free_size()
    n = moving.free_size()
    if perf_mode is not None and "double_row" in str(getattr(perf_mode, "value", perf_mode)):
        m, n = stationary.shape[-1], moving.shape[-1]
    out = _out((m, n), dtype, dt.float32, "nisa.nc_matmul", psum)
    _call(
        _isa.nc_matmul,
        mask,
        out,
        stationary,
        moving,
        is_stationary_onezero,
        is_moving_onezero,
        is_transpose,
        accumulate=False,
        tile_position=tile_position,
        tile_size=tile_size,
        perf_mode=perf_mode if perf_mode is not None else matmul_perf_mode.none,
    )
    stg = out.storage
    if mask is not None and stg.mm_written is None:
        # a matmul result though its mask selected nothing: ``acc += out`` is a masked PSUM
        # accumulation that leaves acc as it is (language._inplace), not an add of the
        # never-written tile
        stg.mm_written = np.zeros(stg.flat.size, dtype=bool)
    return out


def nc_transpose(data, engine=engine.unknown, *, mask=None, dtype=None, **kw) -> NkiTensor:
    no_extra_kw("nisa.nc_transpose", kw)
    p, f = data.partitions(), data.free_size()
    buf = (
        psum
        if (engine in (None, 0, _isa.engine.tensor, _isa.engine.unknown) and (p > 32 or f > 32))
        or engine == _isa.engine.tensor
        else sbuf
    )
    out = _out((f, p), dtype, data.dtype, "nisa.nc_transpose", buf)
    _call(_isa.nc_transpose, mask, out, data, engine=engine)
    return out


def activation(
    op,
    data,
    bias=None,
    scale=1.0,
    *,
    mask=None,
    dtype=None,
    reduce_op=None,
    reduce_res=None,
    reduce_cmd=reduce_cmd.idle,
    **kw,
) -> NkiTensor:
    no_extra_kw("nisa.activation", kw)
    d = (
        _fp.direct_target(data.shape, data.dtype if dtype is None else dt.as_dtype(dtype), 1)
        if mask is None and reduce_res is None
        else None
    )
    if d is not None:  # no mask, no reduction: the instruction writes the port's tile
        # the current API's fast path called from here (one frame less: the port's line is
        # found without a stack walk), else its public function
        if reduce_op is not None or not _isa._activation_f32(
            d[0], _op_name(op, "nisa.activation"), data, bias, scale
        ):
            _isa.activation(
                d[0], op, data, bias=bias, scale=scale, reduce_op=reduce_op, reduce_cmd=reduce_cmd
            )
        return _fp.direct_done(d)
    out = _out(data.shape, dtype, data.dtype, "nisa.activation")
    _call(
        _isa.activation,
        mask,
        out,
        op,
        data,
        bias=bias,
        scale=scale,
        reduce_op=reduce_op,
        reduce_res=reduce_res,
        reduce_cmd=reduce_cmd,
    )
    return out


def activation_reduce(
    op, data, reduce_op, reduce_res, bias=None, scale=1.0, *, mask=None, dtype=None, **kw
) -> NkiTensor:
    no_extra_kw("nisa.activation_reduce", kw)
    out = _out(data.shape, dtype, data.dtype, "nisa.activation_reduce")
    _call(
        _isa.activation_reduce, mask, out, op, data, reduce_op, reduce_res, bias=bias, scale=scale
    )
    return out


def _free_broadcast(t, like):
    """``t`` read along the free axes of ``like`` with step 0 when it has one element per
    partition and ``like`` more (the legacy tracer's broadcast of a ``(P, 1)`` operand), else
    ``t`` unchanged (the instruction's own size check then applies)."""
    if not (
        isinstance(t, NkiTensor)
        and isinstance(like, NkiTensor)
        and t.pdim == 0
        and like.pdim == 0
        and t.free_size() == 1
        and like.free_size() > 1
        and t.shape[0] == like.shape[0]
        and t.ndim <= like.ndim
    ):
        return t
    while t.ndim < like.ndim:
        t = t.expand_dim(t.ndim)
    for d in range(1, like.ndim):
        if t.shape[d] != like.shape[d]:
            t = t.broadcast(d, like.shape[d])
    return t


def tensor_tensor(
    data1, data2, op, *, mask=None, dtype=None, engine=engine.unknown, **kw
) -> NkiTensor:
    no_extra_kw("nisa.tensor_tensor", kw)
    data1, data2 = _free_broadcast(data1, data2), _free_broadcast(data2, data1)
    pdt = _pdt(data1, data2)
    d = (
        _fp.direct_target(data1.shape, pdt if dtype is None else dt.as_dtype(dtype), 1)
        if mask is None
        else None
    )
    if d is not None:
        name = _op_name(op, "nisa.tensor_tensor")
        if (
            engine is not _ENGINE_UNKNOWN
            or type(data1) is not NkiTensor
            or type(data2) is not NkiTensor
            or name not in _isa._UFUNCS
            or not _isa._tensor_tensor_f32(d[0], data1, data2, name)
        ):
            _isa.tensor_tensor(d[0], data1, data2, op, engine=engine)
        return _fp.direct_done(d)
    out = _out(data1.shape, dtype, pdt, "nisa.tensor_tensor")
    _call(_isa.tensor_tensor, mask, out, data1, data2, op, engine=engine)
    return out


def tensor_scalar(
    data,
    op0,
    operand0,
    reverse0=False,
    op1=None,
    operand1=None,
    reverse1=False,
    *,
    mask=None,
    dtype=None,
    engine=engine.unknown,
    **kw,
) -> NkiTensor:
    no_extra_kw("nisa.tensor_scalar", kw)
    d = (
        _fp.direct_target(data.shape, data.dtype if dtype is None else dt.as_dtype(dtype), 1)
        if mask is None
        else None
    )
    if d is not None:
        api = "nisa.tensor_scalar"
        n0 = _op_name(op0, api)
        n1 = _op_name(op1, api) if op1 is not None else None
        args = (data, n0, operand0, reverse0, n1, operand1, reverse1)
        if engine is not _ENGINE_UNKNOWN or not _isa._tensor_scalar_f32(d[0], *args):
            args = (data, op0, operand0, reverse0, op1, operand1, reverse1)
            _isa.tensor_scalar(d[0], *args, engine=engine)
        return _fp.direct_done(d)
    out = _out(data.shape, dtype, data.dtype, "nisa.tensor_scalar")
    _call(
        _isa.tensor_scalar,
        mask,
        out,
        data,
        op0,
        operand0,
        reverse0,
        op1,
        operand1,
        reverse1,
        engine=engine,
    )
    return out


def scalar_tensor_tensor(
    *,
    data,
    op0,
    operand0,
    op1,
    operand1,
    reverse0=False,
    reverse1=False,
    mask=None,
    dtype=None,
    **kw,
) -> NkiTensor:
    no_extra_kw("nisa.scalar_tensor_tensor", kw)
    out = _out(data.shape, dtype, _pdt(data, operand1), "nisa.scalar_tensor_tensor")
    _call(
        _isa.scalar_tensor_tensor, mask, out, data, op0, operand0, op1, operand1, reverse0, reverse1
    )
    return out


def tensor_reduce(
    op, data, axis, *, mask=None, dtype=None, negate=False, keepdims=False, **kw
) -> NkiTensor:
    no_extra_kw("nisa.tensor_reduce", kw)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    axes = tuple(int(a) + (data.ndim if int(a) < 0 else 0) for a in axes)
    if keepdims:
        shape = tuple(1 if i in axes else n for i, n in enumerate(data.shape))
    else:
        shape = tuple(n for i, n in enumerate(data.shape) if i not in axes)
        if len(shape) < 2:
            shape = tuple(1 if i in axes else n for i, n in enumerate(data.shape))[:2]
    out = _out(shape, dtype, data.dtype, "nisa.tensor_reduce")
    kd = out.reshape(tuple(1 if i in axes else n for i, n in enumerate(data.shape)))
    _call(_isa.tensor_reduce, mask, kd, op, data, axes, negate=negate, keepdims=keepdims)
    return out


def tensor_partition_reduce(op, data, *, mask=None, dtype=None, **kw) -> NkiTensor:
    no_extra_kw("nisa.tensor_partition_reduce", kw)
    out = _out((1, data.free_size()), dtype, data.dtype, "nisa.tensor_partition_reduce")
    _call(_isa.tensor_partition_reduce, mask, out, op, data)
    return out


def tensor_copy(src, *, mask=None, dtype=None, engine=engine.unknown, **kw) -> NkiTensor:
    no_extra_kw("nisa.tensor_copy", kw)
    d = (
        _fp.direct_target(src.shape, src.dtype if dtype is None else dt.as_dtype(dtype), 1)
        if mask is None
        else None
    )
    if d is not None:
        if engine is not _ENGINE_UNKNOWN or not _isa._tensor_copy_f32(d[0], src):
            _isa.tensor_copy(d[0], src, engine=engine)
        return _fp.direct_done(d)
    out = _out(src.shape, dtype, src.dtype, "nisa.tensor_copy")
    _call(_isa.tensor_copy, mask, out, src, engine=engine)
    return out


def tensor_copy_dynamic_src(
    src, *, mask=None, dtype=None, engine=engine.unknown, **kw
) -> NkiTensor:
    """A copy of ``src`` read at runtime offsets: the view indexes a free dimension with an
    on-chip index tile (``t[ix, offsets[0, i] + iy]``), whose values are read when it runs."""
    no_extra_kw("nisa.tensor_copy_dynamic_src", kw)
    out = _out(src.shape, dtype, src.dtype, "nisa.tensor_copy_dynamic_src")
    _call(_isa.tensor_copy, mask, out, src, engine=engine)
    return out


def tensor_copy_dynamic_dst(
    *, dst, src, mask=None, dtype=None, engine=engine.unknown, **kw
) -> None:
    """Copy ``src`` into ``dst`` viewed at runtime offsets (an on-chip index tile in the view)."""
    no_extra_kw("nisa.tensor_copy_dynamic_dst", kw)
    if dtype is not None and dt.as_dtype(dtype) != dst.dtype:
        raise invalid("nisa.tensor_copy_dynamic_dst", "dtype= must be dst's dtype")
    _call(_isa.tensor_copy, mask, dst, src, engine=engine)


def reciprocal(data, *, mask=None, dtype=None, **kw) -> NkiTensor:
    no_extra_kw("nisa.reciprocal", kw)
    d = (
        _fp.direct_target(data.shape, data.dtype if dtype is None else dt.as_dtype(dtype), 1)
        if mask is None
        else None
    )
    if d is not None:
        _isa.reciprocal(d[0], data)
        return _fp.direct_done(d)
    out = _out(data.shape, dtype, data.dtype, "nisa.reciprocal")
    _call(_isa.reciprocal, mask, out, data)
    return out


def memset(shape, value, dtype, *, mask=None, engine=engine.unknown, **kw) -> NkiTensor:
    no_extra_kw("nisa.memset", kw)
    out = _out(shape, dtype, dt.float32, "nisa.memset")
    _call(_isa.memset, mask, out, value, engine=engine)
    return out


def iota(expr, dtype, *, mask=None, **kw) -> NkiTensor:
    """Legacy ``iota(expr, dtype)``: the value of an affine arange expression as a tile."""
    no_extra_kw("nisa.iota", kw)
    if not isinstance(expr, IndexExpr):
        raise invalid("nisa.iota", "expr must be an affine expression of nl.arange")
    arr = expr.arr
    if arr.ndim < 2:
        raise invalid("nisa.iota", "the expression needs at least 2 dimensions (add [:, None])")
    out = _out(arr.shape, dtype, dt.int32, "nisa.iota")
    out.assign(
        arr.astype(np.int32).astype(np.float64) if out.dtype.is_float else arr,
        where=_isa.mask_where(mask, arr.shape),
        api="nisa.iota",
    )
    record("gpsimd", "iota", (out,))
    return out


def bn_stats(data, *, mask=None, dtype=None, **kw) -> NkiTensor:
    no_extra_kw("nisa.bn_stats", kw)
    out = _out((data.partitions(), 6), dtype, data.dtype, "nisa.bn_stats")
    _call(_isa.bn_stats, mask, out, data)
    return out


def bn_aggr(data, *, mask=None, dtype=None, **kw) -> NkiTensor:
    no_extra_kw("nisa.bn_aggr", kw)
    out = _out((data.partitions(), 2), dtype, data.dtype, "nisa.bn_aggr")
    _call(_isa.bn_aggr, mask, out, data)
    return out


def affine_select(pred, on_true_tile, on_false_value, *, mask=None, dtype=None, **kw) -> NkiTensor:
    """Legacy form: ``pred`` is a mask over the index grid (e.g. ``iy < ix``)."""
    no_extra_kw("nisa.affine_select", kw)
    from cuda2nki.nkisim.tensor import Mask

    if not isinstance(pred, Mask):
        raise invalid("nisa.affine_select", "pred must be a comparison of nl.arange expressions")
    out = _out(on_true_tile.shape, dtype, on_true_tile.dtype, "nisa.affine_select")
    cond = np.broadcast_to(pred.arr, on_true_tile.shape)
    v = np.where(cond, on_true_tile.f32(), np.float32(on_false_value))
    out.assign(v, where=_isa.mask_where(mask, out.shape), api="nisa.affine_select")
    record("gpsimd", "affine_select", (out, on_true_tile))
    return out


def dropout(data, prob, *, mask=None, dtype=None, **kw) -> NkiTensor:
    no_extra_kw("nisa.dropout", kw)
    out = _out(data.shape, dtype, data.dtype, "nisa.dropout")
    _call(_isa.dropout, mask, out, data, prob)
    return out


def tensor_tensor_scan(
    data0, data1, initial, op0, op1, reverse0=False, reverse1=False, *, mask=None, dtype=None, **kw
) -> NkiTensor:
    no_extra_kw("nisa.tensor_tensor_scan", kw)
    out = _out(data0.shape, dtype, _pdt(data0, data1), "nisa.tensor_tensor_scan")
    _call(_isa.tensor_tensor_scan, mask, out, data0, data1, initial, op0, op1, reverse0, reverse1)
    return out


def max8(src, *, mask=None, dtype=None, **kw) -> NkiTensor:
    no_extra_kw("nisa.max8", kw)
    out = _out((src.partitions(), 8), dtype, src.dtype, "nisa.max8")
    _call(_isa.max8, mask, out, src)
    return out


def nc_find_index8(data, vals, *, mask=None, dtype=None, **kw) -> NkiTensor:
    no_extra_kw("nisa.nc_find_index8", kw)
    out = _out((data.partitions(), 8), dtype, dt.uint32, "nisa.nc_find_index8")
    _call(_isa.nc_find_index8, mask, out, data, vals)
    return out


def nc_match_replace8(data, vals, imm, *, mask=None, dtype=None, dst_idx=None, **kw) -> NkiTensor:
    no_extra_kw("nisa.nc_match_replace8", kw)
    out = _out(data.shape, dtype, data.dtype, "nisa.nc_match_replace8")
    _call(_isa.nc_match_replace8, mask, out, data, vals, imm, dst_idx=dst_idx)
    return out


def nc_stream_shuffle(src, dst, shuffle_mask, *, mask=None, **kw) -> None:
    no_extra_kw("nisa.nc_stream_shuffle", kw)
    _isa.nc_stream_shuffle(dst, src, shuffle_mask)


def range_select(
    *,
    on_true_tile,
    comp_op0,
    comp_op1,
    bound0,
    bound1,
    reduce_cmd=reduce_cmd.idle,
    reduce_res=None,
    reduce_op=None,
    range_start=0,
    on_false_value=-3.4028235e38,
    mask=None,
    dtype=None,
    **kw,
) -> NkiTensor:
    no_extra_kw("nisa.range_select", kw)
    out = _out(on_true_tile.shape, dtype, on_true_tile.dtype, "nisa.range_select")
    _call(
        _isa.range_select,
        mask,
        out,
        on_true_tile,
        comp_op0,
        comp_op1,
        bound0,
        bound1,
        reduce_cmd,
        reduce_res,
        reduce_op,
        range_start,
        on_false_value,
    )
    return out


def select_reduce(
    predicate,
    on_true,
    on_false,
    *,
    reduce_res=None,
    reduce_cmd=reduce_cmd.idle,
    reduce_op=None,
    reverse_pred=False,
    mask=None,
    dtype=None,
    dst=None,
    **kw,
) -> NkiTensor | None:
    no_extra_kw("nisa.select_reduce", kw)
    out = _dst_or_new(dst, on_true.shape, dtype, on_true.dtype, "nisa.select_reduce")
    _call(
        _isa.select_reduce,
        mask,
        out,
        predicate,
        on_true,
        on_false,
        reduce_res,
        reduce_cmd,
        reduce_op,
        reverse_pred,
    )
    return None if dst is not None else out


def tensor_scalar_reduce(
    *, data, op0, operand0, reduce_op, reduce_res, reverse0=False, mask=None, dtype=None, **kw
) -> NkiTensor:
    no_extra_kw("nisa.tensor_scalar_reduce", kw)
    out = _out(data.shape, dtype, data.dtype, "nisa.tensor_scalar_reduce")
    _call(
        _isa.tensor_scalar_reduce, mask, out, data, op0, operand0, reduce_op, reduce_res, reverse0
    )
    return out


def nc_n_gather(data, indices, *, mask=None, dtype=None, **kw) -> NkiTensor:
    no_extra_kw("nisa.nc_n_gather", kw)
    out = _out(indices.shape, dtype, data.dtype, "nisa.nc_n_gather")
    _call(_isa.nc_n_gather, mask, out, data, indices)
    return out


def dma_transpose(src, *, axes=None, mask=None, dtype=None, **kw) -> NkiTensor:
    no_extra_kw("nisa.dma_transpose", kw)
    axes = axes or {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}[src.ndim]
    shape = tuple(src.shape[a] for a in axes)
    out = _out(shape, dtype, src.dtype, "nisa.dma_transpose")
    _call(_isa.dma_transpose, mask, out, src, axes=axes)
    return out


del ops


def tensor_scalar_cumulative(
    src,
    op0,
    op1,
    imm0,
    imm1=None,
    reduce_cmd=reduce_cmd.reset_reduce,
    *,
    mask=None,
    dtype=None,
    dst=None,
    **kw,
) -> NkiTensor | None:
    """``(src <op0> imm0)`` scanned with ``op1`` along the free axis; returns the scan (or
    writes it into ``dst=``)."""
    no_extra_kw("nisa.tensor_scalar_cumulative", kw)
    out = _dst_or_new(dst, src.shape, dtype, src.dtype, "nisa.tensor_scalar_cumulative")
    _call(
        _isa.tensor_scalar_cumulative,
        mask,
        out,
        src,
        op0,
        op1,
        imm0,
        imm1=imm1,
        reduce_cmd=reduce_cmd,
    )
    return None if dst is not None else out


def tensor_copy_predicated(
    *, src, dst, predicate, reverse_pred=False, mask=None, dtype=None, **kw
) -> None:
    """Copy ``src`` into ``dst`` where ``predicate`` is true (``dst`` keeps the rest)."""
    no_extra_kw("nisa.tensor_copy_predicated", kw)
    if dtype is not None and dt.as_dtype(dtype) != dst.dtype:
        raise invalid("nisa.tensor_copy_predicated", "dtype= must be dst's dtype")
    _call(_isa.tensor_copy_predicated, mask, dst, src, predicate, reverse_pred=reverse_pred)


def sequence_bounds(*, segment_ids, dtype=None, mask=None, **kw) -> NkiTensor:
    """``[start, end)`` of each element's run of equal segment ids, as a ``(1, 2, n)`` tile."""
    no_extra_kw("nisa.sequence_bounds", kw)
    if mask is not None:
        raise invalid("nisa.sequence_bounds", "mask= is not accepted")
    n = segment_ids.free_size()
    out = _out((1, 2, n), dtype, segment_ids.dtype, "nisa.sequence_bounds")
    _isa.sequence_bounds(out, segment_ids)
    return out


def local_gather(src_buffer, index, num_elem_per_idx=1, num_valid_indices=None, *, mask=None, **kw):
    """GpSimd gather, the legacy form that returns its result, as the reference's NumPy
    semantics state it: each core's 16 index partitions are read partition-first (column-major)
    into ``num_valid_indices`` element offsets (default: all of them), and every partition of
    the core takes, at each offset into its own flattened free elements, ``num_elem_per_idx``
    contiguous elements.  The result is ``(partitions, num_valid_indices, num_elem_per_idx)``."""
    api = "nisa.local_gather"
    no_extra_kw(api, kw)
    if mask is not None:
        raise unsupported(api, "mask= on the legacy form is not modelled")
    src = _tensor_arg(src_buffer, api, "src_buffer")
    ind = _tensor_arg(index, api, "index")
    e = int(num_elem_per_idx)
    nv = _gather.valid_count(ind, num_valid_indices)
    out = _out((src.shape[0], nv, e), None, src.dtype, api)
    _gather.local_gather_into(out, src, ind, e, nv)
    return out
