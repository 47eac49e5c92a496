"""Template kernels of a header instantiated by the file that launches them.

A header such as ``kernels/tiled.cuh`` defines ``template <int BM, int BN> __global__ void
tiled(...)`` and nothing instantiates it there: the launch ``tiled<64, 64><<<grid, block>>>(...)``
is in a runner ``.cu`` that includes the header.  Parsed alone, the header keeps the kernel
uninstantiated (C2N1023), so it can be neither analysed nor run.  The runner's translation unit,
though, holds the instantiation of that very definition; :func:`adopt_instances` puts it in the
header's unit under the kernel's plain name, with the device functions and variables it uses,
and keeps the launch sites of that instantiation only (those of other instantiations would give
inference a geometry made for other template arguments).  The first launch, in the order the
including files and their launches come, chooses the instantiation.
"""

from __future__ import annotations

import dataclasses
import os

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk


def adopt_instances(
    tu: A.TranslationUnit, units: tuple[A.TranslationUnit, ...]
) -> A.TranslationUnit:
    """``tu`` with each of its uninstantiated template kernels (kept as a template, or refused
    because its body needs the template arguments) replaced by the instantiation that one of
    ``units`` (files including ``tu``'s header) launches; unchanged when none does."""
    open_kernels = [k.name for k in tu.kernels if k.template_params and not k.template_args]
    for name in [*open_kernels, *tu.rejected]:
        for unit in units:
            got = _instance_of(name, tu.file, unit)
            if got is not None:
                tu = _adopt(tu, name, got, unit)
                break
    return tu


def _same_definition(f: A.Function, name: str, file: str) -> bool:
    if f.kind != "global" or not f.template_args:
        return False
    if f.name != name and not f.name.startswith(name + "<"):
        return False
    try:
        return os.path.samefile(f.loc.file, file)
    except OSError:
        return False


def _instance_of(name: str, file: str, unit: A.TranslationUnit) -> A.Function | None:
    """The instantiation of kernel ``name`` (defined in ``file``) that ``unit``'s first launch
    of it uses, if ``unit`` has it."""
    instances = {f.name: f for f in unit.kernels if _same_definition(f, name, file)}
    for s in unit.launch_sites:
        if s.kernel == name and (s.instance or s.kernel) in instances:
            return instances[s.instance or s.kernel]
    return None


def _adopt(
    tu: A.TranslationUnit, name: str, inst: A.Function, unit: A.TranslationUnit
) -> A.TranslationUnit:
    chosen = inst.name
    renamed = dataclasses.replace(inst, name=name)
    functions = [f for f in tu.functions if f.name != name] + [renamed]
    have = {f.name for f in functions}
    functions += [f for f in _callees(inst, unit) if f.name not in have]
    names = {n.name for f in functions for n in walk(f.body) if isinstance(n, A.Name)}
    known = {g.name for g in tu.globals}
    extra_globals = [g for g in unit.globals if g.name in names and g.name not in known]
    own = {id(s) for s in unit.launch_sites}
    sites = []
    for s in tu.launch_sites:
        if s.kernel != name or id(s) not in own:
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
