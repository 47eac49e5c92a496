"""Diagnostic rule tables, one module per id family (see :mod:`cuda2nki.diagnostics`).

``c2n1`` front end and SIMT interpreter (C2N1000-1499 front end, C2N1500-1999 SIMT),
``c2n2`` lifting / passes / code generation, ``c2n3`` NKI simulator and hardware constraints,
``c2n4`` numerical fidelity, ``c2n5`` performance and idiom findings.  Each module calls
:func:`cuda2nki.diagnostics.register` at import time.  Ids are never reused: retire instead.
"""

from __future__ import annotations

import importlib

FAMILIES = ("c2n0", "c2n1", "c2n2", "c2n3", "c2n4", "c2n5")


def load_all() -> None:
    for fam in FAMILIES:
        try:
            importlib.import_module(f"{__name__}.{fam}")
        except ModuleNotFoundError as exc:  # a family with no ids yet
            if exc.name != f"{__name__}.{fam}":
                raise
