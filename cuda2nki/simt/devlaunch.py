"""Dynamic parallelism in the interpreter: device-side launches and device-runtime calls.

A kernel launch from device code (:class:`~cuda2nki.frontend.ast.Launch`) runs the child grid
to completion at the launch, once per active thread that executes it, in thread order, on the
same memory: one of the schedules CUDA allows (a child may start as soon as it is launched and
must finish before its parent grid does).  Launches nest up to 24 deep (CUDA's limit; deeper is
C2N1522); a child launch with dynamic shared memory other than the parent's is refused
(C2N1522).  Since every child has finished by the time its launch returns,
``cudaDeviceSynchronize``, ``cudaGetLastError`` and ``cudaPeekAtLastError`` return
``cudaSuccess``; streams and events are null handles (the order of child grids is the order of
their launches).  ``cudaMalloc``/``cudaFree`` on the
device heap are refused when executed (C2N1522).
"""

from __future__ import annotations

import numpy as np

from cuda2nki.diagnostics import error
from cuda2nki.frontend import ast as A
from cuda2nki.simt.affine import mat
from cuda2nki.simt.chunk import Chunk
from cuda2nki.simt.memory import Ptr, Vec

I32 = A.ScalarType(name="int32")


def _refuse_when_run(what: str, loc):
    def f(c: Chunk, a):
        if c.count(a):
            raise error("C2N1522", loc, what=what, kernel=c.launch.kernel)
        return np.int32(0)

    return f


def compile_launch(fc, e: A.Launch):
    """Each active thread's launch runs its child grid to completion where it is launched."""
    from cuda2nki.simt.compiler import decay, unsupported
    from cuda2nki.simt.intrinsics import _Materialising

    child = fc.prog.tu.function(e.kernel)
    if child is None or child.kind != "global":
        raise unsupported(e.loc, f"a launch of '{e.kernel}' (no kernel of that name)")
    if len(child.params) != len(e.args):
        raise unsupported(e.loc, f"a launch of '{e.kernel}' with {len(e.args)} arguments")
    m = _Materialising(fc)
    argfs = [m.rvalue(x, decay(p.ty)) for x, p in zip(e.args, child.params)]
    gf, bf = m.rvalue(e.grid), m.rvalue(e.block)
    smf = m.rvalue(e.shared_bytes) if e.shared_bytes is not None else None
    loc, name, prog = e.loc, e.kernel, fc.prog

    def run(c: Chunk, a):
        n = c.count(a)
        if n == 0:
            return None
        if smf is not None and np.any(np.asarray(smf(c, a)) != prog.options["shared_bytes"]):
            raise error(
                "C2N1522",
                loc,
                what="a child launch with its own dynamic shared memory",
                kernel=c.launch.kernel,
            )
        vals, g, b = [f(c, a) for f in argfs], gf(c, a), bf(c, a)
        from cuda2nki.simt.runner import run_child_grid

        for j in range(n):  # the launching threads in thread order
            frame = [_pick(v, j) for v in vals]
            run_child_grid(c, prog, name, _dims(g, j), _dims(b, j), frame, loc)
        return None

    return run, A.ScalarType(name="void")


def _pick(v, j: int):
    """Thread ``j``'s value of ``v`` (uniform values are everyone's)."""
    if isinstance(v, Ptr):
        off = mat(v.off)
        return Ptr(v.buf, np.int64(off[j]) if np.ndim(off) else off)
    if isinstance(v, Vec):
        return Vec(tuple(_pick(x, j) for x in v.lanes))
    v = mat(v)
    return v[j] if isinstance(v, np.ndarray) and v.ndim else v


def _dims(v, j: int) -> tuple[int, ...]:
    v = _pick(v, j)
    if isinstance(v, Vec):
        return tuple(int(x) for x in v.lanes)
    return (int(v),)


def _success(fc, e: A.Call):
    fs = [fc.rvalue(x) for x in e.args]

    def f(c, a):
        for g in fs:
            g(c, a)
        return np.int32(0)

    return f, I32


def _create(fc, e: A.Call):
    """``cudaStreamCreateWithFlags(&s, flags)``: a null handle."""
    from cuda2nki.simt.intrinsics import _out_lv

    out = _out_lv(fc, e.args[0])

    def f(c, a):
        out.store(c, a, Ptr(None, np.int64(0)))
        return np.int32(0)

    return f, I32


def _heap(fc, e: A.Call):
    return _refuse_when_run(f"{e.func} on the device heap", e.loc), I32


def register(reg) -> None:
    reg(
        "cudaDeviceSynchronize cudaGetLastError cudaPeekAtLastError cudaStreamDestroy "
        "cudaEventDestroy cudaEventRecord cudaStreamWaitEvent",
        _success,
        "exact",
        "device runtime: returns cudaSuccess (child grids complete at their launch)",
    )
    reg(
        "cudaStreamCreateWithFlags cudaEventCreateWithFlags",
        _create,
        "partial",
        "device runtime: stores a null handle",
    )
    reg("cudaMalloc cudaFree", _heap, "partial", "device heap: refused when executed (C2N1522)")
