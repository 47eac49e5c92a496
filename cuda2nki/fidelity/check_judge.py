"""Judging a check: the tolerance of each output, the output's dtype and shape, precision loss
against defect, and the verdict.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np

from cuda2nki.binding import Resolved
from cuda2nki.diagnostics import Diagnostic, Severity, SourceLoc, make
from cuda2nki.fidelity import narrowed, portscan, storagedtype
from cuda2nki.fidelity.compare import Comparison
from cuda2nki.fidelity.tolerance import (
    Tolerance,
    default_tolerance,
    derived_tolerance,
    empirical_tolerance,
)

#: sandbox stops that leave a port's numbers unknown: it ran out of time or memory before it
#: produced outputs, which says nothing about whether they would have matched
_UNFINISHED = frozenset({"timeout", "memory"})


def judge(numerics: Any, findings: list, static_only: bool) -> str:
    """The verdict of a check: ``fail`` on failed or unfinished numerics (a port stopped before
    its outputs existed never passes, even with its finding ignored) or any finding above a note;
    ``unverified`` where nothing ran (the port's numbers are unknown, never a pass)."""
    failed = numerics_outcome(numerics) in ("fail", "unfinished")
    worst = max((d.severity for d in findings), default=Severity.NOTE)
    verdict = "fail" if failed or worst > Severity.NOTE else "pass"
    return "unverified" if static_only and verdict == "pass" else verdict


def numerics_outcome(numerics: list[dict[str, Any]]) -> str:
    """``pass`` when every comparison is expected variation, ``fail`` when one is not (outputs
    that differ, or a port that crashed), ``unfinished`` when the only shortfall is a port
    stopped for time or memory before it produced outputs (its numbers are unknown, not
    wrong), ``none`` when nothing was compared (a static-only check)."""
    if not numerics:
        return "none"
    bad = [n for n in numerics if n["classification"] != "expected"]
    if not bad:
        return "pass"
    if all(n.get("output") == "*" and n.get("defect") in _UNFINISHED for n in bad):
        return "unfinished"
    return "fail"


_NARROW = re.compile(r"\b(bfloat16|bf16|float8\w*|fp8\w*|float16|fp16|tfloat32)\b")


def narrowing(port_text: str) -> bool:
    """Whether the port's text names a dtype narrower than float32 (a bf16/fp8/fp16 tile,
    cast or matmul): only then can a difference be precision loss rather than a defect."""
    code = "\n".join(ln.split("#", 1)[0] for ln in port_text.splitlines())
    try:
        import ast

        doc = ast.get_docstring(ast.parse(port_text)) or ""
    except SyntaxError:
        doc = ""
    if doc:
        code = code.replace(doc, "")
    return bool(_NARROW.search(code))


def _tolerance(
    intent: Any,
    arrays: dict[str, np.ndarray],
    r: Resolved,
    name: str,
    dtype: str,
    expected: np.ndarray,
    idiom: str | None,
    found: list[Diagnostic],
    first: bool,
    oracle64: np.ndarray | None = None,
    memo: dict[str, Any] | None = None,
) -> Tolerance:
    """IR-derived bound, else the per-dtype default widened by the kernel's fp32-vs-fp64 error."""
    tol = derived_tolerance(intent, arrays, dict(r.scalars), name, dtype, memo)
    if tol is not None:
        return tol
    k = _reduction_len(r, idiom)
    reason = "kernel not lifted to IR" if intent is None else "the IR gives no bound for it"
    if oracle64 is not None and dtype in ("float32", "float64"):
        tol = empirical_tolerance(expected, oracle64, dtype, k)
        reason += (
            "; widened by the CUDA kernel's own float32-vs-float64 error on each input set "
            "(tolerance source fp64-run)"
        )
    else:
        tol = default_tolerance(expected, dtype, k, reason)
    if first:
        found.append(
            make(
                "C2N4013",
                SourceLoc(r.binding.path, 1, 1),
                output=name,
                reason=reason,
                dtype=dtype,
                rtol=tol.rtol,
                atol=tol.atol,
            )
        )
    return tol


def _reduction_len(r: Resolved, idiom: str | None) -> int | None:
    if idiom in (None, "map", "elementwise", "transpose", "gather"):
        return None
    ins = [r.shapes[t.name] for t in r.binding.tensors if t.role in ("in", "inout")]
    return max((max(s) for s in ins if s), default=None)


def _output_layout(
    got: np.ndarray,
    cname: str,
    r: Resolved,
    info: portscan.PortInfo,
    wide: set[str] | frozenset[str] = frozenset(),
) -> list[Diagnostic]:
    """The port's output against the CUDA buffer's dtype and shape (the binding's), before values
    are compared: a different dtype (C2N4021), or the same number of elements in another shape
    (C2N4010; a different number is the comparison's shape defect)."""
    loc = SourceLoc(info.path, info.line, 1)
    out = []
    want = r.dtype(cname)
    have = np.asarray(got).dtype
    stored = storagedtype.stored_as(want, have)  # NKI stores a bool as uint8 0/1
    if have != want and not stored and not narrowed.accepted_dtype(cname, wide, have):
        out.append(
            make("C2N4021", loc, output=cname, got=_dtype_name(have), expected=_dtype_name(want))
        )
    shape = tuple(r.shapes[cname])
    have_shape = tuple(np.shape(got))
    same_size = int(np.prod(have_shape)) == int(np.prod(shape))
    squeezed = tuple(d for d in have_shape if d != 1) == tuple(d for d in shape if d != 1)
    if same_size and not squeezed:
        out.append(
            make(
                "C2N4010",
                loc,
                output=cname,
                evidence=f"port output has shape {have_shape}, the CUDA buffer is {shape} "
                "(same number of elements; values compared in row-major order)",
            )
        )
    return out


def _own_rounding(
    c: Comparison, got: np.ndarray, ref: np.ndarray, exact: np.ndarray | None, tol: Tolerance
) -> Comparison:
    """``c`` as expected variation when the port is as close to the fp64 evaluation of the CUDA
    kernel (``exact``) as the tolerance allows once the CUDA kernel's own rounding is added to it
    (its fp32 summation order, a large term folded into a running sum): a port more accurate than
    the CUDA kernel is not a defect."""
    from cuda2nki.fidelity.compare import within

    if exact is None or np.size(exact) != np.size(ref) or np.size(got) != np.size(ref):
        return c
    e = np.asarray(ref, dtype=np.float64)
    x = np.asarray(exact, dtype=np.float64).reshape(e.shape)
    g = np.asarray(got, dtype=np.float64).reshape(e.shape)
    with np.errstate(invalid="ignore", over="ignore"):
        own = np.abs(e - x)
    own = np.where(np.isfinite(own), own, 0.0)
    if not within(g, x, np.asarray(tol.bound, dtype=np.float64) + own).all():
        return c
    with np.errstate(invalid="ignore", over="ignore"):
        port_err = float(np.nanmax(np.abs(g - x), initial=0.0))
    return dataclasses.replace(
        c,
        classification="expected",
        defect=None,
        evidence=f"{c.evidence}; but the port is within the tolerance of the fp64 evaluation of "
        f"the CUDA kernel once the kernel's own rounding is counted (the fp32 CUDA kernel is off "
        f"the fp64 one by up to {float(own.max(initial=0.0)):.3g}, the port by {port_err:.3g}): "
        "the difference is the CUDA kernel's error, not the port's",
    )


def _dtype_name(dt: np.dtype) -> str:
    from cuda2nki.binding import dtype_name

    try:
        return dtype_name(dt)
    except (KeyError, ValueError, TypeError):
        return str(dt)


def _same_kind(got: np.ndarray, r: Resolved, cname: str) -> bool:
    """Both floating point (ml_dtypes' bf16/fp8 are kind 'V'), or both integer/boolean."""

    def is_float(dt: np.dtype) -> bool:
        return dt.kind in "fV"

    return is_float(np.asarray(got).dtype) == is_float(r.dtype(cname))
