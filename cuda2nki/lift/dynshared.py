"""Element counts of a kernel's dynamic shared array, from the launch's shared-memory bytes.

``extern __shared__ float row[];`` has no extent of its own: the launch gives its bytes (the
third ``<<<>>>`` argument, ``K * sizeof(float)``, in the binding's ``launch.shared_bytes``).  An
integer input whose values index it (``atomicAdd(&row[col[k]], v)``) needs values below that
count, as for any array (:mod:`cuda2nki.lift.valranges`).  Several dynamic shared arrays of one
kernel share the same bytes at offsets the source picks: only a single one is counted.
"""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk


def dynamic_shared_extents(fn: A.Function, launch: dict | None) -> dict[str, str]:
    """The kernel's one ``extern __shared__`` array -> its element count (an expression in the
    kernel's sizes), when the launch gives its shared bytes; empty otherwise."""
    from cuda2nki.frontend.typesys import sizeof

    if not launch or launch.get("shared_bytes") in (None, 0, "0"):
        return {}
    decls = [
        n
        for n in walk(fn.body)
        if isinstance(n, A.VarDecl)
        and n.storage == "extern_shared"
        and isinstance(n.ty, A.ArrayType)
    ]
    if len(decls) != 1:
        return {}
    size = sizeof(decls[0].ty.elem)
    if not size:
        return {}
    return {decls[0].name: f"({launch['shared_bytes']}) / {size}"}
