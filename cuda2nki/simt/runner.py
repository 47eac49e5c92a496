"""Launching a kernel: argument buffers, chunking the grid, collecting outputs."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cuda2nki.diagnostics import Diagnostic, DiagnosticError, SourceLoc, error
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.typesys import sizeof
from cuda2nki.simt import deadline
from cuda2nki.simt.atomicorder import uses_running_atomic
from cuda2nki.simt.chunk import Chunk, Launch
from cuda2nki.simt.compiler import FunctionCompiler, Program, decay, unq
from cuda2nki.simt.gridsync import MAX_GRID_SYNC_THREADS, uses_grid_sync
from cuda2nki.simt.memory import Buffer, Vec, make_buffer, wrap_array
from cuda2nki.simt.numeric import DTYPES, UnsupportedType, convert, np_dtype, scalar
from cuda2nki.simt.recordargs import from_bytes
from cuda2nki.simt.symbols import missing_symbols

MAX_THREADS_PER_BLOCK = 1024
MAX_SHARED_BYTES = 227 * 1024  # the largest opt-in shared memory per block (sm_90)
DEFAULT_CHUNK_THREADS = 1 << 20
DEFAULT_MAX_STEPS = 2_000_000
MAX_LAUNCH_DEPTH = 24  # CUDA's nesting limit of device-side launches
CHUNK_SHARED_BYTES = 256 << 20
CHUNK_STATE_BYTES = 512 << 20  # per-thread variables and temporaries of one chunk


@dataclass
class SimtResult:
    outputs: dict[str, np.ndarray]
    diagnostics: list[Diagnostic] = field(default_factory=list)
    steps: int = 0
    chunks: int = 0
    globals: dict[str, np.ndarray] = field(default_factory=dict)  # __device__ variables at exit
    #: per pointer parameter, the distinct bytes the kernel read (``track_reads=True`` only)
    read_bytes: dict[str, int] = field(default_factory=dict)


def find_kernel(tu: A.TranslationUnit, kernel: str | None) -> A.Function:
    loc = SourceLoc(tu.file, 1, 1)
    if kernel is not None and kernel in tu.rejected:
        raise DiagnosticError(tu.rejected[kernel])
    cands = [f for f in tu.kernels if kernel is None or f.name == kernel]
    runnable = [f for f in cands if not f.template_params or f.template_args]
    names = sorted({f.name for f in tu.kernels})
    if kernel is None:
        if len({f.name for f in runnable}) == 1:
            return runnable[0]
        raise error(
            "C2N1506",
            loc,
            kernel="?",
            file=tu.file,
            hint=f" (several kernels: {', '.join(names)}; name one)" if names else " (no kernels)",
        )
    if not runnable:
        hint = ""
        if cands:
            params = ", ".join(t.name for t in cands[0].template_params)
            hint = (
                f" (a template that was never instantiated; give its parameters ({params}) "
                "with --template NAME=VALUE, or launch it from host code)"
            )
        elif names:
            hint = f" (kernels: {', '.join(names)})"
        raise error("C2N1506", loc, kernel=kernel, file=tu.file, hint=hint)
    return runnable[0]


def _dim3(v: tuple[int, ...], what: str, kernel: str, loc: SourceLoc) -> tuple[int, int, int]:
    vals = tuple(int(x) for x in v)
    if not 1 <= len(vals) <= 3 or any(x <= 0 for x in vals):
        raise error(
            "C2N1507",
            loc,
            kernel=kernel,
            reason=f"{what} {tuple(v)} must have 1-3 positive dimensions",
        )
    return vals + (1,) * (3 - len(vals))  # type: ignore[return-value]


def _boxes(grid: tuple[int, int, int], per_chunk: int):
    """Rectangular chunks of at most ``per_chunk`` blocks, in CUDA's block order."""
    gx, gy, gz = grid
    per_chunk = max(1, per_chunk)
    if per_chunk >= gx * gy * gz:
        yield (0, gz, 0, gy, 0, gx)
    elif per_chunk >= gx * gy:
        k = per_chunk // (gx * gy)
        for z in range(0, gz, k):
            yield (z, min(k, gz - z), 0, gy, 0, gx)
    elif per_chunk >= gx:
        k = per_chunk // gx
        for z in range(gz):
            for y in range(0, gy, k):
                yield (z, 1, y, min(k, gy - y), 0, gx)
    else:
        for z in range(gz):
            for y in range(gy):
                for x in range(0, gx, per_chunk):
                    yield (z, 1, y, 1, x, min(per_chunk, gx - x))


def run_child_grid(
    parent: Chunk,
    prog: Program,
    name: str,
    grid: tuple[int, ...],
    block: tuple[int, ...],
    frame0: list,
    loc: SourceLoc,
) -> None:
    """Run the grid a thread of ``parent`` launched from device code, to completion, on the
    parent's memory (dynamic parallelism; see :mod:`cuda2nki.simt.devlaunch`)."""
    depth = parent.launch.depth + 1
    if depth > MAX_LAUNCH_DEPTH:
        raise error(
            "C2N1522",
            loc,
            what=f"a launch nested {depth} deep (CUDA allows {MAX_LAUNCH_DEPTH})",
            kernel=parent.launch.kernel,
        )
    fn = find_kernel(prog.tu, name)
    g = _dim3(tuple(grid), "grid", name, loc)
    b = _dim3(tuple(block), "block", name, loc)
    tpb = b[0] * b[1] * b[2]
    if tpb > MAX_THREADS_PER_BLOCK or b[2] > 64 or min(g) < 1:
        raise error("C2N1507", loc, kernel=name, reason=f"grid {g} of blocks {b}")
    cf = prog.function(name, loc)
    launch = Launch(name, g, b, parent.launch.max_steps, parent.launch.warnings)
    launch.fast, launch.globals, launch.depth = parent.launch.fast, parent.launch.globals, depth
    static, local = _static_memory(prog.tu, fn)
    per_chunk = max(1, DEFAULT_CHUNK_THREADS // tpb)
    smem = static + int(prog.options.get("shared_bytes", 0))
    if smem:
        per_chunk = max(1, min(per_chunk, CHUNK_SHARED_BYTES // smem))
    if local:
        per_chunk = max(1, min(per_chunk, CHUNK_SHARED_BYTES // (local * tpb)))
    if uses_running_atomic(prog.tu, fn):
        per_chunk = 1  # blocks one after another: the atomics' order (see .atomicorder)
    if uses_grid_sync(prog.tu, fn):
        per_chunk = _grid_sync_chunk(g, tpb, name, loc)
    for box in _boxes(g, per_chunk):
        c = Chunk(launch, box, None)
        c.env = list(frame0) + [None] * (cf.nslots - len(frame0))
        c.owned = [False] * cf.nslots
        cf.body(c, None)
        parent.steps += c.steps


def _grid_sync_chunk(g: tuple[int, int, int], tpb: int, name: str, loc: SourceLoc) -> int:
    """The whole grid as one chunk (a kernel with ``grid.sync()``), else C2N1507."""
    blocks = g[0] * g[1] * g[2]
    if blocks * tpb > MAX_GRID_SYNC_THREADS:
        raise error(
            "C2N1507",
            loc,
            kernel=name,
            reason=f"grid.sync() needs all {blocks} blocks of {tpb} threads resident at once "
            f"(the interpreter runs at most {MAX_GRID_SYNC_THREADS} threads together)",
        )
    return blocks


def _static_memory(
    tu: A.TranslationUnit, fn: A.Function, seen: set[str] | None = None
) -> tuple[int, int]:
    """Bytes of static ``__shared__`` memory per block and of local arrays per thread."""
    seen = seen if seen is not None else set()
    seen.add(fn.name)
    total = local = 0
    stack: list = [fn.body]
    while stack:
        n = stack.pop()
        if isinstance(n, A.VarDecl) and n.storage == "shared":
            total += sizeof(n.ty) or 0
        elif isinstance(n, A.VarDecl) and isinstance(n.ty, A.ArrayType):
            local += sizeof(n.ty) or 0
        if isinstance(n, A.Call) and n.target and n.target not in seen:
            g = tu.function(n.target)
            if g is not None:
                s2, l2 = _static_memory(tu, g, seen)
                total += s2
                local += l2
        if isinstance(n, A.Node):
            for v in n.__dict__.values():
                if isinstance(v, A.Node):
                    stack.append(v)
                elif isinstance(v, tuple):
                    stack.extend(x for x in v if isinstance(x, A.Node))
    return total, local


def run_kernel(
    tu: A.TranslationUnit,
    kernel: str | None,
    *,
    grid: tuple[int, ...],
    block: tuple[int, ...],
    shared_bytes: int = 0,
    args: Mapping[str, object],
    poison_shared: bool = True,
    max_steps: int | None = None,
    chunk_threads: int | None = None,
    outputs: Collection[str] | None = None,
    fmad: bool = False,
) -> dict[str, np.ndarray]:
    """Run ``kernel`` of ``tu``; returns a (mutated) copy of every pointer argument, by name.

    ``args`` maps every parameter name to a NumPy array (pointer parameters: a flat device
    buffer of the pointee's dtype, any shape; the caller's arrays are never modified) or a number.
    ``grid``/``block`` have 1-3 dimensions; ``shared_bytes`` sizes ``extern __shared__`` arrays.
    ``poison_shared`` fills shared memory and local arrays with NaN (floats) / 0xDEADBEEF (ints)
    so that reads of never-written words show; ``max_steps`` bounds loop iterations and calls per
    chunk of blocks (C2N1502); ``chunk_threads`` bounds the threads executed at once;
    ``outputs`` restricts the returned arrays to these parameter names; ``fmad=True`` contracts
    float32 ``x * y + z`` (and ``acc += x * y``) into one fused multiply-add as nvcc does by
    default (``-fmad=true``); the default is every operation rounded separately.  Runtime faults raise
    :class:`DiagnosticError` (C2N15xx).
    """
    return run_kernel_full(
        tu,
        kernel,
        grid=grid,
        block=block,
        shared_bytes=shared_bytes,
        args=args,
        poison_shared=poison_shared,
        max_steps=max_steps,
        chunk_threads=chunk_threads,
        outputs=outputs,
        fmad=fmad,
    ).outputs


#: a run out of memory is retried with chunks this many times smaller, down to
#: :data:`MIN_RETRY_THREADS` threads at once
RETRY_SHRINK = 8
MIN_RETRY_THREADS = 1024


class _ChunkMemory(Exception):  # noqa: N818 - a signal to retry, not an error of its own
    """A chunk of ``threads`` threads ran out of memory (``diagnostic``: what to raise when no
    smaller chunk is tried)."""

    def __init__(self, threads: int, diagnostic: DiagnosticError) -> None:
        super().__init__(str(diagnostic))
        self.threads, self.diagnostic = threads, diagnostic


def run_kernel_full(
    tu: A.TranslationUnit,
    kernel: str | None,
    *,
    grid: tuple[int, ...],
    block: tuple[int, ...],
    shared_bytes: int = 0,
    args: Mapping[str, object],
    poison_shared: bool = True,
    max_steps: int | None = None,
    chunk_threads: int | None = None,
    fast: bool = True,
    outputs: Collection[str] | None = None,
    fmad: bool = False,
    track_reads: bool = False,
) -> SimtResult:
    """:func:`run_kernel`, also returning warnings (C2N1504, C2N1512) and statistics.

    ``fast=False`` disables the affine-index and box-active-set fast paths (plain per-thread
    index arrays everywhere; for differential testing).  ``track_reads=True`` records which bytes
    of each pointer argument the kernel loads (:attr:`SimtResult.read_bytes`): the traffic the
    computation needs, whatever a port moves.  A run whose chunk of threads exhausts the memory
    (a process under a memory limit) is run again from the start with smaller chunks: the
    outputs do not depend on how the grid is cut, and the caller's arrays are never written.
    """
    kw: dict[str, Any] = dict(
        grid=grid, block=block, shared_bytes=shared_bytes, args=args,
        poison_shared=poison_shared, max_steps=max_steps, fast=fast, outputs=outputs,
        fmad=fmad, track_reads=track_reads,
    )  # fmt: skip
    while True:
        try:
            return _run_once(tu, kernel, chunk_threads=chunk_threads, **kw)
        except _ChunkMemory as exc:
            smaller = exc.threads // RETRY_SHRINK
            if smaller < MIN_RETRY_THREADS:
                raise exc.diagnostic from None
            chunk_threads = smaller


def _run_once(
    tu: A.TranslationUnit,
    kernel: str | None,
    *,
    grid: tuple[int, ...],
    block: tuple[int, ...],
    shared_bytes: int = 0,
    args: Mapping[str, object],
    poison_shared: bool = True,
    max_steps: int | None = None,
    chunk_threads: int | None = None,
    fast: bool = True,
    outputs: Collection[str] | None = None,
    fmad: bool = False,
    track_reads: bool = False,
) -> SimtResult:
    """One run of :func:`run_kernel_full` with chunks of at most ``chunk_threads`` threads."""
    fn = find_kernel(tu, kernel)
    name = fn.name
    records = from_bytes(fn, args)  # struct arrays given as bytes: their members
    if records is not None:
        args = records[0]
        outputs = None if outputs is None else {*outputs, *(p.name for p in fn.params)}
    g = _dim3(tuple(grid), "grid", name, fn.loc)
    b = _dim3(tuple(block), "block", name, fn.loc)
    tpb = b[0] * b[1] * b[2]
    if tpb > MAX_THREADS_PER_BLOCK or b[2] > 64:
        raise error(
            "C2N1507",
            fn.loc,
            kernel=name,
            reason=f"block {b} has {tpb} threads (at most 1024, z <= 64)",
        )
    if g[1] > 65535 or g[2] > 65535 or g[0] > 2**31 - 1:
        raise error("C2N1507", fn.loc, kernel=name, reason=f"grid {g} exceeds the device limits")
    static, local = _static_memory(tu, fn)
    if shared_bytes < 0 or static + shared_bytes > MAX_SHARED_BYTES:
        raise error(
            "C2N1507",
            fn.loc,
            kernel=name,
            reason=f"{static} bytes of static + {shared_bytes} bytes of dynamic shared memory "
            f"exceed {MAX_SHARED_BYTES}",
        )
    launch = Launch(name, g, b, max_steps if max_steps is not None else DEFAULT_MAX_STEPS)
    launch.fast = fast
    prog = Program(
        tu,
        {
            "poison_shared": poison_shared,
            "shared_bytes": int(shared_bytes),
            "fmad": fmad,
            "fast": fast,
        },
    )
    try:
        cf = prog.function(name, fn.loc)
        launch.globals = _global_buffers(prog, launch)
    except DiagnosticError:
        raise
    except UnsupportedType as exc:
        raise error("C2N1505", fn.loc, what=f"the type {exc}") from None
    except Exception as exc:  # noqa: BLE001 - never a traceback for a kernel we cannot compile
        if os.environ.get("CUDA2NKI_DEBUG"):
            raise
        raise error(
            "C2N0005", fn.loc, reason=f"SIMT compiler: {type(exc).__name__}: {exc}"
        ) from None
    defaulted = missing_symbols(fn, args)  # __device__ variables not passed: zeroed storage
    frame0, buffers = _bind_args(fn, cf, {**args, **defaulted}, name)
    if track_reads:
        for buf, _arr in buffers.values():
            if buf.reads is None:
                buf.reads = np.zeros(buf.limit + 8, np.uint8)

    threads = chunk_threads or min(
        DEFAULT_CHUNK_THREADS, CHUNK_STATE_BYTES // ((cf.nslots + 24) * 8)
    )  # bound memory: every variable may hold one 8-byte value per thread, plus temporaries
    per_chunk = max(1, threads // tpb)
    smem = static + shared_bytes
    if smem:
        per_chunk = max(1, min(per_chunk, CHUNK_SHARED_BYTES // smem))
    if local:
        per_chunk = max(1, min(per_chunk, CHUNK_SHARED_BYTES // (local * tpb)))
    if uses_running_atomic(tu, fn):
        per_chunk = 1  # blocks one after another: the atomics' order (see .atomicorder)
    if uses_grid_sync(tu, fn):
        per_chunk = _grid_sync_chunk(g, tpb, name, fn.loc)
    steps = nchunks = 0
    try:
        with np.errstate(all="ignore"):
            for box in _boxes(g, per_chunk):
                deadline.check()
                c = Chunk(launch, box, None)
                c.env = list(frame0) + [None] * (cf.nslots - len(frame0))
                c.owned = [False] * cf.nslots
                cf.body(c, None)
                steps += c.steps
                nchunks += 1
    except DiagnosticError:
        raise
    except MemoryError:
        diag = error(
            "C2N0005",
            fn.loc,
            reason=f"SIMT interpreter ran out of memory running '{name}' (lower chunk_threads)",
        )
        raise _ChunkMemory(min(per_chunk, g[0] * g[1] * g[2]) * tpb, diag) from None
    except Exception as exc:  # noqa: BLE001 - an interpreter bug must still end in a diagnostic
        if os.environ.get("CUDA2NKI_DEBUG"):
            raise
        raise error(
            "C2N0005", fn.loc, reason=f"SIMT interpreter: {type(exc).__name__}: {exc}"
        ) from None
    result: dict[str, np.ndarray] = {}
    for pname, (buf, arr) in buffers.items():
        if outputs is not None and pname not in outputs:
            continue
        if buf.cow:  # never written: a copy of the caller's array
            out = np.array(arr, copy=True)
        else:
            n = arr.size * arr.dtype.itemsize
            out = buf.data[:n].view(arr.dtype).reshape(arr.shape)
        result[pname] = out
    reads = {
        pname: int(np.count_nonzero(buf.reads[: buf.limit]))
        for pname, (buf, _arr) in buffers.items()
        if buf.reads is not None
    }
    if records is not None:
        result = records[1](result)
    held = {k: result.pop(k) for k in defaulted if k in result}
    return SimtResult(
        result, launch.diagnostics, steps, nchunks, {**_global_values(prog, launch), **held}, reads
    )


def _global_values(prog: Program, launch: Launch) -> dict[str, np.ndarray]:
    """Final contents of file-scope ``__device__`` variables (flat arrays of their element type)."""
    out: dict[str, np.ndarray] = {}
    for name, ty, _init, _loc, kind in prog.global_inits:
        if kind != "global" or name not in launch.globals:
            continue
        elem = ty
        while isinstance(elem, A.ArrayType):
            elem = elem.elem
        if isinstance(elem, A.VectorType):
            elem = elem.base
        if not isinstance(elem, A.ScalarType) or elem.name not in DTYPES:
            continue
        buf = launch.globals[name]
        dt = DTYPES[elem.name]
        out[name] = buf.data[: buf.limit - buf.limit % dt.itemsize].view(dt).copy()
    return out


def _bind_args(fn: A.Function, cf, args: Mapping[str, object], kernel: str):
    frame: list = []
    buffers: dict[str, tuple[Buffer, np.ndarray]] = {}
    by_id: dict[int, Buffer] = {}
    for p in fn.params:
        if p.name not in args:
            raise error("C2N1508", p.loc, param=p.name, kernel=kernel, reason="no value given")
        v = args[p.name]
        t = decay(unq(p.ty))
        if isinstance(t, A.PointerType):
            if v is None:
                from cuda2nki.simt.memory import Ptr

                frame.append(Ptr(None, np.int64(0)))
                continue
            if not isinstance(v, np.ndarray):
                raise error(
                    "C2N1508",
                    p.loc,
                    param=p.name,
                    kernel=kernel,
                    reason=f"a pointer parameter needs a NumPy array, got {type(v).__name__}",
                )
            _check_dtype(p, t, v, kernel)
            buf = by_id.get(id(v))
            if buf is None:
                buf = wrap_array(p.name, v, readonly=bool(getattr(t.pointee, "const", False)))
                by_id[id(v)] = buf
            elif not getattr(t.pointee, "const", False):
                buf.readonly = False
            buffers[p.name] = (buf, np.asarray(v))
            from cuda2nki.simt.memory import Ptr

            frame.append(Ptr(buf, np.int64(0)))
        elif isinstance(t, A.ScalarType):
            try:
                frame.append(_scalar_arg(v, t))
            except (TypeError, ValueError, KeyError) as exc:
                raise error(
                    "C2N1508", p.loc, param=p.name, kernel=kernel, reason=str(exc)
                ) from None
        elif isinstance(t, A.VectorType):
            vals = np.asarray(v).reshape(-1)
            if vals.size != t.width:
                raise error(
                    "C2N1508",
                    p.loc,
                    param=p.name,
                    kernel=kernel,
                    reason=f"{t.name} needs {t.width} values, got {vals.size}",
                )
            frame.append(Vec(tuple(_scalar_arg(x, t.base) for x in vals)))
        else:
            raise error(
                "C2N1508", p.loc, param=p.name, kernel=kernel, reason="unsupported parameter type"
            )
    return frame, buffers


def _check_dtype(p: A.Param, t: A.PointerType, v: np.ndarray, kernel: str) -> None:
    """The array's dtype must be the pointee's (byte pointers and ``void*`` take anything)."""
    pt = t.pointee
    base = pt.base if isinstance(pt, A.VectorType) else pt
    if not isinstance(base, A.ScalarType) or base.name in ("void", "int8", "uint8"):
        return
    have = _np_name(v.dtype) if v.dtype.kind != "V" or v.dtype.names is None else str(v.dtype)
    if have != base.name:
        raise error(
            "C2N1508",
            p.loc,
            param=p.name,
            kernel=kernel,
            reason=f"the array has dtype {v.dtype}, the parameter points to {base.name}",
        )


def _scalar_arg(v, t: A.ScalarType):
    if isinstance(v, np.ndarray):
        if v.size != 1:
            raise ValueError(f"a scalar parameter needs one value, got an array of {v.size}")
        v = v.reshape(-1)[0]
    if isinstance(v, np.generic):
        src = A.ScalarType(name=_np_name(v.dtype))
        return convert(v, src, t)
    if isinstance(v, bool | int):
        if np_dtype(t).kind == "f":
            return scalar(float(v), t)
        return scalar(int(v), t)
    if isinstance(v, float):
        if np_dtype(t).kind in "iu":
            return convert(np.float64(v), A.ScalarType(name="float64"), t)
        return scalar(v, t)
    raise TypeError(f"expected a number, got {type(v).__name__}")


def _np_name(dt: np.dtype) -> str:
    from cuda2nki.simt.numeric import DTYPES

    name = DTYPES.name_of(dt)  # an ml_dtypes entry only once ml_dtypes is imported
    return str(dt) if name is None else name


def _device_names(tu: A.TranslationUnit) -> set[str]:
    """Every name the file's kernels, device functions and global initialisers use."""
    from cuda2nki.frontend.visit import walk

    roots = [f.body for f in tu.functions] + [g.init for g in tu.globals if g.init is not None]
    return {n.name for r in roots for n in walk(r) if isinstance(n, A.Name)}


def _global_buffers(prog: Program, launch: Launch) -> dict[str, Buffer]:
    """Buffers for file-scope ``__constant__``/``__device__`` variables, initialised once."""
    out: dict[str, Buffer] = {}
    if not prog.global_inits:
        return out
    fc = FunctionCompiler(
        prog,
        A.Function(
            loc=SourceLoc(prog.tu.file, 1, 1),
            name="<globals>",
            kind="device",
            params=(),
            return_type=A.ScalarType(name="void"),
            body=A.Block(loc=SourceLoc(prog.tu.file, 1, 1), body=()),
        ),
    )
    named = _device_names(prog.tu)
    for name, ty, _init, loc, kind in prog.global_inits:
        if name not in named:
            continue  # a host table (`const char* modes[] = {...}`) no device code reads
        n = sizeof(ty)
        if n is None:
            raise error("C2N1505", loc, what=f"the global '{name}' of unknown size")
        buf = make_buffer(name, kind, n)
        out[name] = buf
    launch.globals = out
    dummy = Chunk(launch, (0, 1, 0, 1, 0, 1), None)
    for name, ty, init, loc, _kind in prog.global_inits:
        if init is None or name not in out:
            continue
        _init_global(fc, dummy, out[name], ty, init, loc)
    return out


def _init_global(fc, c: Chunk, buf: Buffer, ty, init, loc) -> None:
    from cuda2nki.simt import access
    from cuda2nki.simt.memory import Ptr

    elem = ty
    while isinstance(elem, A.ArrayType):
        elem = elem.elem
    flat: list = []

    def flatten(x):
        if isinstance(x, A.InitList):
            for y in x.items:
                flatten(y)
        else:
            flat.append(x)

    flatten(init)
    esz = sizeof(elem)
    cap = buf.limit // esz
    kind = buf.kind
    buf.kind = "global"  # allow the initialising stores
    try:
        for i, x in enumerate(flat[:cap]):
            v = fc.rvalue(x, elem)(c, None)
            if isinstance(v, np.ndarray):
                v = v.reshape(-1)[0]
            access.store(c, None, Ptr(buf, np.int64(i * esz)), elem, v, loc)
    finally:
        buf.kind = kind
