"""Defaults for the parameters that stand for file-scope ``__device__`` variables.

The front end makes such a variable a parameter of the kernels that use it (see
:mod:`cuda2nki.frontend.deviceparams`).  A caller of the interpreter that does not pass it runs
the kernel as the program's first launch would: on the variable's zero-initialised static
storage; its final contents are then reported with the other globals, not as an output.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from cuda2nki.frontend import ast as A
from cuda2nki.simt.numeric import DTYPES


def missing_symbols(fn: A.Function, args: Mapping[str, object]) -> dict[str, np.ndarray]:
    """Zero-filled storage for each ``__device__`` variable parameter of ``fn`` not in ``args``."""
    out: dict[str, np.ndarray] = {}
    for p in fn.params:
        if not p.symbol or p.name in args or not isinstance(p.ty, A.PointerType):
            continue
        elem = p.ty.pointee
        if not isinstance(elem, A.ScalarType) or elem.name not in DTYPES:
            continue
        count = p.extent if p.extent is not None else int(np.prod(p.rows or (1,)))
        out[p.name] = np.zeros(count, DTYPES[elem.name])
    return out


__all__ = ["missing_symbols"]
