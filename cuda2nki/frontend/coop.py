"""Cooperative groups, lowered to block/warp intrinsics (semantics in the ast module docstring).

:class:`CoopLowering` is a mixin of :class:`cuda2nki.frontend.lower.BodyLowerer`: group objects
are tracked as scope symbols (``Sym.cg``) and never become variables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.diagnostics import SourceLoc
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.coalesced import (
    MASKED,
    PARTITIONS,
    WARP_VOTES,
    declare_masked,
    masked_method,
    masked_reduce,
)
from cuda2nki.frontend.cst import F
from cuda2nki.frontend.gridgroup import grid_method
from cuda2nki.frontend.lowerbase import CG_NAMESPACES, CG_TYPES, FULL_MASK, GroupArg, Sym, _text
from cuda2nki.frontend.typesys import INT, UINT, VOID, int_literal, unqualified

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer

    _Base = BodyLowerer
else:
    _Base = object


class CoopLowering(_Base):
    def _is_cg_type(self, type_node: ts.Node) -> bool:
        if type_node.type == "qualified_identifier":
            parts = _text(type_node).replace(" ", "").split("::")
            last = parts[-1].split("<")[0]
            return last in CG_TYPES and (len(parts) == 1 or parts[-2] in CG_NAMESPACES)
        if type_node.type == "type_identifier" and isinstance(
            self.env.get(_text(type_node)), GroupArg
        ):
            return True  # a typename parameter bound to a group (see groupgen)
        if type_node.type in ("type_identifier", "template_type"):
            return _text(type_node).split("<")[0].strip() in CG_TYPES
        return False

    def _cg_size_from_type(self, type_node: ts.Node) -> tuple[str, int]:
        g = self.env.get(_text(type_node))
        if isinstance(g, GroupArg):
            return g.kind, g.tile
        text = _text(type_node).replace(" ", "")
        last = text.split("::")[-1]
        base = last.split("<")[0]
        if base == "thread_block":
            return "block", 0
        if base == "thread_block_tile":
            arg = last[len(base) + 1 : -1]
            n = self._const_from_text(arg, type_node)
            return "tile", n
        if base == "grid_group":
            return "grid", 0
        if base == "coalesced_group":
            return MASKED, 0
        if base == "block_tile_memory":  # scratch for tiles of more than 32 threads: no value
            return "memory", 0
        raise self.fail("C2N1029", type_node, what=base)

    def _const_from_text(self, text: str, node: ts.Node) -> int:
        if text in self.env and isinstance(self.env[text], int):
            return int(self.env[text])  # type: ignore[arg-type]
        s = self.lookup(text)
        if s is not None and isinstance(s.const, int):
            return s.const
        got = int_literal(text)
        if got is None:
            raise self.fail("C2N1029", node, what=f"tile size '{text}' is not a constant")
        return got[0]

    def _cg_decl(self, node: ts.Node) -> list[A.Stmt]:
        type_node = node.child_by_field_id(F.type)
        out: list[A.Stmt] = []
        for i, c in enumerate(node.children):
            if node.field_name_for_child(i) != "declarator":
                continue
            name_node = c.child_by_field_id(F.declarator) if c.type == "init_declarator" else c
            value = c.child_by_field_id(F.value) if c.type == "init_declarator" else None
            if value is not None:  # `cg::thread_group g = cg::tiled_partition(b, 16);`
                k, n = self._cg_value(value)
                if k == MASKED:
                    out.extend(declare_masked(self, _text(name_node), value))
                    continue
            else:
                k, n = self._cg_size_from_type(type_node)
            self.declare(_text(name_node), Sym(None, cg=k, tile=n))
        return out

    def _cg_value(self, value: ts.Node) -> tuple[str, int]:
        """The group a cooperative-groups expression denotes: ('block', 0) or ('tile', N)."""
        if value.type == "identifier":
            s = self.lookup(_text(value))
            if s is not None and s.cg:
                return s.cg, s.tile
        if value.type == "call_expression":
            fn = value.child_by_field_id(F.function)
            name, targs = self._qualified_call_name(fn)
            short = name.split("::")[-1]
            if short == "this_thread_block":
                return "block", 0
            if short == "coalesced_threads" or short in PARTITIONS:
                return MASKED, 0
            if short == "tiled_partition":
                args = [c for c in value.child_by_field_id(F.arguments).named_children]
                if targs:
                    n = self._const_from_text(_text(targs[0]), targs[0])
                elif len(args) == 2:
                    n = self._const_from_text(_text(args[1]), args[1])
                else:
                    raise self.fail("C2N1029", value, what="tiled_partition without a size")
                if n > MAX_TILE or n <= 0 or n & (n - 1):
                    raise self.fail("C2N1029", value, what=f"tile of {n} threads")
                return "tile", n
            if short == "this_grid":
                return "grid", 0
            if short == "this_multi_grid":
                self.error("C2N1016", value, what=f"cg::{short}()")
                return "grid", 0
            raise self.fail("C2N1029", value, what=short or _text(value))
        raise self.fail("C2N1029", value, what=_text(value))

    def _auto_cg(self, value: ts.Node) -> bool:
        if value.type != "call_expression":
            return False
        fn = value.child_by_field_id(F.function)
        if fn is None:
            return False
        name, _ = self._qualified_call_name(fn)
        parts = name.split("::")
        short = parts[-1]
        cgish = len(parts) > 1 and parts[-2] in CG_NAMESPACES
        return short in (
            "this_thread_block",
            "tiled_partition",
            "this_grid",
            "this_multi_grid",
            "coalesced_threads",
            *PARTITIONS,
        ) and (cgish or len(parts) == 1)

    def _is_misparsed_cg_decl(self, node: ts.Node) -> bool:
        """``cg::thread_block_tile<32> t = ...;`` reads as ``(a < 32) > (t = ...)``."""
        if _text(node.child_by_field_id(F.operator) or node) != ">":
            return False
        left = node.child_by_field_id(F.left)
        if left is None or left.type != "binary_expression":
            return False
        ll = left.child_by_field_id(F.left)
        if ll is None or ll.type not in ("qualified_identifier", "identifier"):
            return False
        return _text(ll).replace(" ", "").split("::")[-1] in CG_TYPES

    def _cg_misparsed_decl(self, node: ts.Node) -> list[A.Stmt]:
        right = node.child_by_field_id(F.right)
        size_node = node.child_by_field_id(F.left).child_by_field_id(F.right)
        n = self._const_from_text(_text(size_node), size_node)
        if right.type == "assignment_expression":
            target = right.child_by_field_id(F.left)
            k, n2 = self._cg_value(right.child_by_field_id(F.right))
            self.declare(_text(target), Sym(None, cg=k, tile=n2 or n))
        elif right.type == "identifier":
            self.declare(_text(right), Sym(None, cg="tile", tile=n))
        else:
            raise self.fail("C2N1029", node, what=_text(node))
        return []

    def _linear_tid(self, loc: SourceLoc) -> A.Expr:
        def b(name: str, d: str) -> A.Expr:
            return N.Builtin(loc=loc, name=name, dim=d, ty=UINT)

        zy = N.Binary(loc=loc, op="*", left=b("threadIdx", "z"), right=b("blockDim", "y"), ty=UINT)
        zy = N.Binary(loc=loc, op="+", left=zy, right=b("threadIdx", "y"), ty=UINT)
        zyx = N.Binary(loc=loc, op="*", left=zy, right=b("blockDim", "x"), ty=UINT)
        return N.Binary(loc=loc, op="+", left=zyx, right=b("threadIdx", "x"), ty=UINT)

    def _block_size(self, loc: SourceLoc) -> A.Expr:
        """``blockDim.x * blockDim.y * blockDim.z``"""
        bx, by, bz = (N.Builtin(loc=loc, name="blockDim", dim=d, ty=UINT) for d in "xyz")
        xy = N.Binary(loc=loc, op="*", left=bx, right=by, ty=UINT)
        return N.Binary(loc=loc, op="*", left=xy, right=bz, ty=UINT)

    def _cg_method(self, sym: Sym, method: str, args: list[A.Expr], node: ts.Node) -> A.Expr:
        loc = self.loc(node)
        if sym.cg == MASKED:
            return masked_method(self, sym, method, args, node)
        if sym.cg == "grid":
            return grid_method(self, loc, method, node)
        lit = lambda v: N.IntLit(loc=loc, value=v, ty=UINT if v == FULL_MASK else INT)  # noqa: E731
        if sym.cg == "tile" and sym.tile > 32 and method not in _MULTI_WARP_METHODS:
            raise self.fail("C2N1029", node, what=f"{method}() on a tile of {sym.tile} threads")
        if method == "sync":
            return N.Call(
                loc=loc,
                func="__syncthreads" if sym.cg == "block" or sym.tile > 32 else "__syncwarp",
                args=(),
                ty=VOID,
            )
        if method == "thread_rank":
            tid = self._linear_tid(loc)
            if sym.cg == "block":
                return tid
            return N.Binary(
                loc=loc, op="%", left=tid, right=N.IntLit(loc=loc, value=sym.tile, ty=UINT), ty=UINT
            )
        if method == "meta_group_size" and sym.cg == "tile":  # tiles per block
            return N.Binary(
                loc=loc,
                op="/",
                left=self._block_size(loc),
                right=N.IntLit(loc=loc, value=sym.tile, ty=UINT),
                ty=UINT,
            )
        if method == "meta_group_rank" and sym.cg == "tile":
            return N.Binary(
                loc=loc,
                op="/",
                left=self._linear_tid(loc),
                right=N.IntLit(loc=loc, value=sym.tile, ty=UINT),
                ty=UINT,
            )
        if method in ("size", "num_threads"):
            if sym.cg == "tile":
                return N.IntLit(loc=loc, value=sym.tile, ty=UINT)
            return self._block_size(loc)
        if sym.cg == "tile":
            shfl = {
                "shfl": "__shfl_sync",
                "shfl_down": "__shfl_down_sync",
                "shfl_up": "__shfl_up_sync",
                "shfl_xor": "__shfl_xor_sync",
            }
            if method in shfl:
                if len(args) != 2:
                    raise self.fail("C2N1028", node, name=method, got=len(args), expected=2)
                return N.Call(
                    loc=loc,
                    func=shfl[method],
                    args=(lit(FULL_MASK), args[0], args[1], lit(sym.tile)),
                    ty=unqualified(args[0].ty),
                )
            if method in WARP_VOTES and len(args) == 1:
                fn, ty = WARP_VOTES[method]
                return N.Call(loc=loc, func=fn, args=(lit(FULL_MASK), args[0]), ty=ty)
        raise self.fail("C2N1029", node, what=f"{sym.cg}.{method}()")

    def _cg_reduce(self, node: ts.Node, arg_nodes: list[ts.Node]) -> A.Expr:
        if len(arg_nodes) != 3:
            raise self.fail("C2N1028", node, name="cg::reduce", got=len(arg_nodes), expected=3)
        group, n = self._cg_value(arg_nodes[0])
        if group not in ("tile", MASKED):
            raise self.fail("C2N1029", node, what="cg::reduce over a whole thread block")
        value = self.expr(arg_nodes[1])
        op_node = arg_nodes[2]
        op_name = ""
        if op_node.type == "call_expression":  # cg::plus<float>()
            op_name, _ = self._qualified_call_name(op_node.child_by_field_id(F.function))
        elif op_node.type == "compound_literal_expression":  # cg::plus<float>{}
            t = op_node.child_by_field_id(F.type)
            op_name = _text(t).split("<")[0].replace(" ", "") if t is not None else ""
        ops = {
            "plus": "add",
            "greater": "max",
            "less": "min",
            "bit_and": "and",
            "bit_or": "or",
            "bit_xor": "xor",
        }
        short = op_name.split("::")[-1]
        if (
            short not in ops
            and group == "tile"
            and op_node.type in ("identifier", "qualified_identifier")
        ):
            return self.user_reduce(node, op_node, value, n)  # see .groupreduce
        if short not in ops:
            raise self.fail("C2N1029", op_node, what=f"cg::reduce with '{_text(op_node)}'")
        if group == MASKED:
            return masked_reduce(self, self._masked_sym(arg_nodes[0]), value, ops[short], node)
        loc = self.loc(node)
        return N.Call(
            loc=loc,
            func=f"__c2n_warp_reduce_{ops[short]}",
            args=(value, N.IntLit(loc=loc, value=n, ty=INT)),
            ty=unqualified(value.ty),
        )

    def _cg_call(self, node: ts.Node, short: str, arg_nodes: list[ts.Node]) -> A.Expr:
        if short == "sync":
            if len(arg_nodes) != 1:
                raise self.fail("C2N1028", node, name="cg::sync", got=len(arg_nodes), expected=1)
            k, n = self._cg_value(arg_nodes[0])
            return self._cg_method(Sym(None, cg=k, tile=n), "sync", [], node)
        if short == "reduce":
            return self._cg_reduce(node, arg_nodes)
        if short in ("this_thread_block", "tiled_partition", "this_grid"):
            return CG_NOOP  # a group used as a statement: no effect
        if short in ("grid_group", "this_multi_grid"):
            raise self.fail("C2N1016", node, what=f"cg::{short}")
        if short in ("memcpy_async", "wait", "wait_prior"):
            return self.group_copy_call(node, short, arg_nodes)
        if short in ("thread_rank", "group_size", "num_threads", "size") and len(arg_nodes) == 1:
            k, n = self._cg_value(arg_nodes[0])
            return self._cg_method(Sym(None, cg=k, tile=n), short, [], node)
        raise self.fail("C2N1029", node, what=f"cg::{short}")

    def _masked_sym(self, node: ts.Node) -> Sym:
        s = self.lookup(_text(node)) if node.type == "identifier" else None
        return s if s is not None and s.cg == MASKED else Sym(None, cg=MASKED)

    def _is_group_arg(self, node: ts.Node) -> bool:
        if node.type == "identifier":
            s = self.lookup(_text(node))
            return s is not None and s.cg is not None
        return node.type == "call_expression" and self._auto_cg(node)


#: methods of a tile of more than 32 threads (a multi-warp tile, with ``block_tile_memory``)
_MULTI_WARP_METHODS = frozenset(
    "sync thread_rank meta_group_rank meta_group_size size num_threads".split()
)
#: the largest tile: a whole block (tiles of more than 32 threads span several warps)
MAX_TILE = 1024

# A group expression used as a statement (``cg::this_thread_block();``) lowers to nothing.
CG_NOOP = N.IntLit(loc=SourceLoc("<cg>", 0, 0), value=0, ty=INT)
