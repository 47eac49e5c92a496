"""``nki.isa`` (current API): one function per instruction, destination first, returns ``None``.

Semantics follow reference NKI.md section 7.  Arithmetic is fp32 with one rounding on the write
to ``dst`` (section 8); every call records one trace entry.
"""

from __future__ import annotations

import math

import numpy as np

from cuda2nki.nkisim import dtypes as dt
from cuda2nki.nkisim import oob as _oob
from cuda2nki.nkisim import ops
from cuda2nki.nkisim import state as st
from cuda2nki.nkisim.affine import broadcast_small as _broadcast_small
from cuda2nki.nkisim.deferred import Lazy
from cuda2nki.nkisim.engine import (
    FP32_CLASS,
    MATMUL_DTYPES,
    check_pstart,
    dge_mode,
    dma_engine,
    dma_extent,
    dst_tag,
    engine,
    engine_name,
    mat,
    matmul_perf_mode,
    nc_version,
    no_extra_kw,
    no_psum,
    on_chip,
    oob_mode,
    record,
    reduce_cmd,
    same_free,
    same_partitions,
    scalar_or_col,
    src_key,
    tensor_arg,
    write_mat,
)
from cuda2nki.nkisim.errors import fail, invalid, unsupported
from cuda2nki.nkisim.tensor import Mask as _Mask
from cuda2nki.nkisim.tensor import NkiTensor, hbm, private_hbm, psum, sbuf, shared_hbm
from cuda2nki.nkisim.widen import Widened as _Widened

__all__ = [
    "engine",
    "reduce_cmd",
    "dge_mode",
    "oob_mode",
    "matmul_perf_mode",
    "nc_version",
    "dma_engine",
]

tensor_engine, scalar_engine, gpsimd_engine, vector_engine, unknown_engine = (
    engine.tensor,
    engine.scalar,
    engine.gpsimd,
    engine.vector,
    engine.unknown,
)

HBM_KINDS = (hbm, private_hbm, shared_hbm)


def get_nc_version() -> nc_version:
    return nc_version(st.current().target.nc_version)


def get_nc_sub_version() -> int:
    """The silicon revision within the target's NeuronCore generation: the simulator models
    the first (0)."""
    return 0


# --------------------------------------------------------------------------- data movement


def _dma_checks(api: str, dst: NkiTensor, src: NkiTensor) -> None:
    s = st.current()
    if src.storage.buffer is psum and not s.legacy:
        raise fail("C2N3009", api=api, what=src.describe())
    if dst.storage.buffer is psum and not s.legacy:
        raise fail(
            "C2N3022", api=api, what=f"dst {dst.describe()}", buffer="psum", expected="hbm or sbuf"
        )


def dma_copy(
    dst,
    src,
    priority=None,
    oob_mode=oob_mode.error,
    dge_mode=dge_mode.unknown,
    engine=engine.unknown,
    name=None,
    *,
    mask=None,
    dst_rmw_op=None,
) -> None:
    api = "nisa.dma_copy"
    if (
        mask is None
        and dst_rmw_op is None
        and type(dst) is NkiTensor
        and type(src) is NkiTensor
        and dst.shape == src.shape
        and dst.dtype is src.dtype
        and dst.index is None
        and src.index is None
        and dst.storage.buffer is not psum
        and src.storage.buffer is not psum
    ):
        _dma_fast(dst, src)
        return
    dst = tensor_arg(dst, api, "dst")
    src = tensor_arg(src, api, "src")
    _dma_checks(api, dst, src)
    if dst.size != src.size:
        raise fail(
            "C2N3014",
            api=api,
            detail=f"dst has {dst.size} elements, src {src.size} "
            f"({dst.describe()} vs {src.describe()})",
        )
    if dge_mode == 2 and dst.dtype != src.dtype:
        raise fail("C2N3016", api=api, detail="hwdge DMA needs identical dtypes (use .view())")
    where = mask_where(mask, dst.shape)
    skip = int(oob_mode) == 1
    # elements outside the tensor are refused unless the mask leaves them out (or oob_mode
    # skips them)
    if src.index is not None and (src.index < 0).any():
        ok = (src.index >= 0).reshape(dst.shape) if src.shape != dst.shape else src.index >= 0
        if not skip and (where is None or (where & ~ok).any()):
            raise _oob.out_of_bounds(src, f"{api} reads outside {src.storage.name or 'the source'}")
        where = ok if where is None else (where & ok)
    if dst.index is not None and (dst.index < 0).any():
        ok = dst.index >= 0
        if not skip and (where is None or (where & ~ok).any()):
            raise _oob.out_of_bounds(
                dst, f"{api} writes outside {dst.storage.name or 'the destination'}"
            )
        where = ok if where is None else (where & ok)
    vals = src.values(api)
    if dst_rmw_op is not None:
        name_ = ops.op_name(dst_rmw_op, api)
        if name_ != "add":
            raise unsupported(f"{api}(dst_rmw_op={name_})", "only add")
        vals = dst.f32(api).reshape(-1) + vals.astype(np.float32).reshape(-1)
    elif vals.dtype != dst.dtype.np_dtype and (src.dtype.is_float or dst.dtype.is_float):
        vals = vals.astype(np.float32)
    if vals.shape != dst.shape:
        vals = vals.reshape(dst.shape)
    dst.assign(vals, where=where, api=api)
    n, parts = dma_extent(where, dst if dst.on_chip else src, src.size)
    # a DMA that moves nothing (every row masked or skipped) reads no region of its source
    record(
        "dma",
        "dma_copy",
        (dst, src),
        extra=((src_key(src),) if not src.on_chip and n else ()) + dst_tag(dst),
        dma_bytes=n * src.itemsize,
        partitions=parts,
        free=(dst.free_size() if dst.on_chip else src.free_size()),
    )


def _dma_fast(dst: NkiTensor, src: NkiTensor) -> None:
    """dma_copy between same-shape, same-dtype strided views (the common case)."""
    d = dst.dtype
    ss = src.storage
    lazy = _load_of(src, ss, True)
    if lazy is None or d is _TF32 or not dst.defer_write(lazy):
        _dma_move(dst, src, d, ss)
    # else: a tile whose values are a deferred load or op, stored whole into HBM: computed
    # later, with the other stores like it (deferred.py)
    shape = src.shape
    t = dst if dst.storage.buffer.on_chip else src
    if ss.buffer.on_chip:
        extra = ()
    else:  # engine.src_key and NkiTensor.offset, inlined (src is a strided view here)
        b = src._boff
        if b is None:
            b = src._byte_offset()
        extra = (("src", (ss.name or ss.uid, b // src._a.itemsize, shape)),)
    ds = dst.storage
    if not ds.buffer.on_chip:  # engine.dst_tag, inlined
        extra += (("dst", ds.name),)
    if t.pdim == 0 and len(t.shape) == 2:
        parts, free = t.shape
    else:
        parts, free = t.partitions(), t.free_size()
    nm = d.name
    record(
        "dma",
        "dma_copy",
        (dst, src),
        extra,
        math.prod(shape) * d.itemsize,
        parts,
        free,
        2,  # sim_frames: _dma_fast and dma_copy
        (dst.shape, shape),
        (nm, nm),
        (dst.storage.buffer.name, ss.buffer.name),
    )


def _dma_move(dst: NkiTensor, src: NkiTensor, d, ss) -> None:  # noqa: ANN001
    """The data movement of ``_dma_fast``."""
    if (
        ss.mm_pending is None
        and not ss.fresh
        and ss.pending is None
        and ss.written is None
        and src._gen == ss.gen
    ):
        vals = src._a  # NkiTensor.values, the plain case
    else:
        vals = src.values("nisa.dma_copy")
    ds = dst.storage
    out = dst._a
    if d is not _TF32 and dst.fills_fresh(out):
        # dst.out_view(True) on a whole fresh storage (a new tile loaded), inlined
        if ss.readonly and ds.buffer is sbuf:
            # a load from a caller's array (unchanged for the whole run: writes go to a copy)
            # into a new SBUF tile: the copy waits until the tile is read or partly overwritten
            # (Storage.poison); tensor_tensor reads the source instead (the values are the same)
            b = src._boff
            if b is None:
                b = src._byte_offset()
            ds.lazy = Lazy(out, None, (vals,), ((ss.flat, b),))
        else:
            ds.fresh = False
            out[...] = vals  # same shape and dtype: np.copyto without its dispatch overhead
    else:
        out = dst.out_view(True) if d is not _TF32 else None
        if out is not None and (ds is not ss or not np.may_share_memory(out, vals)):
            out[...] = vals
        else:
            dst.assign(vals, api="nisa.dma_copy")


def mask_where(mask, shape):
    if mask is None:
        return None
    if not st._STACK[-1].legacy:
        raise unsupported("mask=", "the current NKI API has no mask parameter; slice with min()")
    if mask is True or type(mask) is np.bool_ and mask:
        return None  # one predicate true for the whole instruction: as without a mask
    if type(mask) is _Mask or isinstance(mask, _Mask):
        if mask.full and _fits(mask.factors, shape):
            return None  # known all true (affine.aff_compare): the check below, without a pass
        if _all_active(mask, tuple(shape)):
            return None  # a tail mask on a full tile: every element active, as without a mask
        arr = mask.arr
    else:
        arr = np.asarray(mask, dtype=bool)
    try:
        return np.broadcast_to(arr, shape)
    except ValueError:
        raise invalid(
            "mask", f"mask of shape {arr.shape} does not fit an operand of shape {shape}"
        ) from None


def _fits(factors: tuple, shape) -> bool:
    """Whether the factors broadcast to ``shape`` itself (each axis 1 or ``shape``'s)."""
    n = len(shape)
    for f in factors:
        fs = f.shape
        k = n - len(fs)
        if k < 0:
            return False
        for i, d in enumerate(fs):
            if d != 1 and d != shape[k + i]:
                return False
    return True


def _all_active(mask, shape: tuple) -> bool:
    """Whether every factor of ``mask`` is all true and they broadcast to ``shape``."""
    full = _broadcast_small([*(f.shape for f in mask.factors), shape])
    if full != shape:
        return False  # a mask that does not fit is reported by the caller
    for f in mask.factors:
        if np.count_nonzero(f) != f.size:  # f.all(), without the reduction's dispatch cost
            return False
    return True


def dma_transpose(
    dst, src, axes=None, priority=None, dge_mode=dge_mode.unknown, oob_mode=oob_mode.error, **kw
) -> None:
    no_extra_kw("nisa.dma_transpose", kw)
    api = "nisa.dma_transpose"
    if int(oob_mode) != 0:
        raise unsupported(f"{api}(oob_mode={oob_mode!r})", "only oob_mode.error is modelled")
    dst = tensor_arg(dst, api, "dst")
    src = tensor_arg(src, api, "src")
    _dma_checks(api, dst, src)
    nd = src.ndim
    if axes is None:
        axes = {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}.get(nd)
        if axes is None:
            raise invalid(api, f"no default transpose for a {nd}-D source")
    vals = np.transpose(src.values(api), axes)
    if tuple(vals.shape) != tuple(dst.shape):
        raise fail(
            "C2N3014", api=api, detail=f"dst shape {dst.shape} != transposed src shape {vals.shape}"
        )
    if vals.dtype != dst.dtype.np_dtype:
        vals = vals.astype(np.float32)
    dst.assign(vals, api=api)
    record(
        "dma",
        "dma_transpose",
        (dst, src),
        dma_bytes=src.size * src.itemsize,
        partitions=dst.partitions() if dst.on_chip else src.partitions(),
    )


def dma_compute(
    dst, srcs, reduce_op, scales=None, unique_indices=True, oob_mode=oob_mode.error, **kw
) -> None:
    no_extra_kw("nisa.dma_compute", kw)
    api = "nisa.dma_compute"
    dst = tensor_arg(dst, api, "dst")
    name = ops.op_name(reduce_op, api)
    if name != "add":
        raise unsupported(f"{api}(reduce_op={name})", "only nl.add is supported by the hardware")
    srcs = [tensor_arg(s, api, "srcs[i]") for s in srcs]
    if not 1 <= len(srcs) <= 16:
        raise invalid(api, "between 1 and 16 sources")
    if scales is not None and any(float(s) != 1.0 for s in scales):
        raise invalid(api, "scales must all be 1.0")
    acc = None
    for s in srcs:
        _dma_checks(api, dst, s)
        if s.size != dst.size:
            raise fail(
                "C2N3014",
                api=api,
                detail=f"source {s.describe()} and dst {dst.describe()} differ in size",
            )
        v = s.f32(api).reshape(dst.shape)
        acc = v.copy() if acc is None else acc + v
    if dst.index is not None and not unique_indices:
        # scatter-add with duplicate indices: accumulate every contribution
        stg = dst.storage
        if stg.readonly:
            stg.make_writable()
        stg.poison()
        idx = dst.index
        ok = idx >= 0
        flat = stg.flat
        srcs_only = [s for s in srcs if s.storage is not stg]
        add = sum(s.f32(api).reshape(dst.shape) for s in srcs_only)
        # only the addressed elements pass through the engine's fp32 adder
        touched = np.unique(idx[ok])
        tmp = flat[touched].astype(np.float32)
        pos = np.searchsorted(touched, idx[ok])
        np.add.at(tmp, pos, np.broadcast_to(add, idx.shape)[ok])
        flat[touched] = dt.convert(tmp, dst.dtype)
    else:
        dst.assign(acc, api=api)
    record(
        "dma",
        "dma_compute",
        (dst, *srcs),
        dma_bytes=sum(s.size * s.itemsize for s in srcs),
        partitions=dst.partitions() if dst.on_chip else srcs[0].partitions(),
    )


def tensor_copy(dst, src, engine=engine.unknown, *, dtype=None, mask=None, name=None) -> None:
    if mask is None and dtype is None and engine is _ENGINE_UNKNOWN and _tensor_copy_f32(dst, src):
        return
    api = "nisa.tensor_copy"
    dst = on_chip(tensor_arg(dst, api, "dst"), api, "dst")
    src = on_chip(tensor_arg(src, api, "src"), api, "src")
    eng = engine_name(engine, "vector")
    if eng == "gpsimd":
        no_psum(api, dst, src)
    same_free(api, dst, src)
    if dtype is not None:
        dt.as_dtype(dtype)  # an unknown type is still an error
        # the output type is dst's ("all nisa APIs dropped dtype=; output dtype = dst.dtype");
        # the public matmul tutorial still passes the HBM result's type here (ruling in
        # docs/simulator-rulings.md)
    if eng == "scalar" or src.dtype != dst.dtype:
        vals = mat(src)
    else:
        vals = mat(src, f32=False)
    write_mat(dst, vals, api, where=mask_where(mask, dst.shape))
    record(eng, "tensor_copy", (dst, src))


def tensor_copy_predicated(dst, src, predicate, reverse_pred=False, **kw) -> None:
    no_extra_kw("nisa.tensor_copy_predicated", kw)
    api = "nisa.tensor_copy_predicated"
    dst = on_chip(tensor_arg(dst, api, "dst"), api, "dst")
    pred = on_chip(tensor_arg(predicate, api, "predicate"), api, "predicate")
    same_free(api, dst, pred)
    if pred.dtype.name not in (
        "uint8",
        "uint16",
        "uint32",
        "bool_",
        "int8",
        "int16",
        "int32",
        "float32",
        "bfloat16",
        "float16",
    ):
        raise fail("C2N3016", api=api, detail=f"predicate dtype {pred.dtype.name}")
    p = mat(pred) != 0
    if reverse_pred:
        p = ~p
    cur = mat(dst, f32=False)
    if isinstance(src, NkiTensor):
        on_chip(src, api, "src")
        same_free(api, dst, src)
        s = mat(src, f32=src.dtype != dst.dtype)
    else:
        s = np.float32(src)
    vals = np.where(
        p,
        dt.convert(np.asarray(s), dst.dtype)
        if not isinstance(s, np.ndarray) or s.dtype != cur.dtype
        else s,
        cur,
    )
    write_mat(dst, vals, api)
    record(
        "vector", "tensor_copy_predicated", (dst, src if isinstance(src, NkiTensor) else pred, pred)
    )


def memset(dst, value, engine=engine.unknown, *, mask=None, name=None) -> None:
    api = "nisa.memset"
    dst = on_chip(tensor_arg(dst, api, "dst"), api, "dst")
    eng = engine_name(engine, "vector")
    if eng == "gpsimd":
        no_psum(api, dst)
    if (
        not st.current().legacy
        and not dst.dtype.is_float
        and isinstance(value, float)
        and not float(value).is_integer()
    ):
        raise fail(
            "C2N3016",
            api=api,
            detail=f"value {value!r} does not match integer dst dtype {dst.dtype.name}",
        )
    v = np.asarray(value, dtype=np.float32 if dst.dtype.is_float else np.float64)
    dst.assign(np.broadcast_to(v, dst.shape), where=mask_where(mask, dst.shape), api=api)
    record(eng, "memset", (dst,))


def iota(dst, pattern, offset=0, channel_multiplier=0, **kw) -> None:
    no_extra_kw("nisa.iota", kw)
    api = "nisa.iota"
    dst = on_chip(tensor_arg(dst, api, "dst"), api, "dst", allowed=(sbuf,))
    pairs = [(int(s), int(n)) for s, n in pattern]
    while len(pairs) < 1:
        pairs.append((0, 1))
    p = dst.partitions()
    if math.prod(n for _, n in pairs) != dst.free_size():
        raise fail(
            "C2N3014",
            api=api,
            detail=f"pattern covers {math.prod(n for _, n in pairs)} elements, "
            f"dst has {dst.free_size()} per partition",
        )
    v = np.full((p,) + tuple(n for _, n in pairs), int(offset), dtype=np.int64)
    v += (np.arange(p, dtype=np.int64) * int(channel_multiplier)).reshape((p,) + (1,) * len(pairs))
    for k, (s, n) in enumerate(pairs):
        shp = [1] * (len(pairs) + 1)
        shp[k + 1] = n
        v += (np.arange(n, dtype=np.int64) * s).reshape(shp)
    v32 = v.astype(np.int32)
    write_mat(
        dst,
        v32.reshape(p, -1).astype(np.float64) if dst.dtype.is_float else v32.reshape(p, -1),
        api,
    )
    record("gpsimd", "iota", (dst,))


# --------------------------------------------------------------------------- tensor engine


def _check_tiling(api: str, stat: NkiTensor, position, size) -> None:
    """Tiling mode: a matmul on a ``tile_size = (rows, cols)`` sub-array of the PE array at
    ``tile_position = (row0, col0)``; the values are those of a plain matmul (reference 7.2),
    so only the placement is checked: sizes 128/64/32, positions multiples of them inside the
    array, and the stationary tile (K rows, M columns) within the sub-array."""
    try:
        rows, cols = (int(v) for v in size)
        row0, col0 = (int(v) for v in position)
    except (TypeError, ValueError):
        raise invalid(
            api, "tile_position and tile_size are (row, col) pairs, given together"
        ) from None
    for n, p0 in ((rows, row0), (cols, col0)):
        if n not in (32, 64, 128):
            raise invalid(api, f"tile_size entries are 128, 64 or 32, got {n}")
        if p0 < 0 or p0 % n or p0 + n > 128:
            raise invalid(api, f"tile_position {p0} is not a multiple of {n} inside the 128 array")
    if stat.partitions() > rows or stat.free_size() > cols:
        raise invalid(
            api,
            f"the stationary tile ({stat.partitions()} x {stat.free_size()}) exceeds the "
            f"{rows} x {cols} tile",
        )


def nc_matmul(
    dst,
    stationary,
    moving,
    is_stationary_onezero=False,
    is_moving_onezero=False,
    is_transpose=False,
    accumulate=None,
    tile_position=(),
    tile_size=(),
    perf_mode=matmul_perf_mode.none,
    **kw,
) -> None:
    no_extra_kw("nisa.nc_matmul", kw)
    api = "nisa.nc_matmul"
    s = st.current()
    dst = tensor_arg(dst, api, "dst")
    stat = tensor_arg(stationary, api, "stationary")
    mov = tensor_arg(moving, api, "moving")
    on_chip(stat, api, "stationary", allowed=(sbuf,))
    on_chip(mov, api, "moving", allowed=(sbuf,))
    on_chip(dst, api, "dst", allowed=(psum,))
    double_row = perf_mode is not None and str(getattr(perf_mode, "value", perf_mode)) in (
        "double_row",
        "double_row_gen3",
    )
    if tile_position or tile_size:
        _check_tiling(api, stat, tile_position, tile_size)
    a2, b2 = matmul_operands(api, stat, mov, dst, s, double_row, is_transpose)
    _matmul_write(api, dst, a2, b2, accumulate)
    k = stat.partitions()
    ns = stat.free_size()
    nm = mov.free_size()
    fp32 = stat.dtype.name in FP32_CLASS
    record(
        "tensor",
        "nc_matmul",
        (dst, stat, mov),
        extra=(ns, nm, fp32, k, double_row),
        partitions=k,
        free=nm,
    )


def matmul_operands(
    api: str,
    stat: NkiTensor,
    mov: NkiTensor,
    dst: NkiTensor | None,
    s,
    double_row: bool = False,
    is_transpose: bool = False,
) -> np.ndarray:
    for t, w in ((stat, "stationary"), (mov, "moving")):
        if t.dtype.name not in MATMUL_DTYPES:
            raise fail(
                "C2N3016", api=api, detail=f"{w} dtype {t.dtype.name} is not a matmul input type"
            )
    a_fp32 = stat.dtype.name in FP32_CLASS
    b_fp32 = mov.dtype.name in FP32_CLASS
    if a_fp32 != b_fp32 and not is_transpose:
        raise fail("C2N3007", a=stat.dtype.name, b=mov.dtype.name)
    if {stat.dtype.name, mov.dtype.name} == {"float8_e4m3", "float8_e4m3fn"}:
        raise fail("C2N3016", api=api, detail="float8_e4m3 and float8_e4m3fn cannot be mixed")
    k1, k2 = stat.partitions(), mov.partitions()
    if k1 != k2:
        raise fail("C2N3004", detail=f"differs between stationary ({k1}) and moving ({k2})")
    if k1 > 128:
        raise fail("C2N3004", detail=f"{k1} exceeds 128")
    tgt = s.target
    if double_row:
        if tgt.nc_version < 3:
            raise unsupported("perf_mode=double_row", f"not available on {tgt.name}")
        sv = stat.f32(api)
        mv = mov.f32(api)
        if sv.ndim != 3 or mv.ndim != 3 or sv.shape[1] != 2 or mv.shape[1] != 2:
            raise invalid(api, "double_row operands must be [K, 2, F]")
        m, n = sv.shape[2], mv.shape[2]
        a2 = sv.transpose(0, 1, 2).reshape(-1, m)
        b2 = mv.reshape(-1, n)
    else:
        a2 = _mm_operand(stat, s)
        b2 = _mm_operand(mov, s)
        m, n = a2.shape[1], b2.shape[1]
    if m > 128:
        raise fail("C2N3005", size=m, limit=128, target=tgt.name)
    lim = tgt.moving_fmax_f32
    if dst is not None and dst.dtype.name == "bfloat16" and tgt.nc_version >= 4:
        lim = tgt.moving_fmax_bf16
    if n > lim:
        raise fail("C2N3006", size=n, limit=lim, target=tgt.name)
    if dst is not None:
        if dst.partitions() != m or dst.free_size() != n:
            raise fail(
                "C2N3014", api=api, detail=f"dst {dst.describe()} must hold the [{m}, {n}] result"
            )
        if (
            dst.dtype.name != "float32"
            and not (tgt.nc_version >= 4 and dst.dtype.name == "bfloat16")
            and not is_transpose
        ):
            raise fail(
                "C2N3016",
                api=api,
                detail=f"dst dtype {dst.dtype.name}: PSUM matmul results are fp32",
            )
    if stat.dtype.name == "tfloat32":
        a2 = dt.round_tf32(a2)
    if mov.dtype.name == "tfloat32":
        b2 = dt.round_tf32(b2)
    return a2, b2


def matmul_values(
    api: str,
    stat: NkiTensor,
    mov: NkiTensor,
    dst: NkiTensor | None,
    s,
    double_row: bool = False,
    is_transpose: bool = False,
) -> np.ndarray:
    """``stationary.T @ moving`` in fp32 after all TensorE operand checks."""
    a2, b2 = matmul_operands(api, stat, mov, dst, s, double_row, is_transpose)
    return np.matmul(a2.T, b2)


def _matmul_write(api: str, dst: NkiTensor, a2: np.ndarray, b2: np.ndarray, accumulate) -> None:
    """Write or accumulate ``a2.T @ b2`` into PSUM (``accumulate`` semantics of reference 7.2).

    Consecutive accumulating matmuls into the same PSUM region are deferred and evaluated as one
    GEMM over the concatenated contraction axis when the region is next read or rewritten (same
    fp32 result up to summation order; far fewer, larger BLAS calls).
    """
    stg = dst.storage
    pend = stg.mm_pending
    if accumulate is not False and pend is not None and pend[5] < 16384:
        a = dst._a
        if (
            a is not None
            and a.dtype is _F32
            and a.ndim == 2
            and dst.pdim == 0
            and pend[0] == (dst.offset, a.shape, a.strides)
        ):
            # one more K tile into the region whose deferred GEMM is pending: nothing has
            # touched the storage since that GEMM began (any access flushes it), so the region
            # is all written (mode "add", no warning) and stays so
            pend[3].append(_own(a2))
            pend[4].append(_own(b2))
            pend[5] += a2.shape[0]
            return
    if accumulate is False:
        stg.flush_matmul()
        mode = "set"
        mw = None
    else:
        mw = _mm_view(dst)
        if accumulate is None:
            if mw.all():
                mode = "add"
            elif not mw.any():
                mode = "set"
            else:
                mode = "mixed"
        else:
            mode = "add"
            if not mw.all() and stg.fresh:
                st.current().warnings.append(_warn("C2N3027", what=dst.describe()))
    a = dst._a
    if (
        mode != "mixed"
        and a is not None
        and a.ndim == 2
        and dst.pdim == 0
        and dst.dtype.np_dtype == np.float32
        and stg.written is None
        and stg.readonly is False
    ):
        key = (dst.offset, a.shape, a.strides)
        pend = stg.mm_pending
        if pend is not None and mode == "add" and pend[0] == key and pend[5] < 16384:
            pend[3].append(_own(a2))
            pend[4].append(_own(b2))
            pend[5] += a2.shape[0]
        else:
            stg.flush_matmul()
            stg.mm_pending = [key, a, mode, [_own(a2)], [_own(b2)], a2.shape[0]]
    else:
        stg.flush_matmul()
        res = np.matmul(a2.T, b2)
        if mode == "set":
            write_mat(dst, res, api)
        elif mode == "add":
            write_mat(dst, mat(dst) + res, api)
        else:
            m2 = mw.reshape(res.shape) if mw.shape != res.shape else mw
            write_mat(dst, np.where(m2, mat(dst) + res, res), api)
    if mw is None:
        _mark_mm(dst, True)
    else:
        mw[...] = True


def _mm_operand(t: NkiTensor, s) -> np.ndarray:
    """``mat(t)`` of a matmul operand; a tile whose load from a caller's array is still deferred
    is read from the array's fp32 copy (widen.py: no per-tile conversion or copy)."""
    a = t._a
    if a is not None and t.pdim == 0 and a.ndim == 2:
        d = t.dtype
        if d.is_float and d.packed == 1 and d is not _TF32:
            lazy = _load_of(t, t.storage, False)
            if lazy is not None:
                w = s.widened
                if w is None:
                    w = s.widened = _Widened()
                v = w.view(lazy.srcs[0], *lazy.locs[0])
                if v is not None:
                    return v
    return mat(t)


def _own(x: np.ndarray) -> np.ndarray:
    """``x`` if it owns its data (a fresh conversion) or views a caller's array's fp32 copy
    (immutable), else a copy (SBUF may change later)."""
    if x.base is None and x.flags.owndata:
        return x
    w = st.current().widened
    return x if w is not None and w.keeps(x) else x.copy()


def _warn(code: str, **fmt):
    from cuda2nki.nkisim.errors import diag

    return diag(code, **fmt)


def _mm_view(dst: NkiTensor) -> np.ndarray:
    stg = dst.storage
    if stg.mm_written is None:
        stg.mm_written = np.zeros(stg.flat.size, dtype=bool)
    if dst.a is None:
        raise unsupported("nc_matmul into an indirect PSUM view")
    a = dst.a
    if a.itemsize == stg.flat.itemsize:
        v = dst._parallel_view(stg.mm_written)
    else:
        from numpy.lib.stride_tricks import as_strided

        off = dst.offset
        v = as_strided(stg.mm_written[off:], a.shape, tuple(s // a.itemsize for s in a.strides))
    if dst.pdim not in (None, 0):
        v = np.moveaxis(v, dst.pdim, 0)
    return v.reshape(v.shape[0], -1) if v.ndim != 2 else v


def _mark_mm(dst: NkiTensor, value: bool) -> None:
    stg = dst.storage
    if stg.mm_written is None:
        if not value:
            return
        a = dst._a
        if a is not None and dst._boff == 0 and a.shape == stg.shape and a.flags.c_contiguous:
            # the whole of a storage never matmul-written (a new PSUM tile): all marked at once
            stg.mm_written = np.ones(stg.flat.size, dtype=bool)
            return
    _mm_view(dst)[...] = value


def nc_transpose(dst, data, engine=engine.unknown, **kw) -> None:
    no_extra_kw("nisa.nc_transpose", kw)
    api = "nisa.nc_transpose"
    dst = on_chip(tensor_arg(dst, api, "dst"), api, "dst")
    data = on_chip(tensor_arg(data, api, "data"), api, "data")
    eng = engine_name(engine, "tensor" if dst.buffer is psum else "vector")
    p, f = data.partitions(), data.free_size()
    if eng == "tensor":
        if data.buffer is not sbuf or dst.buffer is not psum:
            raise fail(
                "C2N3022",
                api=api,
                what="TensorE transpose operands",
                buffer=f"{data.buffer.name}->{dst.buffer.name}",
                expected="sbuf->psum",
            )
        if p > 128 or f > 128:
            raise fail(
                "C2N3014",
                api=api,
                detail=f"TensorE transpose is limited to [128, 128], got [{p}, {f}]",
            )
    else:
        if p > 32 or f > 32:
            raise fail(
                "C2N3014",
                api=api,
                detail=f"VectorE transpose is limited to [32, 32], got [{p}, {f}]",
            )
    if dst.partitions() != f or dst.free_size() != p:
        raise fail("C2N3014", api=api, detail=f"dst {dst.describe()} must be [{f}, {p}]")
    vals = mat(data, f32=data.dtype != dst.dtype).T
    write_mat(dst, vals, api)
    record(eng, "nc_transpose", (dst, data), extra=(p, f))


# --------------------------------------------------------------------------- compute engines


_DATA_NAMES = ("data1", "data2", "data3", "data4")


def _compute_operands(api: str, dst, *srcs, eng: str):
    dst = on_chip(tensor_arg(dst, api, "dst"), api, "dst")
    out = [dst]
    names = ("data",) if len(srcs) == 1 else _DATA_NAMES
    for i, s in enumerate(srcs):
        out.append(on_chip(tensor_arg(s, api, names[i]), api, "data"))
    if eng == "gpsimd":
        no_psum(api, *out)
    return out


def _int_exact(dst: NkiTensor, *srcs: NkiTensor) -> bool:
    return all(
        t.dtype.name in ("int32", "uint32", "int16", "uint16", "int8", "uint8")
        for t in (dst, *srcs)
    )


def tensor_tensor(dst, data1, data2, op, engine=engine.unknown, *, mask=None, name=None) -> None:
    api = "nisa.tensor_tensor"
    name = getattr(op, "_nki_op", None)  # ops.op_name, the common case inlined
    if name is None:
        name = ops.op_name(op, api)
    if (
        mask is None
        and engine is _ENGINE_UNKNOWN
        and type(dst) is NkiTensor
        and type(data1) is NkiTensor
        and type(data2) is NkiTensor
        and name in _UFUNCS
        and _tensor_tensor_f32(dst, data1, data2, name)
    ):
        return
    d1, d2 = tensor_arg(data1, api, "data1"), tensor_arg(data2, api, "data2")
    all_int = d1.dtype.name in ("int32", "uint32") and d2.dtype.name in ("int32", "uint32")
    eng = engine_name(engine, "gpsimd" if (all_int or name == "power") else "vector")
    dst, d1, d2 = _compute_operands(api, dst, d1, d2, eng=eng)
    if d1.buffer is psum and d2.buffer is psum:
        raise fail(
            "C2N3022",
            api=api,
            what="both inputs",
            buffer="psum",
            expected="at most one input in psum",
        )
    same_free(api, dst, d1)
    same_free(api, dst, d2)
    if ops.is_bitvec(name):
        a, b = mat(d1, f32=False), mat(d2, f32=False)
        vals = ops.apply_bitvec(name, a, b, api)
    elif eng == "gpsimd" and _int_exact(dst, d1, d2):
        a = mat(d1, f32=False).astype(np.int64)
        b = mat(d2, f32=False).astype(np.int64)
        vals = _int_binary(name, a, b, api)
    else:
        x1, x2 = mat(d1), mat(d2)
        ufunc = _UFUNCS.get(name)
        out = None
        if ufunc is not None and mask is None and dst.pdim == 0 and dst.shape == x1.shape:
            out = dst.out_view()
        if (
            out is not None
            and not np.may_share_memory(out, x1)
            and not np.may_share_memory(out, x2)
        ):
            ufunc(x1, x2, out=out)
            vals = None
        else:
            vals = ops.apply_binary(name, x1, x2, api)
    if vals is not None:
        write_mat(dst, vals, api, where=mask_where(mask, dst.shape))
    bf16 = dst.dtype.name == d1.dtype.name == d2.dtype.name == "bfloat16"
    extra = (name, bf16, d1.storage.buffer is psum or d2.storage.buffer is psum)
    record(eng, "tensor_tensor", (dst, d1, d2), extra=extra)


_ENGINE_UNKNOWN = engine.unknown
_TF32 = dt.tfloat32
_F32 = np.dtype(np.float32)
_F32_NAMES3 = ("float32", "float32", "float32")
_F32_NAMES2 = ("float32", "float32")
_ON_CHIP = (sbuf, psum)


def _tensor_tensor_f32(dst: NkiTensor, d1: NkiTensor, d2: NkiTensor, name: str) -> bool:
    """tensor_tensor on same-shape fp32 tiles (the common case); False: take the general path.

    Same checks and result as the general path, in the same order, without its conversions.
    """
    f32 = dt.float32
    shp = dst.shape
    if (
        dst.dtype is not f32
        or d1.dtype is not f32
        or d2.dtype is not f32
        or d1.shape != shp
        or d2.shape != shp
        or dst.pdim != 0
        or d1.pdim != 0
        or d2.pdim != 0
        or dst.index is not None
        or d1.index is not None
        or d2.index is not None
    ):
        return False
    sd, s1, s2 = dst.storage, d1.storage, d2.storage
    b1, b2 = s1.buffer, s2.buffer
    if sd.buffer not in _ON_CHIP or b1 not in _ON_CHIP or b2 not in _ON_CHIP:
        return False
    api = "nisa.tensor_tensor"
    p = shp[0]
    if sd.shape[0] != p:
        check_pstart(dst, api, "dst")
    if s1.shape[0] != p:
        check_pstart(d1, api, "data")
    if s2.shape[0] != p:
        check_pstart(d2, api, "data")
    if b1 is psum and b2 is psum:
        return False  # the general path reports it
    ufunc = _UFUNCS[name]
    x1 = _operand(d1, s1, api)
    x2 = _operand(d2, s2, api)
    out = dst._a
    if out.dtype is _F32 and dst.fills_fresh(out):
        # dst.out_view() on a whole fresh fp32 storage (a new result tile), inlined
        l1, l2 = _load_of(d1, s1, False), _load_of(d2, s2, False)
        if l1 is not None and l2 is not None:
            # both operands are deferred loads: the op is deferred too (Storage.poison), and
            # may be stored without ever being computed tile by tile (deferred.py)
            sd.lazy = Lazy(out, ufunc, (x1, x2), (l1.locs[0], l2.locs[0]))
        else:
            sd.fresh = False
            _ufunc_into(ufunc, x1, x2, out, dst, s1, s2, api)
    else:
        _ufunc_into(ufunc, x1, x2, dst.out_view(), dst, s1, s2, api)
    free = shp[1] if len(shp) == 2 else math.prod(shp[1:])
    record(
        "vector",
        "tensor_tensor",
        (dst, d1, d2),
        (name, False, b1 is psum or b2 is psum),
        0,
        p,
        free,
        2,  # sim_frames: _tensor_tensor_f32 and tensor_tensor
        (shp, d1.shape, d2.shape),
        _F32_NAMES3,
        (sd.buffer.name, b1.name, b2.name),
    )
    return True


def _ufunc_into(ufunc, x1, x2, out, dst: NkiTensor, s1, s2, api: str) -> None:  # noqa: ANN001
    """``dst = ufunc(x1, x2)``, straight into ``out`` (``dst``'s float32 view, or ``None``)
    unless it overlaps an operand of the same storage."""
    sd = dst.storage
    if (
        out is not None
        and (s1 is not sd or not np.may_share_memory(out, x1))
        and (s2 is not sd or not np.may_share_memory(out, x2))
    ):
        ufunc(x1, x2, out=out)
    else:
        dst.assign(ufunc(x1, x2), api=api)


def _operand(t: NkiTensor, stg, api: str) -> np.ndarray:
    """``t.values(api)`` of a strided view, with the plain case and deferred DMA loads inlined.

    A tile whose load is still deferred (``Storage.lazy``) is read from the load's source when
    ``t`` is the very view the load wrote (the same values, without the copy).
    """
    if stg.mm_pending is None and stg.pending is None and stg.written is None and t._gen == stg.gen:
        if not stg.fresh:
            return t._a  # no deferred matmul, poison or written mask
        lazy = _load_of(t, stg, False)
        if lazy is not None:
            return lazy.srcs[0]
    return t.values(api)


def _load_of(t: NkiTensor, stg, ops: bool) -> Lazy | None:
    """``stg.lazy`` when ``t`` is the whole view a deferred load (``ops``: or a deferred
    elementwise op) wrote and nothing has touched the tile since; else ``None``."""
    lazy = stg.lazy
    if (
        lazy is not None
        and stg.fresh
        and lazy.view is t._a
        and (ops or lazy.fn is None)
        and t._gen == stg.gen
        and stg.pending is None
        and stg.mm_pending is None
        and stg.written is None
    ):
        return lazy
    return None


def _f32_pair(dst, src, api: str, what: str) -> bool:
    """Whether ``dst`` and ``src`` are same-shape fp32 strided views of on-chip tiles with the
    partition axis first (the common case of a one-input instruction); the start-partition
    rule is checked here as the general path does.  False: take the general path."""
    f32 = dt.float32
    if type(dst) is not NkiTensor or type(src) is not NkiTensor:
        return False
    shp = dst.shape
    if (
        dst.dtype is not f32
        or src.dtype is not f32
        or src.shape != shp
        or dst.pdim != 0
        or src.pdim != 0
        or dst.index is not None
        or src.index is not None
        or len(shp) < 2
    ):
        return False
    sd, ss = dst.storage, src.storage
    if sd.buffer not in _ON_CHIP or ss.buffer not in _ON_CHIP:
        return False
    p = shp[0]
    if sd.shape[0] != p:
        check_pstart(dst, api, "dst")
    if ss.shape[0] != p:
        check_pstart(src, api, what)
    return True


def _f32_out(dst: NkiTensor) -> np.ndarray | None:
    """The fp32 array to write all of ``dst`` into (bookkeeping of a full write done), or
    ``None``: write through ``dst.assign``."""
    out = dst._a
    if out.dtype is _F32 and dst.fills_fresh(out):
        dst.storage.fresh = False  # dst.out_view() on a whole fresh storage, inlined
        return out
    return dst.out_view()


def _write_f32(dst: NkiTensor, vals: np.ndarray, api: str) -> None:
    """Write a whole fp32 result (a new array, or one not overlapping ``dst``) into ``dst``."""
    out = _f32_out(dst)
    if out is None:
        dst.assign(vals, api=api)
    else:
        out[...] = vals


def _record_f32(eng: str, op: str, dst: NkiTensor, src: NkiTensor, extra: tuple) -> None:
    """``record`` of a one-input fp32 instruction taken by a fast path (two simulator frames:
    the fast path and the public function)."""
    shp = dst.shape
    free = shp[1] if len(shp) == 2 else math.prod(shp[1:])
    record(
        eng,
        op,
        (dst, src),
        extra,
        0,
        shp[0],
        free,
        3,
        (shp, shp),
        _F32_NAMES2,
        (dst.storage.buffer.name, src.storage.buffer.name),
    )


def _tensor_copy_f32(dst, src) -> bool:
    """tensor_copy between same-shape fp32 tiles on the default engine; False: general path."""
    api = "nisa.tensor_copy"
    if not _f32_pair(dst, src, api, "src"):
        return False
    x = _operand(src, src.storage, api)
    out = _f32_out(dst)
    if out is None:
        dst.assign(x, api=api)
    elif out is not x:
        np.copyto(out, x)  # NumPy copes with overlapping views
    _record_f32("vector", "tensor_copy", dst, src, ())
    return True


def _tensor_scalar_f32(dst, data, n0: str, operand0, reverse0, n1, operand1, reverse1) -> bool:
    """tensor_scalar of one or two arithmetic ops with Python-number operands on same-shape
    fp32 tiles (the common case); False: take the general path."""
    u0 = _UFUNCS.get(n0)
    u1 = _UFUNCS.get(n1) if n1 is not None else None
    if (
        u0 is None
        or (n1 is not None and u1 is None)
        or type(operand0) not in (float, int)
        or (n1 is not None and type(operand1) not in (float, int))
    ):
        return False
    api = "nisa.tensor_scalar"
    if not _f32_pair(dst, data, api, "data"):
        return False
    x = _operand(data, data.storage, api)
    s0 = np.float32(operand0)
    t = u0(s0, x) if reverse0 else u0(x, s0)
    if u1 is not None:
        s1 = np.float32(operand1)
        t = u1(s1, t, out=t) if reverse1 else u1(t, s1, out=t)
    _write_f32(dst, t, api)
    _record_f32("vector", "tensor_scalar", dst, data, (n0, n1, "float32", "float32"))
    return True


_UFUNCS = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "maximum": np.maximum,
    "minimum": np.minimum,
}


def _int_binary(name: str, a, b, api: str):
    if name == "add":
        return a + b
    if name == "subtract":
        return a - b
    if name == "multiply":
        return a * b
    if name in ("maximum", "minimum"):
        return getattr(np, name)(a, b)
    if name in ("divide",):
        with np.errstate(divide="ignore", invalid="ignore"):
            return (a.astype(np.float64) / b).astype(np.float64)
    return ops.apply_binary(name, a.astype(np.float64), b.astype(np.float64), api)


def _apply_scalar_op(name: str, data, operand, reverse: bool, api: str, int_dtype=None):
    if name in ("bypass",) or name is None:
        return data
    if ops.is_bitvec(name):
        if operand is not None and not isinstance(operand, np.ndarray):
            operand = np.asarray(int(operand))
        elif isinstance(operand, np.ndarray) and operand.dtype.kind == "f":
            operand = operand.astype(np.int64)
        a, b = (operand, data) if reverse else (data, operand)
        return ops.apply_bitvec(name, a, b, api, int_dtype)
    if name in ops.UNARY and name not in ops.BINARY:
        return ops.apply_unary(name, data, api)
    a, b = (operand, data) if reverse else (data, operand)
    return ops.apply_binary(name, a, b, api)


def tensor_scalar(
    dst,
    data,
    op0,
    operand0,
    reverse0=False,
    op1=None,
    operand1=None,
    reverse1=False,
    engine=engine.unknown,
    *,
    mask=None,
    name=None,
) -> None:
    api = "nisa.tensor_scalar"
    n0 = ops.op_name(op0, api)
    n1 = ops.op_name(op1, api) if op1 is not None else None
    if (
        mask is None
        and engine is _ENGINE_UNKNOWN
        and _tensor_scalar_f32(dst, data, n0, operand0, reverse0, n1, operand1, reverse1)
    ):
        return
    eng = engine_name(engine, "vector")
    dst, data = _compute_operands(api, dst, data, eng=eng)
    same_free(api, dst, data)
    p = data.partitions()
    bitvec = ops.is_bitvec(n0) or (n1 is not None and ops.is_bitvec(n1))
    if bitvec and data.dtype.is_float:
        raise fail("C2N3016", api=api, detail=f"bit-vector operator on {data.dtype.name} data")
    if eng == "scalar" and st.current().target.nc_version <= 3:
        if (n0, n1) not in (("multiply", "add"), ("multiply", None), ("add", None)):
            raise fail(
                "C2N3016",
                api=api,
                detail=f"the Scalar engine supports only (multiply, add), "
                f"(multiply, None), (add, None); got ({n0}, {n1})",
            )
    if bitvec:
        x = mat(data, f32=False)
        o0 = _int_operand(operand0, p, api)
        t = _apply_scalar_op(n0, x, o0, reverse0, api, x.dtype)
        if n1 is not None:
            t = _apply_scalar_op(n1, t, _int_operand(operand1, p, api), reverse1, api, x.dtype)
    else:
        x = mat(data)
        o0 = scalar_or_col(operand0, p, api, "operand0", like=x.shape)
        t = _apply_scalar_op(n0, x, o0, reverse0, api)
        if n1 is not None:
            o1 = scalar_or_col(operand1, p, api, "operand1", like=x.shape)
            t = _apply_scalar_op(n1, t, o1, reverse1, api)
    if np.ndim(t) < 2:
        t = np.broadcast_to(t, x.shape)
    write_mat(dst, t, api, where=mask_where(mask, dst.shape))
    record(eng, "tensor_scalar", (dst, data), extra=(n0, n1, data.dtype.name, dst.dtype.name))


def _int_operand(x, p, api):
    if isinstance(x, NkiTensor):
        return mat(x, f32=False)
    if x is None:
        return None
    return np.asarray(int(x))


def scalar_tensor_tensor(
    dst,
    data,
    op0,
    operand0,
    op1,
    operand1,
    reverse0=False,
    reverse1=False,
    engine=engine.unknown,
    *,
    mask=None,
    name=None,
) -> None:
    api = "nisa.scalar_tensor_tensor"
    n0, n1 = ops.op_name(op0, api), ops.op_name(op1, api)
    eng = engine_name(engine, "vector")
    dst, data, o1 = _compute_operands(
        api, dst, data, tensor_arg(operand1, api, "operand1"), eng=eng
    )
    same_free(api, dst, data)
    same_free(api, dst, o1)
    p = data.partitions()
    t = _apply_scalar_op(n0, mat(data), scalar_or_col(operand0, p, api, "operand0"), reverse0, api)
    t = _apply_scalar_op(n1, t, mat(o1), reverse1, api)
    write_mat(dst, t, api, where=mask_where(mask, dst.shape))
    record(eng, "scalar_tensor_tensor", (dst, data, o1), extra=(n0, n1, data.dtype.name))


def _norm_axes(axis, ndim: int, api: str, pdim: int | None) -> tuple[int, ...]:
    if isinstance(axis, (int, np.integer)):
        axis = (int(axis),)
    axes = tuple(sorted(int(a) + (ndim if int(a) < 0 else 0) for a in axis))
    for a in axes:
        if not 0 <= a < ndim:
            raise invalid(api, f"axis {a} out of range for a {ndim}-D tensor")
        if pdim is not None and a == pdim:
            raise fail("C2N3015", api=api, axis=a)
    return axes


def tensor_reduce(
    dst,
    op,
    data,
    axis,
    negate=False,
    keepdims=False,
    engine=engine.unknown,
    *,
    mask=None,
    dtype=None,
    name=None,
) -> None:
    api = "nisa.tensor_reduce"
    name = ops.op_name(op, api)
    eng = engine_name(engine, "vector")
    dst, data = _compute_operands(api, dst, data, eng=eng)
    axes = _norm_axes(axis, data.ndim, api, data.pdim)
    same_partitions(api, dst, data)
    x = data.f32(api) if not (ops.is_bitvec(name) and not data.dtype.is_float) else data.values(api)
    r = ops.reduce(name, x, axes, api, keepdims=True)
    if negate:
        r = -r
    if r.size != dst.size:
        raise fail(
            "C2N3014",
            api=api,
            detail=f"reduction result has {r.size} elements, dst {dst.describe()}",
        )
    dst.assign(r.reshape(dst.shape), where=mask_where(mask, dst.shape), api=api)
    record(eng, "tensor_reduce", (dst, data), extra=(name, data.dtype.name, dst.dtype.name))


def tensor_partition_reduce(dst, op, data, **kw) -> None:
    no_extra_kw("nisa.tensor_partition_reduce", kw)
    api = "nisa.tensor_partition_reduce"
    name = ops.op_name(op, api)
    if name not in ("add", "average", "maximum", "bitwise_or", "bitwise_and"):
        raise fail(
            "C2N3016",
            api=api,
            detail=f"operator {name} (allowed: add, average, maximum, bitwise_or, bitwise_and)",
        )
    dst, data = _compute_operands(api, dst, data, eng="gpsimd")
    x = mat(data, f32=not ops.is_bitvec(name))
    r = ops.reduce(name, x, 0, api, keepdims=True)
    if dst.free_size() != x.shape[1] or dst.partitions() != 1:
        raise fail("C2N3014", api=api, detail=f"dst {dst.describe()} must be [1, {x.shape[1]}]")
    write_mat(dst, r, api)
    record("gpsimd", "tensor_partition_reduce", (dst, data), extra=(name,))


def _acc_update(acc: np.ndarray, rows: np.ndarray, name: str, cmd, init, api: str) -> None:
    p = rows.shape[0]
    f, ident = ops.REDUCE.get(name, (None, None))
    if f is None:
        raise invalid(api, f"'{name}' is not a reduction operator")
    c = int(cmd)
    if c == reduce_cmd.idle:
        return
    if c == reduce_cmd.reset:
        acc[:p] = ident
        return
    if c == reduce_cmd.reset_reduce:
        acc[:p] = ident
    elif c == reduce_cmd.load_reduce:
        acc[:p] = np.float32(0.0 if init is None else init)
    acc[:p] = f(acc[:p], rows)


def _row_reduce(name: str, vals: np.ndarray, api: str) -> np.ndarray:
    return ops.reduce(name, vals, 1, api, keepdims=False)


def activation(
    dst,
    op,
    data,
    bias=None,
    scale=1.0,
    reduce_op=None,
    reduce_res=None,
    reduce_cmd=reduce_cmd.idle,
    *,
    mask=None,
    api: str = "nisa.activation",
    name=None,
) -> None:
    name = ops.op_name(op, api)
    if (
        mask is None
        and reduce_op is None
        and reduce_res is None
        and api == "nisa.activation"
        and _activation_f32(dst, name, data, bias, scale)
    ):
        return
    dst, data = _compute_operands(api, dst, data, eng="scalar")
    same_free(api, dst, data)
    p = data.partitions()
    x = mat(data)
    sc = scalar_or_col(scale, p, api, "scale")
    if isinstance(sc, np.ndarray) or sc != 1.0:
        x = x * sc
    if bias is not None:
        if not isinstance(bias, NkiTensor) and st.current().target.nc_version < 3:
            raise fail(
                "C2N3016", api=api, detail="a scalar bias needs NC-v3 or later; pass a (P, 1) tile"
            )
        x = x + scalar_or_col(bias, p, api, "bias")
    _range_warn(api, name, x)
    y = ops.apply_unary(name, x, api)
    if y.dtype != np.float32:
        y = y.astype(np.float32)
    write_mat(dst, y, api, where=mask_where(mask, dst.shape))
    extra_cost = 0
    if reduce_op is not None or reduce_res is not None:
        rname = ops.op_name(reduce_op, api) if reduce_op is not None else "add"
        if st.current().target.nc_version <= 2 and rname != "add":
            raise fail("C2N3016", api=api, detail="only nl.add reductions on trn1")
        cmd = int(reduce_cmd)
        if cmd == 0 and reduce_res is not None:
            cmd = 3  # reduce_res without a command: reset and reduce (documented choice)
        acc = st.current().scalar_acc
        _acc_update(acc, _row_reduce(rname, y, api), rname, cmd, None, api)
        if reduce_res is not None:
            rr = on_chip(tensor_arg(reduce_res, api, "reduce_res"), api, "reduce_res")
            if rr.partitions() != p or rr.free_size() != 1:
                raise fail(
                    "C2N3014", api=api, detail=f"reduce_res must be ({p}, 1), got {rr.describe()}"
                )
            write_mat(rr, acc[:p].reshape(p, 1).copy(), api)
            extra_cost = 1
    record("scalar", "activation", (dst, data), extra=(name, extra_cost))


def _activation_f32(dst, name: str, data, bias, scale) -> bool:
    """activation without reduction or mask on same-shape fp32 tiles, with a Python-number
    scale and no bias or a (P, 1) bias tile (the common case); False: take the general path.
    The same arithmetic as the general path, without its operand conversions."""
    api = "nisa.activation"
    if (
        type(scale) not in (float, int)
        or (bias is not None and type(bias) is not NkiTensor)
        or not _f32_pair(dst, data, api, "data")
    ):
        return False
    x = _operand(data, data.storage, api)
    shp = x.shape
    if len(shp) != 2:
        x = x.reshape(shp[0], -1)
    if scale != 1.0:
        x = x * np.float32(scale)
    if bias is not None:
        x = x + scalar_or_col(bias, shp[0], api, "bias")
    _range_warn(api, name, x)
    y = ops.apply_unary(name, x, api)
    if y.dtype != np.float32:
        y = y.astype(np.float32)
    _write_f32(dst, y if len(shp) == 2 else y.reshape(shp), api)
    _record_f32("scalar", "activation", dst, data, (name, 0))
    return True


def _range_warn(api: str, name: str, x: np.ndarray) -> None:
    rng = ops.ACT_RANGES.get(name)
    if rng is None or x.size == 0:
        return
    lo, hi = rng
    with np.errstate(invalid="ignore"):
        mn, mx = float(np.nanmin(x)), float(np.nanmax(x))
    if name in ("log", "sqrt", "rsqrt"):
        ax = np.abs(x[x != 0]) if name != "log" else x
        if ax.size == 0:
            return
        mn, mx = float(np.nanmin(ax)), float(np.nanmax(ax))
    if mn < lo or mx > hi:
        bad = mn if mn < lo else mx
        s = st.current()
        if len(s.warnings) < 100:
            s.warnings.append(
                _warn(
                    "C2N3028", api=api, op=name, value=f"{bad:.6g}", range=f"[{lo:.6g}, {hi:.6g}]"
                )
            )


def activation_reduce(
    dst, op, data, reduce_op, reduce_res, bias=None, scale=1.0, *, mask=None, name=None
) -> None:
    activation(
        dst,
        op,
        data,
        bias=bias,
        scale=scale,
        reduce_op=reduce_op,
        reduce_res=reduce_res,
        reduce_cmd=reduce_cmd.reset_reduce,
        mask=mask,
        api="nisa.activation_reduce",
    )


def reciprocal(dst, data, engine=engine.unknown, *, mask=None, name=None) -> None:
    api = "nisa.reciprocal"
    eng = engine_name(engine, "vector")
    dst, data = _compute_operands(api, dst, data, eng=eng)
    same_free(api, dst, data)
    write_mat(
        dst, ops.apply_unary("reciprocal", mat(data), api), api, where=mask_where(mask, dst.shape)
    )
    record(eng, "reciprocal", (dst, data))


_ACTIVATE2_PAIRS = {
    ("multiply", "add"),
    ("multiply", "subtract"),
    ("multiply", "bypass"),
    ("add", "bypass"),
    ("subtract", "bypass"),
    ("bypass", "bypass"),
}


def activate2(
    dst,
    op,
    data,
    imm0,
    imm1,
    op0,
    op1,
    relu_param=0.0,
    reverse0=False,
    reverse1=False,
    reduce_op=None,
    reduce_res=None,
    reduce_cmd=reduce_cmd.idle,
    **kw,
) -> None:
    """trn3 Scalar engine: ``dst = op((data op0 imm0) op1 imm1)`` (reference 7.3).

    ``imm0``/``imm1`` are fp32 scalars or ``(P, 1)`` columns; ``prelu`` uses ``relu_param``.  The
    optional free-axis reduction (add, maximum, minimum) goes through the Scalar engine's
    accumulators as in ``activation``.
    """
    no_extra_kw("nisa.activate2", kw)
    api = "nisa.activate2"
    if st.current().target.nc_version < 4:
        raise unsupported(api, "trn3 (NC-v4) only")
    name = ops.op_name(op, api)
    n0, n1 = ops.op_name(op0, api), ops.op_name(op1, api)
    if (n0, n1) not in _ACTIVATE2_PAIRS:
        pairs = ", ".join(f"({a}, {b})" for a, b in sorted(_ACTIVATE2_PAIRS))
        raise fail("C2N3016", api=api, detail=f"(op0, op1) = ({n0}, {n1}); allowed: {pairs}")
    dst, data = _compute_operands(api, dst, data, eng="scalar")
    same_free(api, dst, data)
    p = data.partitions()
    x = mat(data)
    t = _apply_scalar_op(n0, x, scalar_or_col(imm0, p, api, "imm0"), reverse0, api)
    t = _apply_scalar_op(n1, t, scalar_or_col(imm1, p, api, "imm1"), reverse1, api)
    t = np.broadcast_to(np.asarray(t, np.float32), x.shape)
    if name == "prelu":
        y = np.where(t >= 0, t, np.float32(relu_param) * t).astype(np.float32)
    else:
        _range_warn(api, name, t)
        y = np.asarray(ops.apply_unary(name, t, api), np.float32)
    write_mat(dst, y, api)
    extra_cost = 0
    if reduce_op is not None or reduce_res is not None:
        rname = ops.op_name(reduce_op, api) if reduce_op is not None else "add"
        if rname not in ("add", "maximum", "minimum"):
            raise unsupported(f"{api}(reduce_op={rname})", "add, maximum and minimum are modelled")
        cmd = int(reduce_cmd)
        if cmd == 0 and reduce_res is not None:
            cmd = 3  # as in activation: reduce_res without a command resets and reduces
        acc = st.current().scalar_acc
        _acc_update(acc, _row_reduce(rname, y, api), rname, cmd, None, api)
        if reduce_res is not None:
            rr = on_chip(tensor_arg(reduce_res, api, "reduce_res"), api, "reduce_res")
            if rr.partitions() != p or rr.free_size() != 1:
                raise fail(
                    "C2N3014", api=api, detail=f"reduce_res must be ({p}, 1), got {rr.describe()}"
                )
            write_mat(rr, acc[:p].reshape(p, 1).copy(), api)
            extra_cost = 1
    record("scalar", "activation", (dst, data), extra=(name, extra_cost))


def exponential(
    dst,
    src,
    max_value=0.0,
    reduce_res=None,
    reduce_cmd=reduce_cmd.idle,
    reduce_init=0.0,
    *,
    name=None,
) -> None:
    api = "nisa.exponential"
    if st.current().target.nc_version < 4:
        raise unsupported(api, "trn3 (NC-v4) only")
    dst, src = _compute_operands(api, dst, src, eng="vector")
    same_free(api, dst, src)
    p = src.partitions()
    y = ops.apply_unary("exp", mat(src) - scalar_or_col(max_value, p, api, "max_value"), api)
    write_mat(dst, y, api)
    acc = st.current().vector_acc
    cmd = int(reduce_cmd)
    if cmd == 0 and reduce_res is not None:
        cmd = 3
    _acc_update(acc, y.sum(axis=1), "add", cmd, reduce_init, api)
    if reduce_res is not None:
        write_mat(
            on_chip(tensor_arg(reduce_res, api, "reduce_res"), api, "reduce_res"),
            acc[:p].reshape(p, 1).copy(),
            api,
        )
    record("vector", "exponential", (dst, src))


def tensor_scalar_reduce(
    dst,
    data,
    op0,
    operand0,
    reduce_op,
    reduce_res=None,
    reverse0=False,
    reduce_cmd=reduce_cmd.reset_reduce,
    reduce_init=None,
    reduce_res_negate=False,
    **kw,
) -> None:
    no_extra_kw("nisa.tensor_scalar_reduce", kw)
    api = "nisa.tensor_scalar_reduce"
    n0 = ops.op_name(op0, api)
    rn = ops.op_name(reduce_op, api)
    dst, data = _compute_operands(api, dst, data, eng="vector")
    same_free(api, dst, data)
    p = data.partitions()
    t = _apply_scalar_op(n0, mat(data), scalar_or_col(operand0, p, api, "operand0"), reverse0, api)
    t = np.broadcast_to(t, (p, data.free_size()))
    write_mat(dst, t, api)
    acc = st.current().vector_acc
    _acc_update(acc, _row_reduce(rn, t, api), rn, reduce_cmd, reduce_init, api)
    if reduce_res is not None:
        rr = on_chip(tensor_arg(reduce_res, api, "reduce_res"), api, "reduce_res")
        v = acc[:p].reshape(p, 1).copy()
        write_mat(rr, -v if reduce_res_negate else v, api)
    record("vector", "tensor_scalar_reduce", (dst, data), extra=(n0, rn))


def tensor_scalar_cumulative(
    dst, src, op0, op1, imm0, imm1=None, reduce_cmd=reduce_cmd.reset_reduce, **kw
) -> None:
    no_extra_kw("nisa.tensor_scalar_cumulative", kw)
    api = "nisa.tensor_scalar_cumulative"
    n0, n1 = ops.op_name(op0, api), ops.op_name(op1, api)
    dst, src = _compute_operands(api, dst, src, eng="vector")
    same_free(api, dst, src)
    for t in (dst, src):
        if t.dtype.name in ("int32", "uint32"):
            raise fail("C2N3016", api=api, detail="int32/uint32 input or output is not supported")
    p = src.partitions()
    x = _apply_scalar_op(n0, mat(src), scalar_or_col(imm0, p, api, "imm0"), False, api)
    x = np.broadcast_to(x, (p, src.free_size()))
    acc = st.current().vector_acc
    f, ident = ops.REDUCE.get(n1, (None, None))
    if f is None:
        raise invalid(api, f"op1 '{n1}' is not an accumulation operator")
    c = int(reduce_cmd)
    if c in (1, 3):
        start = np.full(p, ident, np.float32)
    elif c == 4:
        start = (
            np.broadcast_to(
                scalar_or_col(imm1 if imm1 is not None else 0.0, p, api, "imm1"), (p, 1)
            )
            .reshape(p)
            .astype(np.float32)
        )
    else:
        start = acc[:p].copy()
    if n1 in ("add", "subtract"):
        out = np.cumsum(x, axis=1, dtype=np.float32) + start[:, None]
    else:
        out = f.accumulate(np.concatenate([start[:, None], x], axis=1), axis=1)[:, 1:].astype(
            np.float32
        )
    write_mat(dst, out, api)
    acc[:p] = out[:, -1] if out.shape[1] else start
    record("vector", "tensor_scalar_cumulative", (dst, src), extra=(n0, n1))


def tensor_tensor_scan(
    dst,
    data0,
    data1,
    initial,
    op0,
    op1,
    reverse0=False,
    reverse1=False,
    engine=engine.unknown,
    **kw,
) -> None:
    no_extra_kw("nisa.tensor_tensor_scan", kw)
    api = "nisa.tensor_tensor_scan"
    n0, n1 = ops.op_name(op0, api), ops.op_name(op1, api)
    eng = engine_name(engine, "vector")
    dst, d0, d1 = _compute_operands(api, dst, data0, data1, eng=eng)
    same_free(api, dst, d0)
    same_free(api, dst, d1)
    p = d0.partitions()
    a, b = mat(d0), mat(d1)
    r = (
        np.broadcast_to(scalar_or_col(initial, p, api, "initial"), (p, 1))
        .reshape(p)
        .astype(np.float32)
    )
    out = np.empty_like(a)
    if n0 == "multiply" and n1 == "add" and not reverse0 and not reverse1:
        for i in range(a.shape[1]):  # vectorised over partitions; sequential along the scan axis
            r = a[:, i] * r + b[:, i]
            out[:, i] = r
    else:
        for i in range(a.shape[1]):
            t = (
                ops.apply_binary(n0, r, a[:, i], api)
                if reverse0
                else ops.apply_binary(n0, a[:, i], r, api)
            )
            r = (
                ops.apply_binary(n1, b[:, i], t, api)
                if reverse1
                else ops.apply_binary(n1, t, b[:, i], api)
            )
            out[:, i] = r
    write_mat(dst, out, api)
    record(eng, "tensor_tensor_scan", (dst, d0, d1), extra=(n0, n1))


def bn_stats(dst, data, **kw) -> None:
    no_extra_kw("nisa.bn_stats", kw)
    api = "nisa.bn_stats"
    dst, data = _compute_operands(api, dst, data, eng="vector")
    same_partitions(api, dst, data)
    n = data.free_size()
    if n > 512:
        raise fail("C2N3014", api=api, detail=f"input free size {n} exceeds bn_stats_fmax 512")
    if dst.free_size() != 6:
        raise fail(
            "C2N3014",
            api=api,
            detail=f"dst must have 6 elements per partition, got {dst.describe()}",
        )
    x = mat(data)
    out = np.zeros((x.shape[0], 6), np.float32)
    for k, part in enumerate((x[:, 0::2], x[:, 1::2])):
        c = part.shape[1]
        if c:
            m = part.mean(axis=1, dtype=np.float32)
            v = ((part - m[:, None]) ** 2).sum(axis=1, dtype=np.float32)
        else:
            m = np.zeros(x.shape[0], np.float32)
            v = m
        out[:, 3 * k] = c
        out[:, 3 * k + 1] = m
        out[:, 3 * k + 2] = v
    write_mat(dst, out, api)
    record("vector", "bn_stats", (dst, data))


def bn_aggr(dst, data, **kw) -> None:
    no_extra_kw("nisa.bn_aggr", kw)
    api = "nisa.bn_aggr"
    dst, data = _compute_operands(api, dst, data, eng="vector")
    same_partitions(api, dst, data)
    x = mat(data)
    if x.shape[1] % 3:
        raise fail(
            "C2N3014",
            api=api,
            detail=f"input must hold (count, mean, var*count) triples, got {data.describe()}",
        )
    if dst.free_size() != 2:
        raise fail(
            "C2N3014",
            api=api,
            detail=f"dst must have 2 elements per partition, got {dst.describe()}",
        )
    tr = x.reshape(x.shape[0], -1, 3).astype(np.float64)
    cnt, mean, m2 = tr[..., 0], tr[..., 1], tr[..., 2]
    tot = cnt.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        gm = (cnt * mean).sum(axis=1) / tot
        var = (m2 + cnt * (mean - gm[:, None]) ** 2).sum(axis=1) / tot
    write_mat(dst, np.stack([gm, var], axis=1).astype(np.float32), api)
    record("vector", "bn_aggr", (dst, data), extra=(x.shape[1],))


_CMP = {
    "equal": np.equal,
    "not_equal": np.not_equal,
    "greater": np.greater,
    "greater_equal": np.greater_equal,
    "less": np.less,
    "less_equal": np.less_equal,
}


def affine_select(
    dst, pattern, channel_multiplier, on_true_tile, on_false_value, cmp_op=None, offset=0, **kw
) -> None:
    no_extra_kw("nisa.affine_select", kw)
    api = "nisa.affine_select"
    cname = ops.op_name(cmp_op, api) if cmp_op is not None else "equal"
    if cname not in _CMP:
        raise invalid(api, f"cmp_op must be a comparison, got {cname}")
    dst, src = _compute_operands(api, dst, on_true_tile, eng="gpsimd")
    same_free(api, dst, src)
    p, f = src.partitions(), src.free_size()
    pairs = [(int(s), int(n)) for s, n in pattern]
    if math.prod(n for _, n in pairs) != f:
        raise fail(
            "C2N3014",
            api=api,
            detail=f"pattern covers {math.prod(n for _, n in pairs)} elements, data has {f}",
        )
    v = np.full((p,) + tuple(n for _, n in pairs), int(offset), np.int64)
    v += (np.arange(p) * int(channel_multiplier)).reshape((p,) + (1,) * len(pairs))
    for k, (s, n) in enumerate(pairs):
        shp = [1] * (len(pairs) + 1)
        shp[k + 1] = n
        v += (np.arange(n) * s).reshape(shp)
    cond = _CMP[cname](v.reshape(p, f), 0)
    write_mat(dst, np.where(cond, mat(src), np.float32(on_false_value)), api)
    record("gpsimd", "affine_select", (dst, src))


def range_select(
    dst,
    on_true_tile,
    comp_op0,
    comp_op1,
    bound0,
    bound1,
    reduce_cmd=reduce_cmd.reset_reduce,
    reduce_res=None,
    reduce_op=None,
    range_start=0,
    on_false_value=-3.4028235e38,
    **kw,
) -> None:
    no_extra_kw("nisa.range_select", kw)
    api = "nisa.range_select"
    if st.current().target.nc_version < 3:
        raise unsupported(api, "needs NC-v3 (trn2) or later")
    c0, c1 = ops.op_name(comp_op0, api), ops.op_name(comp_op1, api)
    dst, src = _compute_operands(api, dst, on_true_tile, eng="vector")
    same_free(api, dst, src)
    p, f = src.partitions(), src.free_size()
    idx = (np.float32(range_start) + np.arange(f, dtype=np.float32))[None, :]
    b0 = scalar_or_col(bound0, p, api, "bound0")
    b1 = scalar_or_col(bound1, p, api, "bound1")
    m = _CMP[c0](idx, b0) & _CMP[c1](idx, b1)
    out = np.where(m, mat(src), np.float32(on_false_value))
    write_mat(dst, out, api)
    rn = ops.op_name(reduce_op, api) if reduce_op is not None else "maximum"
    acc = st.current().vector_acc
    _acc_update(acc, _row_reduce(rn, out, api), rn, reduce_cmd, None, api)
    if reduce_res is not None:
        write_mat(
            on_chip(tensor_arg(reduce_res, api, "reduce_res"), api, "reduce_res"),
            acc[:p].reshape(p, 1).copy(),
            api,
        )
    record("vector", "range_select", (dst, src))


def select_reduce(
    dst,
    predicate,
    on_true,
    on_false,
    reduce_res=None,
    reduce_cmd=reduce_cmd.idle,
    reduce_op=None,
    reverse_pred=False,
    **kw,
) -> None:
    no_extra_kw("nisa.select_reduce", kw)
    api = "nisa.select_reduce"
    dst, pred, t = _compute_operands(api, dst, predicate, on_true, eng="vector")
    same_free(api, dst, pred)
    same_free(api, dst, t)
    p = dst.partitions()
    cond = mat(pred) != 0
    if reverse_pred:
        cond = ~cond
    if isinstance(on_false, NkiTensor):
        on_chip(on_false, api, "on_false")
        fv = (
            mat(on_false)
            if on_false.free_size() != 1
            else scalar_or_col(on_false, p, api, "on_false")
        )
    else:
        fv = np.float32(on_false)
    out = np.where(cond, mat(t), fv)
    write_mat(dst, out, api)
    if reduce_res is not None or int(reduce_cmd) != 0:
        rn = ops.op_name(reduce_op, api) if reduce_op is not None else "maximum"
        acc = st.current().vector_acc
        cmd = int(reduce_cmd) or 3
        _acc_update(acc, _row_reduce(rn, out, api), rn, cmd, None, api)
        if reduce_res is not None:
            write_mat(
                on_chip(tensor_arg(reduce_res, api, "reduce_res"), api, "reduce_res"),
                acc[:p].reshape(p, 1).copy(),
                api,
            )
    record("vector", "select_reduce", (dst, pred, t))


def max8(dst, src, **kw) -> None:
    no_extra_kw("nisa.max8", kw)
    api = "nisa.max8"
    dst, src = _compute_operands(api, dst, src, eng="vector")
    same_partitions(api, dst, src)
    n = src.free_size()
    if not 8 <= n <= 16384:
        raise fail(
            "C2N3014", api=api, detail=f"input needs 8..16384 elements per partition, got {n}"
        )
    if dst.free_size() != 8:
        raise fail(
            "C2N3014",
            api=api,
            detail=f"dst must hold 8 elements per partition, got {dst.describe()}",
        )
    x = mat(src)
    top = -np.sort(-x, axis=1)[:, :8]
    write_mat(dst, top, api)
    record("vector", "max8", (dst, src))


def nc_find_index8(dst, data, vals, **kw) -> None:
    no_extra_kw("nisa.nc_find_index8", kw)
    api = "nisa.nc_find_index8"
    dst, data, v = _compute_operands(api, dst, data, vals, eng="vector")
    x = mat(data)
    want = mat(v)
    p = x.shape[0]
    out = np.full((p, 8), 0xFFFFFFFF, np.uint64)
    for r in range(p):
        used: set[int] = set()
        for i in range(8):
            hits = np.flatnonzero(x[r] == want[r, i])
            for h in hits:
                if int(h) not in used:
                    used.add(int(h))
                    out[r, i] = h
                    break
    write_mat(
        dst,
        out.astype(np.uint32).astype(dst.dtype.np_dtype)
        if not dst.dtype.is_float
        else out.astype(np.float64),
        api,
    )
    record("vector", "nc_find_index8", (dst, data, v))


def nc_match_replace8(dst, data, vals, imm, dst_idx=None, **kw) -> None:
    no_extra_kw("nisa.nc_match_replace8", kw)
    api = "nisa.nc_match_replace8"
    dst, data, v = _compute_operands(api, dst, data, vals, eng="vector")
    same_free(api, dst, data)
    x = mat(data).copy()
    want = mat(v)
    p = x.shape[0]
    idx = np.full((p, 8), 0xFFFFFFFF, np.uint64)
    for r in range(p):
        for i in range(7, -1, -1):
            hits = np.flatnonzero(x[r] == want[r, i])
            if hits.size:
                idx[r, i] = hits[0]
                x[r, hits[0]] = np.float32(imm)
    write_mat(dst, x, api)
    if dst_idx is not None:
        di = on_chip(tensor_arg(dst_idx, api, "dst_idx"), api, "dst_idx")
        write_mat(di, idx.astype(np.float64) if di.dtype.is_float else idx.astype(np.uint32), api)
    record("vector", "nc_match_replace8", (dst, data, v))


def sequence_bounds(dst, segment_ids, name=None) -> None:
    """GpSimd: ``[start, end)`` of the run of equal segment ids each element belongs to.

    ``segment_ids`` is ``(1, n)``; ``dst`` is ``(1, 2, n)`` with the starts in ``dst[0, 0]`` and
    the (exclusive) ends in ``dst[0, 1]``.  A segment is a run of equal consecutive ids; id 0 is
    padding and gets ``[n, -1]`` (the NumPy equivalent in the NKI documentation).
    """
    api = "nisa.sequence_bounds"
    dst, ids = _compute_operands(api, dst, segment_ids, eng="gpsimd")
    for t, what in ((ids, "segment_ids"), (dst, "dst")):
        if t.dtype.name not in ("float32", "int32"):
            raise fail("C2N3016", api=api, detail=f"{what} dtype {t.dtype.name} (float32 or int32)")
    if ids.partitions() != 1 or dst.partitions() != 1:
        raise fail("C2N3014", api=api, detail="the partition dimension must be 1")
    x = mat(ids, f32=False).reshape(-1)
    n = x.size
    if dst.free_size() != 2 * n:
        raise fail(
            "C2N3014",
            api=api,
            detail=f"dst must hold (1, 2, {n}) for {n} segment ids, got {dst.describe()}",
        )
    new_run = np.ones(n, dtype=bool)
    new_run[1:] = x[1:] != x[:-1]
    run = np.cumsum(new_run) - 1
    starts = np.flatnonzero(new_run)
    ends = np.append(starts[1:], n)
    start, end = starts[run], ends[run]
    pad = x == 0
    start[pad] = n
    end[pad] = -1
    write_mat(dst, np.concatenate([start, end]).reshape(1, 2 * n), api)
    record("gpsimd", "sequence_bounds", (dst, ids))


def nc_n_gather(dst, data, indices, **kw) -> None:
    no_extra_kw("nisa.nc_n_gather", kw)
    api = "nisa.nc_n_gather"
    dst, data, ind = _compute_operands(api, dst, data, indices, eng="gpsimd")
    for t, w in ((dst, "dst"), (data, "data"), (ind, "indices")):
        if t.buffer is not sbuf:
            raise fail("C2N3022", api=api, what=w, buffer=t.buffer.name, expected="sbuf")
    same_partitions(api, dst, data)
    same_free(api, dst, ind)
    x = mat(data, f32=False)
    ix = mat(ind, f32=False).astype(np.int64)
    if (ix < 0).any() or (ix >= x.shape[1]).any():
        raise fail("C2N3019", detail=f"{api} index outside 0..{x.shape[1] - 1}")
    vals = np.take_along_axis(x, ix, axis=1)
    write_mat(dst, vals if vals.dtype == dst.dtype.np_dtype else vals.astype(np.float32), api)
    record("gpsimd", "nc_n_gather", (dst, data, ind))


def local_gather(dst, src_buffer, index, num_elem_per_idx=1, num_valid_indices=None, **kw) -> None:
    """GpSimd gather inside each group of 16 partitions.

    The reference describes it only in outline; the simulator's reading (uncertain, pinned by a
    test): a group's source rows are cut, row-major, into chunks of ``num_elem_per_idx`` elements;
    the group's indices are read partition-first (``index[p, j]`` in order j, then p) and each
    selects one chunk; the gathered chunks fill the group's ``dst`` rows in the same
    partition-first order; at most ``num_valid_indices`` indices per group are used.
    """
    no_extra_kw("nisa.local_gather", kw)
    api = "nisa.local_gather"
    e = int(num_elem_per_idx)
    if e not in (1, 2, 4, 8, 16, 32):
        raise invalid(api, "num_elem_per_idx must be 1, 2, 4, 8, 16 or 32")
    dst, src, ind = _compute_operands(api, dst, src_buffer, index, eng="gpsimd")
    same_partitions(api, dst, src)
    same_partitions(api, dst, ind)
    x = mat(src, f32=False)
    ix = mat(ind, f32=False).astype(np.int64)
    p, per = x.shape[0], dst.free_size()
    out = np.zeros((p, per), x.dtype)
    for g0 in range(0, p, 16):
        grp = x[g0 : g0 + 16]
        rows = grp.shape[0]
        chunks = grp.reshape(-1)[: (grp.size // e) * e].reshape(-1, e)
        idx = ix[g0 : g0 + 16].T.reshape(-1)
        if num_valid_indices is not None:
            idx = idx[: int(num_valid_indices)]
        if idx.size and (idx.min() < 0 or idx.max() >= chunks.shape[0]):
            raise fail("C2N3019", detail=f"{api} index outside its 16-partition group")
        vals = chunks[idx].reshape(-1)
        n = min(vals.size, rows * per)
        fill = np.zeros(rows * per, x.dtype)
        fill[:n] = vals[:n]
        out[g0 : g0 + rows] = fill.reshape(per, rows).T
    write_mat(dst, out if out.dtype == dst.dtype.np_dtype else out.astype(np.float32), api)
    record("gpsimd", "local_gather", (dst, src, ind), extra=(ix.size * e,))


def nc_stream_shuffle(dst, src, shuffle_mask, **kw) -> None:
    no_extra_kw("nisa.nc_stream_shuffle", kw)
    api = "nisa.nc_stream_shuffle"
    dst, src = _compute_operands(api, dst, src, eng="vector")
    # partition counts may differ (dst partition i of a quadrant reads src partition mask[i]:
    # one src partition can be broadcast to 32); the elements per partition may not
    if dst.free_size() != src.free_size():
        raise fail(
            "C2N3014",
            api=api,
            detail=f"operands have {dst.free_size()} and {src.free_size()} elements per "
            f"partition ({dst.describe()} vs {src.describe()})",
        )
    m = [int(v) for v in shuffle_mask]
    if len(m) != 32:
        raise invalid(api, f"shuffle_mask needs 32 entries, got {len(m)}")
    x = mat(src, f32=src.dtype != dst.dtype)
    fresh = dst.storage.fresh and dst.storage.lazy is None  # nothing written (nor loaded) yet
    cur = mat(dst, f32=src.dtype != dst.dtype).copy() if not fresh else None
    p = dst.partitions()
    out = np.empty((p, x.shape[1]), x.dtype) if cur is None else cur
    for q0 in range(0, p, 32):
        for i in range(min(32, p - q0)):
            if m[i] == 255:
                continue
            if m[i] >= 32 or q0 + m[i] >= x.shape[0]:
                raise fail("C2N3019", detail=f"{api} mask entry {m[i]} outside the quadrant")
            out[q0 + i] = x[q0 + m[i]]
    write_mat(dst, out, api)
    record("vector", "nc_stream_shuffle", (dst, src))


# --------------------------------------------------------------------------- random numbers
# Bit-exact hardware RNG is undocumented; the simulator draws from NumPy's PCG64 (statistical).


def dropout(dst, data, prob, **kw) -> None:
    no_extra_kw("nisa.dropout", kw)
    api = "nisa.dropout"
    dst, data = _compute_operands(api, dst, data, eng="vector")
    same_free(api, dst, data)
    p = data.partitions()
    pr = scalar_or_col(prob, p, api, "prob")
    x = mat(data)
    keep = st.current().rng.random(x.shape, dtype=np.float32) >= pr
    write_mat(dst, np.where(keep, x, np.float32(0)), api)
    record("vector", "dropout", (dst, data))


def rng(dst, engine=engine.vector, **kw) -> None:
    no_extra_kw("nisa.rng", kw)
    api = "nisa.rng"
    dst = on_chip(tensor_arg(dst, api, "dst"), api, "dst")
    bits = st.current().rng.integers(0, 2**32, size=dst.shape, dtype=np.uint64)
    if dst.dtype.is_float:
        raise fail("C2N3016", api=api, detail="rng writes integer bits; use an integer dst")
    info = np.iinfo(dst.dtype.np_dtype)
    vals = (
        (bits & np.uint64(int(info.max) - int(info.min))).astype(np.int64) + int(info.min)
        if info.min < 0
        else bits & np.uint64(info.max)
    )
    dst.assign(vals.astype(dst.dtype.np_dtype), api=api)
    record(engine_name(engine, "vector"), "rng", (dst,))


def rand2(dst, min, max, **kw) -> None:  # noqa: A002 - NKI parameter names
    no_extra_kw("nisa.rand2", kw)
    api = "nisa.rand2"
    dst = on_chip(tensor_arg(dst, api, "dst"), api, "dst")
    p = dst.partitions()
    lo = scalar_or_col(min, p, api, "min")
    hi = scalar_or_col(max, p, api, "max")
    u = st.current().rng.random((p, dst.free_size()), dtype=np.float32)
    write_mat(dst, lo + u * (hi - lo), api)
    record("vector", "rand2", (dst,))


def set_rng_seed(src_seeds, **kw) -> None:
    no_extra_kw("nisa.set_rng_seed", kw)
    v = (
        src_seeds.values("set_rng_seed")
        if isinstance(src_seeds, NkiTensor)
        else np.asarray(src_seeds)
    )
    seed = int(np.asarray(v).reshape(-1)[0])
    st.current().rng = np.random.default_rng(seed & 0xFFFFFFFF)
    if isinstance(src_seeds, NkiTensor):
        record("vector", "set_rng_seed", (src_seeds,))


def rand_set_state(src_seeds, engine=engine.vector, **kw) -> None:
    no_extra_kw("nisa.rand_set_state", kw)
    v = (
        src_seeds.values("rand_set_state")
        if isinstance(src_seeds, NkiTensor)
        else np.asarray(src_seeds)
    )
    st.current().rng = np.random.default_rng(np.asarray(v).astype(np.uint64).reshape(-1))


def rand_get_state(dst, engine=engine.vector, **kw) -> None:
    no_extra_kw("nisa.rand_get_state", kw)
    api = "nisa.rand_get_state"
    dst = on_chip(tensor_arg(dst, api, "dst"), api, "dst")
    state = st.current().rng.integers(0, 2**31, size=dst.shape)
    dst.assign(state, api=api)


def core_barrier(data, cores=(0, 1), engine=engine.gpsimd, *, name=None) -> None:
    # Logical cores run one after the other in this simulator; a barrier is a no-op.
    return None
