"""Coalesced and labeled groups: sets of lanes of one warp, held as a lane mask.

``cg::coalesced_threads()`` is the warp's lanes active where it is called;
``cg::labeled_partition(g, label)`` splits group ``g`` into the lanes with equal ``label`` and
``cg::binary_partition(g, pred)`` into those with equal ``pred != 0``.  A declared group of these
kinds lowers to a hidden ``uint32`` variable ``__c2n_group_<name>`` holding its lane mask, taken
where it is declared (``__activemask()``, or ``__match_any_sync(parent mask, label)``); a group
used in place (``cg::coalesced_threads().size()``) uses ``__activemask()``.  With ``M`` the mask:

- ``g.thread_rank()`` -> ``__popc(M & __lanemask_lt())``; ``g.size()``/``num_threads()`` ->
  ``__popc(M)``; ``g.meta_group_rank()`` -> 0, ``g.meta_group_size()`` -> 1;
- ``g.sync()`` -> ``__syncwarp(M)``; ``g.any(p)``/``all``/``ballot`` -> ``__any_sync(M, p)``...;
- ``g.shfl(v, 0)`` -> ``__shfl_sync(M, v, __ffs(M) - 1)`` (rank 0 is the lowest lane; other
  constant ranks are refused, C2N1029);
- ``cg::reduce(g, v, op)`` -> ``Call("__c2n_mask_reduce_<op>", (v, M))``: each lane gets ``op``
  over the active lanes of its warp holding the same mask (its group), in ascending lane order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.cst import COMMENT_IDS, F
from cuda2nki.frontend.lowerbase import Sym, _text
from cuda2nki.frontend.typesys import INT, UINT, VOID, unqualified

if TYPE_CHECKING:
    from cuda2nki.diagnostics import SourceLoc
    from cuda2nki.frontend.coop import CoopLowering

MASKED = "coalesced"  # the Sym.cg kind of these groups
PARTITIONS = ("labeled_partition", "binary_partition")
MASK_REDUCE = "__c2n_mask_reduce_"


#: a group's vote methods and the warp intrinsics (with their result types) they become
WARP_VOTES = {
    "any": ("__any_sync", INT),
    "all": ("__all_sync", INT),
    "ballot": ("__ballot_sync", UINT),
}


def _call(loc: SourceLoc, func: str, args: tuple[A.Expr, ...], ty: A.CType) -> A.Expr:
    return N.Call(loc=loc, func=func, args=args, ty=ty)


def active_mask(loc: SourceLoc) -> A.Expr:
    return _call(loc, "__activemask", (), UINT)


def group_mask(sym: Sym, loc: SourceLoc) -> A.Expr:
    if sym.mask is None:
        return active_mask(loc)
    return N.Name(loc=loc, name=sym.mask, ty=UINT)


def mask_init(low: CoopLowering, value: ts.Node) -> A.Expr | None:
    """The lane mask of the group ``value`` creates, for the masked kinds; None for others."""
    if value.type != "call_expression":
        return None
    fn = value.child_by_field_id(F.function)
    name, _ = low._qualified_call_name(fn)
    short = name.split("::")[-1]
    loc = low.loc(value)
    if short == "coalesced_threads":
        return active_mask(loc)
    if short not in PARTITIONS:
        return None
    args_node = value.child_by_field_id(F.arguments)
    args = [c for c in args_node.named_children if c.kind_id not in COMMENT_IDS]
    if len(args) != 2:
        raise low.fail("C2N1028", value, name=short, got=len(args), expected=2)
    parent = parent_mask(low, args[0], loc)
    label = low.expr(args[1])
    if short == "binary_partition":
        label = N.Binary(
            loc=loc,
            op="!=",
            left=label,
            right=N.IntLit(loc=loc, value=0, ty=INT),
            ty=A.ScalarType(name="bool"),
        )
        label = N.Cast(loc=loc, to=INT, operand=label, kind="c", ty=INT)
    return _call(loc, "__match_any_sync", (parent, label), UINT)


def parent_mask(low: CoopLowering, node: ts.Node, loc: SourceLoc) -> A.Expr:
    if node.type == "identifier":
        s = low.lookup(_text(node))
        if s is not None and s.cg == MASKED:
            return group_mask(s, loc)
    got = mask_init(low, node)  # `labeled_partition(cg::coalesced_threads(), x)`
    if got is not None:
        return got
    low._cg_value(node)  # a block or tile: its active lanes
    return active_mask(loc)


def declare_masked(low: CoopLowering, name: str, value: ts.Node) -> list[A.Stmt]:
    """``auto g = cg::labeled_partition(...)``: the hidden mask variable and the group symbol."""
    init = mask_init(low, value)
    if init is None:  # `cg::coalesced_group g = other;`: the same group
        s = low.lookup(_text(value)) if value.type == "identifier" else None
        low.declare(name, s if s is not None and s.cg == MASKED else Sym(None, cg=MASKED))
        return []
    hidden = f"__c2n_group_{name}"
    low.declare(name, Sym(None, cg=MASKED, mask=hidden))
    return [N.VarDecl(loc=low.loc(value), name=hidden, ty=UINT, init=init)]


def masked_method(
    low: CoopLowering, sym: Sym, method: str, args: list[A.Expr], node: ts.Node
) -> A.Expr:
    loc = low.loc(node)
    m = group_mask(sym, loc)
    popc = lambda x: _call(loc, "__popc", (x,), INT)  # noqa: E731
    if method == "thread_rank":
        lt = _call(loc, "__lanemask_lt", (), UINT)
        return popc(N.Binary(loc=loc, op="&", left=m, right=lt, ty=UINT))
    if method in ("size", "num_threads"):
        return popc(m)
    if method in ("meta_group_rank", "meta_group_size"):
        return N.IntLit(loc=loc, value=int(method == "meta_group_size"), ty=UINT)
    if method == "sync":
        return _call(loc, "__syncwarp", (m,), VOID)
    if method in WARP_VOTES and len(args) == 1:
        fn, ty = WARP_VOTES[method]
        return _call(loc, fn, (m, args[0]), ty)
    if method == "shfl" and len(args) == 2 and isinstance(args[1], A.IntLit) and args[1].value == 0:
        first = N.Binary(
            loc=loc,
            op="-",
            left=_call(loc, "__ffs", (m,), INT),
            right=N.IntLit(loc=loc, value=1, ty=INT),
            ty=INT,
        )
        return _call(
            loc,
            "__shfl_sync",
            (m, args[0], first, N.IntLit(loc=loc, value=32, ty=INT)),
            unqualified(args[0].ty),
        )
    raise low.fail("C2N1029", node, what=f"coalesced group .{method}()")


def masked_reduce(low: CoopLowering, sym: Sym, value: A.Expr, op: str, node: ts.Node) -> A.Expr:
    loc = low.loc(node)
    return _call(loc, MASK_REDUCE + op, (value, group_mask(sym, loc)), unqualified(value.ty))
