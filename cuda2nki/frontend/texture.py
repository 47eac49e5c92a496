"""Texture objects as read-only input arrays.

A texture read is a read of a global array through an addressing and filtering mode that the
host fixes when it creates the texture object::

    cudaTextureDesc td = {};
    td.addressMode[0] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModeLinear;
    cudaCreateTextureObject(&tex, &rd, &td, nullptr);
    blur<<<grid, block>>>(out, w, h, tex);
    ...
    __global__ void blur(float* out, int w, int h, cudaTextureObject_t tex) {
        ... tex2D<float>(tex, x + 0.5f, y + 0.5f) ...
    }

A kernel parameter of type ``cudaTextureObject_t`` whose every use is a fetch
(``tex1Dfetch<T>``, ``tex1D<T>``, ``tex2D<T>``, ``tex3D<T>`` of a scalar or vector ``T``)
becomes a ``const T*`` parameter under its own name, and its extents new trailing size
parameters (``<tex>_width[, _height[, _depth]]``) that the binding takes as the array's shape
(outermost first; a vector texel's lanes innermost: ``[h, w, 4]`` for ``float4``).  Under
``cudaReadModeNormalizedFloat`` the array holds the texels' own 8/16-bit integer type (a
reference declares it; an object's comes from the host's ``cudaCreateChannelDesc``) and a
fetch returns floats.  A fetch calls a device function of :mod:`.texfetch`: ``tex1Dfetch`` reads linear
memory (zero out of range); the filtered fetches apply the texture's mode: point or linear
filtering (linear with the 1.8 fixed-point weights of the CUDA programming guide's
texture-fetching appendix), unnormalised or normalised coordinates,
clamp / border / wrap / mirror addressing.  The modes come from the host's texture descriptor
(:mod:`.texmodes`); where it cannot be followed the read is point-filtered, clamped and
unnormalised, and a note says so.  A texture passed on to device functions is read there
(each callee cloned per texture kind and mode).  Whatever stays unsupported (another use of
the object, a 64-bit texel, a layered or cubemap fetch, a normalised read whose texel type is
not known, linear filtering of integers read as elements) is C2N1015 naming the construct, and
the kernel is refused.
"""

from __future__ import annotations

import dataclasses
import re
import zlib

import tree_sitter as ts

from cuda2nki.diagnostics import Diagnostic, make
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.arrayextent import array_extents
from cuda2nki.frontend.texbound import bound_width
from cuda2nki.frontend.texfetch import FetchShape, fetch_function
from cuda2nki.frontend.texmodes import TextureModes, modes_for, texel_type
from cuda2nki.frontend.typesys import named_type
from cuda2nki.frontend.visit import walk
from cuda2nki.rewrite import transform

#: the texture object type a kernel parameter may have
OBJECT_TYPE = "cudaTextureObject_t"
#: the opaque type of a file-scope texture reference (``texture<float, 2> tex;``) in the AST
LEGACY_TYPE = "texture"
#: fetch function -> number of float coordinates (0: ``tex1Dfetch``'s integer index)
FETCHES = {"tex1Dfetch": 0, "tex1D": 1, "tex2D": 2, "tex3D": 3}
_DIM_NAMES = ("width", "height", "depth")


def is_texture_object(ty: A.CType | None) -> bool:
    """An object parameter or a file-scope reference."""
    return isinstance(ty, A.OpaqueType) and ty.name in (OBJECT_TYPE, LEGACY_TYPE)


@dataclasses.dataclass(frozen=True)
class LegacyTexture:
    """A file-scope ``texture<T, dim, readMode> name;`` reference."""

    name: str
    elem: A.CType | None  # None: not a type known here
    read: str  # element | normalized
    loc: A.SourceLoc


_LEGACY = re.compile(r"^\s*texture\s*<\s*([\w\s]+?)\s*(?:,\s*(\w+)\s*)?(?:,\s*(\w+)\s*)?>\s*$")


def legacy_texture(type_text: str) -> tuple[A.CType | None, str] | None:
    """(element type, read mode) of a ``texture<...>`` type spelling, None for another type."""
    m = _LEGACY.match(type_text)
    if m is None:
        return None
    read = "normalized" if m.group(3) == "cudaReadModeNormalizedFloat" else "element"
    words = " ".join(m.group(1).split())
    return named_type(_WORDS.get(words, words)), read


_WORDS = {
    "unsigned int": "uint",
    "unsigned char": "uchar",
    "unsigned short": "ushort",
    "signed char": "char",
}


def register_legacy(unit: object, type_node: ts.Node, decls: list[ts.Node]) -> bool:
    """Record the file-scope texture references that ``type_node decls;`` declares in
    ``unit.textures``; False when the type is not a texture reference."""
    got = legacy_texture(type_node.text.decode())
    if got is None:
        return False
    for d in decls:
        while d is not None and d.type != "identifier":
            d = d.child_by_field_id("declarator")
        if d is not None:
            name = d.text.decode()
            unit.textures[name] = LegacyTexture(name, got[0], got[1], unit.loc(d))  # type: ignore[attr-defined]
    return True


def fetch_call(
    func: str,
    args: tuple[A.Expr, ...],
    targs: tuple[A.Expr | A.CType, ...],
    loc: A.SourceLoc,
    result: A.CType | None = None,
) -> A.Call | str:
    """The call ``func<targs>(args)`` of a texture object, or what makes it unsupported.  Its
    template argument is the texel's type; its type ``result`` where the read converts the
    texel (a reference read as ``cudaReadModeNormalizedFloat``), else the texel's type."""
    if func not in FETCHES:
        return func
    if len(targs) != 1 or not isinstance(targs[0], A.ScalarType | A.VectorType):
        what = "a texture fetch without a scalar or vector element type"
        return f"{what} ({func}<{_spell(targs)}>)" if targs else what
    if not args or not is_texture_object(args[0].ty) or not isinstance(args[0], A.Name):
        return f"{func} of an expression that is not a texture object parameter"
    if len(args) != 1 + max(FETCHES[func], 1):
        return f"{func} with {len(args) - 1} coordinates"
    elem = dataclasses.replace(targs[0], const=False)
    ty = dataclasses.replace(result, const=False) if result is not None else elem
    return A.Call(loc=loc, func=func, args=args, template_args=(elem,), ty=ty)


def _spell(targs: tuple[A.Expr | A.CType, ...]) -> str:
    return ", ".join(getattr(t, "name", type(t).__name__) for t in targs)


# --------------------------------------------------------------------------- the kernel rewrite


@dataclasses.dataclass(frozen=True)
class _Texture:
    """One texture parameter of a kernel and how it is read."""

    param: A.Param
    elem: A.ScalarType | A.VectorType  # the texel's type, as the array holds it
    coords: int  # 0: tex1Dfetch, else the number of float coordinates
    modes: TextureModes
    result: A.ScalarType | A.VectorType | None = None  # what a fetch returns (None: elem)

    @property
    def returns(self) -> A.ScalarType | A.VectorType:
        return self.result or self.elem


def textures_as_inputs(tu: A.TranslationUnit, source: str) -> A.TranslationUnit:
    """``tu`` (lowered from ``source``) with each kernel's texture objects made input arrays,
    or the kernel refused with C2N1015 naming what is not supported (see the module doc)."""
    kernels = [
        f for f in tu.functions if f.kind == "global" and (_texture_params(f) or _references(f))
    ]
    if not kernels:
        return tu
    functions = list(tu.functions)
    helpers: dict[str, A.Function] = {}
    rejected = dict(tu.rejected)
    diags = list(tu.diagnostics)
    sites = list(tu.launch_sites)
    for fn in kernels:
        i = functions.index(fn)
        refs = _references(fn)
        if refs:  # file-scope references: trailing parameters, passed the bound arrays
            fn = dataclasses.replace(fn, params=(*fn.params, *refs))
            sites = [_bound_args(s, fn, refs, source) for s in sites]
        widths = {r.name: bound_width(r.name, source, fn, sites) for r in refs}
        known = {k: (v,) for k, v in widths.items() if v}
        for p in _texture_params(fn):  # an object made from a CUDA array: the array's extents
            extents = array_extents(p.name, fn, source, sites)
            if extents:
                known[p.name] = extents
        got = _rewrite(fn, tu, source, helpers, known)
        if isinstance(got, Diagnostic):
            del functions[i]
            rejected[fn.name] = (got,)
            diags.append(got)
            continue
        new, notes = got
        functions[i] = new
        diags.extend(notes)
    known = {f.name for f in functions}
    functions.extend(h for name, h in helpers.items() if name not in known)
    return dataclasses.replace(
        tu,
        functions=tuple(functions),
        rejected=rejected,
        diagnostics=tuple(diags),
        launch_sites=tuple(sites),
    )


def _references(fn: A.Function) -> tuple[A.Param, ...]:
    """A parameter for each file-scope texture reference that ``fn`` reads (first use first)."""
    out: dict[str, A.Param] = {}
    for n in walk(fn.body):
        if isinstance(n, A.Name) and isinstance(n.ty, A.OpaqueType) and n.ty.name == LEGACY_TYPE:
            out.setdefault(n.name, A.Param(loc=n.loc, name=n.name, ty=n.ty))
    return tuple(out.values())


def _bound_args(
    site: A.LaunchSite, fn: A.Function, refs: tuple[A.Param, ...], source: str
) -> A.LaunchSite:
    """``site`` of ``fn`` passing, for each reference, the array the host binds it to
    (``cudaBindTexture(0, ref, ptr, bytes)``), or the reference's name."""
    if (site.instance or site.kernel) != fn.name:
        return site
    names = tuple(bound_array(r.name, source) or r.name for r in refs)
    args = tuple(A.Name(loc=site.loc, name=n) for n in names)
    texts = site.arg_texts + names if site.arg_texts else site.arg_texts
    return dataclasses.replace(site, args=(*site.args, *args), arg_texts=texts)


def bound_array(ref: str, source: str) -> str | None:
    """The one array that ``cudaBindTexture*`` binds reference ``ref`` to, or None."""
    pat = rf"cudaBindTexture(?:2D)?\s*\(\s*[^,]*,\s*&?\s*{re.escape(ref)}\s*,\s*(?:\(\s*[\w\s*]+\)\s*)?([A-Za-z_]\w*)\b"
    got = set(re.findall(pat, source))
    return got.pop() if len(got) == 1 else None


def _texture_params(fn: A.Function) -> list[A.Param]:
    return [p for p in fn.params if is_texture_object(p.ty)]


def _rewrite(
    fn: A.Function,
    tu: A.TranslationUnit,
    source: str,
    helpers: dict[str, A.Function],
    known: dict[str, tuple[str | None, ...]] | None = None,
) -> tuple[A.Function, list[Diagnostic]] | Diagnostic:
    """``fn`` with its texture parameters made arrays, and notes; or the refusal.  A texture
    passed on to a device function is read there: that function is cloned for the texture's
    kind and mode (see :func:`_apply`)."""
    notes: list[Diagnostic] = []
    textures: dict[str, _Texture] = {}
    for p in _texture_params(fn):
        calls = _fetches(fn, p.name, tu, 0)
        if isinstance(calls, Diagnostic):
            return calls
        kinds = {(c.func, c.template_args[0], c.ty) for c in calls}
        if len(kinds) > 1:
            names = ", ".join(sorted({k[0] for k in kinds}))
            what = f"texture '{p.name}' read by several fetch kinds ({names})"
            return make("C2N1015", calls[0].loc, what=what)
        if not calls:  # an unused texture: an input nobody reads
            textures[p.name] = _Texture(p, A.ScalarType(name="float32"), 0, TextureModes())
            continue
        func, elem, result = next(iter(kinds))
        modes = TextureModes()
        if FETCHES[func]:  # tex1Dfetch reads linear memory: no filtering, no addressing
            modes, note = modes_for(fn, p, tu, source, legacy=p.ty.name == LEGACY_TYPE)
            notes.append(note)
        got = texel_type(modes, elem, result, p.ty.name == LEGACY_TYPE, source)
        if isinstance(got, str):
            return make("C2N1015", calls[0].loc, what=f"texture '{p.name}': {got}")
        elem, modes = got
        tex = _Texture(p, elem, FETCHES[func], modes, result if result != elem else None)
        why = tex.modes.unsupported(elem, tex.coords)
        if why is not None:
            return make("C2N1015", calls[0].loc, what=f"texture '{p.name}': {why}")
        textures[p.name] = tex
    return _apply(fn, textures, tu, helpers, known), notes


#: how deep device functions may pass a texture on (a template recursion unrolled per level)
_MAX_DEPTH = 64


def _fetches(
    fn: A.Function, name: str, tu: A.TranslationUnit, depth: int
) -> list[A.Call] | Diagnostic:
    """The fetches of texture ``name`` in ``fn`` and in the device functions it is passed to,
    or C2N1015 at a use that is neither."""
    out: list[A.Call] = []
    allowed: set[int] = set()
    for n in walk(fn.body):
        if isinstance(n, A.VarDecl) and is_texture_object(n.ty):
            return make("C2N1015", n.loc, what=f"texture object variable '{n.name}'")
        if not isinstance(n, A.Call):
            continue
        if n.func in FETCHES and n.args and _tex_name(n) == name:
            out.append(n)
            allowed.add(id(n.args[0]))
            continue
        for k, a in enumerate(n.args):
            if not (isinstance(a, A.Name) and a.name == name and is_texture_object(a.ty)):
                continue
            callee = tu.function(n.target) if n.target else None
            if callee is None or k >= len(callee.params) or depth >= _MAX_DEPTH:
                what = f"texture object '{name}' passed to '{n.func}'"
                return make("C2N1015", a.loc, what=what)
            got = _fetches(callee, callee.params[k].name, tu, depth + 1)
            if isinstance(got, Diagnostic):
                return got
            out.extend(got)
            allowed.add(id(a))
    for n in walk(fn.body):
        if isinstance(n, A.Name) and n.name == name and is_texture_object(n.ty):
            if id(n) not in allowed:
                what = f"texture object '{name}' used other than by a fetch"
                return make("C2N1015", n.loc, what=what)
    return out


def _apply(
    fn: A.Function,
    textures: dict[str, _Texture],
    tu: A.TranslationUnit,
    helpers: dict[str, A.Function],
    known: dict[str, tuple[str | None, ...]] | None = None,
) -> A.Function:
    """``fn`` with each texture parameter of ``textures`` an array (its extents trailing size
    parameters, or the kernel parameters ``known`` names for a reference's bound texel count or
    an object's array extents),
    its fetches calls of the fetch functions, and its calls passing a texture
    on calls of clones of the callee made for that texture."""
    taken = {p.name for p in fn.params} | {
        n.name for n in walk(fn.body) if isinstance(n, A.VarDecl)
    }
    params: list[A.Param] = []
    extra: list[A.Param] = []
    sizes: dict[str, tuple[str, ...]] = {}
    for p in fn.params:
        tex = textures.get(p.name)
        if tex is None:
            params.append(p)
            continue
        names = _size_names(p.name, tex.coords, taken)
        # the host's texel count (texbound) or array extents (arrayextent): kernel parameters
        dims = _known_dims(names, (known or {}).get(p.name, ()))
        taken |= set(dims)
        sizes[p.name] = dims
        ptr = A.PointerType(pointee=dataclasses.replace(tex.elem, const=True), restrict=True)
        shape = tuple(reversed(dims)) if fn.kind == "global" else ()
        if shape and isinstance(tex.elem, A.VectorType):  # the lanes innermost
            shape = (*shape, str(tex.elem.width))
        params.append(dataclasses.replace(p, ty=ptr, dims=shape))
        int32 = A.ScalarType(name="int32")
        extra.extend(A.Param(loc=p.loc, name=d, ty=int32) for d in dims if d in names)

    def size_args(name: str, loc: A.SourceLoc) -> tuple[A.Name, ...]:
        return tuple(A.Name(loc=loc, name=d, ty=A.ScalarType(name="int32")) for d in sizes[name])

    def swap(e: object) -> object:
        if not isinstance(e, A.Call):
            return e
        if e.func in FETCHES and _tex_name(e) in textures:
            tex = textures[_tex_name(e)]
            helper = fetch_function(FetchShape(tex.elem, tex.coords, tex.modes))
            helpers.setdefault(helper.name, helper)
            args = (_pointer_name(e.args[0], tex), *size_args(tex.param.name, e.loc), *e.args[1:])
            ty = tex.returns
            return A.Call(loc=e.loc, func=helper.name, args=args, target=helper.name, ty=ty)
        passed = {
            k: textures[a.name]
            for k, a in enumerate(e.args)
            if isinstance(a, A.Name) and is_texture_object(a.ty) and a.name in textures
        }
        callee = tu.function(e.target) if passed and e.target else None
        if callee is None:
            return e
        clone = _clone(callee, passed, tu, helpers)
        args = tuple(
            _pointer_name(a, passed[k]) if k in passed else a for k, a in enumerate(e.args)
        )
        args += tuple(x for k in sorted(passed) for x in size_args(e.args[k].name, e.loc))
        return dataclasses.replace(e, func=clone, target=clone, args=args)

    body = transform(fn.body, swap)
    return dataclasses.replace(fn, params=(*params, *extra), body=body)


def _clone(
    callee: A.Function,
    passed: dict[int, _Texture],
    tu: A.TranslationUnit,
    helpers: dict[str, A.Function],
) -> str:
    """The name of ``callee`` made for the textures ``passed`` at its parameter positions
    (built once per kind and mode)."""
    key = repr(sorted((k, t.elem.name, t.coords, t.modes, t.result) for k, t in passed.items()))
    name = f"{callee.name}__tex{zlib.crc32(key.encode()):08x}"
    if name not in helpers:
        helpers[name] = callee  # a placeholder while a recursion reaches it again
        textures = {
            callee.params[k].name: dataclasses.replace(t, param=callee.params[k])
            for k, t in passed.items()
        }
        done = _apply(callee, textures, tu, helpers)
        helpers[name] = dataclasses.replace(done, name=name)
    return name


def _tex_name(call: A.Call) -> str | None:
    a = call.args[0]
    return a.name if isinstance(a, A.Name) and is_texture_object(a.ty) else None


def _pointer_name(arg: A.Expr, tex: _Texture) -> A.Name:
    ptr = A.PointerType(pointee=dataclasses.replace(tex.elem, const=True), restrict=True)
    return A.Name(loc=arg.loc, name=tex.param.name, ty=ptr)


def _known_dims(names: tuple[str, ...], known: tuple[str | None, ...]) -> tuple[str, ...]:
    """``names`` with each extent the host ties to a kernel parameter replaced by it."""
    return tuple(known[i] if i < len(known) and known[i] else n for i, n in enumerate(names))


def _size_names(name: str, coords: int, taken: set[str]) -> tuple[str, ...]:
    """``width[, height[, depth]]`` size names of texture ``name`` (``width`` for a
    ``tex1Dfetch`` of linear memory)."""
    out = []
    for d in _DIM_NAMES[: max(coords, 1)]:
        cand = f"{name}_{d}"
        while cand in taken:
            cand += "_"
        out.append(cand)
    return tuple(out)
