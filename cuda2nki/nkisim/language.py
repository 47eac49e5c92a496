"""``nki.language`` (``nl``): creation, movement, elementwise math, reductions, loops, constants.

One implementation serves both API generations; behaviour that differs is keyed on
``state.current().legacy`` (the generation of the running kernel):

* binary ops: legacy broadcasts like NumPy (incl. the partition dim); current requires equal shapes
  (scalars allowed) -- NKI 0.3.0+ known issue, reference 4.4;
* output dtype: legacy promotion table with weak Python scalars (reference 8.3); current promotes
  tensor dtypes with the same table but Python scalars never widen the result (our choice: the new
  docs are silent);
* true division (``nl.divide``, ``x / y``) of integer operands without ``dtype=``: legacy
  ``float32``, the quotient itself, not the promoted integer type.  Our ruling (docs/simulator-
  rulings.md): the promotion table names add/multiply/tensor_tensor, not division; ``nl.divide``
  is documented as NumPy's divide, whose integer quotient is a float; and the published
  ``resize_nearest`` sample, tested on hardware, takes ``nl.floor(iota / w, dtype=nl.int32)``
  as the floor of the quotient, which an integer result rounded to nearest (the documented
  float-to-integer conversion) would break.  An explicit integer ``dtype=`` still rounds to
  nearest, ties to even, on the write;
* comparisons/logical ops: legacy default ``bool_``, current default = (promoted) input dtype;
* ``mask=`` is accepted only in legacy kernels.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from cuda2nki.nkisim import dtypes as dt
from cuda2nki.nkisim import fastpath as _fp
from cuda2nki.nkisim import isa as _isa
from cuda2nki.nkisim import loop_reduce as _loop_reduce
from cuda2nki.nkisim import oob as _oob
from cuda2nki.nkisim import ops
from cuda2nki.nkisim import registers as _reg
from cuda2nki.nkisim import state as st
from cuda2nki.nkisim.dtypes import (  # noqa: F401 - re-exported NKI names
    bfloat16,
    bool_,
    finfo,
    float4_e2m1fn_x4,
    float8_e4m3,
    float8_e4m3fn,
    float8_e4m3fn_x4,
    float8_e5m2,
    float8_e5m2_x4,
    float8_e8m0fnu,
    float16,
    float32,
    int8,
    int16,
    int32,
    tfloat32,
    uint8,
    uint16,
    uint32,
)
from cuda2nki.nkisim.engine import (
    dma_extent,
    dst_tag,
    mat,
    no_extra_kw,
    on_chip,
    record,
    src_key,
    write_mat,
)
from cuda2nki.nkisim.errors import fail, invalid, unsupported
from cuda2nki.nkisim.fastpath import _retarget
from cuda2nki.nkisim.fastpath import whole_copy as _copy_tile
from cuda2nki.nkisim.spmd import nc, spmd_dim  # noqa: F401 - re-exported NKI names
from cuda2nki.nkisim.tensor import (  # noqa: F401 - re-exported NKI names
    IndexExpr,
    Mask,
    MemoryRegion,
    NkiTensor,
    allocate,
    hbm,
    par_dim,
    private_hbm,
    psum,
    sbuf,
    shared_hbm,
)

tensor = NkiTensor
fp32 = float32

# --------------------------------------------------------------------------- helpers


def _named(name: str):
    def deco(f):
        f._nki_op = name
        return f

    return deco


def _where(mask, shape):
    return _isa.mask_where(mask, shape)


def _is_tensor(x) -> bool:
    return isinstance(x, NkiTensor)


def _check_on_chip(api: str, *ts) -> None:
    for t in ts:
        if isinstance(t, NkiTensor) and not t.on_chip:
            raise fail(
                "C2N3022",
                api=api,
                what=t.describe(),
                buffer=t.buffer.name,
                expected="sbuf or psum (load it first)",
            )


def _out_dtype(api: str, xs: Sequence, dtype) -> dt.NkiDType:
    if dtype is not None:
        try:
            return dt.as_dtype(dtype)
        except TypeError as exc:
            raise fail("C2N3016", api=api, detail=str(exc)) from None
    legacy = st.current().legacy
    res = None
    for x in xs:
        if isinstance(x, NkiTensor):
            d = x.dtype
        elif legacy and x is not None:
            d = dt.weak_scalar_dtype(x)
        else:
            continue
        res = d if res is None else dt.promote(res, d)
    return res or dt.float32


def _scalar_value(x):
    if isinstance(x, (bool, np.bool_)):
        return np.float32(int(x))
    if isinstance(x, (int, float, np.integer, np.floating)):
        return x
    raise invalid("nl", f"operand must be a tile or a scalar, got {type(x).__name__}")


def _result_shape(api: str, xs: Sequence) -> tuple[int, ...]:
    shapes = [x.shape for x in xs if isinstance(x, NkiTensor)]
    if not shapes:
        raise invalid(api, "at least one operand must be a tile")
    if st.current().legacy:
        try:
            return tuple(np.broadcast_shapes(*shapes))
        except ValueError:
            raise fail(
                "C2N3026", api=api, a=shapes[0], b=shapes[-1], detail="they do not broadcast"
            ) from None
    for s in shapes[1:]:
        if tuple(s) != tuple(shapes[0]):
            raise fail(
                "C2N3026",
                api=api,
                a=tuple(shapes[0]),
                b=tuple(s),
                detail="the current API's nl operations do not broadcast; use "
                "nisa.tensor_scalar with a (P, 1) operand or nl.broadcast_to",
            )
    return tuple(shapes[0])


def _new_tile(shape, dtype, api: str, buffer=None, sim_callers: int = 2) -> NkiTensor:
    """A result tile; ``sim_callers``: the simulator frames above this call (by default the
    public function that called it: see ``allocate``)."""
    return allocate(shape, dtype, buffer or sbuf, api=api, sim_callers=sim_callers)


def _vals(x, shape, f32: bool = True):
    if isinstance(x, NkiTensor):
        v = x.f32() if f32 else x.values()
        if v.shape != tuple(shape):
            v = np.broadcast_to(v, shape)
        return v
    return np.float32(_scalar_value(x)) if f32 else np.asarray(_scalar_value(x))


def _binary(name: str, x, y, dtype=None, mask=None, *, default_dtype=None):
    if mask is None and dtype is None and default_dtype is None:
        out = _fp.binary_f32(name, x, y)
        if out is not None:
            return out
    api = f"nl.{name}"
    _check_on_chip(api, x, y)
    shape = _result_shape(api, (x, y))
    odt = (
        _out_dtype(api, (x, y), dtype)
        if default_dtype is None or dtype is not None
        else default_dtype
    )
    if name == "divide" and dtype is None and not odt.is_float and st.current().legacy:
        odt = dt.float32  # true division of integers: see the module docstring
    if ops.is_bitvec(name):
        for v in (x, y):
            if isinstance(v, NkiTensor) and v.dtype.is_float:
                raise fail("C2N3016", api=api, detail=f"bitwise operation on {v.dtype.name}")
            if isinstance(v, float):
                raise fail("C2N3016", api=api, detail="bitwise operation on a float scalar")
        a = _vals(x, shape, f32=False)
        b = _vals(y, shape, f32=False)
        idt = odt.np_dtype if not odt.is_float else np.dtype(np.int32)
        res = ops.apply_bitvec(name, a, b, api, idt)
        eng_op = "tensor_tensor"
    else:
        a = _vals(x, shape)
        b = _vals(y, shape)
        res = ops.apply_binary(name, a, b, api)
        eng_op = "tensor_tensor" if (_is_tensor(x) and _is_tensor(y)) else "tensor_scalar"
    d = _fp.direct_target(shape, odt, 2) if mask is None else None
    out = _new_tile(shape, odt, api, sim_callers=3) if d is None else d[0]
    if getattr(res, "shape", None) != shape:
        res = np.broadcast_to(res, shape)
    out.assign(res, where=_where(mask, shape), api=api)
    ins = [t for t in (x, y) if isinstance(t, NkiTensor)]
    psum_in = any(t.buffer is psum for t in ins)
    record("vector", eng_op, (out, *ins), extra=(name, False, psum_in), sim_frames=2)
    return out if d is None else _fp.direct_done(d)


def _cmp_default(x, y, dtype):
    if dtype is not None:
        return None
    if st.current().legacy:
        return dt.bool_
    return None


_SCALAR_ENGINE = {
    "exp",
    "log",
    "tanh",
    "sigmoid",
    "gelu",
    "gelu_apprx_tanh",
    "gelu_apprx_sigmoid",
    "gelu_apprx_sigmoid_dx",
    "gelu_dx",
    "silu",
    "silu_dx",
    "softplus",
    "mish",
    "erf",
    "erf_dx",
    "sin",
    "cos",
    "tan",
    "arctan",
    "sqrt",
    "square",
    "relu",
    "copy",
}


def _unary(name: str, x, dtype=None, mask=None, api: str | None = None):
    api = api or f"nl.{name}"
    if not isinstance(x, NkiTensor):
        raise invalid(api, f"operand must be a tile, got {type(x).__name__}")
    _check_on_chip(api, x)
    odt = _out_dtype(api, (x,), dtype)
    v = x.f32()
    if name == "sin" or name == "cos":
        # nl.sin/nl.cos do range reduction (reference 8.2), so exact NumPy math is faithful.
        res = ops.apply_unary(name, v, api)
    else:
        res = ops.apply_unary(name, v, api)
    d = _fp.direct_target(x.shape, odt, 2) if mask is None else None
    out = _new_tile(x.shape, odt, api, sim_callers=3) if d is None else d[0]
    out.assign(res, where=_where(mask, x.shape), api=api)
    if name == "rsqrt" and x.buffer is psum and not st.current().legacy:
        raise fail("C2N3010", api=api, what=x.describe())
    eng = (
        "scalar"
        if name in _SCALAR_ENGINE
        else ("gpsimd" if name == "rsqrt" and not st.current().legacy else "vector")
    )
    op = "activation" if eng == "scalar" else "tensor_scalar"
    record(eng, op, (out, x), extra=(name, 0), sim_frames=2)
    return out if d is None else _fp.direct_done(d)


# --------------------------------------------------------------------------- creation


def ndarray(shape, dtype, buffer=None, name: str = "", address=None, **kw) -> NkiTensor:
    if kw:
        no_extra_kw("nl.ndarray", kw)
    return allocate(shape, dtype, buffer, name, "nl.ndarray", None, 1)


def _filled(shape, dtype, value, buffer, name, api, lazy: bool = False) -> NkiTensor:
    """A tensor holding ``value``; ``lazy`` (legacy ``lazy_initialization=True``): the compiler
    folds the fill into the tensor's first use, so the values are the same and no separate
    memset instruction is issued."""
    buf = buffer if buffer is not None else sbuf
    if isinstance(buf, MemoryRegion) and not buf.on_chip and st.current().legacy:
        raise invalid(api, "HBM tensors cannot be created with an initial value")
    t = allocate(shape, dtype, buf, name, api=api)
    if not _fill_new(t, value):
        t.assign(
            np.full(t.shape, value, dtype=np.float32 if t.dtype.is_float else np.int64), api=api
        )
    if t.on_chip and not lazy:
        state = st.current()
        if state.legacy and value == 0 and t.buffer is psum:
            # ``acc = nl.zeros(..., buffer=nl.psum)`` then ``acc += nl.matmul(...)`` starts a
            # PSUM accumulation: the first matmul writes instead of adding, no memset.  The
            # memset is recorded only if another instruction uses the tile first (engine.record)
            state.zero_psum[t.storage.uid] = (t.shape, t.dtype.name, t.partitions(), t.free_size())
        else:
            record("vector", "memset", (t,))
    return t


def _fill_new(t: NkiTensor, value) -> bool:
    """``t.assign`` of ``value`` everywhere for a new on-chip tile of fp32 or an integer dtype
    stored as itself: one fill of its storage (no full-size source array, conversion or copy).
    False: not such a tile (the caller assigns)."""
    stg = t.storage
    flat = stg.flat
    d = t.dtype
    if (
        not stg.fresh
        or not stg.buffer.on_chip
        or stg.written is not None
        or stg.pending is not None
        or stg.is_input
        or t.index is not None
        or t._a is None
        or t._a.size != flat.size
        or flat.dtype != d.np_dtype
        or not (d is float32 or (not d.is_float and d.packed == 1))
    ):
        return False
    conv = dt.convert(np.asarray(value, dtype=np.float32 if d.is_float else np.int64), d)
    flat.fill(conv)
    stg.fresh = False
    return True


def zeros(
    shape, dtype=float32, buffer=None, name: str = "", lazy_initialization=False, **kw
) -> NkiTensor:
    no_extra_kw("nl.zeros", kw)
    return _filled(shape, dtype, 0, buffer, name, "nl.zeros", bool(lazy_initialization))


def ones(
    shape, dtype=float32, buffer=None, name: str = "", lazy_initialization=False, **kw
) -> NkiTensor:
    no_extra_kw("nl.ones", kw)
    return _filled(shape, dtype, 1, buffer, name, "nl.ones", bool(lazy_initialization))


def full(
    shape, fill_value, dtype=float32, buffer=None, name: str = "", lazy_initialization=False, **kw
) -> NkiTensor:
    no_extra_kw("nl.full", kw)
    lazy = bool(lazy_initialization)
    return _filled(shape, dtype, fill_value, buffer, name, "nl.full", lazy)


def zeros_like(a, dtype=None, buffer=None, name: str = "", **kw) -> NkiTensor:
    no_extra_kw("nl.zeros_like", kw)
    return zeros(a.shape, dtype or a.dtype, buffer if buffer is not None else sbuf, name)


def ones_like(a, dtype=None, buffer=None, name: str = "", **kw) -> NkiTensor:
    no_extra_kw("nl.ones_like", kw)
    return ones(a.shape, dtype or a.dtype, buffer if buffer is not None else sbuf, name)


def full_like(a, fill_value, dtype=None, buffer=None, name: str = "", **kw) -> NkiTensor:
    no_extra_kw("nl.full_like", kw)
    return full(a.shape, fill_value, dtype or a.dtype, buffer if buffer is not None else sbuf, name)


def empty_like(a, dtype=None, buffer=None, name: str = "", **kw) -> NkiTensor:
    no_extra_kw("nl.empty_like", kw)
    return allocate(
        a.shape,
        dtype or a.dtype,
        buffer if buffer is not None else a.buffer,
        name,
        api="nl.empty_like",
    )


def rand(shape, dtype=float32, buffer=None, name: str = "", **kw) -> NkiTensor:
    no_extra_kw("nl.rand", kw)
    t = allocate(shape, dtype, buffer if buffer is not None else sbuf, name, api="nl.rand")
    t.assign(st.current().rng.random(t.shape, dtype=np.float32), api="nl.rand")
    record("vector", "rng", (t,))
    return t


def random_seed(seed, **kw) -> None:
    no_extra_kw("nl.random_seed", kw)
    _isa.set_rng_seed(seed)


def shared_constant(constant, dtype=None, **kw) -> NkiTensor:
    no_extra_kw("nl.shared_constant", kw)
    if isinstance(constant, str):
        constant = np.load(constant)
    arr = np.asarray(constant)
    from cuda2nki.nkisim.tensor import wrap_host

    return wrap_host(arr, dt.as_dtype(dtype) if dtype is not None else None, buffer=shared_hbm)


def shared_identity_matrix(n, dtype=uint8, dst=None, **kw) -> NkiTensor:
    """An ``n x n`` identity: in SBUF (current API), or, in the legacy API, a constant in
    shared HBM like ``shared_constant`` (kernels ``nl.load`` it)."""
    no_extra_kw("nl.shared_identity_matrix", kw)
    if st.current().legacy:
        if dst is not None:
            raise invalid("nl.shared_identity_matrix", "the legacy API takes no dst=")
        return shared_constant(np.eye(n, dtype=np.float32), dtype=dtype)
    t = dst if dst is not None else allocate((n, n), dtype, sbuf, api="nl.shared_identity_matrix")
    t.assign(np.eye(n, dtype=np.float32), api="nl.shared_identity_matrix")
    record("gpsimd", "iota", (t,))
    return t


def ds(start, size) -> slice:
    return slice(int(start), int(start) + int(size))


# --------------------------------------------------------------------------- movement


def load(src, dtype=None, *, mask=None, **kw) -> NkiTensor:
    if (
        dtype is None
        and not kw
        and type(src) is NkiTensor
        and (
            mask is None
            or (type(mask) is Mask and mask.full and _isa._fits(mask.factors, src.shape))
        )
        and st._STACK[-1].legacy
    ):
        # the usual legacy load: the checks below pass (load_plain refuses an on-chip src)
        out = _fp.load_plain(src, "nl.load")
        if out is not None:
            return out
    no_extra_kw("nl.load", kw)
    api = "nl.load"
    if not isinstance(src, NkiTensor):
        raise invalid(api, f"src must be an HBM tensor view, got {type(src).__name__}")
    if src.on_chip:
        raise fail("C2N3022", api=api, what=src.describe(), buffer=src.buffer.name, expected="hbm")
    odt = dt.as_dtype(dtype) if dtype is not None else src.dtype
    if odt is src.dtype and (mask is None or _where(mask, src.shape) is None):
        out = _fp.load_plain(src, api)
        if out is not None:
            return out
    out = allocate(src.shape, odt, sbuf, api=api, sim_callers=1)
    where = _where(mask, src.shape)
    if src.index is not None:
        ok = src.index >= 0
        if where is None and not ok.all():
            raise _oob.out_of_bounds(src, f"{api} reads outside {src.storage.name or 'the tensor'}")
        where = ok if where is None else (where & ok)
    vals = src.values(api)
    if odt != src.dtype:
        vals = vals.astype(np.float32)
    out.assign(vals, where=where, api=api)
    n, parts = dma_extent(where, out, src.size)
    record(
        "dma",
        "dma_copy",
        (out, src),
        extra=(src_key(src),),
        dma_bytes=n * src.itemsize,
        partitions=parts,
        free=out.free_size(),
    )
    return out


def store(dst, value, *, mask=None, **kw) -> None:
    no_extra_kw("nl.store", kw)
    api = "nl.store"
    if not isinstance(dst, NkiTensor):
        raise invalid(api, f"dst must be an HBM tensor view, got {type(dst).__name__}")
    if dst.on_chip:
        raise fail(
            "C2N3022", api=api, what=f"dst {dst.describe()}", buffer=dst.buffer.name, expected="hbm"
        )
    where = _where(mask, dst.shape)
    if where is None and _fp.store_checked(dst, value):
        _isa._dma_fast(dst, value)  # the current API's DMA (its record is the one below)
        return
    if dst.index is not None:
        ok = dst.index >= 0
        if where is None and not ok.all():
            raise _oob.out_of_bounds(
                dst, f"{api} writes outside {dst.storage.name or 'the tensor'}"
            )
        where = ok if where is None else (where & ok)
    if isinstance(value, NkiTensor):
        if value.buffer is psum and not st.current().legacy:
            raise fail("C2N3009", api=api, what=value.describe())
        if not value.on_chip:
            raise fail(
                "C2N3022",
                api=api,
                what=f"value {value.describe()}",
                buffer=value.buffer.name,
                expected="sbuf",
            )
        vals = value.values(api)
        if value.dtype != dst.dtype:
            vals = vals.astype(np.float32)
        if vals.shape != dst.shape and vals.size != dst.size:
            if not st.current().legacy:
                raise fail(
                    "C2N3014",
                    api=api,
                    detail=f"value {value.describe()} does not match dst {dst.describe()}",
                )
        dst.assign(vals, where=where, api=api)
        n, parts = dma_extent(where, value, dst.size)
        record(
            "dma",
            "dma_copy",
            (dst, value),
            extra=dst_tag(dst),
            dma_bytes=n * value.itemsize,
            partitions=parts,
            free=value.free_size(),
        )
    else:
        dst.assign(np.full(dst.shape, _scalar_value(value), dtype=np.float32), where=where, api=api)
        record("dma", "dma_copy", (dst,), extra=dst_tag(dst), dma_bytes=dst.size * dst.itemsize)


def load_transpose2d(src, dtype=None, **kw) -> NkiTensor:
    no_extra_kw("nl.load_transpose2d", kw)
    api = "nl.load_transpose2d"
    if not isinstance(src, NkiTensor) or src.on_chip or src.ndim != 2:
        raise invalid(api, "src must be a 2-D HBM tensor view")
    odt = dt.as_dtype(dtype) if dtype is not None else src.dtype
    out = allocate((src.shape[1], src.shape[0]), odt, sbuf, api=api)
    v = src.values(api).T
    out.assign(v.astype(np.float32) if odt != src.dtype else v, api=api)
    record("dma", "dma_transpose", (out, src), dma_bytes=src.size * src.itemsize)
    return out


@_named("copy")
def copy(x, dtype=None, *, mask=None, **kw) -> NkiTensor:
    no_extra_kw("nl.copy", kw)
    if dtype is None and mask is None:
        out = _fp.copy_plain(x)
        if out is not None:
            return out
    api = "nl.copy"
    if not isinstance(x, NkiTensor):
        raise invalid(api, "operand must be a tile")
    _check_on_chip(api, x)
    odt = dt.as_dtype(dtype) if dtype is not None else x.dtype
    out = allocate(x.shape, odt, sbuf, api=api, sim_callers=1)
    vals = x.values(api) if odt == x.dtype else x.f32(api)
    out.assign(vals, where=_where(mask, x.shape), api=api)
    record("vector", "tensor_copy", (out, x))
    return out


def broadcast_to(src, shape, dtype=None, **kw) -> NkiTensor:
    no_extra_kw("nl.broadcast_to", kw)
    api = "nl.broadcast_to"
    if not isinstance(src, NkiTensor):
        raise invalid(api, "src must be a tile")
    shape = tuple(int(s) for s in shape)
    if len(shape) != src.ndim:
        raise invalid(api, f"shape {shape} must have the same rank as {src.shape}")
    try:
        v = np.broadcast_to(src.values(api), shape)
    except ValueError:
        raise invalid(api, f"cannot broadcast {src.shape} to {shape}") from None
    odt = dt.as_dtype(dtype) if dtype is not None else src.dtype
    out = allocate(shape, odt, sbuf, api=api)
    out.assign(v if odt == src.dtype else v.astype(np.float32), api=api)
    eng, op = (
        ("tensor", "nc_matmul")
        if src.partitions() != out.partitions()
        else ("vector", "tensor_copy")
    )
    extra = (
        (src.partitions(), out.free_size(), src.dtype.name in ("float32",), src.partitions(), False)
        if eng == "tensor"
        else ()
    )
    record(eng, op, (out, src), extra=extra)
    return out


def expand_dims(x, axis) -> NkiTensor:
    return x.expand_dim(int(axis))


def gather_flattened(data, indices, axis=0, dtype=None, *, mask=None, **kw) -> NkiTensor:
    no_extra_kw("nl.gather_flattened", kw)
    api = "nl.gather_flattened"
    _check_on_chip(api, data, indices)
    x = mat(data, f32=False)
    ix = mat(indices, f32=False).astype(np.int64)
    if (ix < 0).any() or (ix >= x.shape[1]).any():
        raise fail("C2N3019", detail=f"{api} index outside 0..{x.shape[1] - 1}")
    odt = dt.as_dtype(dtype) if dtype is not None else data.dtype
    out = allocate(indices.shape, odt, sbuf, api=api)
    vals = np.take_along_axis(x, ix, axis=1)
    write_mat(out, vals if odt == data.dtype else vals.astype(np.float32), api)
    record("gpsimd", "nc_n_gather", (out, data, indices))
    return out


# --------------------------------------------------------------------------- matmul/transpose


def _legacy_sbuf_operand(t: NkiTensor, api: str) -> NkiTensor:
    """A PSUM matmul operand copied to SBUF, as the legacy compiler does (a recorded copy)."""
    if t.buffer is not psum:
        return t
    c = allocate(t.shape, t.dtype, sbuf, api=api)
    _isa.tensor_copy(c, t)
    return c


def matmul(x, y, transpose_x: bool = False, *, mask=None, **kw) -> NkiTensor:
    no_extra_kw("nl.matmul", kw)
    api = "nl.matmul"
    s = st.current()
    if not isinstance(x, NkiTensor) or not isinstance(y, NkiTensor):
        raise invalid(api, "operands must be tiles")
    if s.legacy:
        x, y = _legacy_sbuf_operand(x, api), _legacy_sbuf_operand(y, api)
    on_chip(x, api, "x", allowed=(sbuf,))
    on_chip(y, api, "y", allowed=(sbuf,))
    if not transpose_x:
        if not s.legacy:
            raise invalid(api, "the current API supports only transpose_x=True (pass x as [K, M])")
        # x is [M, K]: the compiler inserts a TensorE transpose of x first.
        xt = allocate((x.free_size(), x.partitions()), x.dtype, sbuf, api=api)
        xt.assign(mat(x, f32=False).T, api=api)
        record("tensor", "nc_transpose", (xt, x), extra=(x.partitions(), x.free_size()))
        x = xt
    a2, b2 = _isa.matmul_operands(api, x, y, None, s)
    shape = (a2.shape[1], b2.shape[1])
    extra = (
        x.free_size(),
        y.free_size(),
        x.dtype.name in ("float32", "tfloat32"),
        x.partitions(),
        False,
    )
    acc = _fp.accumulate_target(shape, 1) if mask is None else None
    if acc is not None:  # ``t += nl.matmul(...)``: accumulated into t directly (fastpath.py)
        return _fp.accumulate_matmul(acc, x, y, a2, b2, extra)
    out = allocate(shape, float32, psum, api=api, sim_callers=1)
    if mask is None:
        # deferred like nisa.nc_matmul (which marks out as matmul-written); ``acc += out``
        # extends acc's deferred GEMM (_inplace)
        _isa._matmul_write(api, out, a2, b2, False)
    else:
        out.assign(np.matmul(a2.T, b2), where=_where(mask, shape), api=api)
        _isa._mm_view(out)[...] = True
    record(
        "tensor",
        "nc_matmul",
        (out, x, y),
        extra=extra,
        partitions=x.partitions(),
        free=y.free_size(),
    )
    return out


def transpose(x, dtype=None, *, mask=None, **kw) -> NkiTensor:
    no_extra_kw("nl.transpose", kw)
    api = "nl.transpose"
    if not isinstance(x, NkiTensor) or x.ndim != 2:
        raise invalid(api, "operand must be a 2-D tile")
    _check_on_chip(api, x)
    p, f = x.shape
    if p > 128 or f > 128:
        raise fail(
            "C2N3014", api=api, detail=f"TensorE transpose is limited to [128, 128], got [{p}, {f}]"
        )
    odt = dt.as_dtype(dtype) if dtype is not None else x.dtype
    out = allocate((f, p), odt, psum, api=api)
    v = x.values(api).T
    out.assign(v if odt == x.dtype else v.astype(np.float32), api=api)
    record("tensor", "nc_transpose", (out, x), extra=(p, f))
    return out


# --------------------------------------------------------------------------- elementwise

_BINARY_NAMES = (
    "add",
    "subtract",
    "multiply",
    "divide",
    "power",
    "maximum",
    "minimum",
    "fmod",
    "mod",
    "abs_max",
    "abs_min",
)
_CMP_NAMES = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")
_LOGIC_NAMES = ("logical_and", "logical_or", "logical_xor")
_BIT_NAMES = ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift")
_UNARY_NAMES = (
    "abs",
    "negative",
    "sign",
    "trunc",
    "floor",
    "ceil",
    "exp",
    "log",
    "sqrt",
    "rsqrt",
    "reciprocal",
    "square",
    "sin",
    "cos",
    "tan",
    "arctan",
    "tanh",
    "relu",
    "sigmoid",
    "gelu",
    "gelu_apprx_tanh",
    "gelu_apprx_sigmoid",
    "gelu_apprx_sigmoid_dx",
    "gelu_dx",
    "silu",
    "silu_dx",
    "softplus",
    "mish",
    "erf",
    "erf_dx",
)


def _make_binary(name: str):
    def f(x, y, dtype=None, *, mask=None, **kw):
        if dtype is None and mask is None:
            out = _fp.binary_f32(name, x, y, 2)
            if out is not None:
                return out
        return _binary(name, x, y, dtype, mask)

    f.__name__ = f.__qualname__ = name
    f._nki_op = name
    return f


def _make_cmp(name: str):
    def f(x, y, dtype=None, *, mask=None, **kw):
        return _binary(name, x, y, dtype, mask, default_dtype=_cmp_default(x, y, dtype))

    f.__name__ = f.__qualname__ = name
    f._nki_op = name
    return f


def _make_unary(name: str):
    def f(x, dtype=None, *, mask=None, **kw):
        return _unary(name, x, dtype, mask)

    f.__name__ = f.__qualname__ = name
    f._nki_op = name
    return f


for _n in _BINARY_NAMES + _BIT_NAMES:
    globals()[_n] = _make_binary(_n)
for _n in _CMP_NAMES + _LOGIC_NAMES:
    globals()[_n] = _make_cmp(_n)
for _n in _UNARY_NAMES:
    globals()[_n] = _make_unary(_n)

add = globals()["add"]
subtract = globals()["subtract"]
multiply = globals()["multiply"]
divide = globals()["divide"]
maximum = globals()["maximum"]
minimum = globals()["minimum"]
negative = globals()["negative"]
abs = globals()["abs"]  # noqa: A001 - NKI name


@_named("logical_not")
def logical_not(x, dtype=None, *, mask=None, **kw):
    no_extra_kw("nl.logical_not", kw)
    odt = dt.as_dtype(dtype) if dtype is not None else (dt.bool_ if st.current().legacy else None)
    if odt is None:
        return _binary("logical_xor", x, 1, None, mask, default_dtype=x.dtype)
    return _binary("logical_xor", x, 1, None, mask, default_dtype=odt)


@_named("invert")
def invert(x, dtype=None, *, mask=None, **kw):
    no_extra_kw("nl.invert", kw)
    api = "nl.invert"
    if not isinstance(x, NkiTensor):
        raise invalid(api, "operand must be a tile")
    _check_on_chip(api, x)
    if x.dtype.is_float:
        raise fail("C2N3016", api=api, detail=f"bitwise operation on {x.dtype.name}")
    odt = dt.as_dtype(dtype) if dtype is not None else x.dtype
    out = allocate(x.shape, odt, sbuf, api=api)
    out.assign(np.invert(x.values(api)), where=_where(mask, x.shape), api=api)
    record("vector", "tensor_scalar", (out, x), extra=("invert",))
    return out


bitwise_not = invert


@_named("bypass")
def bypass(x, *a, **kw):  # pragma: no cover - op constant
    no_extra_kw("nl.bypass", kw)
    return x


identity = bypass


@_named("average")
def average(x, *a, **kw):
    """Op constant of the reductions (``nisa.tensor_reduce``, ``tensor_partition_reduce``:
    the mean); not a function."""
    raise unsupported("nl.average(...)", "an op constant for reductions, not a function; nl.mean")


@_named("prelu")
def prelu(x, *a, **kw):
    """Op constant of ``nisa.activate2`` (``x if x >= 0 else relu_param * x``); not a function."""
    raise unsupported("nl.prelu(...)", "an op constant for nisa.activate2, not a function")


def where(condition, x, y, dtype=None, *, mask=None, **kw) -> NkiTensor:
    no_extra_kw("nl.where", kw)
    api = "nl.where"
    _check_on_chip(api, condition, x, y)
    shape = _result_shape(api, (condition, x, y))
    odt = _out_dtype(api, (x, y), dtype)
    c = _vals(condition, shape) != 0
    res = np.where(c, _vals(x, shape), _vals(y, shape))
    out = _new_tile(shape, odt, api)
    out.assign(np.broadcast_to(res, shape), where=_where(mask, shape), api=api)
    ins = tuple(t for t in (condition, x, y) if isinstance(t, NkiTensor))
    record("vector", "tensor_copy_predicated", (out, *ins))
    return out


def dropout(x, rate, dtype=None, *, mask=None, **kw) -> NkiTensor:
    no_extra_kw("nl.dropout", kw)
    api = "nl.dropout"
    _check_on_chip(api, x)
    odt = dt.as_dtype(dtype) if dtype is not None else x.dtype
    v = x.f32(api)
    r = _vals(rate, (x.shape[0], 1)) if isinstance(rate, NkiTensor) else np.float32(rate)
    keep = st.current().rng.random(x.shape, dtype=np.float32) >= r
    out = _new_tile(x.shape, odt, api)
    out.assign(np.where(keep, v, np.float32(0)), where=_where(mask, x.shape), api=api)
    record("vector", "dropout", (out, x))
    return out


# --------------------------------------------------------------------------- reductions


def _reduce_axes(api: str, x: NkiTensor, axis) -> tuple[int, ...]:
    if axis is None:
        raise invalid(api, "axis is required (free axes only)")
    if isinstance(axis, (int, np.integer)):
        axis = (int(axis),)
    axes = tuple(sorted({int(a) + (x.ndim if int(a) < 0 else 0) for a in axis}))
    for a in axes:
        if not 0 <= a < x.ndim:
            raise invalid(api, f"axis {a} out of range for a {x.ndim}-D tile")
        if x.pdim is not None and a == x.pdim:
            raise fail("C2N3015", api=api, axis=a)
    return axes


def _reduce_shape(x: NkiTensor, axes, keepdims: bool) -> tuple[int, ...]:
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(x.shape))
    shp = tuple(n for i, n in enumerate(x.shape) if i not in axes)
    if x.on_chip and len(shp) < 2:
        # on-chip results never drop below 2-D (reference 6.5)
        shp = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
        while len(shp) > 2 and shp[-1] == 1:
            shp = shp[:-1]
    return shp


def _reduce(name: str, x, axis, dtype=None, keepdims=False, mask=None, *, api=None):
    api = api or f"nl.{name}"
    if not isinstance(x, NkiTensor):
        raise invalid(api, "operand must be a tile")
    _check_on_chip(api, x)
    axes = _reduce_axes(api, x, axis)
    odt = (
        dt.as_dtype(dtype)
        if dtype is not None
        else (dt.bool_ if name == "all" and st.current().legacy else x.dtype)
    )
    v = x.f32(api)
    count = math.prod(x.shape[a] for a in axes)
    out_where = None
    if mask is not None:
        mk = _where(mask, x.shape)
        if mk is None:
            mk = np.ones(x.shape, bool)
        ident = {
            "sum": 0.0,
            "mean": 0.0,
            "var": 0.0,
            "max": -np.inf,
            "min": np.inf,
            "prod": 1.0,
            "all": 1.0,
        }[name]
        v = np.where(mk, v, np.float32(ident))
        cnt = mk.sum(axis=axes, keepdims=True).astype(np.float32)
        out_where = mk.any(axis=axes, keepdims=True)
    else:
        cnt = np.float32(count)
    with np.errstate(invalid="ignore", divide="ignore"):
        if name == "sum":
            r = v.sum(axis=axes, keepdims=True, dtype=np.float32)
        elif name == "max":
            r = v.max(axis=axes, keepdims=True)
        elif name == "min":
            r = v.min(axis=axes, keepdims=True)
        elif name == "prod":
            r = v.prod(axis=axes, keepdims=True, dtype=np.float32)
        elif name == "mean":
            r = v.sum(axis=axes, keepdims=True, dtype=np.float32) / cnt
        elif name == "var":
            m = v.sum(axis=axes, keepdims=True, dtype=np.float32) / cnt
            d = v - m
            if mask is not None:
                d = np.where(_where(mask, x.shape), d, 0)
            r = (d * d).sum(axis=axes, keepdims=True, dtype=np.float32) / cnt
            keepdims = True
        elif name == "all":
            r = (v != 0).all(axis=axes, keepdims=True).astype(np.float32)
        else:  # pragma: no cover
            raise unsupported(api)
    shape = _reduce_shape(x, axes, keepdims)
    out = _new_tile(shape, odt, api)
    ow = None if out_where is None else out_where.reshape(shape)
    out.assign(r.reshape(shape), where=ow, api=api)
    record("vector", "tensor_reduce", (out, x), extra=(name, x.dtype.name, odt.name))
    return out


@_named("add")
def sum(x, axis, dtype=None, keepdims=False, *, mask=None, **kw):  # noqa: A001
    no_extra_kw("nl.sum", kw)
    return _reduce("sum", x, axis, dtype, keepdims, mask)


@_named("maximum")
def max(x, axis, dtype=None, keepdims=False, *, mask=None, **kw):  # noqa: A001
    no_extra_kw("nl.max", kw)
    return _reduce("max", x, axis, dtype, keepdims, mask)


@_named("minimum")
def min(x, axis, dtype=None, keepdims=False, *, mask=None, **kw):  # noqa: A001
    no_extra_kw("nl.min", kw)
    return _reduce("min", x, axis, dtype, keepdims, mask)


@_named("multiply")
def prod(x, axis, dtype=None, keepdims=False, *, mask=None, **kw):
    no_extra_kw("nl.prod", kw)
    return _reduce("prod", x, axis, dtype, keepdims, mask)


@_named("average")
def mean(x, axis, dtype=None, keepdims=False, *, mask=None, **kw):
    no_extra_kw("nl.mean", kw)
    return _reduce("mean", x, axis, dtype, keepdims, mask)


def var(x, axis, dtype=None, keepdims=False, *, mask=None, **kw):
    no_extra_kw("nl.var", kw)
    return _reduce("var", x, axis, dtype, keepdims, mask)


def all(x, axis, dtype=None, *, mask=None, **kw):  # noqa: A001
    no_extra_kw("nl.all", kw)
    return _reduce("all", x, axis, dtype, False, mask)


def softmax(x, axis=-1, dtype=None, compute_dtype=None, *, mask=None, **kw) -> NkiTensor:
    no_extra_kw("nl.softmax", kw)
    api = "nl.softmax"
    if not isinstance(x, NkiTensor):
        raise invalid(api, "operand must be a tile")
    _check_on_chip(api, x)
    axes = _reduce_axes(api, x, axis)
    v = x.f32(api)
    m = v.max(axis=axes, keepdims=True)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(v - m)
        r = e / e.sum(axis=axes, keepdims=True, dtype=np.float32)
    odt = dt.as_dtype(dtype) if dtype is not None else x.dtype
    out = _new_tile(x.shape, odt, api)
    out.assign(r, where=_where(mask, x.shape), api=api)
    record("vector", "tensor_reduce", (out, x), extra=("max", x.dtype.name, "float32"))
    record("scalar", "activation", (out, x), extra=("exp", 0))
    record("vector", "reciprocal", (out, x), free=1)
    record("vector", "tensor_scalar", (out, x), extra=("multiply", None, x.dtype.name, odt.name))
    return out


def rms_norm(
    x, w, axis, n, epsilon=1e-6, dtype=None, compute_dtype=None, *, mask=None, **kw
) -> NkiTensor:
    no_extra_kw("nl.rms_norm", kw)
    api = "nl.rms_norm"
    if not isinstance(x, NkiTensor):
        raise invalid(api, "operand must be a tile")
    _check_on_chip(api, x, w)
    axes = _reduce_axes(api, x, axis)
    v = x.f32(api)
    ss = (v * v).sum(axis=axes, keepdims=True, dtype=np.float32)
    r = v / np.sqrt(ss / np.float32(n) + np.float32(epsilon))
    wv = w.f32(api) if isinstance(w, NkiTensor) else np.float32(w)
    try:
        r = r * wv
    except ValueError:
        raise fail(
            "C2N3026",
            api=api,
            a=x.shape,
            b=getattr(w, "shape", ()),
            detail="weight does not broadcast",
        ) from None
    odt = dt.as_dtype(dtype) if dtype is not None else x.dtype
    out = _new_tile(x.shape, odt, api)
    out.assign(r, where=_where(mask, x.shape), api=api)
    record("scalar", "activation", (out, x), extra=("square", 1))
    record("vector", "tensor_scalar", (out, x), extra=("multiply", "add", x.dtype.name, "float32"))
    record("vector", "tensor_tensor", (out, x, x), extra=("multiply", False, False))
    return out


# --------------------------------------------------------------------------- control flow, SPMD


def affine_range(start, stop=None, step=1, *args, **kw):
    no_extra_kw("nl.affine_range", kw)
    r = range(start, stop, step) if stop is not None else range(start)
    s = st.current()
    if s.legacy:
        return _affine_iter(r, s)
    return r


_AFFINE_SERIALS = itertools.count(1)


def _affine_iter(r: range, s):
    """Legacy affine_range: iterations must not write the same output location (C2N3030).

    ``entry`` is [serial, iteration]: each loop run gets a new, larger serial (see
    ``NkiTensor._check_affine``)."""
    entry = [next(_AFFINE_SERIALS), -1]
    s.affine.append(entry)
    try:
        for i in r:
            entry[1] = i
            yield i
    finally:
        if entry in s.affine:
            s.affine.remove(entry)


def _plain_range(start, stop=None, step=1, *args, **kw):
    no_extra_kw("nl.sequential_range", kw)
    return range(start, stop, step) if stop is not None else range(start)


sequential_range = _plain_range
static_range = _plain_range


def dynamic_range(start, stop=None, step=1, **kw):
    """A loop run on the device with runtime bounds: integers or registers (``step`` is a
    compile-time positive integer)."""
    api = "nl.dynamic_range"
    no_extra_kw(api, kw)
    lo, hi = (0, start) if stop is None else (start, stop)
    return range(
        _reg.loop_bound(lo, api, "start"),
        _reg.loop_bound(hi, api, "stop"),
        _reg.loop_step(step, api),
    )


def fori_loop(lower, upper, body_fun, step=1, **kw) -> None:
    """``for i in range(lower, upper, step): body_fun(i)`` with ``i`` a register (by value)."""
    api = "nl.fori_loop"
    no_extra_kw(api, kw)
    lo = _reg.loop_bound(lower, api, "lower")
    hi = _reg.loop_bound(upper, api, "upper")
    for i in range(lo, hi, _reg.loop_step(step, api)):
        body_fun(_reg.VirtualRegister(i))


def while_loop(init, body_fun, **kw) -> None:
    """``r = init; while r != 0: r = body_fun(r)``: ``r`` a register, passed by value, and the
    body returns the register of the next condition."""
    api = "nl.while_loop"
    no_extra_kw(api, kw)
    r = init
    while True:
        if not isinstance(r, _reg.VirtualRegister):
            what = "init" if r is init else "the body's return value"
            raise invalid(api, f"{what} must be a register, got {type(r).__name__}")
        if r.value == 0:
            return
        r = body_fun(_reg.VirtualRegister(r.value))


def program_id(axis=0) -> int:
    s = st.current()
    axis = int(axis)
    if not s.legacy:
        if axis != 0:
            raise invalid("nl.program_id", "the current API accepts only axis 0")
        return s.program_id[0] if s.program_id else 0
    if not s.grid:
        return 0
    if not 0 <= axis < len(s.grid):
        raise invalid("nl.program_id", f"axis {axis} outside the {len(s.grid)}-D launch grid")
    return s.program_id[axis]


def num_programs(axes=None) -> int:
    s = st.current()
    if not s.legacy:
        return s.lnc
    if not s.grid:
        return 1
    if axes is None:
        return math.prod(s.grid)
    if isinstance(axes, (int, np.integer)):
        return s.grid[int(axes)]
    return math.prod(s.grid[int(a)] for a in axes)


def program_ndim() -> int:
    s = st.current()
    if not s.legacy:
        return 1 if s.lnc > 1 else 0
    return len(s.grid)


def device_print(prefix, x, **kw) -> None:
    no_extra_kw("nl.device_print", kw)
    if isinstance(x, NkiTensor):
        print(prefix, x.values("device_print"))
    else:
        print(prefix, x)


class NKIObject:
    """Base class of dataclass-like compile-time kernel arguments (new API)."""


class no_reorder:  # noqa: N801
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def is_hbm(buffer) -> bool:
    """Whether ``buffer`` (a memory region, or a tensor's) is any HBM."""
    b = buffer.buffer if isinstance(buffer, NkiTensor) else buffer
    return b in (hbm, private_hbm, shared_hbm)


def is_sbuf(buffer) -> bool:
    return (buffer.buffer if isinstance(buffer, NkiTensor) else buffer) is sbuf


def is_psum(buffer) -> bool:
    return (buffer.buffer if isinstance(buffer, NkiTensor) else buffer) is psum


def is_on_chip(buffer) -> bool:
    return is_sbuf(buffer) or is_psum(buffer)


class _TileSize:
    """``nl.tile_size``: hardware tile constants for the current target (reference 3.2)."""

    pmax = 128
    psum_fmax = 512
    psum_bank_fmax = 512
    psum_bank_fmax_bytes = 2048
    psum_num_banks = 8
    gemm_stationary_fmax = 128
    bn_stats_fmax = 512
    psum_min_align = 4
    sbuf_min_align = 1

    @property
    def gemm_moving_fmax(self) -> int:
        return st.current().target.moving_fmax_f32

    @property
    def total_available_sbuf_size(self) -> int:
        return st.current().target.sbuf_bytes

    sbuf_fmax_bytes = total_available_sbuf_size

    @property
    def sbuf_fmax(self) -> int:
        return st.current().target.sbuf_bytes // 4

    @property
    def sbuf_size_bytes(self) -> int:
        return st.current().target.sbuf_total_per_partition * 128


tile_size = _TileSize()


# --------------------------------------------------------------------------- operators on tiles


def _setitem(t: NkiTensor, key, value) -> None:
    if value is t and key is Ellipsis and t.index is None:
        return  # ``t[...] = t``: the store of an instruction that wrote ``t`` (fastpath.Direct)
    api = "tensor[...] ="
    view = t[key]
    if type(value) is _loop_reduce.LoopReduction:
        value = value.into(view)
    if isinstance(value, NkiTensor):
        if _same_view(view, value):
            return  # the store-back of ``t[k] op= v``: the in-place op wrote it already
        if not st.current().legacy and (not view.on_chip and value.on_chip):
            raise invalid(api, "use nisa.dma_copy / nl.store to write HBM")
        if _copy_tile(view, value, api):
            return
        vals = value.values(api) if value.dtype == view.dtype else value.f32(api)
        if vals.shape != view.shape and vals.size != view.size:
            try:
                np.broadcast_shapes(vals.shape, view.shape)
            except ValueError:
                raise fail(
                    "C2N3014",
                    api=api,
                    detail=f"cannot assign {value.describe()} to a view of shape {view.shape}",
                ) from None
            if np.broadcast_shapes(vals.shape, view.shape) != tuple(view.shape):
                raise fail(
                    "C2N3014",
                    api=api,
                    detail=f"destination {view.shape} is smaller than the source {value.shape}",
                )
        where = value.produced_view()
        if where is not None:
            if not where.any():
                return  # a masked instruction that wrote nothing: ``t`` keeps its contents
            if where.shape != view.shape and where.size == view.size:
                where = where.reshape(view.shape)
        view.assign(vals, where=where, api=api)
        if view.on_chip and value.on_chip:
            if _retarget(view, value):
                return
            record("vector", "tensor_copy", (view, value))
        else:
            record("dma", "dma_copy", (view, value), dma_bytes=value.size * value.itemsize)
    else:
        view.assign(
            np.full(
                view.shape,
                _scalar_value(value),
                dtype=np.float32 if view.dtype.is_float else np.float64,
            ),
            api=api,
        )
        record("vector", "memset", (view,))


def _same_view(a: NkiTensor, b: NkiTensor) -> bool:
    """Whether ``b`` views exactly the elements of ``a``, in the same layout and dtype."""
    if a.storage is not b.storage or a.index is not None or b.index is not None:
        return False
    x, y = a.a, b.a
    return (
        x is not None
        and y is not None
        and a.dtype == b.dtype
        and x.shape == y.shape
        and x.strides == y.strides
        and a._byte_offset() == b._byte_offset()
    )


def _zero_unwritten(t: NkiTensor, api: str) -> None:
    """Start a PSUM accumulation at zero in the elements of ``t`` that nothing wrote yet: a
    block of a multi-block PSUM tensor accumulates from zero like a fresh tile, though other
    blocks of its tensor were written before (they still hold the never-written canary)."""
    cur = t.f32(api)
    holes = dt.canary_mask(cur)
    if holes.any():
        t.assign(np.where(holes, np.float32(0), cur), api=api)


def _produced(t: NkiTensor, other) -> np.ndarray | None:
    """Per element of ``t``, whether the masked legacy instruction that made ``other`` produced
    the value ``t op= other`` combines there; ``None``: every element (or no mask to honour)."""
    if not isinstance(other, NkiTensor):
        return None
    where = other.produced_view()
    if where is None or where.all():
        return None
    if where.shape != t.shape:
        if where.size == t.size:
            return where.reshape(t.shape)
        try:
            return np.broadcast_to(where, t.shape)
        except ValueError:
            return None  # shapes that do not combine: the general path reports it
    return where


def _inplace(t: NkiTensor, name: str, other) -> None:
    api = f"tensor {name}="
    if (
        isinstance(other, NkiTensor)
        and t.buffer is psum
        and other.buffer is psum
        and name == "add"
        and other.storage.mm_written is not None
    ):
        # PSUM accumulation of a matmul result; of a masked one (``t += nisa.nc_matmul(...,
        # mask=m)``), one masked instruction: ``t`` changes only where ``m`` holds and keeps its
        # contents elsewhere (reference 4.2), never reading what the mask left unwritten
        where = _produced(t, other)
        if where is None or where.any():
            _accumulate(t, other, api, where)
        return
    # ``t op= nl.f(..., mask=m)`` on any buffer: the masked instruction produced its result only
    # where ``m`` holds, so ``t`` changes there and keeps its contents elsewhere (reference 4.2)
    where = _produced(t, other)
    if where is not None and not where.any():
        return
    shape = t.shape
    a = t.f32(api)
    b = _vals(other, shape)
    res = ops.apply_binary(name, a, b, api)
    t.assign(np.broadcast_to(res, shape), where=where, api=api)
    ins = (t, other) if isinstance(other, NkiTensor) else (t,)
    record(
        "vector",
        "tensor_tensor" if len(ins) > 1 else "tensor_scalar",
        (t, *ins),
        extra=(name, False, False),
    )


def _accumulate(t: NkiTensor, other: NkiTensor, api: str, where: np.ndarray | None) -> None:
    """PSUM accumulation of a matmul result: the TensorE accumulates in place (fp32), only
    where ``where`` holds (``None``: everywhere)."""
    if other.shape != t.shape and other.size != t.size:
        raise fail("C2N3014", api=api, detail=f"{other.describe()} into {t.describe()}")
    zp = st.current().zero_psum
    if zp:
        zp.pop(t.storage.uid, None)  # the zero fill folds into the first matmul
    pend = other.storage.mm_pending
    if (
        where is None
        and pend is not None
        and pend[2] == "set"
        and other.shape == t.shape
        and pend[1].shape == other.shape
        and other.storage.flat.size == other.size
    ):
        # the matmul that made ``other`` is still deferred: accumulate its operands into t
        # (onto a tile never written, the first one writes, as the eager path below does)
        acc = None if t.storage.fresh else True
        if acc and t.size != t.storage.flat.size:
            _zero_unwritten(t, api)
        for a2, b2 in zip(pend[3], pend[4]):
            _isa._matmul_write(api, t, a2, b2, acc)
        return
    if t.storage.fresh:
        t.assign(other.f32(api), where=where, api=api)
        return
    cur = t.f32(api)
    add = other.f32(api).reshape(t.shape)
    holes = dt.canary_mask(cur) if t.size != t.storage.flat.size else None
    if holes is not None and holes.any():  # a block nothing wrote yet starts at zero
        t.assign(np.where(holes, add, cur + add), where=where, api=api)
    else:
        t.assign(cur + add, where=where, api=api)


# --------------------------------------------------------------------------- legacy-only helpers


def arange(start, stop=None, step=1, **kw) -> IndexExpr:
    no_extra_kw("nl.arange", kw)
    if stop is None:
        start, stop = 0, start
    return IndexExpr.range(int(start), int(stop), int(step))


class _MGrid:
    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        n = len(key)
        out = []
        for i, k in enumerate(key):
            if not isinstance(k, slice):
                raise invalid("nl.mgrid", "use slices, e.g. nl.mgrid[0:128, 0:512]")
            r = np.arange(k.start or 0, k.stop, k.step or 1)
            shp = [1] * n
            shp[i] = r.size
            st_ = [0] * n
            st_[i] = (k.step or 1) if r.size > 1 else 0
            out.append(IndexExpr(r.reshape(shp), (int(k.start or 0), tuple(st_))))
        return _Grid(out)


class _Grid(tuple):
    def __new__(cls, items):
        return super().__new__(cls, items)

    @property
    def p(self):
        return self[0]

    @property
    def x(self):
        return self[1]

    @property
    def y(self):
        return self[2]

    @property
    def z(self):
        return self[3]


mgrid = _MGrid()


def static_cast(arr, dtype):
    """Host helper (legacy): cast a NumPy array with NKI rounding."""
    d = dt.as_dtype(dtype)
    return dt.convert(np.asarray(arr), d)


def loop_reduce(x, op, loop_indices, dtype=None, *, mask=None, **kw):
    """Legacy: reduce ``x`` into the assignment's destination (see ``loop_reduce`` module)."""
    no_extra_kw("nl.loop_reduce", kw)
    return _loop_reduce.loop_reduce(x, op, loop_indices, dtype, mask=mask)


def all_reduce(*a, **kw):
    no_extra_kw("nl.all_reduce", kw)
    raise unsupported("nl.all_reduce", "cross-program collectives")


def atomic_rmw(dst, value, op, *, mask=None, **kw) -> None:
    no_extra_kw("nl.atomic_rmw", kw)
    api = "nl.atomic_rmw"
    name = ops.op_name(op, api)
    if name != "add":
        raise unsupported(f"{api}(op={name})", "only add")
    _isa.dma_compute(dst, [dst, value], add, unique_indices=False)


LEGACY_ONLY = {
    "arange",
    "mgrid",
    "par_dim",
    "static_cast",
    "spmd_dim",
    "nc",
    "loop_reduce",
    "all_reduce",
    "atomic_rmw",
}
