"""``auto`` return types (``__device__ auto f(size_t n) { return 1.0 / n; }``).

A function declared ``auto`` returns the type of the value of its ``return`` statements.
The body lowerer records that type at the first ``return`` it lowers with a typed value
(``note_return``); a caller that needs the type before the function is lowered (the type of
a call expression) lowers the body once with a scratch lowerer (``deduce_return``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.cst import F
from cuda2nki.frontend.lowerbase import Reparse, _Placeholder
from cuda2nki.frontend.typesys import VOID, unqualified

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer
    from cuda2nki.frontend.unit import FuncDef, UnitContext


def is_auto(t: A.CType | None) -> bool:
    """Is ``t`` the placeholder type ``auto`` (still to be deduced)?"""
    return isinstance(t, A.OpaqueType) and t.name == "auto"


def note_return(low: BodyLowerer, value: A.Expr | None) -> None:
    """Deduce the ``auto`` return type of the function ``low`` lowers from a returned value."""
    if is_auto(low.return_type) and value is not None and value.ty is not None:
        ty = unqualified(value.ty)
        if ty is not None and not is_auto(ty):
            low.return_type = ty


def deduced(low: BodyLowerer) -> A.CType:
    """The return type ``low`` deduced while lowering a body; ``void`` if nothing was returned."""
    return VOID if is_auto(low.return_type) else low.return_type


def deduce_return(unit: UnitContext, fd: FuncDef, env: Mapping[str, object]) -> A.CType:
    """Lower ``fd``'s body under ``env`` with a scratch lowerer (its diagnostics are dropped:
    the real lowering reports them) and return the deduced return type; ``auto`` itself when
    the body cannot be lowered or the function is being deduced already (recursion)."""
    from cuda2nki.frontend.lower import BodyLowerer

    key = (fd.name, fd.order, tuple(sorted((k, repr(v)) for k, v in env.items())))
    busy = unit.auto_busy
    if key in busy:
        return A.OpaqueType(name="auto")
    busy.add(key)
    low = BodyLowerer(unit, fd.name, dict(env))
    low.return_type = A.OpaqueType(name="auto")
    try:
        unit._params(low, fd.node)  # declares them
        body = fd.node.child_by_field_id(F.body)
        if body is not None:
            low.block(body, new_scope=True)
    except (_Placeholder, Reparse, RecursionError):
        if is_auto(low.return_type):
            return low.return_type
    finally:
        busy.discard(key)
    return deduced(low)
