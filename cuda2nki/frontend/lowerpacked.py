"""Packed words in the body lowering: vector and packed-struct values built, read and
written lane by lane (a mixin of :class:`cuda2nki.frontend.lower.BodyLowerer`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.aggregates import AggregateType
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.cst import (
    COMMENT_IDS,
    F,
)
from cuda2nki.frontend.lowerbase import (
    _text,
    address_of,
    is_lvalue,
)
from cuda2nki.frontend.lowertables import _CALL_IDS, _INITIALIZER_LIST_IDS, _bytes, std_constant
from cuda2nki.frontend.typesys import (
    ULONG,
    VOID,
    unqualified,
    with_const,
)

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer

    _Base = BodyLowerer
else:
    _Base = object


class PackedWordLowering(_Base):
    """Packed words in the body lowering: vector and packed-struct values built, read and"""

    def e_compound_literal(self, node: ts.Node) -> A.Expr:
        """``Packed128<T>{word}``: a packed vector built from a machine word; ``Rec{a, b}``: a
        record struct; ``std::bool_constant<B>{}``: its constant (else refused)."""
        t_node, v_node = node.child_by_field_id(F.type), node.child_by_field_id(F.value)
        to = self.type_of(t_node) if t_node is not None else None
        items = (
            [c for c in v_node.named_children if c.kind_id not in COMMENT_IDS]
            if v_node is not None
            else []
        )
        if t_node is not None and t_node.type == "qualified_identifier":
            got = std_constant(self, t_node)
            if got is not None and got[1] is not None:  # std::bool_constant<true>{}
                return N.IntLit(loc=(node.byte_range, self.placer), value=got[1], ty=got[0])
            head = _text(t_node).replace(" ", "").split("<")[0].lstrip(":")
            if head == "cuda::aligned_size_t" and len(items) == 1:  # `aligned_size_t<16>{n}`
                size = self.expr(items[0])
                loc = (node.byte_range, self.placer)
                return N.Cast(loc=loc, to=ULONG, operand=size, kind="functional", ty=ULONG)
        if (
            type(to) is A.VectorType
            and to.name in self.u.record_fields
            and v_node is not None
            and v_node.kind_id in _INITIALIZER_LIST_IDS
        ):
            return self._init_list(v_node, to)  # Record{a, b}: aggregate initialisation
        if self.packed_of(to) is None or len(items) != 1:
            self._refuse(node)
        return self._packed_from_word(node, to, items[0])

    def _packed_from_word(self, node: ts.Node, to: A.CType, w_node: ts.Node) -> A.Expr:
        """``Packed128<T>{*reinterpret_cast<const int4*>(p)}`` (``__ldcs(...)``, ``q[i]``): the
        struct's word constructor copies the bits of a word loaded from memory, which is the
        load of the vector itself at that address."""
        inst = self.packed_of(to)
        assert inst is not None and isinstance(to, A.VectorType)
        if not inst.struct.word_ctor:
            raise self.fail("C2N1030", node, what=f"'{to.name}' has no word constructor")
        w = self.expr(w_node)
        got = self._retype_access(w, to)
        if got is None:
            raise self.fail(
                "C2N1010",
                node,
                what=f"a packed vector '{to.name}' built from a word that is not loaded "
                "from memory",
            )
        return got

    def _word_of(self, node: ts.Node) -> A.Expr | None:
        """``v.get_bits()`` with ``v`` a packed vector and ``get_bits`` its word getter: ``v``."""
        fn = node.child_by_field_id(F.function) if node.kind_id in _CALL_IDS else None
        args = node.child_by_field_id(F.arguments)
        if fn is None or fn.type != "field_expression" or args is None or args.named_children:
            return None
        obj, meth = fn.child_by_field_id(F.argument), fn.child_by_field_id(F.field)
        if obj is None or meth is None or _text(fn.child_by_field_id(F.operator)) != ".":
            return None
        s = self.lookup(_text(obj)) if obj.type == "identifier" else None
        if s is None or type(s.ty) is AggregateType:  # a struct's member function, not a word
            return None
        vec = self.expr(obj)
        inst = self.packed_of(vec.ty)
        if inst is None or _text(meth) not in inst.struct.getters:
            return None
        return vec

    def _packed_store(self, node: ts.Node, target: A.Expr, vec: A.Expr) -> A.Expr:
        """``*reinterpret_cast<int4*>(p) = v.get_bits()``: the store of ``v`` at ``p``."""
        to = unqualified(vec.ty)
        got = self._retype_access(target, to)
        if got is None:
            raise self.fail(
                "C2N1010",
                node,
                what="the machine word of a packed vector stored other than through a pointer",
            )
        return N.Assign(loc=(node.byte_range, self.placer), op="=", target=got, value=vec, ty=to)

    def _retype_access(self, e: A.Expr, to: A.VectorType) -> A.Expr | None:
        """``*q`` / ``q[i]`` with ``q`` a pointer to a word of ``to``'s size, as the same access
        through a pointer to ``to`` (a reinterpret cast of ``q`` is looked through)."""
        if isinstance(e, A.Unary) and e.op == "*":
            ptr, index = e.operand, None
        elif isinstance(e, A.Index):
            ptr, index = e.base, e.index
        else:
            return None
        word = ptr.ty.pointee if isinstance(ptr.ty, A.PointerType) else None
        if not isinstance(word, A.VectorType) or _bytes(word) != _bytes(to):
            return None
        inner = ptr
        if (
            isinstance(ptr, A.Cast)
            and ptr.kind in ("reinterpret", "c")
            and isinstance(ptr.operand.ty, A.PointerType)
        ):
            inner = ptr.operand
        const = word.const or (
            isinstance(inner.ty, A.PointerType) and getattr(inner.ty.pointee, "const", False)
        )
        pt = N.PointerType(pointee=with_const(to, const))
        cast = N.Cast(loc=ptr.loc, to=pt, operand=inner, kind="reinterpret", ty=pt)
        if index is None:
            return N.Unary(loc=e.loc, op="*", operand=cast, ty=pt.pointee)
        return N.Index(loc=e.loc, base=cast, index=index, ty=pt.pointee)

    def _with_defaults(
        self, name: str, fi: object, args: list[A.Expr], given: list[A.Expr], n_params: int
    ) -> list[A.Expr]:
        """``given`` completed with the callee's default arguments (``bool sync = true``),
        lowered where the call is; unchanged when a missing argument has no default."""
        fd = self.u.pick_overload(name, args, fi.namespace) or fi
        defaults = self.u.param_defaults(self, fd)
        if len(defaults) != n_params:
            return given
        missing = defaults[len(given) :]
        if any(d is None for d in missing):
            return given
        return [*given, *(self.expr(d) for d in missing)]

    def _user_call(
        self,
        node: ts.Node,
        name: str,
        fi: object,
        args: list[A.Expr],
        targs: list[A.Expr | A.CType],
        arg_nodes: list[ts.Node],
        outs: list[A.Expr] | None = None,
    ) -> A.Expr:
        # drop cooperative-groups arguments (groups are erased, see ast.py)
        groups = [self._cg_value(a) if self._is_group_arg(a) else None for a in arg_nodes]
        args2 = [a for a, g in zip(args, groups) if g is None] if any(groups) else args
        target, ret, n_params, refs = self.u.resolve_call(self, node, name, fi, args, targs, groups)
        by_value = [type(a.ty) is AggregateType or self.member_wise(a.ty) for a in args2]
        if any(by_value):  # a struct (a variable, or in memory): its members
            nodes = [n for n, g in zip(arg_nodes, groups) if g is None]
            args2 = [
                leaf
                for a, an, bv in zip(args2, nodes, by_value)
                for leaf in (self.agg_leaves(an, a) if bv else [a])
            ]
        if type(ret) is AggregateType:  # the struct comes back through member pointers
            if outs is None:
                raise self.fail(
                    "C2N1025",
                    node,
                    what=f"struct '{ret.name}' returned by '{name}' other than into a variable",
                )
            args2, ret = [*args2, *outs], VOID
        if n_params is not None and n_params > len(args2):
            args2 = self._with_defaults(name, fi, args, args2, n_params)
        if n_params is not None and n_params != len(args2):
            raise self.fail("C2N1028", node, name=name, got=len(args2), expected=n_params)
        if any(refs):  # a non-const reference parameter receives the argument's address
            args2 = list(args2)
            for i, is_ref in enumerate(refs[: len(args2)]):
                if is_ref:
                    if not is_lvalue(args2[i]):
                        raise self.fail(
                            "C2N1030",
                            node,
                            what=f"argument {i + 1} of '{name}' must "
                            "be a variable (the parameter is a reference)",
                        )
                    args2[i] = address_of(args2[i])
        self.calls.append((target, self.loc(node)))
        call = N.Call(
            loc=(node.byte_range, self.placer),
            func=name,
            args=tuple(args2),
            template_args=tuple(targs),
            target=target,
            ty=ret,
        )
        if fi is not None and self.u.returns_ref(fi) and isinstance(ret, A.PointerType):
            return N.Unary(loc=call.loc, op="*", operand=call, ty=ret.pointee)  # `T&`: an lvalue
        return call
