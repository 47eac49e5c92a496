"""The file-scope variables a translation unit's device code names.

A file's host globals (a shared-memory name string, a device handle array, a table the host
fills in) are nothing to its kernels unless device code names them: symbolic execution reads
only the globals some kernel or device function mentions, so an unrelated host declaration
never refuses a kernel.
"""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk


def device_names(tu: A.TranslationUnit, *extra: A.Function) -> set[str]:
    """Every name the bodies of ``tu``'s functions (and of ``extra`` ones, such as a rewritten
    copy of a kernel) mention."""
    out: set[str] = set()
    for f in (*tu.functions, *extra):
        out.update(n.name for n in walk(f.body) if isinstance(n, A.Name))
    return out
