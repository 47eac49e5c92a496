"""C2N1xxx: front end (C2N1000-1499) and SIMT interpreter (C2N1500-1999) rule tables."""

import importlib

for _part in ("c2n1_frontend", "c2n1_simt"):
    try:
        importlib.import_module(f"cuda2nki.rules.{_part}")
    except ModuleNotFoundError as _exc:  # the SIMT table may not exist yet
        if _exc.name != f"cuda2nki.rules.{_part}":
            raise
