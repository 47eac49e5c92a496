"""C2N2xxx: lifting (C2N2000-2499) and passes / code generation (C2N2500-2999) rule tables."""

import importlib

for _part in ("c2n2_ir", "c2n2_lift", "c2n2_codegen"):
    try:
        importlib.import_module(f"cuda2nki.rules.{_part}")
    except ModuleNotFoundError as _exc:  # a part may not exist yet
        if _exc.name != f"cuda2nki.rules.{_part}":
            raise
