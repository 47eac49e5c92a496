"""Kernel parameters of array type read as flat pointers.

A kernel may declare a buffer with its row shape: ``float img[28][28]`` or ``float (*w)[5][5]``
(both a pointer to rows of fixed extents; the host passes ``(float (*)[5][5])d_w``).  Its
accesses ``w[c][i][j]`` are those of a flat pointer at ``(c * 5 + i) * 5 + j``, which is what
the rest of the tool reads (shapes from index expressions, the literal lowering, the SIMT
interpreter).  Such a parameter is rewritten to a pointer to the element type with its accesses
linearised, when it is declared so (not through an array typedef, ``vec2* v``) and every use of
it is a full subscript chain (``w[c][i][j]``, not ``w[c]`` passed
on as a row pointer): otherwise the kernel is left as written.

The outer extent a parameter declares (``float img[28][28]``: 28 rows) does not bind in C, but
it is what the kernel was written for: it is kept (``Param.rows``, 0 where not written) as evidence of the buffer's
shape where nothing else bounds it (see :mod:`cuda2nki.lift.declshape`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.cst import F
from cuda2nki.frontend.visit import walk
from cuda2nki.rewrite import transform

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer

_INT = A.ScalarType(name="int32")


def written_extents(low: BodyLowerer, param: ts.Node) -> tuple[int, ...]:
    """The extents written on the array parameter ``param``, outermost first: ``float
    w[6][5][5]``: (6, 5, 5); ``float w[][5]`` or ``float (*w)[5]``: (0, 5), the outer extent
    not written.  Empty when it is no array or an inner extent is not a constant."""
    d = param.child_by_field_id(F.declarator)
    dims: list[int] = []
    while d is not None and d.type == "array_declarator":
        size = d.child_by_field_id(F.size)
        n = low.const_int_node(size) if size is not None else 0
        if n is None or n < 0 or (n == 0 and dims and d.child_by_field_id(F.declarator) is None):
            return ()
        dims.insert(0, n)
        d = d.child_by_field_id(F.declarator)
    if dims and d is not None and d.type == "parenthesized_declarator":  # `(*w)[5]`
        inner = next(iter(d.named_children), None)
        if inner is not None and inner.type == "pointer_declarator":
            dims.insert(0, 0)
            d = inner.child_by_field_id(F.declarator)
    if not dims or d is None or d.type != "identifier" or 0 in dims[1:]:
        return ()
    return tuple(dims)


def flat_array_params(tu: A.TranslationUnit) -> A.TranslationUnit:
    """``tu`` with the array-typed parameters of its kernels made flat pointers."""
    funcs = tuple(_flattened(f) if f.kind == "global" else f for f in tu.functions)
    if all(a is b for a, b in zip(funcs, tu.functions)):
        return tu
    return replace(tu, functions=funcs)


def _flattened(f: A.Function) -> A.Function:
    rows = {p.name: d for p in f.params if p.rows and (d := _row_dims(p.ty)) is not None}
    rows = {n: d for n, d in rows.items() if _only_full_chains(f.body, n, len(d) + 1)}
    if not rows:
        return f

    def flat(node: object) -> object:
        if not isinstance(node, A.Index):
            return node
        base, indices = _chain(node)
        if not isinstance(base, A.Name) or base.name not in rows:
            return node
        dims = rows[base.name]
        if len(indices) != len(dims) + 1:
            return node
        elem = _elem(base.ty)
        name = replace(base, ty=A.PointerType(pointee=elem, const=_const(base.ty)))
        return A.Index(loc=node.loc, base=name, index=_linear(indices, dims), ty=node.ty)

    params = tuple(
        replace(p, ty=A.PointerType(pointee=_elem(p.ty), const=_const(p.ty)))
        if p.name in rows
        else p
        for p in f.params
    )
    return replace(f, params=params, body=transform(f.body, flat))


def _row_dims(ty: A.CType) -> tuple[int, ...] | None:
    """``(5, 5)`` for a pointer to ``T[5][5]`` of a scalar ``T`` (None: another type)."""
    if not isinstance(ty, A.PointerType) or not isinstance(ty.pointee, A.ArrayType):
        return None
    arr = ty.pointee
    if not isinstance(arr.elem, A.ScalarType) or not arr.dims:
        return None
    if not all(isinstance(d, int) and d > 0 for d in arr.dims):
        return None
    return tuple(int(d) for d in arr.dims if d is not None)


def _elem(ty: A.CType | None) -> A.CType:
    assert isinstance(ty, A.PointerType) and isinstance(ty.pointee, A.ArrayType)
    return ty.pointee.elem


def _const(ty: A.CType | None) -> bool:
    return isinstance(ty, A.PointerType) and ty.const


def _chain(node: A.Expr) -> tuple[A.Expr, list[A.Expr]]:
    """``w[c][i][j]`` -> (``w``, [c, i, j])."""
    indices: list[A.Expr] = []
    while isinstance(node, A.Index):
        indices.append(node.index)
        node = node.base
    return node, indices[::-1]


def _only_full_chains(body: A.Block, name: str, depth: int) -> bool:
    """Whether ``name`` is used in ``body``, each use a subscript chain ``depth`` deep."""
    uses, full = chain_uses(body, name, depth)
    return uses > 0 and uses == full


def chain_uses(body: A.Block, name: str, depth: int) -> tuple[int, int]:
    """(uses of ``name`` in ``body``, those that are subscript chains ``depth`` deep)."""
    uses = sum(1 for n in walk(body) if isinstance(n, A.Name) and n.name == name)
    full = 0
    for n in walk(body):
        if isinstance(n, A.Index):
            base, indices = _chain(n)
            if isinstance(base, A.Name) and base.name == name and len(indices) == depth:
                full += 1
    return uses, full


def _linear(indices: list[A.Expr], dims: tuple[int, ...]) -> A.Expr:
    """``(c * 5 + i) * 5 + j`` for indices [c, i, j] of rows of dims (5, 5)."""
    out = indices[0]
    for idx, d in zip(indices[1:], dims):
        loc = idx.loc
        scaled = A.Binary(
            loc=loc, op="*", left=out, right=A.IntLit(loc=loc, value=d, ty=_INT), ty=_INT
        )
        out = A.Binary(loc=loc, op="+", left=scaled, right=idx, ty=_INT)
    return out


__all__ = ["flat_array_params"]
