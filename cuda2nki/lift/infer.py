"""Binding inference (placeholder until the launch-site inference lands): see ``infer_binding``."""

from __future__ import annotations

from cuda2nki.diagnostics import Diagnostic, make
from cuda2nki.frontend import ast as A


def infer_binding(tu: A.TranslationUnit, kernel_name: str) -> tuple[dict, list[Diagnostic]]:
    """Partial binding dict for ``kernel_name`` and diagnostics saying what is missing."""
    fn = next((f for f in tu.kernels if f.name == kernel_name), None)
    diags = []
    if fn is not None:
        for p in fn.params:
            if isinstance(p.ty, A.PointerType):
                diags.append(make("C2N2101", p.loc, what=f"the shape of '{p.name}'",
                                  kernel=kernel_name, why="inference not available"))
    return {}, diags


def binding_from_inference(tu: A.TranslationUnit, kernel_name: str):
    partial, diags = infer_binding(tu, kernel_name)
    return None, diags
