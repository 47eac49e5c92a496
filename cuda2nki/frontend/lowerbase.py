"""Pieces shared by the body lowering modules: scope symbols, control-flow signals, helpers."""

from __future__ import annotations

from dataclasses import dataclass

import tree_sitter as ts

from cuda2nki.frontend import ast as A

BUILTIN_DIM3 = ("threadIdx", "blockIdx", "blockDim", "gridDim")
CG_NAMESPACES = ("cg", "cooperative_groups")
CG_TYPES = frozenset(
    "thread_block thread_block_tile thread_group coalesced_group grid_group multi_grid_group "
    "cluster_group block_tile_memory".split()
)
FULL_MASK = 0xFFFFFFFF
#: the type of a local whose declaration was refused: a use fails without a diagnostic of its
#: own (the declaration's says why), instead of a cascade of "undeclared identifier" errors
REFUSED = A.OpaqueType(name="<refused declaration>")
TEXTURE_TYPES = frozenset(
    "cudaTextureObject_t cudaSurfaceObject_t texture surface textureReference surfaceReference".split()
)


@dataclass(frozen=True, init=False)
class Sym:
    """A name in scope: its type, its value when it is a compile-time integer constant, and for a
    cooperative-groups object its kind (``"block"`` or ``"tile"``) and tile size.  ``ref``: a
    C++ reference, held as a pointer (``ty``) and dereferenced at every use."""

    ty: A.CType | None
    const: int | float | None = None
    cg: str | None = None
    tile: int = 0
    ref: bool = False
    mask: str | None = None  # a coalesced/labeled group: the variable holding its lane mask

    def __init__(  # the dataclass's own __init__, writing the fields directly (hot path)
        self,
        ty: A.CType | None,
        const: int | float | None = None,
        cg: str | None = None,
        tile: int = 0,
        ref: bool = False,
        mask: str | None = None,
    ) -> None:
        d = self.__dict__
        d["ty"] = ty
        d["const"] = const
        d["cg"] = cg
        d["tile"] = tile
        d["ref"] = ref
        d["mask"] = mask


@dataclass(frozen=True)
class GroupArg:
    """The cooperative group bound to a group-generic parameter of a device function (a
    ``thread_group g`` parameter, or a ``typename G`` template parameter deduced from a group
    argument): its kind (``"block"`` or ``"tile"``) and tile size.  Such a function is lowered
    once per group it is called with, as a template instance."""

    kind: str
    tile: int = 0

    def __str__(self) -> str:
        return f"tile{self.tile}" if self.kind == "tile" else self.kind


def is_lvalue(e: A.Expr) -> bool:
    return isinstance(e, (A.Name, A.Index, A.Member)) or (isinstance(e, A.Unary) and e.op == "*")


def address_of(e: A.Expr) -> A.Expr:
    return A.Unary(loc=e.loc, op="&", operand=e, ty=A.PointerType(pointee=e.ty) if e.ty else None)


class Reparse(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Internal: the grammar misread ``<`` at byte ``offset`` as a template bracket, or (with
    ``close``) the parentheses at ``offset`` and ``close`` around a variable's name as a cast
    (``(lo) && (x)``, ``(n) - 1``); with ``brace``, those parentheses as a direct
    initialiser read as a function declaration (``float lo(v);``), respelled as braces."""

    def __init__(self, offset: int, close: int | None = None, brace: bool = False) -> None:
        super().__init__(offset)
        self.offset = offset
        self.close = close
        self.brace = brace


#: what a front-end bug raises while lowering: reported at the statement or function it
#: concerns (C2N0005 with its location), the file's other functions lowered as usual
INTERNAL_ERRORS = (AssertionError, AttributeError, IndexError, KeyError, TypeError, ValueError)


class _Placeholder(Exception):
    """Internal: abandon the current construct (a diagnostic has been recorded)."""


def _text(node: ts.Node) -> str:
    return (node.text or b"").decode()  # every tree is parsed from UTF-8, cut on characters


def declared_name(d: ts.Node | None) -> str | None:
    """The name a declarator (``x``, ``*p``, ``a[4]``, ``&r``, ``x = 1``) declares, else None."""
    while d is not None and d.type != "identifier":
        inner = d.child_by_field_name("declarator")
        if inner is None and d.type == "reference_declarator" and d.named_children:
            inner = d.named_children[-1]
        d = inner
    return None if d is None else _text(d)
