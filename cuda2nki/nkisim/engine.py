"""Shared machinery of instructions: operand checks, trace recording, enums."""

from __future__ import annotations

import enum
import math
import sys

import numpy as np

from cuda2nki.nkisim import dtypes as dt
from cuda2nki.nkisim import state as st
from cuda2nki.nkisim.errors import (
    code_entry,
    fail,
    invalid,
    new_site,
    outside_sim,
    unsupported,
)
from cuda2nki.nkisim.tensor import NkiTensor, psum, sbuf


class engine(enum.IntEnum):  # noqa: N801 - NKI spelling
    unknown = 0
    tensor = 1
    scalar = 2
    gpsimd = 3
    dma = 4
    vector = 5
    sync = 6


class reduce_cmd(enum.IntEnum):  # noqa: N801
    idle = 0
    reset = 1
    reduce = 2
    reset_reduce = 3
    load_reduce = 4


class dge_mode(enum.IntEnum):  # noqa: N801
    unknown = 0
    swdge = 1
    hwdge = 2
    none = 3


class oob_mode(enum.IntEnum):  # noqa: N801
    error = 0
    skip = 1


class matmul_perf_mode(enum.Enum):  # noqa: N801
    none = "none"
    double_row = "double_row"


class nc_version(enum.IntEnum):  # noqa: N801
    gen2 = 2
    gen3 = 3
    gen4 = 4


class dma_engine(enum.IntEnum):  # noqa: N801
    dma = 1
    gpsimd_dma = 2


ENGINE_NAMES = {
    engine.tensor: "tensor",
    engine.scalar: "scalar",
    engine.gpsimd: "gpsimd",
    engine.dma: "dma",
    engine.vector: "vector",
    engine.sync: "sync",
}


def engine_name(e, default: str) -> str:
    if e is None or e is engine.unknown or e == engine.unknown or e == 0:
        return default
    try:
        return ENGINE_NAMES[engine(int(e))]
    except (ValueError, KeyError, TypeError):
        raise invalid("engine", f"unknown engine {e!r}") from None


# --------------------------------------------------------------------------- operand checks


def tensor_arg(x, api: str, what: str) -> NkiTensor:
    if not isinstance(x, NkiTensor):
        raise invalid(api, f"{what} must be a tensor, got {type(x).__name__}")
    return x


def on_chip(t: NkiTensor, api: str, what: str, allowed=(sbuf, psum)) -> NkiTensor:
    if t.storage.buffer not in allowed:
        exp = " or ".join(b.name for b in allowed)
        raise fail(
            "C2N3022", api=api, what=f"{what} {t.describe()}", buffer=t.buffer.name, expected=exp
        )
    check_pstart(t, api, what)
    return t


def check_pstart(t: NkiTensor, api: str, what: str) -> None:
    """Start-partition rule (reference 3.3): P>64 -> 0; 32<P<=64 -> 0/64; P<=32 -> multiple of 32."""
    stg = t.storage
    if t.pdim != 0 or stg.pdim != 0 or t.index is not None:
        return
    p = t.shape[0]
    if p == stg.shape[0]:
        return
    row = math.prod(stg.shape[1:]) or 1
    start = t.offset // row
    if p > 64:
        ok, rule = start == 0, "an operand of more than 64 partitions must start at partition 0"
    elif p > 32:
        ok, rule = start in (0, 64), "an operand of 33..64 partitions must start at 0 or 64"
    else:
        ok, rule = (
            start % 32 == 0,
            "an operand of at most 32 partitions must start at a multiple of 32",
        )
    if not ok:
        raise fail("C2N3013", what=f"{what} {t.describe()}", size=p, start=start, rule=rule)


def no_psum(api: str, *ts: NkiTensor) -> None:
    for t in ts:
        if t is not None and t.storage.buffer is psum:
            raise fail("C2N3010", api=api, what=t.describe())


def same_partitions(api: str, a: NkiTensor, b: NkiTensor) -> None:
    if a.partitions() != b.partitions():
        raise fail(
            "C2N3014",
            api=api,
            detail=f"operands span {a.partitions()} and {b.partitions()} "
            f"partitions ({a.describe()} vs {b.describe()})",
        )


def same_free(api: str, a: NkiTensor, b: NkiTensor) -> None:
    if a.pdim == b.pdim and a.shape == b.shape:
        return  # same partitions and free size
    same_partitions(api, a, b)
    if a.free_size() != b.free_size():
        raise fail(
            "C2N3014",
            api=api,
            detail=f"operands have {a.free_size()} and {b.free_size()} "
            f"elements per partition ({a.describe()} vs {b.describe()})",
        )


def mat(t: NkiTensor, f32: bool = True) -> np.ndarray:
    """Operand values as a (partitions, free) array (fp32 unless ``f32=False``)."""
    v = t.f32() if f32 else t.values()
    pd = t.pdim
    if pd is None:
        return v.reshape(1, -1) if v.ndim != 2 else v
    if pd != 0:
        v = np.moveaxis(v, pd, 0)
    if v.ndim == 2:
        return v
    return v.reshape(v.shape[0], -1)


def write_mat(dst: NkiTensor, vals: np.ndarray, api: str, where=None) -> None:
    """Write (P, free) values into ``dst`` (any free factorisation)."""
    if dst.pdim not in (None, 0):
        shp = list(dst.shape)
        p = shp.pop(dst.pdim)
        vals = np.moveaxis(vals.reshape([p] + shp), 0, dst.pdim)
    dst.assign(vals, where=where, api=api)


def scalar_or_col(x, p: int, api: str, what: str, like: tuple | None = None):
    """A scalar operand (fp32) or a (P, 1) per-partition column tensor -> broadcastable array.

    ``like``: the data's shape, where a legacy kernel run through the public Python API may pass
    a tile of that shape, as the legacy public simulator took it (elementwise, with a warning:
    :func:`cuda2nki.nkisim.upstream_sim.full_tile_operand`)."""
    if isinstance(x, NkiTensor):
        if like is not None and tuple(x.shape) == tuple(like) and _public_legacy():
            from cuda2nki.nkisim.upstream_sim import full_tile_operand

            full_tile_operand(api, what, x.describe())
            return mat(x)
        if x.partitions() != p or x.free_size() != 1:
            raise fail(
                "C2N3014",
                api=api,
                detail=f"{what} must be a scalar or a ({p}, 1) tensor, got {x.describe()}",
            )
        return mat(x)
    if isinstance(x, (int, float, np.integer, np.floating, bool)):
        return np.float32(x)
    if x is None:
        return None
    raise invalid(api, f"{what} must be a scalar or a tensor, got {type(x).__name__}")


def _public_legacy() -> bool:
    state = st.current()
    return state.legacy and state.public


def record(
    eng: str,
    op: str,
    ts: tuple,
    extra: tuple = (),
    dma_bytes: int = 0,
    partitions: int | None = None,
    free: int | None = None,
    sim_frames: int = 1,
    shapes: tuple | None = None,
    dtypes: tuple | None = None,
    bufs: tuple | None = None,
) -> None:
    """Append one instruction to the trace, at the port's current line.

    ``shapes``, ``dtypes``, ``bufs``: the operands' shapes, dtype names and buffer names, when
    the caller has them at hand (then ``partitions`` and ``free`` must be given too); by default
    they are read from the operands ``ts``.

    ``sim_frames``: how many frames above this call are known to be simulator code (at least the
    caller); the search for the port's frame starts above them, so they are never materialised
    as frame objects (the costly part of a stack walk).
    """
    s = _STACK[-1]
    if s.mem_dirty:
        s.sample_memory(ts)
    # the port's frame: the innermost one outside the simulator (inlined for speed)
    try:
        f = _getframe(1 + sim_frames)
    except ValueError:
        f = None
    if f is not None and f is s.kernel_frame:
        ent = s.kernel_entry  # the usual case: an instruction in the kernel's own body
    else:
        f, ent = outside_sim(f)
    if f is not None:
        # errors.port_site, inlined: (file, line) cached per instruction offset (f_lineno scans
        # the line table)
        site = ent[3].get(f.f_lasti)
        if site is None:
            site = new_site(f, ent)
        file, line = site
        if s.kernel_frame is None and s.kernel_code is not None:
            g = f
            while g is not None and g.f_code is not s.kernel_code:
                g = g.f_back
            s.kernel_frame = g
            if g is not None:
                s.kernel_entry = code_entry(g.f_code)
    else:
        file, line = "<unknown>", 0
    trace = s.trace
    if s.zero_psum:
        _deferred_zeros(s, ts, file, line)
    n = len(trace)
    for t in ts:  # the last use of each on-chip operand (liveness, SimState.settle_memory)
        if t is not None:
            u = t.storage.use
            if u is not None:
                u[0] = n
    t = ts[0] if ts else None
    s.last_dst = t.storage.uid if t is not None else 0
    n = len(ts)
    if shapes is not None:
        main = None
    elif n == 2 and ts[1] is not None:
        a, main = ts
        shapes = (a.shape, main.shape)
        dtypes = (a.dtype.name, main.dtype.name)
        bufs = (a.storage.buffer.name, main.storage.buffer.name)
    elif n == 3 and ts[0] is not None and ts[1] is not None and ts[2] is not None:
        a, main, c = ts
        shapes = (a.shape, main.shape, c.shape)
        dtypes = (a.dtype.name, main.dtype.name, c.dtype.name)
        bufs = (a.storage.buffer.name, main.storage.buffer.name, c.storage.buffer.name)
    else:
        main = ts[1] if n > 1 and ts[1] is not None else ts[0]
        shapes, dtypes, bufs = [], [], []
        for t in ts:
            if t is not None:
                shapes.append(t.shape)
                dtypes.append(t.dtype.name)
                bufs.append(t.storage.buffer.name)
        shapes, dtypes, bufs = tuple(shapes), tuple(dtypes), tuple(bufs)
    trace.append(
        _mk_instr(
            _Instr,
            (
                eng,
                op,
                shapes,
                dtypes,
                bufs,
                main.partitions() if partitions is None else partitions,
                main.free_size() if free is None else free,
                dma_bytes,
                file,
                line,
                extra,
            ),
        )
    )
    if s.writers is not None:
        from cuda2nki.nkisim.provenance import note

        note(s.writers, eng, op, ts, f, line)


def _deferred_zeros(s: st.SimState, ts: tuple, file: str, line: int) -> None:
    """Record the memset of a legacy PSUM ``nl.zeros`` tile used by an instruction before any
    matmul accumulated into it (language._filled)."""
    for t in ts:
        if t is not None:
            ent = s.zero_psum.pop(t.storage.uid, None)
            if ent is not None:
                shape, dtype, parts, free = ent
                s.trace.append(
                    st.Instr(
                        "vector",
                        "memset",
                        (shape,),
                        (dtype,),
                        ("psum",),
                        parts,
                        free,
                        0,
                        file,
                        line,
                    )
                )


_Instr = st.Instr
_mk_instr = tuple.__new__
_STACK = st._STACK  # the state stack (pushed and popped in place)
_getframe = sys._getframe


def is_int32(t: NkiTensor) -> bool:
    return t.dtype.name in ("int32", "uint32")


def dtype_check(api: str, t: NkiTensor, allowed: tuple[str, ...], what: str) -> None:
    if t.dtype.name not in allowed:
        raise fail(
            "C2N3016",
            api=api,
            detail=f"{what} dtype {t.dtype.name} is not allowed (allowed: {', '.join(allowed)})",
        )


MATMUL_DTYPES = (
    "float8_e4m3",
    "float8_e5m2",
    "bfloat16",
    "float16",
    "tfloat32",
    "float32",
    "float8_e4m3fn",
)
FP32_CLASS = ("float32", "tfloat32")


def as_dtype_or_fail(api: str, d) -> dt.NkiDType:
    try:
        return dt.as_dtype(d)
    except TypeError as exc:
        raise fail("C2N3016", api=api, detail=str(exc)) from None


def dma_extent(where, t_onchip: NkiTensor, nelem: int) -> tuple[int, int]:
    """(elements moved, partitions touched) of a DMA, honouring a legacy mask."""
    if where is None:
        return nelem, t_onchip.partitions()
    w = np.asarray(where)
    p = w.shape[0] if w.ndim else 1
    rows = w.reshape(p, -1).any(axis=1) if w.ndim else w
    return int(w.sum()), int(np.count_nonzero(rows))


def src_key(t: NkiTensor) -> tuple:
    """Identity of a DMA's HBM region, so reloads of the same data can be recognised."""
    stg = t.storage
    if t.a is None and t.index is not None:  # a gather: the region is the elements it picks
        picked = np.ascontiguousarray(t.index, dtype=np.int64)
        return ("src", (stg.name or stg.uid, hash(picked.tobytes()), t.shape))
    off = t.offset if t.a is not None else -1
    return ("src", (stg.name or stg.uid, off, t.shape))


def dst_tag(t: NkiTensor) -> tuple:
    """``(("dst", name),)`` for a DMA that writes HBM (else ``()``): a later load of that storage
    reads data written since the loads before it, which are not reloads of it.  An unnamed
    storage (an output or scratch buffer the kernel allocates) is ``""``: its per-run id would
    make the records of two runs differ."""
    if t.on_chip:
        return ()
    return (("dst", t.storage.name),)


HARMLESS_KW = frozenset(
    {
        "name",
        "priority",
        "dge_mode",
        "engine",
        "directives",
        "multi_buffer",
        "final_reduction",
        "address",
        "mode",
    }
)


def no_extra_kw(api: str, kw: dict) -> None:
    """Unknown keyword arguments are refused, never silently ignored (C2N3001)."""
    if not kw:
        return
    bad = sorted(k for k in kw if k not in HARMLESS_KW)
    if bad:
        raise unsupported(f"{api}({bad[0]}=...)", "argument not modelled by the simulator")
