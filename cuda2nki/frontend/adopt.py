"""A file's code as the file that includes it sees it.

Two layouts put a kernel's meaning in another file of the tree:

* a header defines ``template <int BM, int BN> __global__ void tiled(...)`` and nothing there
  instantiates it: the launch ``tiled<64, 64><<<grid, block>>>(...)`` is in a runner ``.cu``
  that includes the header;
* a kernel file (``kernel.cu``, often with a ``.cu`` suffix) is ``#include``d by the main file
  after the typedefs, structs and macros it uses (``typedef float fp;``, ``#define BLOCK 256``),
  so read alone it is refused for names it cannot know.

The including file's translation unit holds the right lowering of that very code.
:func:`adopt_context` takes it into the file's unit (under the kernel's plain name, with the
device functions and variables it uses), keeps the launch sites of the adopted instantiation
only (those of other instantiations would give inference a geometry made for other template
arguments) and leaves out the errors that came from reading the file alone.  The first launch,
in the order the including files and their launches come, chooses the instantiation.
"""

from __future__ import annotations

import dataclasses
import os
from functools import lru_cache

from cuda2nki.diagnostics import Diagnostic, Severity
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk


def needs_context(tu: A.TranslationUnit) -> bool:
    """Whether ``tu`` has code that may read differently inside a file including it: a template
    kernel it does not instantiate, a refused kernel, or an error in its own lines."""
    if tu.rejected or any(k.template_params and not k.template_args for k in tu.kernels):
        return True
    return any(d.severity >= Severity.ERROR and d.loc.file == tu.file for d in tu.diagnostics)


def adopt_context(tu: A.TranslationUnit, units: tuple[A.TranslationUnit, ...]) -> A.TranslationUnit:
    """``tu`` as the first of ``units`` (files including it) that holds its code sees it:

    * an uninstantiated template kernel becomes the instantiation that unit launches first;
    * a kernel refused alone (a type or macro the includer defines before the ``#include``)
      becomes the unit's lowering of it;
    * an error in ``tu``'s lines that the unit does not report (it came from reading the file
      without its includer's definitions) is left out.

    Unchanged when no unit holds ``tu``'s code."""
    real = _real(tu.file)
    unit = next((u for u in units if _holds(u, real, tuple(tu.rejected))), None)
    if unit is None:
        return tu
    names = [k.name for k in tu.kernels if k.template_params and not k.template_args]
    for name in [*names, *tu.rejected]:
        got = _instance_of(name, real, unit)
        if got is not None:
            tu = _adopt(tu, name, got, unit)
        elif name in tu.rejected and name in unit.rejected:
            tu = _take_reasons(tu, name, unit)
    return _context_diagnostics(tu, unit, real)


def _take_reasons(tu: A.TranslationUnit, name: str, unit: A.TranslationUnit) -> A.TranslationUnit:
    """``tu`` with kernel ``name`` refused for the reasons ``unit`` (which refuses it too) gives,
    instead of those of reading the file alone."""
    rejected = dict(tu.rejected)
    old = set(rejected[name])
    rejected[name] = unit.rejected[name]
    old -= {d for ds in rejected.values() for d in ds}
    kept = [d for d in tu.diagnostics if d not in old]
    diags = (*kept, *(d for d in unit.rejected[name] if d not in kept))
    return dataclasses.replace(tu, rejected=rejected, diagnostics=tuple(diags))


@lru_cache(maxsize=4096)
def _real(file: str) -> str:
    return os.path.realpath(file)


def _holds(unit: A.TranslationUnit, real: str, refused: tuple[str, ...] = ()) -> bool:
    """Whether ``unit`` holds code of the file ``real``: a function defined there, a refusal
    reported there, or a refusal of a kernel of ``refused`` (the file's, refused for code of
    another file it calls into: its reasons lie there)."""
    if any(_real(f.loc.file) == real for f in unit.functions) or any(
        _real(d.loc.file) == real for ds in unit.rejected.values() for d in ds
    ):
        return True
    return any(name in unit.rejected for name in refused)


def _instance_of(name: str, real: str, unit: A.TranslationUnit) -> A.Function | None:
    """The kernel ``name`` (defined in ``real``) as ``unit`` lowers it: the instantiation its
    first launch uses, else its only lowering."""
    found = {
        f.name: f
        for f in unit.kernels
        if (f.name == name or f.name.startswith(name + "<")) and _real(f.loc.file) == real
    }
    for s in unit.launch_sites:
        if s.kernel == name and (s.instance or s.kernel) in found:
            return found[s.instance or s.kernel]
    return found.get(name) if len(found) == 1 else None


def _with_members(site: A.LaunchSite, unit: A.TranslationUnit) -> A.LaunchSite:
    """``site`` of the file read alone, with what the including file knows about the members
    of the structs it passes (the struct is declared in the including file)."""
    if site.host is None or any(getattr(site.host, "members", ())):
        return site
    for u in unit.launch_sites:
        if u.loc == site.loc and u.kernel == site.kernel and u.host is not None:
            if any(u.host.members):
                return dataclasses.replace(
                    site, host=dataclasses.replace(site.host, members=u.host.members)
                )
    return site


def _adopt(
    tu: A.TranslationUnit, name: str, inst: A.Function, unit: A.TranslationUnit
) -> A.TranslationUnit:
    chosen = inst.name
    renamed = dataclasses.replace(inst, name=name)
    callees = {f.name: f for f in _callees(inst, unit)}
    functions = [f for f in tu.functions if f.name != name and f.name not in callees]
    functions += [renamed, *callees.values()]
    names = {n.name for f in functions for n in walk(f.body) if isinstance(n, A.Name)}
    known = {g.name for g in tu.globals}
    extra_globals = [g for g in unit.globals if g.name in names and g.name not in known]
    own = {id(s) for s in unit.launch_sites}
    sites = []
    for s in tu.launch_sites:
        if s.kernel == name and id(s) not in own:
            sites.append(_with_members(s, unit))
        elif s.kernel != name or id(s) not in own:
            sites.append(s)
        elif (s.instance or s.kernel) == chosen:
            sites.append(dataclasses.replace(s, instance=name))
    rejected = dict(tu.rejected)
    gone = set(rejected.pop(name, ()))
    gone -= {d for ds in rejected.values() for d in ds}  # still another kernel's reason
    diags = tuple(
        d
        for d in tu.diagnostics
        if d not in gone and not (d.code == "C2N1023" and f"'{name}'" in d.message)
    )
    return dataclasses.replace(
        tu,
        functions=tuple(functions),
        globals=tu.globals + tuple(extra_globals),
        launch_sites=tuple(sites),
        diagnostics=diags,
        rejected=rejected,
    )


def _context_diagnostics(
    tu: A.TranslationUnit, unit: A.TranslationUnit, real: str
) -> A.TranslationUnit:
    """``tu`` without the errors in its own lines that ``unit`` does not report."""

    def key(d: Diagnostic) -> tuple:
        return (d.code, d.loc.line, d.loc.col)

    seen = {key(d) for d in unit.diagnostics if _real(d.loc.file) == real}
    seen |= {key(d) for ds in unit.rejected.values() for d in ds if _real(d.loc.file) == real}
    diags = tuple(
        d
        for d in tu.diagnostics
        if d.severity < Severity.ERROR or d.loc.file != tu.file or key(d) in seen
    )
    return tu if len(diags) == len(tu.diagnostics) else dataclasses.replace(tu, diagnostics=diags)


def _callees(fn: A.Function, unit: A.TranslationUnit) -> list[A.Function]:
    """The device functions ``fn`` calls in ``unit``, directly or through each other."""
    by_name = {f.name: f for f in unit.functions}
    out: dict[str, A.Function] = {}
    todo = [fn]
    while todo:
        f = todo.pop()
        for n in walk(f.body):
            if isinstance(n, A.Call) and n.target and n.target not in out:
                callee = by_name.get(n.target)
                if callee is not None and callee.kind != "global":
                    out[n.target] = callee
                    todo.append(callee)
    return list(out.values())
