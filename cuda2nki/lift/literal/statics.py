"""Static locals that a literal port may treat as ordinary locals.

``static const float c[] = {...};`` in a device function is a table the compiler builds once;
since it is never written and C++ requires its initialiser to be known before the first call
(a device static takes a constant initialiser), every call sees the same values a plain local
initialised the same way would hold.  A static that is written, or one with no initialiser,
keeps state across calls and threads and stays refused.
"""

from __future__ import annotations

from cuda2nki.frontend import ast as A


def _const(ty: A.CType) -> bool:
    if isinstance(ty, A.ArrayType):
        return _const(ty.elem)
    return bool(getattr(ty, "const", False)) and not isinstance(ty, A.PointerType)


def read_only_static(s: A.VarDecl) -> bool:
    """Whether the ``static`` local ``s`` is a read-only table or scalar with an initialiser."""
    return s.storage == "static" and s.init is not None and _const(s.ty)
