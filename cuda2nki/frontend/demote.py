"""fp64 -> fp32: the translation unit with every ``double`` computed as ``float``.

NKI has no 64-bit float arithmetic or storage, so a kernel over ``double`` buffers is ported as
the same kernel over ``float`` ones: parameters, locals, shared arrays, casts, vector types
(``double2`` -> ``float2``) and literals (a ``double`` literal holds the float32 value nearest
to it).  Everything else -- integers, narrow floats, control flow -- is left as it was, so the
demoted unit is the CUDA kernel a user would get by replacing ``double`` with ``float``; the
recognisers and the literal lowering see an ordinary fp32 kernel.  The inverse of
:func:`cuda2nki.fidelity.oracle.promoted`, which widens fp32 to fp64 for the check's oracle.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from cuda2nki.frontend import ast as A

_F64, _F32 = "float64", "float32"


def _demote_type(t: Any) -> Any:
    if isinstance(t, A.ScalarType):
        return dataclasses.replace(t, name=_F32) if t.name == _F64 else t
    if isinstance(t, A.VectorType):
        if t.base.name != _F64:
            return t
        return dataclasses.replace(
            t, base=dataclasses.replace(t.base, name=_F32), name=t.name.replace("double", "float")
        )
    if isinstance(t, A.PointerType):
        new = _demote_type(t.pointee)
        return t if new is t.pointee else dataclasses.replace(t, pointee=new)
    if isinstance(t, A.ArrayType):
        new = _demote_type(t.elem)
        return t if new is t.elem else dataclasses.replace(t, elem=new)
    return t


def _is_type(node: Any) -> bool:
    return isinstance(node, A.ScalarType | A.VectorType | A.PointerType | A.ArrayType)


def _demote(node: Any) -> Any:
    if isinstance(node, tuple):
        items = tuple(_demote(n) for n in node)
        return node if all(a is b for a, b in zip(items, node)) else items
    if isinstance(node, dict):
        return {k: _demote(v) for k, v in node.items()}
    if _is_type(node):
        return _demote_type(node)
    if not dataclasses.is_dataclass(node) or isinstance(node, type):
        return node
    changes = {}
    for f in dataclasses.fields(node):
        if f.name == "loc":
            continue
        old = getattr(node, f.name)
        new = _demote(old)
        if new is not old:
            changes[f.name] = new
    if isinstance(node, A.FloatLit) and _is_wide(node.ty):
        changes["value"] = float(np.float32(node.value))
    return dataclasses.replace(node, **changes) if changes else node


def _is_wide(t: Any) -> bool:
    return isinstance(t, A.ScalarType) and t.name == _F64


def uses_fp64(fn: A.Function) -> bool:
    """Whether ``fn`` declares a ``double`` anywhere (parameters, locals, casts, literals)."""
    return _demote(fn) is not fn


def demoted(tu: A.TranslationUnit) -> A.TranslationUnit:
    """The translation unit with every fp64 type and literal replaced by fp32."""
    return dataclasses.replace(
        tu,
        functions=_demote(tu.functions),
        globals=_demote(tu.globals),
        rejected=dict(tu.rejected),
    )
