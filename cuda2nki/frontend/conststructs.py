"""A host-filled ``__constant__`` struct of device pointers and sizes as kernel inputs.

``__constant__ Params cp;`` written once by the host (``cudaMemcpyToSymbol(cp, &h,
sizeof(Params))``, ``h.a`` and ``h.b`` device buffers, ``h.n`` a size) and read by kernels as
``cp.b[i] = cp.s * cp.a[i]`` is the struct-parameter idiom moved to constant memory.  The
front end holds it as one global per member (``cp__a``, ``cp__b``, ``cp__n``, ``cp__s``, see
:mod:`cuda2nki.frontend.aggregates`).  Each member a kernel reads, and never assigns, becomes a
trailing parameter of that kernel under the member's name, as a host-filled table does
(:mod:`cuda2nki.frontend.constparams`): a pointer member a tensor (written through or read),
a number a scalar; the launch sites pass the symbol's members.  A member that a device
function reads stays a global (its readers would need the parameter too).
"""

from __future__ import annotations

import dataclasses

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.constparams import _WRITE, _clashes, _reads, _with_args
from cuda2nki.frontend.visit import walk


def const_structs_as_parameters(tu: A.TranslationUnit, source: str) -> A.TranslationUnit:
    """``tu`` (lowered from ``source``) with the members of its host-filled constant structs
    made parameters of the kernels that read them."""
    members = host_filled_members(source, tu.globals)
    if not members:
        return tu
    device_reads = {n for f in tu.functions if f.kind != "global" for n in _reads(f, members)}
    usable = {n: g for n, g in members.items() if n not in device_reads}
    added: dict[str, tuple[str, ...]] = {}
    functions = []
    for f in tu.functions:
        names = sorted(_reads(f, usable)) if f.kind == "global" else []
        if not names or _assigned(f) & set(names) or _clashes(f, names):
            functions.append(f)
            continue
        params = tuple(A.Param(loc=usable[n].loc, name=n, ty=usable[n].ty) for n in names)
        functions.append(dataclasses.replace(f, params=(*f.params, *params)))
        added[f.name] = tuple(names)
    if not added:
        return tu
    sites = [_with_args(s, added.get(s.instance or s.kernel, ())) for s in tu.launch_sites]
    still = {n for f in functions if f.name not in added for n in _reads(f, usable)}
    moved = {n for names in added.values() for n in names} - still
    return dataclasses.replace(
        tu,
        functions=tuple(functions),
        launch_sites=tuple(sites),
        globals=tuple(g for g in tu.globals if g.name not in moved),
    )


def host_filled_members(source: str, tu_globals: tuple[A.GlobalVar, ...]) -> dict[str, A.GlobalVar]:
    """The member globals (``cp__a``) of the constant structs the host writes whole, where
    the struct has a pointer member and each member is a number or a pointer to numbers."""
    written = set(_WRITE.findall(source))
    groups: dict[str, list[A.GlobalVar]] = {}
    for g in tu_globals:
        if g.space == "constant" and g.init is None and "__" in g.name:
            groups.setdefault(g.name.split("__")[0], []).append(g)
    out: dict[str, A.GlobalVar] = {}
    for struct, gs in groups.items():
        if struct not in written or not all(_plain_member(g.ty) for g in gs):
            continue
        if any(isinstance(g.ty, A.PointerType) for g in gs):
            out.update({g.name: g for g in gs})
    return out


def _plain_member(t: A.CType) -> bool:
    if isinstance(t, A.PointerType):
        t = t.pointee
    return isinstance(t, A.ScalarType) and t.name != "void"


def _assigned(f: A.Function) -> set[str]:
    """Names ``f`` assigns, increments or takes the address of (not the memory a pointer
    points to: ``cp__b[i] = v`` writes a buffer, not the member)."""
    out = set()
    for n in walk(f.body):
        target = None
        if isinstance(n, A.Assign):
            target = n.target
        elif isinstance(n, A.Unary) and (n.op.endswith(("++", "--")) or n.op == "&"):
            target = n.operand
        if isinstance(target, A.Name):
            out.add(target.name)
    return out
