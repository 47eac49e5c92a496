"""Surface objects as arrays a kernel reads and writes.

A surface is a 1-D or 2-D array of texels the kernel reads and writes at byte x-coordinates::

    surf2Dwrite(v, surf, x * sizeof(float4), y);              // trap on a bad coordinate
    float4 p = surf2Dread<float4>(surf, x * 16, y, cudaBoundaryModeClamp);
    surf1Dread(&w, surf, i * 4, cudaBoundaryModeZero);

A kernel parameter of type ``cudaSurfaceObject_t`` whose every use is such a read or write
becomes a ``T*`` parameter under its own name (its texel type ``T`` the one its accesses agree
on), its extents new trailing size parameters ``<surf>_width[, _height]`` (in texels) that the
binding takes as its shape (outermost first; a vector texel's lanes innermost), so the surface
is an input, an output or both, as its accesses say.  Each access calls a device function of
the source below:

* the texel index is the byte coordinate divided by the texel's size;
* ``cudaBoundaryModeClamp`` clamps an out-of-range byte coordinate into the surface,
  ``cudaBoundaryModeZero`` reads zero and drops the write.  ``cudaBoundaryModeTrap`` (the
  default) makes the GPU fail the kernel at an out-of-range coordinate: no valid kernel makes
  one, and here such a read takes the nearest texel and such a write is dropped, so that the
  interpreter and the port agree at every size ``check`` chooses (the surface's extents are
  size parameters of their own, which the host ties to the kernel's sizes out of sight).

A surface used otherwise (copied, passed to a device function, read with two texel types,
layered or 3-D) is C2N1015 naming the use, and the kernel is refused.
"""

from __future__ import annotations

import dataclasses
import functools

from cuda2nki.diagnostics import Diagnostic, make
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.texmodes import C_NAMES
from cuda2nki.frontend.typesys import VECTOR_TYPES, sizeof
from cuda2nki.frontend.visit import walk
from cuda2nki.rewrite import transform

#: the surface object type a kernel parameter may have
SURFACE_TYPE = "cudaSurfaceObject_t"
#: access function -> (dimensions, writes)
ACCESSES = {
    "surf1Dread": (1, False),
    "surf2Dread": (2, False),
    "surf1Dwrite": (1, True),
    "surf2Dwrite": (2, True),
}
BOUNDARY = {
    "cudaBoundaryModeTrap": "trap",
    "cudaBoundaryModeClamp": "clamp",
    "cudaBoundaryModeZero": "zero",
}
_DIM_NAMES = ("width", "height")


def is_surface(ty: A.CType | None) -> bool:
    return isinstance(ty, A.OpaqueType) and ty.name == SURFACE_TYPE


def access_call(
    func: str,
    surf: A.Expr,
    coords: tuple[A.Expr, ...],
    value: A.Expr | None,
    texel: A.CType | None,
    mode: str,
    loc: A.SourceLoc,
) -> A.Call | str:
    """The read or write ``func`` of surface ``surf`` kept as a call for the rewrite: args
    ``(surf, x_bytes[, y][, value])``, template args ``(texel type, Name(boundary mode))``;
    or what makes it unsupported."""
    dims, writes = ACCESSES[func]
    if not (isinstance(surf, A.Name) and is_surface(surf.ty)):
        return f"{func} of an expression that is not a surface object parameter"
    if len(coords) != dims:
        return f"{func} with {len(coords)} coordinates"
    if mode not in BOUNDARY.values():
        return f"{func} with a boundary mode that is not a constant"
    if not isinstance(texel, A.ScalarType | A.VectorType) or _lane(texel).name not in C_NAMES:
        name = getattr(texel, "name", "unknown")
        return f"{func} of texels of type {name}"
    texel = dataclasses.replace(texel, const=False)
    args = (surf, *coords, *((value,) if writes and value is not None else ()))
    ty = A.ScalarType(name="void") if writes else texel
    tmode = A.Name(loc=loc, name=mode)
    return A.Call(loc=loc, func=func, args=args, template_args=(texel, tmode), ty=ty)


def _lane(ty: A.ScalarType | A.VectorType) -> A.ScalarType:
    return ty.base if isinstance(ty, A.VectorType) else ty


# --------------------------------------------------------------------------- the kernel rewrite


def surfaces_as_arrays(tu: A.TranslationUnit, source: str = "") -> A.TranslationUnit:
    """``tu`` (lowered from ``source``) with each kernel's surface objects made arrays, or the
    kernel refused with C2N1015 naming what is not supported (see the module doc); a surface
    made from a CUDA array whose extents the kernel receives takes them (``arrayextent``)."""
    users = [f for f in tu.functions if any(is_surface(p.ty) for p in f.params)]
    if not users:
        return tu
    functions = list(tu.functions)
    helpers: dict[str, A.Function] = {}
    rejected = dict(tu.rejected)
    diags = list(tu.diagnostics)
    for fn in users:
        known = _extents(fn, source, list(tu.launch_sites))
        got = _rewrite(fn, helpers, known) if fn.kind == "global" else None
        if got is None:  # a device function taking a surface: its kernels are refused
            continue
        i = functions.index(fn)
        if isinstance(got, Diagnostic):
            del functions[i]
            rejected[fn.name] = (got,)
            diags.append(got)
            continue
        functions[i] = got
    known = {f.name for f in functions}
    functions.extend(h for name, h in helpers.items() if name not in known)
    return dataclasses.replace(
        tu, functions=tuple(functions), rejected=rejected, diagnostics=tuple(diags)
    )


def _extents(
    fn: A.Function, source: str, sites: list[A.LaunchSite]
) -> dict[str, tuple[str | None, ...]]:
    from cuda2nki.frontend.arrayextent import array_extents

    out = {}
    for p in fn.params:
        got = array_extents(p.name, fn, source, sites) if is_surface(p.ty) else None
        if got:
            out[p.name] = got
    return out


def _rewrite(
    fn: A.Function,
    helpers: dict[str, A.Function],
    known: dict[str, tuple[str | None, ...]] | None = None,
) -> A.Function | Diagnostic:
    surfaces = {p.name: p for p in fn.params if is_surface(p.ty)}
    calls: dict[str, list[A.Call]] = {name: [] for name in surfaces}
    allowed: set[int] = set()
    for n in walk(fn.body):
        if isinstance(n, A.Call) and n.func in ACCESSES and n.args:
            first = n.args[0]
            if isinstance(first, A.Name) and first.name in surfaces:
                calls[first.name].append(n)
                allowed.add(id(first))
    for n in walk(fn.body):
        if isinstance(n, A.Name) and n.name in surfaces and id(n) not in allowed:
            what = f"surface object '{n.name}' used other than by surf1D/2Dread/write"
            return make("C2N1015", n.loc, what=what)
    texels: dict[str, tuple[A.ScalarType | A.VectorType, int]] = {}
    for name, cs in calls.items():
        kinds = {(c.template_args[0], ACCESSES[c.func][0]) for c in cs}
        if len(kinds) > 1:
            what = f"surface '{name}' accessed with several texel types or dimensions"
            return make("C2N1015", cs[0].loc, what=what)
        texels[name] = next(iter(kinds)) if kinds else (A.ScalarType(name="float32"), 1)
    return _apply(fn, surfaces, texels, helpers, known or {})


def _apply(
    fn: A.Function,
    surfaces: dict[str, A.Param],
    texels: dict[str, tuple[A.ScalarType | A.VectorType, int]],
    helpers: dict[str, A.Function],
    known: dict[str, tuple[str | None, ...]],
) -> A.Function:
    taken = {p.name for p in fn.params} | {
        n.name for n in walk(fn.body) if isinstance(n, A.VarDecl)
    }
    params: list[A.Param] = []
    extra: list[A.Param] = []
    sizes: dict[str, tuple[str, ...]] = {}
    int32 = A.ScalarType(name="int32")
    for p in fn.params:
        if p.name not in surfaces:
            params.append(p)
            continue
        texel, dims = texels[p.name]
        names = []
        given = known.get(p.name, ())
        for i, d in enumerate(_DIM_NAMES[:dims]):
            if i < len(given) and given[i]:  # the array's extent, a kernel parameter
                names.append(given[i])
                continue
            cand = f"{p.name}_{d}"
            while cand in taken:
                cand += "_"
            names.append(cand)
        own = [n for n in names if n not in taken]
        taken |= set(names)
        sizes[p.name] = tuple(names)
        shape: tuple[str, ...] = tuple(reversed(names))
        if isinstance(texel, A.VectorType):
            shape = (*shape, str(texel.width))
        ptr = A.PointerType(pointee=texel, restrict=True)
        params.append(dataclasses.replace(p, ty=ptr, dims=shape, persistent=True))
        extra.extend(A.Param(loc=p.loc, name=d, ty=int32) for d in own)

    def swap(e: object) -> object:
        if not (isinstance(e, A.Call) and e.func in ACCESSES and e.args):
            return e
        first = e.args[0]
        if not (isinstance(first, A.Name) and first.name in surfaces):
            return e
        texel, dims = texels[first.name]
        _, writes = ACCESSES[e.func]
        mode = e.template_args[1].name  # type: ignore[union-attr]
        helper = access_function(texel.name, dims, writes, mode)
        helpers.setdefault(helper.name, helper)
        ptr = A.Name(loc=first.loc, name=first.name, ty=A.PointerType(pointee=texel))
        extents = tuple(A.Name(loc=e.loc, name=d, ty=int32) for d in sizes[first.name])
        coords = e.args[1 : 1 + dims]
        value = e.args[1 + dims :]
        args = (*value, ptr, *extents, *coords)
        return A.Call(loc=e.loc, func=helper.name, args=args, target=helper.name, ty=e.ty)

    body = transform(fn.body, swap)
    return dataclasses.replace(fn, params=(*params, *extra), body=body)


# --------------------------------------------------------------------------- access functions


def access_function(texel: str, dims: int, writes: bool, mode: str) -> A.Function:
    """The device function reading or writing one texel of a surface (see the module doc)."""
    return _lowered(texel, dims, writes, mode)


@functools.lru_cache(maxsize=128)
def _lowered(texel: str, dims: int, writes: bool, mode: str) -> A.Function:
    from cuda2nki.frontend.driver import lower_source

    name, source = access_source(texel, dims, writes, mode)
    tu = lower_source(source, "<surface access>", None, (), None)
    fn = tu.function(name)
    if fn is None:  # pragma: no cover - the generated source always lowers
        raise RuntimeError(f"surface access {name} did not lower: {tu.diagnostics}")
    return fn


def access_source(texel: str, dims: int, writes: bool, mode: str) -> tuple[str, str]:
    """(name, CUDA source) of the device function for one kind of surface access."""
    vec = VECTOR_TYPES.get(texel)
    c_texel = texel if vec is not None else C_NAMES[texel]
    size = sizeof(vec if vec is not None else A.ScalarType(name=texel)) or 1
    kind = "write" if writes else "read"
    name = f"__c2n_surf{dims}D{kind}_{texel}_{mode}"
    extents = ", ".join(f"int {s}" for s in ("w", "h")[:dims])
    coords = ", ".join(("int xb", "int y")[:dims])
    inside = "xb >= 0 && xb < w * SZ" + (" && y >= 0 && y < h" if dims == 2 else "")
    inside = inside.replace("SZ", str(size))
    lines = []
    if writes:
        lines.append(f"__device__ void {name}({c_texel} v, {c_texel}* s, {extents}, {coords})")
    else:
        lines.append(f"__device__ {c_texel} {name}(const {c_texel}* s, {extents}, {coords})")
    lines.append("{")
    at = f"y * w + xb / {size}" if dims == 2 else f"xb / {size}"
    clamped = f"yc * w + xc / {size}" if dims == 2 else f"xc / {size}"
    if mode == "clamp" or not writes:  # a read outside: from a clamped texel
        lines.append(f"    int xc = min(max(xb, 0), (w - 1) * {size});")
        if dims == 2:
            lines.append("    int yc = min(max(y, 0), h - 1);")
    if writes:
        target = clamped if mode == "clamp" else at
        store = f"s[{target}] = v;"
        lines.append(f"    {store}" if mode == "clamp" else f"    if ({inside}) {store}")
    elif mode == "zero":
        zero = f"make_{texel}({', '.join(['0'] * vec.width)})" if vec else f"({c_texel})0"
        lines.append(f"    return ({inside}) ? s[{clamped}] : {zero};")
    else:
        lines.append(f"    return s[{clamped}];")
    lines.append("}")
    return name, "\n".join(lines) + "\n"
