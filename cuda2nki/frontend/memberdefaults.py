"""Default member initialisers of an aggregate struct (``int molid = 0;``,
``double pos[3] = {0, 0, 0};``, ``float w{1.0f};``).

A struct made by value takes them where nothing else gives the member a value: ``S s;``
initialises every member that has one, ``S s = {a, b};`` the members after the ones it lists
(C++14 aggregate initialisation; a member without a default is zero there, as before).  A
struct read from memory (``S s = p[i];``) or copied (``S s = t;``) takes the stored members, and
a struct passed to a kernel its caller's values: no default applies to them.  A default
constructor that does nothing (``__device__ S() {}``: no parameters, no member initialisers, an
empty body) leaves ``S s;`` as it is without one (:func:`is_empty_default`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.cst import F
from cuda2nki.frontend.lowerbase import _text
from cuda2nki.frontend.typesys import unqualified

if TYPE_CHECKING:
    from cuda2nki.frontend.aggregates import AggregateType
    from cuda2nki.frontend.lower import BodyLowerer


def default_of(low: BodyLowerer, ty: AggregateType, member: str) -> ts.Node | None:
    """The default initialiser of ``ty``'s ``member`` as written, None when it has none."""
    d = low.u.aggregates.get(ty.name)
    return dict(d.defaults).get(member) if d is not None else None


def default_stores(
    low: BodyLowerer, node: ts.Node, target: A.Expr, ty: AggregateType
) -> list[A.Stmt]:
    """The stores giving ``target``'s members their defaults (a struct member without one:
    its own members' defaults, in turn)."""
    out: list[A.Stmt] = []
    for member, mty in ty.fields:
        out.extend(member_default(low, node, target, ty, member, mty))
    return out


def member_default(
    low: BodyLowerer, node: ts.Node, target: A.Expr, ty: AggregateType, member: str, mty: object
) -> list[A.Stmt]:
    """The stores giving ``target.member`` its default initialiser (none: no store)."""
    from cuda2nki.frontend.aggregates import AggregateType

    value = default_of(low, ty, member)
    if value is None and not isinstance(mty, AggregateType):
        return []
    t = low.agg_member(node, target, member)
    if value is None:
        return default_stores(low, node, t, mty)  # type: ignore[arg-type]
    if isinstance(mty, AggregateType):
        return low.agg_store(value, t, value)  # type: ignore[arg-type]
    loc = (node.byte_range, low.placer)
    if isinstance(mty, A.ArrayType):
        return _array_default(low, value, t, mty, loc)
    v = low._init_list(value, mty) if value.type == "initializer_list" else low.expr(value)
    return [_assign(loc, t, v)]


def _array_default(
    low: BodyLowerer, value: ts.Node, t: A.Expr, mty: A.ArrayType, loc: object
) -> list[A.Stmt]:
    """``float w[3] = {1, 2};``: element by element, the rest zero (one dimension only)."""
    items = [c for c in value.named_children if c.type != "comment"]
    if value.type != "initializer_list" or len(mty.dims) != 1 or mty.dims[0] is None:
        raise low.fail("C2N1030", value, what="default initialiser of an array member")
    if len(items) > mty.dims[0] or any(c.type == "initializer_list" for c in items):
        raise low.fail("C2N1030", value, what="default initialiser of an array member")
    elem = unqualified(mty.elem)
    zero = N.IntLit(loc=loc, value=0, ty=A.ScalarType(name="int32"))
    vals = [low.expr(c) for c in items] + [zero] * (mty.dims[0] - len(items))
    out = []
    for k, v in enumerate(vals):
        idx = N.IntLit(loc=loc, value=k, ty=A.ScalarType(name="int32"))
        out.append(_assign(loc, N.Index(loc=loc, base=t, index=idx, ty=elem), v))
    return out


def _assign(loc: object, target: A.Expr, value: A.Expr) -> A.Stmt:
    a = N.Assign(loc=loc, op="=", target=target, value=value, ty=unqualified(target.ty))
    return N.ExprStmt(loc=loc, expr=a)


def is_empty_default(ctor: ts.Node) -> bool:
    """``ctor`` (a constructor's definition) takes no parameters, initialises no member and
    does nothing: ``S() {}``."""
    if any(c.type == "field_initializer_list" for c in ctor.children):
        return False
    body = ctor.child_by_field_id(F.body)
    if body is None or any(c.type != "comment" for c in body.named_children):
        return False
    d = ctor.child_by_field_id(F.declarator)
    params = d.child_by_field_id(F.parameters) if d is not None else None
    if params is None:
        return False
    kids = [c for c in params.named_children if c.type != "comment"]
    return not kids or (len(kids) == 1 and _text(kids[0]) == "void")
