"""``memcpy`` in device code: between buffers of one element type, or to or from a struct
held in its members or a vector or record variable (``uint4 v``, ``struct { float a, b; }``).

Between two buffers whose element types are the same, ``memcpy(dst, src, n)`` of a constant
``n`` (a multiple of the element size) is one assignment per element, ``dst[i] = src[i]``.

``memcpy(&out, result, sizeof(out))`` (cuda-samples' integral image packs 16 words into a struct
of four ``uint4``) copies bytes; a struct variable of the program's own is held as one local per
member (see :mod:`cuda2nki.frontend.aggregates`) and has no address.  The copy becomes one
assignment per scalar (a vector member: per lane) of the struct, from or to the bytes at the
member's C layout offset in the other buffer, for the members inside the copied size; the
scalars must have the other buffer's element type.  Refused: a copy that reinterprets bytes
(element types that differ, C2N1030), a size that is not a constant or cuts a member or an
element, a struct with array members, a copy between two such structs (C2N1025).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.aggregates import AggregateType, flat_name, layout
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.asynccopy import _as_pointer as as_pointer
from cuda2nki.frontend.cst import F
from cuda2nki.frontend.lowerbase import _text
from cuda2nki.frontend.typesys import sizeof, unqualified

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer

_LANES = "xyzw"
Leaf = tuple[str, A.ScalarType, int, object]  # variable, scalar type, byte offset, lane


def held_struct(low: BodyLowerer, node: ts.Node) -> A.Name | None:
    """The struct variable held in its members that ``&x`` takes the address of, else None."""
    if node.type != "pointer_expression" or _text(node.child_by_field_id(F.operator)) != "&":
        return None
    arg = node.child_by_field_id(F.argument)
    if arg is None or arg.type != "identifier":
        return None
    sym = low.lookup(_text(arg))
    ty = unqualified(sym.ty) if sym is not None and sym.ty is not None else None
    if isinstance(ty, A.VectorType) and low.packed_of(ty) is None:  # `uint4 v`, a record
        return N.Name(loc=(arg.byte_range, low.placer), name=_text(arg), ty=ty)
    if type(ty) is not AggregateType or ty.in_bytes or low.blob_struct(ty) is not None:
        return None
    return N.Name(loc=(arg.byte_range, low.placer), name=_text(arg), ty=ty)


def struct_memcpy(low: BodyLowerer, node: ts.Node, arg_nodes: list[ts.Node]) -> A.Expr | None:
    """``memcpy(dst, src, n)`` with ``&s`` on one side (``s`` held in its members), else None."""
    dst_s, src_s = held_struct(low, arg_nodes[0]), held_struct(low, arg_nodes[1])
    if dst_s is None and src_s is None:
        return None
    if dst_s is not None and src_s is not None:
        raise low.fail("C2N1025", node, what="memcpy between two structs held in their members")
    held = dst_s if dst_s is not None else src_s
    assert held is not None and isinstance(held.ty, AggregateType | A.VectorType)
    loc = (node.byte_range, low.placer)
    other = as_pointer(low.expr(arg_nodes[1] if dst_s is not None else arg_nodes[0]), loc)
    size = _sizeof_held(arg_nodes[2], held)
    if size is None:
        size = low.const_value(low.expr(arg_nodes[2]))
    leaves = _leaves(held.name, held.ty, 0) if isinstance(held.ty, AggregateType) else None
    if isinstance(held.ty, A.VectorType):
        step = max(1, held.ty.base.bits // 8)
        base_t = unqualified(held.ty.base)
        leaves = [(held.name, base_t, i * step, (held.ty, i)) for i in range(held.ty.width)]  # type: ignore[misc]
    if leaves is None or not isinstance(size, int) or not isinstance(other.ty, A.PointerType):
        raise low.fail("C2N1025", node, what=f"memcpy of struct '{held.ty.name}'")
    elem = unqualified(other.ty.pointee)
    if any(ty != elem for _, ty, off, _ in leaves if off < size):
        raise low.fail("C2N1030", node, what=f"memcpy reinterpreting the bytes of '{held.ty.name}'")
    steps: list[A.Expr] = []
    for var, ty, off, lane in leaves:
        width = max(1, ty.bits // 8)
        if off + width <= size:
            mine = _leaf_expr(loc, var, lane, ty)
            theirs = _element(loc, other, off // width, ty)
            pair = (mine, theirs) if dst_s is not None else (theirs, mine)
            steps.append(N.Assign(loc=loc, op="=", target=pair[0], value=pair[1], ty=ty))
        elif off < size:
            raise low.fail("C2N1025", node, what=f"memcpy of part of a member of '{held.ty.name}'")
    steps.append(other)
    return N.Comma(loc=loc, exprs=tuple(steps), ty=unqualified(other.ty))


def _sizeof_held(node: ts.Node, held: A.Name) -> int | None:
    """``sizeof(s)`` / ``sizeof s`` of the struct variable itself: its C size, else None."""
    if node.type != "sizeof_expression":
        return None
    inner = node.child_by_field_id(F.value)
    while inner is not None and inner.type == "parenthesized_expression":
        inner = inner.named_children[0] if inner.named_children else None
    if inner is None or inner.type != "identifier" or _text(inner) != held.name:
        return None
    if isinstance(held.ty, A.VectorType):
        return sizeof(held.ty) or None
    assert isinstance(held.ty, AggregateType)
    lay = layout(held.ty)
    return None if lay is None else lay[1]


def _leaves(var: str, ty: AggregateType, base: int) -> list[Leaf] | None:
    lay = layout(ty)
    if lay is None:
        return None
    out: list[Leaf] = []
    for member, mty in ty.fields:
        name, off = flat_name(var, member), base + lay[0][member]
        if isinstance(mty, AggregateType):
            sub = _leaves(name, mty, off)
            if sub is None:
                return None
            out.extend(sub)
        elif isinstance(mty, A.ScalarType):
            out.append((name, unqualified(mty), off, None))  # type: ignore[arg-type]
        elif isinstance(mty, A.VectorType):
            step = max(1, mty.base.bits // 8)
            base_t = unqualified(mty.base)
            out.extend((name, base_t, off + i * step, (mty, i)) for i in range(mty.width))  # type: ignore[misc]
        else:
            return None
    return out


def _leaf_expr(loc: object, var: str, lane: object, ty: A.ScalarType) -> A.Expr:
    if lane is None:
        return N.Name(loc=loc, name=var, ty=ty)
    vt, i = lane  # type: ignore[misc]
    v = N.Name(loc=loc, name=var, ty=vt)
    if i < 4:
        return N.Member(loc=loc, base=v, field=_LANES[i], ty=ty)
    return N.Index(loc=loc, base=v, index=N.IntLit(loc=loc, value=i, ty=_INT), ty=ty)


_INT = A.ScalarType(name="int32")


def _element(loc: object, ptr: A.Expr, i: int, ty: A.CType) -> A.Expr:
    return N.Index(loc=loc, base=ptr, index=N.IntLit(loc=loc, value=i, ty=_INT), ty=ty)


def plain_memcpy(low: BodyLowerer, node: ts.Node, arg_nodes: list[ts.Node]) -> A.Expr:
    """``memcpy(dst, src, n)`` between buffers of one element type: element assignments."""
    loc = (node.byte_range, low.placer)
    dst, src = (as_pointer(low.expr(a), loc) for a in arg_nodes[:2])
    n = low.const_value(low.expr(arg_nodes[2]))
    dt, st = unqualified(dst.ty), unqualified(src.ty)
    if not isinstance(dt, A.PointerType) or not isinstance(st, A.PointerType):
        raise low.fail("C2N1030", node, what="memcpy between non-pointers")
    elem = unqualified(dt.pointee)
    if elem != unqualified(st.pointee):
        raise low.fail("C2N1030", node, what="memcpy between buffers of different element types")
    width = sizeof(elem)
    if not isinstance(n, int) or not width or n % width or n // width > _MAX_ELEMS:
        raise low.fail(
            "C2N1030", node, what="memcpy of a size that is not a constant number of elements"
        )
    steps: list[A.Expr] = [
        N.Assign(
            loc=loc,
            op="=",
            target=_element(loc, dst, i, elem),
            value=_element(loc, src, i, elem),
            ty=elem,
        )
        for i in range(n // width)
    ]
    return N.Comma(loc=loc, exprs=(*steps, dst), ty=dt)


_MAX_ELEMS = 256
