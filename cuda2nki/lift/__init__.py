"""cuda2nki.lift: CUDA AST -> intent tile IR.

``lift_kernel(tu, kernel_name, binding=None) -> LiftResult`` is the entry point; see
:mod:`cuda2nki.lift.api`.  ``infer_binding(tu, kernel_name)`` infers a partial binding from the
launch site and the kernel's index expressions (:mod:`cuda2nki.lift.infer`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from cuda2nki.lift.api import LiftResult

__all__ = ["lift_kernel", "LiftResult", "infer_binding"]


def __getattr__(name: str):
    if name in ("lift_kernel", "LiftResult"):
        from cuda2nki.lift import api

        return getattr(api, name)
    if name == "infer_binding":
        from cuda2nki.lift.infer import infer_binding

        return infer_binding
    raise AttributeError(name)
