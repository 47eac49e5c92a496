"""Kernel objects, ``nki.jit`` / ``nki.simulate`` and the public :func:`simulate_kernel`."""

from __future__ import annotations

import ast
import contextlib
import gc
import inspect
import itertools
import math
import textwrap
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cuda2nki.diagnostics import Diagnostic, DiagnosticError, SourceLoc, make
from cuda2nki.nkisim import dtypes as dt
from cuda2nki.nkisim import state as st
from cuda2nki.nkisim.errors import DiagnosticIndexError, _is_internal, error, invalid
from cuda2nki.nkisim.library_kernels import is_refused
from cuda2nki.nkisim.oob import public_error
from cuda2nki.nkisim.ops import warnings_off
from cuda2nki.nkisim.tensor import NkiTensor, hbm, private_hbm, shared_hbm, wrap_host
from cuda2nki.nkisim.upstream_sim import onchip_return


class Kernel:
    """A kernel function decorated with ``nki.jit`` (either API generation)."""

    #: a kernel named ``test_*`` in a test module is not a test: pytest leaves it uncollected
    __test__ = False

    def __init__(
        self,
        fn,
        *,
        legacy: bool,
        platform_target: str | None = None,
        grid: tuple[int, ...] = (),
        lnc: int = 1,
        mode: str | None = None,
    ):
        self.fn = fn
        self.legacy = legacy
        self.platform_target = platform_target
        self.grid = grid
        self.lnc = lnc
        self.mode = mode
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn

    def __getitem__(self, key) -> Kernel:
        if not isinstance(key, tuple):
            key = (key,)
        dims = tuple(int(k) for k in key)
        if self.legacy:
            return Kernel(
                self.fn,
                legacy=True,
                platform_target=self.platform_target,
                grid=dims,
                mode=self.mode,
            )
        if len(dims) != 1 or dims[0] not in (1, 2):
            raise invalid(
                "kernel[...]", "the current API's brackets hold only the LNC degree (1 or 2)"
            )
        return Kernel(
            self.fn, legacy=False, platform_target=self.platform_target, lnc=dims[0], mode=self.mode
        )

    def __call__(self, *args, **kwargs):
        # Called from inside another kernel: behave as an inlined sub-kernel.
        if _RUNNING:
            if self.grid:
                raise invalid(
                    "kernel call", "a gridded kernel cannot be called from inside a kernel"
                )
            return self.fn(*args, **kwargs)
        return public_run(self, args, kwargs)

    def __repr__(self) -> str:
        gen = "legacy" if self.legacy else "current"
        return f"<nki kernel {self.__name__} ({gen})>"


_RUNNING: list[int] = []


@dataclass
class SimResult:
    """Outputs (NumPy), the instruction trace, the profile (when asked) and warnings."""

    outputs: Any
    trace: list = field(default_factory=list)
    profile: Any = None
    warnings: list[Diagnostic] = field(default_factory=list)
    state: Any = None
    #: per returned output, the write event of each element (``run(track_writers=True)``)
    writers: list | None = None


def _param_names(fn) -> list[str]:
    try:
        return list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return []


def _wrap_arg(v, name: str, buffer, state: st.SimState):
    if isinstance(v, NkiTensor):
        return v
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
        return tuple(_wrap_arg(x, f"{name}[{i}]", buffer, state) for i, x in enumerate(v))
    if isinstance(v, np.ndarray) and v.ndim == 0:
        return v.item()
    if isinstance(v, type):  # a dtype given as np.float32 / ml_dtypes.bfloat16: a constant
        return v
    if isinstance(v, np.ndarray) or (hasattr(v, "__array__") and not np.isscalar(v)):
        arr = np.asarray(v)
        if arr.dtype == np.float64 or arr.dtype == np.int64:
            ndt = dt.from_numpy(arr.dtype)
        else:
            try:
                ndt = dt.as_dtype(arr.dtype)
            except TypeError:
                raise DiagnosticError(
                    make("C2N3025", name=name, reason=f"dtype {arr.dtype} has no NKI equivalent")
                ) from None
        t = wrap_host(arr, ndt, buffer=buffer, name=name)
        t.storage.is_input = True
        state.input_storages.add(id(t.storage))
        if state.inout:
            state.host_args[id(t.storage)] = (v, t)
        return t
    return v


def _returnable(v: NkiTensor, state: st.SimState) -> bool:
    """Whether a kernel may return ``v``: a tensor in shared HBM; an input (current API); or,
    when the launch is a single instance, one in (private) HBM: private HBM is per instance,
    so only an SPMD grid or an LNC launch needs its outputs in ``nl.shared_hbm``."""
    stg = v.storage
    if stg.buffer is shared_hbm:
        return True
    if stg.is_input:
        return not state.legacy
    single = math.prod(state.grid or ()) == 1 and state.lnc == 1
    return single and stg.buffer in (hbm, private_hbm)


def _convert_out(v, state: st.SimState, fn=None, public: bool = False):
    if isinstance(v, NkiTensor):
        if not _returnable(v, state):
            site = v.storage.site
            if site[0] == "<host>" and fn is not None:
                code = fn.__code__
                site = (code.co_filename, code.co_firstlineno)
            what = f"'{v.name}' " if v.name else ""
            fmt = {"what": f"{what}{tuple(v.shape)} {v.dtype.name}", "buffer": v.buffer.name}
            loc = SourceLoc(site[0], site[1], 1)
            if not (public and state.legacy and v.buffer.on_chip):
                raise error(make("C2N3011", loc, **fmt))
            onchip_return(loc, **fmt)
        vals = v.values("output")
        stg = v.storage
        if (
            not stg.readonly
            and vals.base is not None
            and vals.size == stg.flat.size
            and vals.flags.c_contiguous
            and v.index is None
        ):
            return vals  # the whole output storage, no longer used by the simulator
        return np.array(vals, copy=True)
    if isinstance(v, np.ndarray) or (hasattr(v, "__array__") and not np.isscalar(v)):
        # provenance: an array the kernel built on the host, not an HBM tensor its instructions
        # wrote (the check fails such an output, C2N4022)
        state.host_outputs.append(f"{type(v).__name__} {tuple(np.shape(v))}")
        return v
    if isinstance(v, dict):
        return {k: _convert_out(x, state, fn, public) for k, x in v.items()}
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return type(v)(*[_convert_out(x, state, fn, public) for x in v])
    if isinstance(v, (tuple, list)):
        return type(v)(_convert_out(x, state, fn, public) for x in v)
    return v


_BLAS: list = []  # the process's ThreadpoolController, created on first use (~15 ms)


def single_threaded_blas() -> contextlib.AbstractContextManager:
    """Limit BLAS to one thread (restored on exit).

    A simulated kernel issues many small GEMMs (128 x 128 x 512); a multi-threaded BLAS spends
    more on waking and synchronising its threads than on the arithmetic, and on a loaded machine
    it can be many times slower.  Nested runs keep the outer limit.
    """
    if _RUNNING:
        return contextlib.nullcontext()
    if not _BLAS:
        from threadpoolctl import ThreadpoolController

        _BLAS.append(ThreadpoolController())
    return _BLAS[0].limit(limits=1, user_api="blas")


@contextlib.contextmanager
def _frozen_heap():
    """Leave the objects that exist before a run out of the cycle collector's full passes
    until it ends (``gc.freeze``; restored on exit, also on an exception).

    A kernel run allocates an object or two per instruction that outlive it (trace records,
    live ranges); every so often they trigger a full collection, which walks the whole heap
    -- the project's modules, NumPy, the caller's data -- at tens of milliseconds a pass,
    several microseconds per instruction of a kernel of tiny instructions.  Objects made
    during the run are collected as usual.  Not done in a nested run, nor where the process
    has frozen objects of its own (``gc.unfreeze`` would thaw them too).
    """
    if _RUNNING or gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def run(
    kernel: Kernel,
    args,
    kwargs,
    *,
    target: str | None = None,
    strict_uninit: bool = False,
    seed: int = 0,
    check_capacity: bool = True,
    track_writers: bool = False,
    public: bool = False,
) -> SimResult:
    """Run ``kernel`` on host arrays; returns :class:`SimResult` (outputs as NumPy arrays).

    ``track_writers``: also note which store wrote each output element (provenance.py).
    ``public``: run as the public simulator's Python API runs it (a legacy kernel may return an
    on-chip tile: :mod:`cuda2nki.nkisim.upstream_sim`)."""
    tgt = st.resolve_target(target, kernel.platform_target if kernel.legacy else None)
    state = st.SimState(
        target=tgt,
        legacy=kernel.legacy,
        inout=kernel.legacy and not returns_value(kernel.fn),
        strict_uninit=strict_uninit,
        public=public,
        check_capacity=check_capacity,
        grid=kernel.grid,
        lnc=kernel.lnc,
        seed=seed,
        rng=np.random.default_rng(seed),
    )
    if track_writers:
        from cuda2nki.nkisim.provenance import WriterLog

        state.writers = WriterLog()
    with single_threaded_blas(), _frozen_heap():
        st.push(state)
        _RUNNING.append(1)
        try:
            names = _param_names(kernel.fn)
            buffer = shared_hbm if kernel.lnc > 1 else hbm
            wargs = [
                _wrap_arg(v, names[i] if i < len(names) else f"arg{i}", buffer, state)
                for i, v in enumerate(args)
            ]
            wkw = {k: _wrap_arg(v, k, buffer, state) for k, v in kwargs.items()}
            points = (
                list(itertools.product(*[range(g) for g in kernel.grid])) if kernel.grid else [()]
            )
            if not kernel.legacy and kernel.lnc > 1:
                points = [(i,) for i in range(kernel.lnc)]
            out = None
            with warnings_off():  # the hardware raises no floating-point warnings
                for pid in points:
                    state.program_id = pid
                    state.shared_seq = {}
                    state.kernel_code = getattr(kernel.fn, "__code__", None)
                    state.kernel_frame = None
                    r = kernel.fn(*wargs, **wkw)
                    state.kernel_frame = None
                    if out is None:
                        out = r
                # (deferred stores into the outputs are computed here)
                outputs = _convert_out(out, state, kernel.fn, public)
                if out is None and state.written_args:
                    outputs = _write_back(state)
            state.settle_memory()  # on-chip peaks by liveness; spills noted
            writers = None
            if state.writers is not None:
                from cuda2nki.nkisim.provenance import output_writers

                writers = output_writers(out, state.writers)
            return SimResult(outputs, state.trace, None, state.warnings, state, writers)
        finally:
            _RUNNING.pop()
            st.pop()


def returns_value(fn) -> bool:
    """Whether ``fn`` has a ``return <value>`` of its own (not in a nested function); ``True``
    when its source cannot be read."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return True
    hit = _RETURNS.get(code)
    if hit is None:
        hit = _RETURNS[code] = _scan_returns(fn)
    return hit


_RETURNS: dict = {}


def _scan_returns(fn) -> bool:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return True
    top = tree.body[0] if tree.body else None
    if not isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return True
    todo = list(top.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Return) and node.value is not None:
            if not (isinstance(node.value, ast.Constant) and node.value.value is None):
                return True
        todo.extend(ast.iter_child_nodes(node))
    return False


def _write_back(state: st.SimState):
    """An in/out kernel's results: each argument it wrote, copied into the caller's array (as
    the legacy simulator does) and returned (one array, or a tuple in argument order)."""
    outs = []
    for sid, (host, t) in state.host_args.items():
        if sid not in state.written_args:
            continue
        vals = np.array(t.values("output"), copy=True)
        if isinstance(host, np.ndarray) and host.flags.writeable:
            np.copyto(host, vals.reshape(host.shape), casting="unsafe")
        outs.append(vals)
    return outs[0] if len(outs) == 1 else tuple(outs)


def port_exception_loc(exc: BaseException) -> SourceLoc:
    """Innermost traceback frame outside the simulator (the port's failing line)."""
    tb = exc.__traceback__
    loc = None
    while tb is not None:
        fn = tb.tb_frame.f_code.co_filename
        if not _is_internal(fn) and "/cuda2nki/" not in fn.replace("\\", "/"):
            loc = SourceLoc(fn, tb.tb_lineno, 1)
        elif not _is_internal(fn) and loc is None:
            pass
        tb = tb.tb_next
    return loc or SourceLoc("<unknown>", 0, 0)


def simulate_kernel(
    fn,
    inputs,
    *,
    target: str | None = None,
    grid=None,
    profile: bool = False,
    strict_uninit: bool = False,
    seed: int = 0,
    track_writers: bool = False,
) -> SimResult:
    """Public entry point: simulate ``fn`` (a kernel or plain function) on host ``inputs``.

    ``inputs`` is a list (positional) or a dict (by parameter name).  ``target`` None means trn2
    unless ``NEURON_PLATFORM_TARGET_OVERRIDE`` or a legacy ``platform_target`` says otherwise.
    ``grid`` is a legacy SPMD grid (tuple) or, for the current API, the LNC degree.
    Any exception raised by the port becomes a ``C2N3023`` diagnostic at the port's line.
    """
    if is_refused(fn):
        fn.refuse()
    k = fn if isinstance(fn, Kernel) else Kernel(fn, legacy=_guess_legacy(fn))
    if grid is not None:
        k = k[tuple(grid) if isinstance(grid, (tuple, list)) else grid]
    args, kwargs = (list(inputs), {}) if isinstance(inputs, (list, tuple)) else ([], dict(inputs))
    try:
        res = run(
            k,
            args,
            kwargs,
            target=target,
            strict_uninit=strict_uninit,
            seed=seed,
            track_writers=track_writers,
        )
    except DiagnosticError:
        raise
    except RecursionError as exc:
        raise DiagnosticError(
            make("C2N3023", port_exception_loc(exc), exc="RecursionError")
        ) from None
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - a port's bug becomes a diagnostic
        loc = port_exception_loc(exc)
        raise DiagnosticError(make("C2N3023", loc, exc=f"{type(exc).__name__}: {exc}")) from None
    if profile:
        from cuda2nki.nkisim.profile import build_profile

        res.profile = build_profile(res.trace, res.state)
    return res


def _guess_legacy(fn) -> bool:
    g = getattr(fn, "__globals__", {})
    from cuda2nki.nkisim import importer

    for v in g.values():
        if isinstance(v, importer.SimModule):
            return v._sim_legacy
    return False


def jit_factory(legacy: bool):
    def jit(fn=None, *, mode: str | None = None, platform_target: str | None = None, **kw):
        if fn is None:
            return lambda f: jit(f, mode=mode, platform_target=platform_target)
        if isinstance(fn, Kernel) or is_refused(fn):
            return fn
        return Kernel(fn, legacy=legacy, platform_target=platform_target, mode=mode)

    return jit


def public_run(k: Kernel, args, kwargs):
    """Outputs of ``k`` run as the public simulator's Python API runs it: an out-of-bounds
    access is exactly ``IndexError`` (see :mod:`cuda2nki.nkisim.oob`)."""
    try:
        return run(k, args, kwargs, public=True).outputs
    except DiagnosticIndexError as exc:
        raise public_error(exc) from exc


def simulate(kernel):
    """``nki.simulate(kernel)(*args)`` -> NumPy outputs."""
    if is_refused(kernel):
        kernel.refuse()
    k = kernel if isinstance(kernel, Kernel) else Kernel(kernel, legacy=False)

    def call(*args, **kwargs):
        return public_run(k, args, kwargs)

    return call


def legacy_simulate_kernel(kernel, *args, **kwargs):
    """Legacy ``nki.simulate_kernel(kernel[grid], *args)``."""
    if is_refused(kernel):
        kernel.refuse()
    k = kernel if isinstance(kernel, Kernel) else Kernel(kernel, legacy=True)
    return public_run(k, args, kwargs)


def baremetal(kernel=None, **kw):
    """Legacy ``nki.baremetal``: there is no device here, so it runs the simulator."""
    if kernel is None:
        return lambda k: baremetal(k)
    return (
        kernel if isinstance(kernel, Kernel) or is_refused(kernel) else Kernel(kernel, legacy=True)
    )
