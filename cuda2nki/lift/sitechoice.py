"""The launch a kernel's binding is read from, when the tree launches it in several places.

A kernel defined in a header is often launched by several files that include it (the
application, a test, a benchmark), each with its own geometry and sizes.  The binding takes one
launch, deterministically: the kernel's own file first, then the including files in path order
(as :mod:`cuda2nki.frontend.launchers` adds them), the first launch of that file in source
order.  When the launches come from more than one file, a note says which one was taken and
where the others are, so that a user who wants another one knows what to write in the binding.
"""

from __future__ import annotations

from pathlib import Path

from cuda2nki.diagnostics import Diagnostic, make
from cuda2nki.frontend import ast as A

#: other launch files named in the note at most
_MAX_NAMED = 3


def chosen_site(
    tu: A.TranslationUnit, fn: A.Function, diags: list[Diagnostic]
) -> A.LaunchSite | None:
    """The first launch site of ``fn`` (None: none); a note in ``diags`` when other files
    launch it too."""
    sites = [s for s in tu.launch_sites if (s.instance or s.kernel) == fn.name]
    if not sites:
        return None
    first = sites[0]
    others: dict[str, A.LaunchSite] = {}
    for s in sites[1:]:
        if s.loc.file != first.loc.file:
            others.setdefault(s.loc.file, s)
    if others:
        diags.append(_note(fn, first, list(others.values())))
    return first


def _note(fn: A.Function, first: A.LaunchSite, others: list[A.LaunchSite]) -> Diagnostic:
    named = ", ".join(_where(s) for s in others[:_MAX_NAMED])
    more = len(others) - _MAX_NAMED
    if more > 0:
        named += f" and {more} more"
    source = (
        f"{_where(first)}, the first of the {len(others) + 1} files that launch it (the "
        f"kernel's own file first, then the others in path order; also launched at {named}: "
        "set [launch] and the sizes in the binding to take another)"
    )
    return make("C2N2100", first.loc, what="the launch to bind", kernel=fn.name, source=source)


def _where(s: A.LaunchSite) -> str:
    return f"{Path(s.loc.file).name}:{s.loc.line}"


__all__ = ["chosen_site"]
