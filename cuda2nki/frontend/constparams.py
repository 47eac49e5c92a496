"""Host-filled ``__constant__`` arrays as kernel inputs.

A convolution mask, filter taps or a lookup table often lives in constant memory, declared
without an initialiser and written by the host before the launch:

    __constant__ float taps[NTAPS];
    ...
    cudaMemcpyToSymbol(taps, h_taps, NTAPS * sizeof(float));
    conv<<<grid, block>>>(in, out, n);

For the kernel the array is an input like any pointer parameter: its values come from the
host, and a port needs them as a tensor.  Each such array (one-dimensional, of a scalar type,
written by ``cudaMemcpyToSymbol`` in the source, never written by device code) that a kernel
reads directly becomes a trailing ``const T*`` parameter of that kernel, under the array's own
name, and the kernel's launch sites pass the symbol.  Binding inference, the interpreter, the
lifter and the port then treat it as the input it is.  An array that a device function reads
stays a global (its readers would need the parameter too), and so does any array the file
never writes from the host: uninitialised constant memory is zero, a value no input replaces.
"""

from __future__ import annotations

import dataclasses
import re

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.globaltemplates import template_of
from cuda2nki.frontend.visit import walk

_WRITE = re.compile(r"\bcudaMemcpyToSymbol(?:Async)?\s*\(\s*(?:HIP_SYMBOL\s*\(\s*)?(\w+)")


def tables_as_parameters(tu: A.TranslationUnit, source: str) -> A.TranslationUnit:
    """``tu`` (lowered from ``source``) with its host-filled tables made kernel parameters."""
    tables = host_filled(source, tu.globals)
    if not tables:
        return tu
    functions, launches, moved = as_parameters(list(tu.functions), list(tu.launch_sites), tables)
    return dataclasses.replace(
        tu,
        functions=tuple(functions),
        launch_sites=tuple(launches),
        globals=tuple(g for g in tu.globals if g.name not in moved),
    )


def host_filled(source: str, tu_globals: tuple[A.GlobalVar, ...]) -> dict[str, A.GlobalVar]:
    """The file's ``__constant__`` arrays that the host writes and nothing initialises."""
    written = set(_WRITE.findall(source))
    return {
        g.name: g
        for g in tu_globals
        if g.space == "constant"
        and g.init is None
        and template_of(g.name) in written  # `mask<T>`: each instance (see .globaltemplates)
        and isinstance(g.ty, A.ArrayType)
        and isinstance(g.ty.elem, A.ScalarType)
        and len(g.ty.dims) == 1
        and g.ty.dims[0] is not None
    }


def as_parameters(
    functions: list[A.Function], launches: list[A.LaunchSite], tables: dict[str, A.GlobalVar]
) -> tuple[list[A.Function], list[A.LaunchSite], set[str]]:
    """``functions`` and ``launches`` with each table a kernel reads made its parameter (see the
    module docstring), and the names of the tables that became parameters everywhere they are
    read (no longer globals)."""
    if not tables:
        return functions, launches, set()
    device_reads = {
        name for f in functions if f.kind != "global" for name in _reads(f, tables) | _writes(f)
    }
    usable = {n: g for n, g in tables.items() if n not in device_reads}
    added: dict[str, tuple[str, ...]] = {}
    out = []
    for f in functions:
        names = sorted(_reads(f, usable)) if f.kind == "global" else []
        if not names or _writes(f) & set(names) or _clashes(f, names):
            out.append(f)
            continue
        params = tuple(_param(usable[n]) for n in names)
        out.append(dataclasses.replace(f, params=(*f.params, *params)))
        added[f.name] = tuple(names)
    sites = [_with_args(s, added.get(s.instance or s.kernel, ())) for s in launches]
    moved = set(usable) - {n for f in out for n in _reads(f, usable) if f.name not in added}
    return out, sites, moved & {n for names in added.values() for n in names}


def _reads(f: A.Function, tables: dict[str, A.GlobalVar]) -> set[str]:
    return {n.name for n in walk(f.body) if isinstance(n, A.Name) and n.name in tables}


def _writes(f: A.Function) -> set[str]:
    out = set()
    for n in walk(f.body):
        if isinstance(n, A.Assign):
            base = n.target
            while isinstance(base, A.Index):
                base = base.base
            if isinstance(base, A.Name):
                out.add(base.name)
    return out


def _clashes(f: A.Function, names: list[str]) -> bool:
    """A parameter or local of the kernel already has one of the names."""
    taken = {p.name for p in f.params}
    taken |= {n.name for n in walk(f.body) if isinstance(n, A.VarDecl)}
    return bool(taken & set(names))


def _param(g: A.GlobalVar) -> A.Param:
    assert isinstance(g.ty, A.ArrayType) and isinstance(g.ty.elem, A.ScalarType)
    elem = dataclasses.replace(g.ty.elem, const=True)
    ptr = A.PointerType(pointee=elem, const=False, restrict=True)
    return A.Param(loc=g.loc, name=g.name, ty=ptr, extent=g.ty.dims[0])


def _with_args(site: A.LaunchSite, names: tuple[str, ...]) -> A.LaunchSite:
    if not names:
        return site
    args = tuple(A.Name(loc=site.loc, name=n) for n in names)
    texts = site.arg_texts + names if site.arg_texts else site.arg_texts
    return dataclasses.replace(site, args=(*site.args, *args), arg_texts=texts)
