"""An fp64 run of the CUDA kernel itself: the kernel-derived tolerance when no IR bound exists.

The CUDA AST is rewritten so that every ``float`` (fp32) becomes ``double`` -- variables, pointers,
literals, casts -- and the kernel runs again in the SIMT interpreter on the same inputs widened to
fp64.  Narrow storage types (half, bf16) are left alone: their rounding is part of the kernel.
The difference between the fp32 and the fp64 run is the kernel's own rounding error on exactly
these inputs (cancellation, long sums, special values included); a port computing in the same
precision may differ from the fp32 reference by about as much again.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from cuda2nki.frontend import ast as A

_F32 = "float32"


def _promote_type(t: Any) -> Any:
    if isinstance(t, A.ScalarType):
        return dataclasses.replace(t, name="float64") if t.name == _F32 else t
    if isinstance(t, A.VectorType):
        return (
            t
            if t.base.name != _F32
            else dataclasses.replace(
                t,
                base=dataclasses.replace(t.base, name="float64"),
                name=t.name.replace("float", "double"),
            )
        )
    if isinstance(t, A.PointerType):
        return dataclasses.replace(t, pointee=_promote_type(t.pointee))
    if isinstance(t, A.ArrayType):
        return dataclasses.replace(t, elem=_promote_type(t.elem))
    return t


def _promote(node: Any) -> Any:
    if isinstance(node, tuple):
        return tuple(_promote(n) for n in node)
    if isinstance(node, dict):
        return {k: _promote(v) for k, v in node.items()}
    if isinstance(node, A.ScalarType | A.VectorType | A.PointerType | A.ArrayType):
        return _promote_type(node)
    if not dataclasses.is_dataclass(node) or isinstance(node, type):
        return node
    changes = {}
    for f in dataclasses.fields(node):
        if f.name == "loc":
            continue
        old = getattr(node, f.name)
        new = _promote(old)
        if new is not old:
            changes[f.name] = new
    if isinstance(node, A.Call) and node.func in _F32_MATH:
        changes["func"] = _F32_MATH[node.func]
    return dataclasses.replace(node, **changes) if changes else node


# fp32 math spellings and their double forms
_F32_MATH = {
    "expf": "exp",
    "__expf": "exp",
    "logf": "log",
    "__logf": "log",
    "sqrtf": "sqrt",
    "rsqrtf": "rsqrt",
    "tanhf": "tanh",
    "erff": "erf",
    "powf": "pow",
    "__powf": "pow",
    "fmaf": "fma",
    "fmaxf": "fmax",
    "fminf": "fmin",
    "fabsf": "fabs",
    "__fdividef": "__ddiv_rn",
    "exp2f": "exp2",
    "log2f": "log2",
    "sinf": "sin",
    "cosf": "cos",
    "__sinf": "sin",
    "__cosf": "cos",
    "floorf": "floor",
    "ceilf": "ceil",
    "roundf": "round",
    "truncf": "trunc",
    "log1pf": "log1p",
    "expm1f": "expm1",
    "tanf": "tan",
    "atanf": "atan",
    "sinhf": "sinh",
    "coshf": "cosh",
    "fmodf": "fmod",
    "__frcp_rn": "__drcp_rn",
    "log10f": "log10",
    "exp10f": "exp10",
    "cbrtf": "cbrt",
    "hypotf": "hypot",
    "rhypotf": "rhypot",
    "norm3df": "norm3d",
    "rnorm3df": "rnorm3d",
    "norm4df": "norm4d",
    "rnorm4df": "rnorm4d",
    "atan2f": "atan2",
}


def promoted(tu: A.TranslationUnit) -> A.TranslationUnit:
    """The translation unit with fp32 replaced by fp64 everywhere."""
    return dataclasses.replace(
        tu,
        functions=_promote(tu.functions),
        globals=_promote(tu.globals),
        rejected=dict(tu.rejected),
    )


def run_fp64(
    tu64: A.TranslationUnit, name: str, resolved: Any, arrays: dict[str, np.ndarray]
) -> dict[str, np.ndarray] | None:
    """Outputs of the fp64 run of ``tu64 = promoted(tu)``, or None when it cannot run (no oracle)."""
    from cuda2nki import simt
    from cuda2nki.diagnostics import DiagnosticError

    wide = {
        k: (v.astype(np.float64) if v.dtype == np.float32 else v.copy()) for k, v in arrays.items()
    }
    args: dict[str, Any] = {**resolved.scalars, **wide}
    try:
        out = simt.run_kernel(
            tu64,
            name,
            grid=resolved.grid,
            block=resolved.block,
            shared_bytes=resolved.shared_bytes * 2,
            args=args,
        )
    except (DiagnosticError, KeyError, TypeError, ValueError, NotImplementedError):
        return None
    return {
        t.name: np.asarray(out[t.name]).reshape(resolved.shapes[t.name])
        for t in resolved.binding.tensors
        if t.role != "in"
    }
