"""Tables and small helpers shared by the body lowering and its mixins: node kind ids, operator
sets, special call names, vector constructors and ``std::`` trait constants."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.diagnostics import SourceLoc
from cuda2nki.frontend import ast as A
from cuda2nki.frontend import intrinsics as I
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.asynccopy import ASYNC_CALLS
from cuda2nki.frontend.cst import (
    COMMENT_IDS,
    PRIMITIVE_IDS,
    F,
    kind_ids,
)
from cuda2nki.frontend.devlaunch import DEVICE_RUNTIME_CALLS
from cuda2nki.frontend.lowerbase import (
    _text,
)
from cuda2nki.frontend.typesys import (
    BOOL,
    unqualified,
)

if TYPE_CHECKING:
    from cuda2nki.frontend.locs import PendingLoc
    from cuda2nki.frontend.lower import BodyLowerer


_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")  # one level of template arguments


# assignment targets that may be a whole struct (see .aggregates)
_STRUCT_TARGETS = frozenset(
    ("identifier", "field_expression", "subscript_expression", "pointer_expression")
)

# statements a pending `#pragma unroll` passes over (loops take it; comments and pragmas keep it)
_UNROLL_TARGETS = frozenset(
    ("for_statement", "while_statement", "do_statement", "comment", "preproc_call")
)


def _cache_hinted(name: str, args: list[A.Expr], loc: SourceLoc | PendingLoc) -> A.Expr | None:
    """A load or store with a cache hint through a pointer, as the plain access: ``__ldcs(p)``
    (``__ldg``, ``__ldca``, ...) is ``*p``, ``__stcs(p, v)`` (``__stcg``, ``__stwb``, ``__stwt``)
    is ``*p = v``; None for another call or another argument type."""
    ptr = args[0] if args else None
    if ptr is None or not isinstance(ptr.ty, A.PointerType):
        return None
    deref = N.Unary(loc=loc, op="*", operand=ptr, ty=ptr.ty.pointee)
    if name in I.CACHE_LOADS and len(args) == 1:
        return deref
    if name in I.CACHE_STORES and len(args) == 2:
        return N.Assign(
            loc=loc, op="=", target=deref, value=args[1], ty=unqualified(ptr.ty.pointee)
        )
    return None


def _bytes(t: A.VectorType) -> int:
    return t.base.bits // 8 * t.width


def _vector_ctor(ty: A.VectorType, args: tuple[A.Expr, ...], loc: SourceLoc | PendingLoc) -> A.Expr:
    """``make_float4(...)``-style constructor call for a vector type (any spelling)."""
    base = ty.base.name
    if ty.width == 2 and base == "float16":
        func = "make_half2"
    elif ty.width == 2 and base == "bfloat16":
        func = "make_bfloat162"
    else:
        func = f"make_{ty.name}"
    return N.Call(loc=loc, func=func, args=args, ty=unqualified(ty))


def _tyname(t: A.CType | None) -> str:
    from cuda2nki.frontend.typesys import type_str

    return type_str(t)


_SCALAR = A.ScalarType
_PRIMITIVE_IDS = PRIMITIVE_IDS
_COMPARISONS = frozenset(("<", "<=", ">", ">=", "==", "!=", "&&", "||"))
_ARITHMETIC = frozenset(("+", "-", "*", "/"))
# unqualified callee names BodyLowerer._special_call handles (every other unqualified name,
# without numeric_limits in it, is an ordinary call)
_SPECIAL_CALLS = frozenset(
    (
        "static_cast",
        "reinterpret_cast",
        "const_cast",
        "dynamic_cast",
        "this_thread_block",
        "tiled_partition",
        "printf",
        "memcpy",
        "__builtin_memcpy",
    )
) | (I.TENSOR_CORE_FUNCS | I.TEXTURE_FUNCS | I.ASYNC_FUNCS | I.DEVICE_RUNTIME_FUNCS | ASYNC_CALLS)
_SPECIAL_CALLS |= frozenset(DEVICE_RUNTIME_CALLS)
_INIT_DECLARATOR_IDS = kind_ids("init_declarator")
_IDENTIFIER_IDS = kind_ids("identifier")
_SUBSCRIPT_ARGUMENTS_IDS = kind_ids("subscript_argument_list")
_REFERENCE_DECLARATOR_IDS = kind_ids("reference_declarator")
_CALL_IDS = kind_ids("call_expression")
_BINARY_IDS = kind_ids("binary_expression")
_INITIALIZER_LIST_IDS = kind_ids("initializer_list")
_PAREN_IDS = kind_ids("parenthesized_expression")
_CAST_OR_BINARY = frozenset(("*", "-", "+", "&"))
#: right operands that bind looser than a unary operator (the cast cannot be read back)
_LOOSE_KINDS = frozenset(
    ("binary_expression", "conditional_expression", "assignment_expression", "comma_expression")
)
_ARGUMENT_LIST_IDS = kind_ids("argument_list")
_BRACE_OR_ARGS_IDS = _INITIALIZER_LIST_IDS | _ARGUMENT_LIST_IDS


def _user_param_nodes(fnode: ts.Node) -> list[ts.Node]:
    """The parameters of a function definition (``void`` alone is none)."""
    d = fnode.child_by_field_id(F.declarator)
    while d is not None and d.type != "function_declarator":
        d = d.child_by_field_id(F.declarator)
    plist = d.child_by_field_id(F.parameters) if d is not None else None
    kids = [c for c in plist.named_children if c.kind_id not in COMMENT_IDS] if plist else []
    return [] if len(kids) == 1 and _text(kids[0]).strip() == "void" else kids


_STD_TAGS = {"true_type": 1, "false_type": 0}


def std_constant(low: BodyLowerer, node: ts.Node) -> tuple[A.CType, int | None] | None:
    """``std::bool_constant<E>`` / ``std::integral_constant<T, E>`` / ``std::true_type`` /
    ``std::false_type`` at ``node``: (the value's type, the value when it is a constant here),
    else None."""
    text = _text(node).replace(" ", "")
    if not text.startswith(("std::", "::std::")) and not text.startswith("cuda::std::"):
        return None
    leaf = node.child_by_field_id(F.name)
    while leaf is not None and leaf.type == "qualified_identifier":
        leaf = leaf.child_by_field_id(F.name)
    if leaf is None:
        return None
    if leaf.type == "type_identifier" and _text(leaf) in _STD_TAGS:
        return BOOL, _STD_TAGS[_text(leaf)]
    if leaf.type != "template_type":
        return None
    name = _text(leaf.child_by_field_id(F.name))
    args = leaf.child_by_field_id(F.arguments)
    kids = [c for c in args.named_children if c.kind_id not in COMMENT_IDS] if args else []
    if name == "bool_constant" and len(kids) == 1:
        ty, vnode = BOOL, kids[0]
    elif name == "integral_constant" and len(kids) == 2:
        ty = low._template_arg(kids[0])
        if not isinstance(ty, A.ScalarType):
            return None
        vnode = kids[1]
    else:
        return None
    value = low._template_arg(vnode)
    v = low.const_value(value) if isinstance(value, A.Expr) else None
    return ty, (int(v) if isinstance(v, int | bool) else None)
