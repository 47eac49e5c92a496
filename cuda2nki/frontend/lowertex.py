"""Texture fetches in the body lowering: a fetch of a kernel's texture object parameter is kept
as a call for :mod:`cuda2nki.frontend.texture` to rewrite; any other texture or surface
construct is C2N1015, naming it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.diagnostics import SourceLoc
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.surface import ACCESSES, BOUNDARY, access_call
from cuda2nki.frontend.texture import (
    FETCHES,
    LEGACY_TYPE,
    LegacyTexture,
    fetch_call,
    is_texture_object,
)
from cuda2nki.frontend.typesys import named_type

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer

    _Base = BodyLowerer
else:
    _Base = object


class TextureLowering(_Base):
    def texture_fetch(
        self,
        node: ts.Node,
        short: str,
        targ_nodes: list[ts.Node],
        arg_nodes: list[ts.Node],
        loc: SourceLoc,
    ) -> A.Expr:
        """``tex2D<float>(tex, x, y)`` of a texture parameter: a call kept for the rewrite;
        anything else: C2N1015 naming what it is."""
        if not self.host and short in ACCESSES:
            return self._surface_access(node, short, targ_nodes, arg_nodes, loc)
        if self.host or short not in FETCHES:
            raise self.fail("C2N1015", node, what=short)
        first = arg_nodes[0] if arg_nodes else None
        name = self.text(first) if first is not None else ""
        sym = self.lookup(name) if first is not None else None
        legacy = self.u.textures.get(name) if sym is None else None
        if legacy is not None:
            return self._legacy_fetch(node, short, legacy, arg_nodes, loc)
        if sym is None or not is_texture_object(sym.ty):  # not a texture object parameter
            raise self.fail("C2N1015", node, what=short)
        targs = tuple(self._template_arg(t) for t in targ_nodes)
        args = tuple(self.expr(a) for a in arg_nodes)
        got = fetch_call(short, args, targs, loc)
        if isinstance(got, str):
            raise self.fail("C2N1015", node, what=got)
        return got

    def _legacy_fetch(
        self,
        node: ts.Node,
        short: str,
        tex: LegacyTexture,
        arg_nodes: list[ts.Node],
        loc: SourceLoc,
    ) -> A.Expr:
        """``tex1Dfetch(ref, i)`` of a file-scope ``texture<T, dim, mode> ref``."""
        if not isinstance(tex.elem, A.ScalarType | A.VectorType):
            what = f"texture reference '{tex.name}' of an element type that is not a number"
            raise self.fail("C2N1015", node, what=what)
        result = None
        if tex.read == "normalized":  # integer texels read as floats
            lanes = tex.elem.width if isinstance(tex.elem, A.VectorType) else 1
            result = named_type("float" if lanes == 1 else f"float{lanes}")
        ref = A.Name(loc=loc, name=tex.name, ty=A.OpaqueType(name=LEGACY_TYPE))
        args = (ref, *(self.expr(a) for a in arg_nodes[1:]))
        got = fetch_call(short, args, (tex.elem,), loc, result)
        if isinstance(got, str):
            raise self.fail("C2N1015", node, what=got)
        return got

    def _surface_access(
        self,
        node: ts.Node,
        short: str,
        targ_nodes: list[ts.Node],
        arg_nodes: list[ts.Node],
        loc: SourceLoc,
    ) -> A.Expr:
        """``surf2Dwrite(v, s, x, y[, mode])``, ``surf2Dread<T>(s, x, y[, mode])`` or
        ``surf2Dread(&v, s, x, y[, mode])`` (and the 1-D forms) of a surface parameter: a
        call kept for :mod:`cuda2nki.frontend.surface` to rewrite."""
        dims, writes = ACCESSES[short]
        targ = self._template_arg(targ_nodes[0]) if targ_nodes else None
        into = None  # the read's destination in the pointer form
        rest = list(arg_nodes)
        value = None
        if writes or (targ is None and rest and self.text(rest[0]).lstrip().startswith("&")):
            if not rest:
                raise self.fail("C2N1015", node, what=f"{short} without arguments")
            first = self.expr(rest.pop(0))
            if writes:
                value = first
                texel = targ if targ is not None else first.ty
            else:
                into = first.operand if isinstance(first, A.Unary) and first.op == "&" else None
                texel = into.ty if into is not None else None
        else:
            texel = targ
        if not rest:
            raise self.fail("C2N1015", node, what=f"{short} without a surface")
        surf = self.expr(rest[0])
        mode = "trap"
        if len(rest) == dims + 2:
            mode = BOUNDARY.get(self.text(rest[-1]).strip().split("::")[-1], "?")
            rest = rest[:-1]
        coords = tuple(self.expr(a) for a in rest[1:])
        got = access_call(short, surf, coords, value, texel, mode, loc)  # type: ignore[arg-type]
        if isinstance(got, str):
            raise self.fail("C2N1015", node, what=got)
        if into is not None:
            return A.Assign(loc=loc, op="=", target=into, value=got, ty=into.ty)
        return got
