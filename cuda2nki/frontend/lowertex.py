"""Texture fetches in the body lowering: a fetch of a kernel's texture object parameter is kept
as a call for :mod:`cuda2nki.frontend.texture` to rewrite; any other texture or surface
construct is C2N1015, naming it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.diagnostics import SourceLoc
from cuda2nki.frontend import ast as A
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
