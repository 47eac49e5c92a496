"""Fast paths of ``nl`` tile operations for their common cases (both API generations).

Each function here does what the general path in ``language`` does for one common case --
the same values, the same diagnostics in the same order, the same trace record -- without
its conversions, shape checks and dtype promotion, or returns ``None`` (``False``) to send the
call down the general path.  ``tests/nkisim/test_legacy_direct_writes.py`` and
``test_matmul_operand_paths.py`` run both paths on the same inputs and compare them value for
value, record for record and live range for live range.

The legacy API pays for these operations on every instruction: ``t[...] = nl.op(...)`` makes a
result tile and copies it, where the current API writes the destination directly.  When the
port's statement is exactly ``t[...] = <the call>`` (read from its bytecode, once per call site)
and ``t`` is an SBUF tile of the result's shape and dtype, the instruction writes ``t`` itself
and returns it (:func:`direct_target`): the trace, the values and the SBUF accounting are those
of the result tile that is copied and dropped, as the compiler writes ``t`` directly.  Likewise
``t += nl.matmul(...)`` on a PSUM tile accumulates into ``t`` (:func:`accumulate_target`).
"""

from __future__ import annotations

import dis
import sys

from cuda2nki.nkisim import dtypes as dt
from cuda2nki.nkisim import state as st
from cuda2nki.nkisim.engine import record
from cuda2nki.nkisim.errors import _is_internal, code_entry, new_site
from cuda2nki.nkisim.isa import (
    _F32_NAMES2,
    _F32_NAMES3,
    _TF32,
    _UFUNCS,
    _dma_move,
    _matmul_write,
    _operand,
    _write_f32,
)
from cuda2nki.nkisim.tensor import (
    _UIDS,
    ACCUMULATED,
    NkiTensor,
    allocate,
    psum,
    sbuf,
    shared_hbm,
)

_F32 = dt.float32
_ON_CHIP = (sbuf, psum)
_NUMBER = (int, float)  # Python numbers (not bool: a bool operand is an integer in the legacy API)


_getframe = sys._getframe


#: An instruction result written straight into the port's ``t`` of ``t[...] = <call>``:
#: ``(t, first, nbytes, site)`` with ``first`` the trace length when the result tile would have
#: been allocated, ``nbytes`` its bytes per partition and ``site`` its allocation site (a plain
#: tuple: one is made per instruction).
Direct = tuple

#: id(code) -> (code, simulator code?, {f_lasti: (0 locals | 1 globals, name, site, how) or
#: None}) for the port's call sites of instructions, ``how`` "set" for ``name[...] = <call>``
#: and "add" for ``name += <call>`` (see ``direct_target``, ``accumulate_target``)
_STORES: dict[int, tuple] = {}
_LOCAL_LOADS = ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF", "LOAD_NAME", "LOAD_CLASSDEREF")
_LOCAL_STORES = ("STORE_FAST", "STORE_DEREF", "STORE_NAME")


def _site_spec(f, code, lasti: int) -> tuple[int, str, tuple[str, int], str] | None:
    """``store_spec`` or ``iadd_spec`` of the call, with its site (file, line)."""
    spec = store_spec(code, lasti)
    how = "set"
    if spec is None:
        spec = iadd_spec(code, lasti)
        how = "add"
        if spec is None:
            return None
    cent = code_entry(code)
    site = cent[3].get(lasti)
    if site is None:
        site = new_site(f, cent)
    return (spec[0], spec[1], site, how)


def _after_call(code, lasti: int, n: int) -> list | None:
    """The ``n`` instructions after the call at offset ``lasti`` (``None``: not a call)."""
    ins = list(dis.get_instructions(code))
    k = -1
    for i, x in enumerate(ins):
        if x.offset > lasti:
            break
        k = i
    if k < 0 or not ins[k].opname.startswith("CALL"):
        return None
    nxt = ins[k + 1 : k + 1 + n]
    return nxt if len(nxt) == n else None


def store_spec(code, lasti: int) -> tuple[int, str] | None:
    """Where the port's statement puts the value of the call at offset ``lasti``: ``(0, name)``
    (a local) or ``(1, name)`` (a global) when it is ``name[...] = <call>``, else ``None``."""
    nxt = _after_call(code, lasti, 3)
    if (
        nxt is None
        or nxt[1].opname != "LOAD_CONST"
        or nxt[1].argval is not Ellipsis
        or nxt[2].opname != "STORE_SUBSCR"
        or not isinstance(nxt[0].argval, str)
    ):
        return None
    if nxt[0].opname in _LOCAL_LOADS:
        return (0, nxt[0].argval)
    if nxt[0].opname == "LOAD_GLOBAL":
        return (1, nxt[0].argval)
    return None


def iadd_spec(code, lasti: int) -> tuple[int, str] | None:
    """``(0, name)`` / ``(1, name)`` when the port's statement is ``name += <call>`` (a local or
    a global name: not an attribute or a subscript), else ``None``."""
    nxt = _after_call(code, lasti, 2)
    if nxt is None or not isinstance(nxt[1].argval, str):
        return None
    op = nxt[0]
    if not ((op.opname == "BINARY_OP" and op.argrepr == "+=") or op.opname == "INPLACE_ADD"):
        return None
    if nxt[1].opname in _LOCAL_STORES:
        return (0, nxt[1].argval)
    if nxt[1].opname == "STORE_GLOBAL":
        return (1, nxt[1].argval)
    return None


def _port_target(depth: int, how: str):
    """``(frame's value of the statement's name, site)`` when the port's call ``depth`` frames
    above the caller is made by a statement of kind ``how``; else ``None``."""
    try:
        f = _getframe(depth + 2)
    except ValueError:
        return None
    code = f.f_code
    ent = _STORES.get(id(code))
    if ent is None or ent[0] is not code:
        ent = _STORES[id(code)] = (code, _is_internal(code.co_filename), {})
    if ent[1]:
        return None
    lasti = f.f_lasti
    specs = ent[2]
    spec = specs.get(lasti, 0)
    if spec == 0:
        spec = specs[lasti] = _site_spec(f, code, lasti)
    if spec is None or spec[3] != how:
        return None
    return (f.f_globals if spec[0] else f.f_locals).get(spec[1]), spec[2]


def direct_target(shape: tuple, ndt: dt.NkiDType, depth: int) -> Direct | None:
    """The legacy ``t`` of the port's ``t[...] = <call>`` when the instruction may write it in
    place of a new SBUF result tile of ``shape`` and ``ndt``; ``None``: allocate the tile.

    ``depth``: the frames from the caller up to the port's frame that made the call (the
    public function returns what the caller makes, unchanged).  ``t`` must be a whole SBUF
    tile of that shape and dtype (as the result tile: no other start partition or layout), and
    the result tile must fit without a capacity check.  Not while the run tracks writers: there
    the result tile is the instruction's recorded destination.
    """
    s = st._STACK[-1]
    if not s.legacy or s.mem_dirty or s.writers is not None:
        return None
    # _port_target(depth, "set"), inlined (it runs once per legacy instruction)
    try:
        f = _getframe(depth + 1)
    except ValueError:
        return None
    code = f.f_code
    ent = _STORES.get(id(code))
    if ent is None or ent[0] is not code:
        ent = _STORES[id(code)] = (code, _is_internal(code.co_filename), {})
    if ent[1]:
        return None
    lasti = f.f_lasti
    specs = ent[2]
    spec = specs.get(lasti, 0)
    if spec == 0:
        spec = specs[lasti] = _site_spec(f, code, lasti)
    if spec is None or spec[3] != "set":
        return None
    t = (f.f_globals if spec[0] else f.f_locals).get(spec[1])
    if (
        type(t) is not NkiTensor
        or t.shape != shape
        or t.dtype is not ndt
        or t.index is not None
        or t.pdim != 0
    ):
        return None
    stg = t.storage
    size = stg.flat.size
    if stg.buffer is not sbuf or stg.shape != shape or t._a.size != size:
        return None
    p = shape[0]
    nbytes = size // p * ndt.itemsize if p else 0
    if s.sbuf_now + nbytes > s.target.sbuf_bytes:
        return None
    return (t, len(s.trace), nbytes, spec[2])


def direct_done(d: Direct) -> NkiTensor:
    """After the instruction wrote ``d[0]``: the live range its result tile would have had
    (allocation to last use), for the SBUF accounting; returns the tile."""
    t, first = d[0], d[1]
    last = t.storage.use[0]
    if last >= first:
        st._STACK[-1].ranges_sbuf.append((first, last, d[2], d[3]))
    return t


def _plain(t: NkiTensor) -> bool:
    """An fp32 strided view of an on-chip tile (no gather index)."""
    return t.dtype is _F32 and t.index is None and t.storage.buffer in _ON_CHIP


def binary_f32(name: str, x: object, y: object, frames: int = 3) -> NkiTensor | None:
    """``nl.<name>(x, y)`` (no ``dtype=``, ``mask=``) for an arithmetic ``name`` on two fp32
    on-chip tiles of one shape, or an fp32 tile and a Python number, on either side.

    ``frames``: the simulator frames above the allocation and the record, this one included
    (3 when called by ``language._binary``, itself called by the public function; 2 when called
    by the public function).  ``None``: take the general path.
    """
    ufunc = _UFUNCS.get(name)
    if ufunc is None:
        return None
    api = f"nl.{name}"
    tx, ty = type(x) is NkiTensor, type(y) is NkiTensor
    if tx and ty:
        if not (_plain(x) and _plain(y)) or x.shape != y.shape:  # type: ignore[union-attr]
            return None
        a = _operand(x, x.storage, "read")  # type: ignore[union-attr, arg-type]
        b = _operand(y, y.storage, "read")  # type: ignore[union-attr, arg-type]
        ins: tuple = (x, y)
        op = "tensor_tensor"
    elif tx and type(y) in _NUMBER:
        if not _plain(x):  # type: ignore[arg-type]
            return None
        a = _operand(x, x.storage, "read")  # type: ignore[union-attr, arg-type]
        b = dt.F32.type(y)
        ins = (x,)
        op = "tensor_scalar"
    elif ty and type(x) in _NUMBER:
        if not _plain(y):  # type: ignore[arg-type]
            return None
        a = dt.F32.type(x)
        b = _operand(y, y.storage, "read")  # type: ignore[union-attr, arg-type]
        ins = (y,)
        op = "tensor_scalar"
    else:
        return None
    shape = ins[0].shape
    d = direct_target(shape, _F32, frames)
    out = allocate(shape, _F32, sbuf, api=api, sim_callers=frames) if d is None else d[0]
    _write_f32(out, ufunc(a, b), api)
    b0, b1 = ins[0].storage.buffer, ins[-1].storage.buffer
    extra = (name, False, b0 is psum or b1 is psum)
    if ins[0].pdim == 0 and len(shape) == 2:
        # record's own reading of the operands' shapes, dtypes and buffers, done here: all
        # are fp32 tiles of ``shape`` with the partition axis first
        ob = out.storage.buffer.name
        if len(ins) == 2:
            meta = ((shape, shape, shape), _F32_NAMES3, (ob, b0.name, b1.name))
        else:
            meta = ((shape, shape), _F32_NAMES2, (ob, b0.name))
        record("vector", op, (out, *ins), extra, 0, shape[0], shape[1], frames, *meta)
    else:
        record("vector", op, (out, *ins), extra=extra, sim_frames=frames)
    return out if d is None else direct_done(d)


def copy_plain(x: NkiTensor) -> NkiTensor | None:
    """``nl.copy(x)`` (no ``dtype=``, ``mask=``) of an on-chip strided view, any dtype; the
    caller is the public ``nl.copy``.  ``None``: take the general path."""
    if type(x) is not NkiTensor or x.index is not None or x.storage.buffer not in _ON_CHIP:
        return None
    api = "nl.copy"
    vals = _operand(x, x.storage, api)
    d = direct_target(x.shape, x.dtype, 2)
    out = allocate(x.shape, x.dtype, sbuf, api=api, sim_callers=2) if d is None else d[0]
    if x.dtype is _F32:
        _write_f32(out, vals, api)
    else:
        out.assign(vals, api=api)
    record("vector", "tensor_copy", (out, x), sim_frames=2)
    return out if d is None else direct_done(d)


def whole_copy(view: NkiTensor, value: NkiTensor, api: str) -> bool:
    """``view[...] = value`` between on-chip tiles of one shape and dtype (``language._copy_tile``
    without its helper calls): legacy ``t[...] = nl.op(...)``.  False: take the general path."""
    vs, ss = view.storage, value.storage
    if (
        value.dtype is not view.dtype
        or value.shape != view.shape
        or vs.buffer not in _ON_CHIP
        or ss.buffer not in _ON_CHIP
        or value.index is not None
        or view.index is not None
        or ss.produced is not None
    ):
        return False
    vals = _operand(value, ss, api)
    out = view._a
    if view.fills_fresh(out):
        vs.fresh = False
    else:
        out = view.out_view(raw=True)
    if out is None:
        view.assign(vals, api=api)
    elif out is not vals:
        out[...] = vals  # NumPy copes with overlapping views
    if not _retarget(view, value):
        record("vector", "tensor_copy", (view, value), sim_frames=3)
    return True


def _retarget(view: NkiTensor, value: NkiTensor) -> bool:
    """``language._retarget``: in the legacy API, the instruction just recorded that produced
    all of ``value`` writes ``view`` instead (no copy is recorded)."""
    s = st._STACK[-1]
    stg = value.storage
    use = stg.use
    if not s.legacy or use is None:
        return False
    trace = s.trace
    last = len(trace) - 1
    if (
        last < 0
        or use[0] != last
        or s.last_dst != stg.uid
        or value.size != stg.flat.size
        or value.size != view.size
        or value.dtype != view.dtype
    ):
        return False
    u = view.storage.use
    if u is not None:
        u[0] = last
    return True


def load_plain(src: NkiTensor, api: str) -> NkiTensor | None:
    """Legacy ``nl.load(src)`` (no ``dtype=``; no mask, or one that keeps every element) of a
    strided HBM view: the current API's DMA into a new tile (a load from a caller's array stays
    deferred until the tile is read, ``Storage.lazy``), with the general path's record.  The
    caller is the public ``nl.load``.  ``None``: take the general path."""
    ss = src.storage
    d = src.dtype
    if src.index is not None or ss.buffer.on_chip or d is _TF32 or src._a is None:
        return None
    out = allocate(src.shape, d, sbuf, api=api, sim_callers=2)
    _dma_move(out, src, d, ss)
    b = src._boff
    if b is None:
        b = src._byte_offset()
    record(
        "dma",
        "dma_copy",
        (out, src),
        extra=(("src", (ss.name or ss.uid, b // src._a.itemsize, src.shape)),),
        dma_bytes=src.size * src.itemsize,
        partitions=out.partitions(),
        free=out.free_size(),
        sim_frames=2,
    )
    return out


def store_checked(dst: NkiTensor, value: object) -> bool:
    """Whether legacy ``nl.store(dst, value)`` (no mask, or one that keeps every element) may
    be the current API's ``dma_copy`` (``isa._dma_fast``): an SBUF tile into a strided HBM view
    of its shape and dtype that is not a kernel argument.  Then the legacy ``affine_range``
    check of the general path (``NkiTensor.assign``) is made here; it raises before the write."""
    if type(value) is not NkiTensor:
        return False
    ds = dst.storage
    d = dst.dtype
    if (
        dst.index is not None
        or value.index is not None
        or value.storage.buffer is not sbuf
        or value.dtype is not d
        or value.shape != dst.shape
        or ds.is_input
        or d is _TF32
        or dst._a is None
        or value._a is None
    ):
        return False
    if ds.buffer is shared_hbm:
        aff = st._STACK[-1].affine
        if aff:
            dst._check_affine(aff[-1], None)
    return True


def accumulate_target(shape: tuple, depth: int) -> tuple | None:
    """The legacy PSUM tile ``t`` of the port's ``t += nl.matmul(...)`` when the matmul may
    accumulate into it directly, in place of a new PSUM result tile of ``shape`` that
    ``t += result`` accumulates (``language._inplace``); ``None``: take that path.

    ``t`` must be a whole fp32 PSUM tile of that shape, the result tile must fit without a
    capacity check, and the run must not track uninitialised reads or writers (there the
    general path does more than accumulate).  Returns ``(t, trace length, banks, bytes,
    site)`` of the result tile; ``depth`` as for :func:`direct_target`.
    """
    s = st._STACK[-1]
    if not s.legacy or s.mem_dirty or s.strict_uninit or s.writers is not None:
        return None
    found = _port_target(depth, "add")
    if found is None:
        return None
    t = found[0]
    if (
        type(t) is not NkiTensor
        or t.shape != shape
        or t.dtype is not _F32
        or t.index is not None
        or t.pdim != 0
        or len(shape) != 2
    ):
        return None
    stg = t.storage
    if (
        stg.buffer is not psum
        or stg.shape != shape
        or t._a.size != stg.flat.size
        or t._gen != stg.gen
        or stg.use is None
    ):
        return None
    nbytes = shape[1] * 4
    if nbytes > s.target.psum_tile_max_bytes:
        return None
    banks = max(1, -(-nbytes // st.PSUM_BANK_BYTES))
    if s.psum_banks_now + banks > st.PSUM_BANKS:
        return None
    return (t, len(s.trace), banks, nbytes, found[1])


def accumulate_matmul(acc: tuple, x: NkiTensor, y: NkiTensor, a2, b2, extra: tuple) -> object:
    """``nl.matmul`` of ``t += nl.matmul(x, y)`` (``accumulate_target``): the matmul's record
    (its result tile's place taken by ``t``, whose last use and the trace's last destination
    stay as they were), the result tile's PSUM live range, then the accumulation of
    ``language._inplace``.  Returns ``ACCUMULATED``, which ``t += `` takes as done."""
    t, first, banks, nbytes, site = acc
    s = st._STACK[-1]
    stg = t.storage
    zp = s.zero_psum
    if zp:
        zp.pop(stg.uid, None)  # the zero fill folds into the first matmul
    use = stg.use
    before = use[0]
    record(
        "tensor",
        "nc_matmul",
        (t, x, y),
        extra,
        0,
        x.partitions(),
        y.free_size(),
        2,  # sim_frames: this function and nl.matmul
    )
    n = use[0]
    use[0] = before
    s.last_dst = next(_UIDS)  # the result tile's id (as allocated: later ids unchanged)
    s.ranges_psum.append((first, n, banks, site, nbytes))
    _matmul_write("tensor add=", t, a2, b2, None if stg.fresh else True)
    return ACCUMULATED
