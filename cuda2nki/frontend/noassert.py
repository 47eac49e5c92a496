"""The translation unit as compiled with ``NDEBUG``: every device ``assert`` removed.

A port has no assertions (NKI has none; the lowerings treat ``assert`` as a no-op), so its
numbers are those of the CUDA kernel compiled with ``-DNDEBUG``.  ``check`` runs the kernel with
its assertions first; where one fails on generated inputs (``assert(A[0] == 0.f)`` tests the data
the host happened to hold, not the kernel's arithmetic), it compares the port with the kernel
run without them and says so (C2N4031).  ``__trap()`` stays: it is not compiled out.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from cuda2nki.frontend import ast as A
from cuda2nki.rewrite import transform


def is_assert(node: object) -> bool:
    """Whether ``node`` is the statement ``assert(...);``."""
    return (
        isinstance(node, A.ExprStmt)
        and isinstance(node.expr, A.Call)
        and node.expr.func in ("assert", "__assert")
    )


def _strip(node: Any) -> Any:
    """``node`` with every ``assert`` statement made empty (expressions are never descended)."""
    return transform(node, lambda n: A.Empty(loc=n.loc) if is_assert(n) else n, skip=(A.Expr,))


def has_asserts(tu: A.TranslationUnit) -> bool:
    """Whether any function of ``tu`` holds an ``assert`` statement."""
    return _strip(tu.functions) is not tu.functions


def without_asserts(tu: A.TranslationUnit) -> A.TranslationUnit:
    """``tu`` with every ``assert(...);`` statement replaced by an empty one."""
    functions = _strip(tu.functions)
    if functions is tu.functions:
        return tu
    return dataclasses.replace(tu, functions=functions, rejected=dict(tu.rejected))
