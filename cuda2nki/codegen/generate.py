"""Render a scheduled kernel as a complete NKI module (header, imports, signature, body)."""

from __future__ import annotations

from collections.abc import Sequence

from cuda2nki.codegen import render, spell, suppress
from cuda2nki.codegen.emit import emit_body, signature, uses_int_helpers
from cuda2nki.diagnostics import Diagnostic
from cuda2nki.ir.nodes import Kernel


def generate(
    kernel: Kernel,
    target: str = "nki",
    *,
    source_name: str = "kernel.cu",
    header: Sequence[str] = (),
    defaults: dict[str, object] | None = None,
    inline: Sequence[Diagnostic] = (),
) -> str:
    """NKI source for the scheduled ``kernel`` (``target``: ``nki`` or ``legacy``)."""
    if target not in render.TARGETS:
        raise ValueError(f"unknown target {target!r}")
    sig = signature(kernel, defaults)
    params = [spell.py_name(t) for t in sig.tensors]
    params += [
        spell.py_name(n) if d is None else f"{spell.py_name(n)}={d}" for n, d in sig.keywords
    ]
    body = emit_body(suppress.annotate(kernel), target, source_name, sig, inline)
    return render.module(
        target,
        header=list(header),
        name=spell.py_name(kernel.name),
        params=", ".join(params),
        body=body,
        helpers=render.int_helpers() if uses_int_helpers(kernel.body) else "",
    )
