"""The CUDA side of a check: the kernel's reference runs in the SIMT interpreter (remembered per
kernel, point and inputs), its fp64 evaluation, the NDEBUG fallback and the axis-swap re-runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cuda2nki.binding import Resolved
from cuda2nki.diagnostics import Diagnostic, DiagnosticError, make
from cuda2nki.fidelity import portscan, refcache
from cuda2nki.fidelity import traffic as traffic_mod
from cuda2nki.fidelity.oracle import run_fp64
from cuda2nki.nkisim.dtypes import CANARY_F32, canary_mask


@dataclass(frozen=True)
class CudaSource:
    """The CUDA file as read, and how it was parsed: re-parsed with a literal changed to test
    the literal-based root causes (``constants.py``)."""

    text: str
    path: str
    defines: tuple[tuple[str, str], ...] = ()
    include_dirs: tuple[str, ...] = ()
    templates: tuple[tuple[str, str], ...] = ()

    def parse(self, text: str) -> Any:
        from cuda2nki import frontend

        return frontend.parse_source(
            text,
            self.path,
            defines=dict(self.defines),
            include_dirs=self.include_dirs,
            templates=dict(self.templates),
        )


def _reference(
    tu: Any, name: str, r: Resolved, arrays: dict[str, np.ndarray], traffic: bool = False
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], traffic_mod.Traffic | None]:
    """:func:`_reference_run`, remembered per kernel, point and inputs (:mod:`.refcache`)."""
    key = refcache.run_key(f"reference traffic={traffic}", tu, name, r, arrays)
    return refcache.remembered(key, lambda: _reference_run(tu, name, r, arrays, traffic))


def _fp64(
    tu64: Any, name: str, r: Resolved, arrays: dict[str, np.ndarray]
) -> dict[str, np.ndarray] | None:
    """:func:`run_fp64`, remembered per kernel, point and inputs (:mod:`.refcache`)."""
    key = refcache.run_key("fp64", tu64, name, r, arrays)
    return refcache.remembered(key, lambda: run_fp64(tu64, name, r, arrays))


def _reference_run(
    tu: Any, name: str, r: Resolved, arrays: dict[str, np.ndarray], traffic: bool = False
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], traffic_mod.Traffic | None]:
    """The CUDA kernel's outputs, per output the elements the kernel never writes, and (with
    ``traffic``) the bytes the computation needs: the distinct input bytes the kernel reads
    and the output bytes it writes, counted in the same run.

    ``out`` buffers start filled with the canary NaN, so elements no CUDA thread writes are told
    apart; they are "don't care" for the comparison (a port may leave them or fill them).
    """
    from cuda2nki.simt.runner import run_kernel_full

    args: dict[str, Any] = {**r.scalars, **{k: v.copy() for k, v in arrays.items()}}
    for t in r.binding.tensors:
        if t.role == "out" and args[t.name].dtype == np.float32:
            args[t.name].fill(CANARY_F32)
    res = run_kernel_full(
        tu,
        name,
        grid=r.grid,
        block=r.block,
        shared_bytes=r.shared_bytes,
        args=args,
        track_reads=traffic,
    )
    out = res.outputs
    refs, dont_care = {}, {}
    for t in r.binding.tensors:
        if t.role == "in":
            continue
        a = np.asarray(out[t.name]).reshape(r.shapes[t.name])
        mask = canary_mask(a)
        if mask.any():
            a = a.copy()
            a[mask] = 0.0
        refs[t.name], dont_care[t.name] = a, mask
    needed = traffic_mod.from_run(r.binding, res.read_bytes, refs, dont_care) if traffic else None
    return refs, dont_care, needed


def _ndebug(
    tu: Any, exc: DiagnosticError, info: portscan.PortInfo
) -> tuple[Any, Diagnostic] | None:
    """For a CUDA run stopped by a failed ``assert`` (C2N1513): the unit compiled with NDEBUG
    (:mod:`cuda2nki.frontend.noassert`) and the note saying where the assertion failed; None
    for any other fault, or a unit without assertions (a ``__trap()``)."""
    from cuda2nki.frontend.noassert import has_asserts, without_asserts

    fault = next((d for d in exc.diagnostics if d.code == "C2N1513"), None)
    if fault is None or not has_asserts(tu):
        return None
    where = fault.message.split(" in kernel ", 1)[-1]
    note = make("C2N4031", fault.loc, where=where, port=Path(info.path).name)
    return without_asserts(tu), note


def _swapped_axes(
    tu: Any,
    name: str,
    r: Resolved,
    arrays: dict[str, np.ndarray],
    cname: str,
    got: np.ndarray,
    expected: np.ndarray,
) -> str:
    """:func:`axisswap.transposed_layout`'s evidence, the CUDA kernel re-run at the binding
    point with one input's sizes exchanged (other inputs and the output keep their roles)."""
    from cuda2nki.fidelity import axisswap

    roles = {t.name: t for t in r.binding.tensors}

    def rerun(overrides: Mapping[str, Any], inputs: Mapping[str, np.ndarray]) -> Any:
        try:
            r2 = r.binding.resolve({**r.scalars, **overrides})
        except DiagnosticError:
            return None
        args: dict[str, np.ndarray] = {}
        for k, v in {**arrays, **inputs}.items():
            t = roles.get(k)
            if t is not None and t.role == "out" and r2.shapes[k] != v.shape:
                v = np.zeros(r2.shapes[k], v.dtype)  # a fresh output of the swapped shape
            if t is not None and r2.shapes[k] != v.shape:
                return None  # another input would change shape: not this hypothesis
            args[k] = v
        try:
            return _reference(tu, name, r2, args)[0][cname]
        except DiagnosticError:
            return None

    shapes = {t.name: t.shape for t in r.binding.tensors if t.role in ("in", "inout")}
    ins = {k: v for k, v in arrays.items() if k in shapes}
    return axisswap.transposed_layout(got, expected, ins, shapes, r.scalars, rerun)
