"""Unions, anonymous members and bit-fields: structs held as their bytes.

``union PackedShorts { struct { short lo; short hi; }; unsigned int word; };`` reinterprets
one value as another, and ``struct Flags { unsigned kind : 3; unsigned count : 13; };`` packs
several into one word.  Neither can be replaced by one variable per member (see
:mod:`cuda2nki.frontend.aggregates`): writing one member changes the others.  Such a struct is
*held in bytes* everywhere, also by value: a local, a parameter or a member of it is a ``uint8``
vector of its C size (:meth:`~cuda2nki.frontend.aggregates.AggregateLowering.blob_of`), and
``u.member`` reads or writes the member through a pointer to its byte offset.

The layout is C's, as GCC lays it out on a little-endian target:

* a union's members all start at offset 0; its size is its largest member's, rounded up to
  its largest alignment;
* an anonymous struct or union member (``struct { short lo, hi; };``) is laid out as a member
  of its own, and its members are named as if they were the enclosing struct's;
* bit-fields are allocated from the least significant bit up: a bit-field of type ``T`` and
  width ``w`` goes at the next free bit unless it would cross a boundary of ``T``'s size, when
  it starts at that boundary; a zero-width one moves to the next boundary; ``T`` counts in the
  struct's alignment.  A bit-field is read by loading its storage unit (a ``T`` at the unit's
  byte offset), shifting and masking (sign-extending a signed one); it is written by a
  read-modify-write of that unit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.cst import F

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer

    _Base = BodyLowerer
else:
    _Base = object

#: the name an anonymous struct or union member takes (followed by its position)
ANON = "__anon"
#: the name an unnamed bit-field (padding) takes (followed by its position)
PAD = "__pad"


@dataclass(frozen=True)
class BitField:
    """The type of a bit-field member (front-end only): its declared type and width."""

    base: A.ScalarType
    width: int


@dataclass(frozen=True)
class CLayout:
    """A struct's C layout: per member its byte offset (of its storage unit, for a
    bit-field), per bit-field its lowest bit within that unit, the size and alignment."""

    offsets: dict[str, int]
    shifts: dict[str, int]
    size: int
    align: int


SizeAlign = Callable[[object], "tuple[int, int] | None"]


def c_layout(
    fields: tuple[tuple[str, object], ...], union: bool, size_align: SizeAlign
) -> CLayout | None:
    """The C layout of the members ``fields`` (a union's when ``union``), None when a
    member's size is unknown."""
    offs: dict[str, int] = {}
    shifts: dict[str, int] = {}
    bit, align, size = 0, 1, 0
    for member, mty in fields:
        base = mty.base if isinstance(mty, BitField) else mty
        got = size_align(base)
        if got is None:
            return None
        n, al = got
        if isinstance(mty, BitField):
            unit = 8 * n
            start = 0 if union else bit
            if mty.width == 0 or start // unit != (start + mty.width - 1) // unit:
                start = (start + unit - 1) // unit * unit
            offs[member] = start // unit * n
            shifts[member] = start % unit
            end = start + mty.width
            if not member.startswith(PAD):
                align = max(align, al)
        else:
            start = 0 if union else (bit + 7) // 8 * 8
            start = (start // 8 + al - 1) // al * al * 8
            offs[member] = start // 8
            end = start + 8 * n
            align = max(align, al)
        size = max(size, (end + 7) // 8)
        bit = end if not union else 0
    return CLayout(offs, shifts, (size + align - 1) // align * align, align)


Fields = tuple[tuple[str, object], ...]


def member_path(
    fields: Fields, field: str, fields_of: Callable[[object], Fields | None]
) -> list[str] | None:
    """The members leading to ``field`` through anonymous members (``[anon, field]``), or
    ``[field]`` for a direct member; None when there is none.  ``fields_of``: the members of
    a member's type (a struct, or the bytes of one), else None."""
    names = dict(fields)
    if field in names and not field.startswith((ANON, PAD)):
        return [field]
    for member, mty in fields:
        inner = fields_of(mty) if member.startswith(ANON) else None
        if inner is not None:
            got = member_path(inner, field, fields_of)
            if got is not None:
                return [member, *got]
    return None


def signed(t: A.ScalarType) -> bool:
    return t.name.startswith("int")


_U64 = A.ScalarType(name="uint64")
_I64 = A.ScalarType(name="int64")


class BitFieldLowering(_Base):
    """Reading and writing bit-fields: a mixin of
    :class:`cuda2nki.frontend.lower.BodyLowerer` (through
    :class:`~cuda2nki.frontend.aggregates.AggregateLowering`)."""

    #: set by an assignment while it lowers its target: the bit-field it names, if any
    bit_lvalue: bool = False
    #: (target node id, storage unit, bit-field type, shift) of the last bit-field read
    bit_hit: tuple[int, A.Expr, BitField, int] | None = None

    @property
    def prologue(self) -> list[A.Stmt]:
        """Statements a function's body runs first (unions received by value, copied)."""
        got = self.__dict__.get("_prologue")
        if got is None:
            got = self.__dict__["_prologue"] = []
        return got

    def bit_unit(self, node: ts.Node, addr: A.Expr, mty: BitField, const: bool) -> A.Expr:
        """The storage unit of a bit-field at byte address ``addr``: an unsigned integer of
        its declared type's size."""
        loc = (node.byte_range, self.placer)
        ut = N.ScalarType(name=f"uint{mty.base.bits}", const=const)
        pt = N.PointerType(pointee=ut)
        cast = N.Cast(loc=loc, to=pt, operand=addr, kind="reinterpret", ty=pt)
        return N.Unary(loc=loc, op="*", operand=cast, ty=ut)

    def bit_read(self, node: ts.Node, unit: A.Expr, mty: BitField, shift: int) -> A.Expr:
        """The value of a bit-field: its unit shifted and masked (sign-extended if signed)."""
        if self.bit_lvalue:
            self.bit_hit = (node.id, unit, mty, shift)
        loc = (node.byte_range, self.placer)
        v = _binary(loc, "&", _binary(loc, ">>", _cast(loc, unit, _U64), shift), _mask(mty))
        if signed(mty.base) and mty.width:
            sign = 1 << (mty.width - 1)
            flipped = _cast(loc, _binary(loc, "^", v, sign), _I64)
            lit = N.IntLit(loc=loc, value=sign, ty=_I64)
            v = N.Binary(loc=loc, op="-", left=flipped, right=lit, ty=_I64)
        return _cast(loc, v, mty.base)

    def bytes_local(
        self,
        decl: ts.Node,
        name: str,
        ty: A.CType,
        value: ts.Node | None,
        init: A.Expr | None = None,
    ) -> list[A.Stmt]:
        """``U u;`` / ``U u = v;`` for a struct held in bytes: a one-element local array of
        its bytes (so that its members can be reached at their offsets), ``u`` standing for
        that element."""
        from cuda2nki.frontend.lowerbase import Sym, address_of

        if value is not None and value.type in ("initializer_list", "argument_list"):
            what = f"'{getattr(ty, 'name', '?')}' initialised member by member"
            raise self.fail("C2N1025", value, what=what)
        loc = (decl.byte_range, self.placer)
        store = N.ArrayType(elem=ty, dims=(1,))
        cell = N.Index(
            loc=loc,
            base=N.Name(loc=loc, name=f"{name}__bytes", ty=store),
            index=N.IntLit(loc=loc, value=0, ty=A.ScalarType(name="int32")),
            ty=ty,
        )
        ptr = N.PointerType(pointee=ty)
        out: list[A.Stmt] = [
            N.VarDecl(loc=loc, name=f"{name}__bytes", ty=store, init=None, storage="local"),
            N.VarDecl(loc=loc, name=name, ty=ptr, init=address_of(cell), storage="local"),
        ]
        self.declare(name, Sym(ptr, ref=True))
        if value is not None or init is not None:
            v = self.agg_value(value) if value is not None else init
            out.append(
                N.ExprStmt(loc=loc, expr=N.Assign(loc=loc, op="=", target=cell, value=v, ty=ty))
            )
        return out

    def member_wise(self, t: object) -> bool:
        """Whether a struct in memory of type ``t`` is passed member by member (a union or a
        struct with bit-fields is passed as its bytes)."""
        agg = self.blob_struct(t)
        return agg is not None and not agg.in_bytes

    def bytes_param(self, p: ts.Node, name: str, ty: A.CType) -> tuple[str, list[A.Stmt]]:
        """A parameter holding a union (or a struct with bit-fields) by value: received as
        ``<name>__arg`` and copied into a local of its bytes named ``name`` (see
        :meth:`bytes_local`), the statements to run first."""
        from cuda2nki.frontend.lowerbase import Sym

        arg = f"{name}__arg"
        self.declare(arg, Sym(ty))
        init = N.Name(loc=(p.byte_range, self.placer), name=arg, ty=ty)
        return arg, self.bytes_local(p, name, ty, None, init)

    def names_bit_field(self, t_node: ts.Node) -> bool:
        """Whether the assignment target ``t_node`` is a bit-field (then :attr:`bit_hit` holds
        it)."""
        if t_node.type != "field_expression" or self.host or not self.u.blobs:
            return False
        field = t_node.child_by_field_id(F.field)
        name = field.text.decode() if field is not None and field.text is not None else ""
        if not any(
            m == name and isinstance(t, BitField)
            for agg in self.u.blobs.values()
            for m, t in agg.fields  # type: ignore[attr-defined]
        ):
            return False
        old, self.bit_lvalue, self.bit_hit = self.bit_lvalue, True, None
        try:
            self.agg_value(t_node)
        finally:
            self.bit_lvalue = old
        return self.bit_hit is not None and self.bit_hit[0] == t_node.id

    def bit_store(self, node: ts.Node, op: str, value: A.Expr) -> A.Expr:
        """``s.bits = v`` (or ``s.bits += v``...) for the bit-field the target just read
        (:attr:`bit_hit`): a read-modify-write of its storage unit."""
        assert self.bit_hit is not None
        _id, unit, mty, shift = self.bit_hit
        loc = (node.byte_range, self.placer)
        if op != "=":
            old = self.bit_read(node, unit, mty, shift)
            value = N.Binary(loc=loc, op=op[:-1], left=old, right=value, ty=value.ty)
        field = _binary(loc, "<<", _binary(loc, "&", _cast(loc, value, _U64), _mask(mty)), shift)
        keep = _binary(loc, "&", _cast(loc, unit, _U64), ~(_mask(mty) << shift) & (2**64 - 1))
        ut = A.ScalarType(name=unit.ty.name)  # type: ignore[union-attr]
        new = _cast(loc, _binary(loc, "|", keep, field), ut)
        return N.Assign(loc=loc, op="=", target=unit, value=new, ty=ut)


def _mask(mty: BitField) -> int:
    return (1 << mty.width) - 1


def _cast(loc: object, e: A.Expr, to: A.ScalarType) -> A.Expr:
    return N.Cast(loc=loc, to=to, operand=e, kind="c", ty=to)


def _binary(loc: object, op: str, left: A.Expr, right: A.Expr | int) -> A.Expr:
    if isinstance(right, int):
        right = N.IntLit(loc=loc, value=right, ty=_U64)
    return N.Binary(loc=loc, op=op, left=left, right=right, ty=_U64)
