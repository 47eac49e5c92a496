"""Shapes written on array parameters: ``float img[28][28]`` is a buffer of 28 x 28 floats.

C ignores a parameter's outer extent, but the kernel was written for it, and the host passes
buffers of that size (``(float (*)[28])d_img``).  Where nothing else bounds the buffer (its
accesses, guards, loops, the host's allocation), its written extents give its shape, with a
note saying so (see :mod:`cuda2nki.frontend.arrayparams`).
"""

from __future__ import annotations

from cuda2nki.diagnostics import Diagnostic, make
from cuda2nki.frontend import ast as A


def from_written_extents(
    fn: A.Function, shapes: dict, kernel: str, diags: list[Diagnostic]
) -> None:
    """Set ``shapes[p]`` of each array parameter ``p`` of ``fn`` still without a shape."""
    for p in fn.params:
        if not p.rows or 0 in p.rows or shapes.get(p.name) is not None:
            continue
        if not isinstance(p.ty, A.PointerType) or not isinstance(p.ty.pointee, A.ScalarType):
            continue  # still a pointer to rows: not read as a flat buffer
        shapes[p.name] = list(p.rows)
        dims = "".join(f"[{d}]" for d in p.rows)
        source = f"its declaration '{p.name}{dims}' (the extents the kernel is written for)"
        what = f"'{p.name}' shape {list(p.rows)}"
        diags.append(make("C2N2100", p.loc, what=what, kernel=kernel, source=source))


__all__ = ["from_written_extents"]
