"""CUB's block and warp collectives: ``cub::BlockReduce``, ``cub::BlockScan``, ``cub::WarpReduce``.

The usual spelling names the specialisation, gives it temporary storage in shared memory and
calls a collective on a temporary object::

    typedef cub::BlockReduce<float, BLOCK> BlockReduce;     // or `using BR = ...;`
    __shared__ typename BlockReduce::TempStorage tmp;       // or a union of several
    float total = BlockReduce(tmp).Sum(v);                   // thread 0 holds the sum

The storage is CUB's business: its declaration lowers to nothing (the name stays known, so
``BlockReduce(tmp)``, ``BlockScan(u.scan)`` or ``WarpReduce(tmp[warp])`` may name it) and each
collective becomes one call that the SIMT interpreter executes (:mod:`cuda2nki.simt.cubblock`),
defined only where CUB defines the result:

- ``Sum(v[, valid])``, ``Reduce(v, op[, valid])``: ``__c2n_cub_block_reduce_<op>`` (thread 0) or
  ``__c2n_cub_warp_reduce_<op>`` (lane 0 of each logical warp);
- ``InclusiveSum(in, out[, aggregate])``, ``ExclusiveSum(in, out[, aggregate])``,
  ``InclusiveScan(in, out, op[, aggregate])``, ``ExclusiveScan(in, out, [init,] op[, aggregate])``:
  assignments of ``out`` (and ``aggregate``) from ``__c2n_cub_block_inclusive_<op>``,
  ``__c2n_cub_block_exclusive_<op>`` (with ``init``; 0 for ``ExclusiveSum``) or
  ``__c2n_cub_block_exclusive0_<op>`` (no initial value: thread 0's output is undefined), the
  input evaluated once into a local ``__cubin<N>``.

The operation is ``cub::Sum``/``cub::Max``/``cub::Min`` or ``::cuda::std::plus``/
``cuda::maximum``/``cuda::minimum`` (and ``std::``/``thrust::`` ``plus``/``maximum``/``minimum``),
constructed in place, or a functor struct of the program whose ``operator()`` adds or picks the
larger or smaller of its two arguments (:mod:`cuda2nki.frontend.functorops`).  Refused with
C2N1010: other operations (device functions, other functors, lambdas), arrays of items per thread, prefix callbacks, other collectives (``BlockLoad``...),
and a collective over a vector or struct type other than a sum.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.cst import F
from cuda2nki.frontend.functorops import functor_op
from cuda2nki.frontend.lowerbase import _text
from cuda2nki.frontend.typesys import unqualified

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer

    _Base = BodyLowerer
else:
    _Base = object

PREFIX = "__c2n_cub_"
KINDS = ("BlockReduce", "BlockScan", "WarpReduce")
STORAGE = "cub::TempStorage"  # the opaque type of a collective's temporary storage
_INT = A.ScalarType(name="int32")
_OPS = {
    "Sum": "add",
    "Max": "max",
    "Min": "min",
    "plus": "add",
    "maximum": "max",
    "minimum": "min",
}
_OP_SPACES = ("cub", "std", "cuda::std", "cuda", "thrust")


@dataclass(frozen=True)
class CubType:
    """A specialisation of a CUB collective: its kind, item type and thread count (the block's
    ``BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z`` or the logical warp size)."""

    kind: str
    elem: A.CType
    threads: A.Expr


def _kids(node: ts.Node | None) -> list[ts.Node]:
    return [c for c in node.named_children if c.type != "comment"] if node is not None else []


def _strip_typename(node: ts.Node) -> ts.Node:
    if node.type in ("dependent_type", "type_descriptor"):
        inner = node.child_by_field_id(F.type)
        if inner is None:
            inner = next((c for c in node.named_children if c.type != "typename"), node)
        return _strip_typename(inner) if inner is not node else node
    return node


def _cub_template(node: ts.Node) -> ts.Node | None:
    """The ``BlockReduce<...>`` of ``cub::BlockReduce<...>`` (a type or, in an expression, a
    template function), else None."""
    node = _strip_typename(node)
    if node.type != "qualified_identifier":
        return None
    scope = node.child_by_field_id(F.scope)
    name = node.child_by_field_id(F.name)
    if scope is None or name is None or _text(scope) != "cub":
        return None
    if name.type in ("template_type", "template_function"):
        head = name.child_by_field_id(F.name)
        if head is not None and _text(head) in KINDS:
            return name
    return None


class CubLowering(_Base):
    """CUB block/warp collectives: a mixin of :class:`cuda2nki.frontend.lower.BodyLowerer`."""

    # ------------------------------------------------------------------ state

    @property
    def _cub_aliases(self) -> dict[str, CubType]:
        return self.__dict__.setdefault("_cub_alias_table", {})

    @property
    def _cub_storage(self) -> set[str]:
        """Names of variables and local types that hold CUB temporary storage."""
        return self.__dict__.setdefault("_cub_storage_names", set())

    # ------------------------------------------------------------------ types

    def cub_type(self, node: ts.Node) -> CubType | None:
        """The CUB specialisation a type or expression node names (an alias or the template
        spelled out), else None."""
        tmpl = _cub_template(node)
        if tmpl is not None:
            return self._cub_specialisation(tmpl)
        node = _strip_typename(node)
        if node.type in ("type_identifier", "identifier", "namespace_identifier"):
            name = _text(node)
            if self.lookup(name) is None:
                return self._cub_aliases.get(name) or self.u.cub_types.get(name)
        return None

    def _cub_specialisation(self, tmpl: ts.Node) -> CubType:
        kind = _text(tmpl.child_by_field_id(F.name))
        args = _kids(tmpl.child_by_field_id(F.arguments))
        if not args:
            raise self.fail("C2N1010", tmpl, what=f"cub::{kind} without an item type")
        elem = self._template_arg(args[0])
        generic = self.generic and isinstance(elem, A.OpaqueType)  # `T`, not instantiated yet
        if not isinstance(elem, A.ScalarType | A.VectorType) and not generic:
            raise self.fail("C2N1010", tmpl, what=f"cub::{kind} of '{_text(args[0])}'")
        if kind == "WarpReduce":
            lanes = self._cub_count(args[1]) if len(args) > 1 else _lit(tmpl, self, 32)
            return CubType(kind, unqualified(elem), lanes)
        if len(args) < 2:
            raise self.fail("C2N1010", tmpl, what=f"cub::{kind} without a block size")
        dims = [args[1], *args[3:5]]  # BLOCK_DIM_X, (ALGORITHM), BLOCK_DIM_Y, BLOCK_DIM_Z
        threads = self._cub_count(dims[0])
        for d in dims[1:]:
            other = self._cub_count(d)
            threads = N.Binary(loc=threads.loc, op="*", left=threads, right=other, ty=_INT)
        return CubType(kind, unqualified(elem), threads)

    def _cub_count(self, node: ts.Node) -> A.Expr:
        """A thread count template argument (a constant, or a template parameter)."""
        simple = _strip_typename(node)
        if simple.type == "type_identifier" and _text(simple) in self.env:
            return self.e_identifier(simple)
        got = self._template_arg(node)
        if not isinstance(got, A.Expr) or not isinstance(unqualified(got.ty), A.ScalarType):
            raise self.fail("C2N1010", node, what=f"CUB thread count '{_text(node)}'")
        return got

    def cub_typedef(self, node: ts.Node, file_scope: bool = False) -> bool:
        """``typedef cub::BlockReduce<T, N> BR;`` / ``using BR = ...;``: remember ``BR``."""
        if node.type == "alias_declaration":
            name_node = node.child_by_field_id(F.name)
            target = node.child_by_field_id(F.type)
        else:
            target = node.child_by_field_id(F.type)
            decls = [
                c
                for i, c in enumerate(node.children)
                if node.field_name_for_child(i) == "declarator"
            ]
            name_node = decls[0] if len(decls) == 1 else None
        if target is None or name_node is None or _cub_template(target) is None:
            return False
        ct = self.cub_type(target)
        assert ct is not None
        table = self.u.cub_types if file_scope else self._cub_aliases
        table[_text(name_node)] = ct
        return True

    def is_cub_storage_type(self, node: ts.Node | None) -> bool:
        """``typename BR::TempStorage``, ``cub::BlockScan<int, 128>::TempStorage``, or a local
        union of such members."""
        if node is None:
            return False
        node = _strip_typename(node)
        if node.type == "type_identifier":
            return _text(node) in self._cub_storage and self.lookup(_text(node)) is None
        if node.type in ("union_specifier", "struct_specifier"):
            return self._cub_union(node)
        if node.type != "qualified_identifier":
            return False
        inner = node
        while True:  # cub::X<...>::TempStorage parses as cub :: (X<...> :: TempStorage)
            name = inner.child_by_field_id(F.name)
            if name is None or name.type != "qualified_identifier":
                break
            inner = name
        if name is None or _text(name) != "TempStorage":
            return False
        scope = inner.child_by_field_id(F.scope)
        if inner is node:
            return scope is not None and self.cub_type(scope) is not None
        return _scoped_cub(node)

    def _cub_union(self, node: ts.Node) -> bool:
        """A union/struct whose members are all CUB storage (its tag, if any, is remembered)."""
        body = node.child_by_field_id(F.body)
        fields = [c for c in _kids(body) if c.type == "field_declaration"]
        if body is None or not fields or len(fields) != len(_kids(body)):
            return False
        if not all(self.is_cub_storage_type(f.child_by_field_id(F.type)) for f in fields):
            return False
        tag = node.child_by_field_id(F.name)
        if tag is not None:
            self._cub_storage.add(_text(tag))
        return True

    def cub_local_type(self, node: ts.Node) -> bool:
        """``union TempStorage { typename BS::TempStorage scan; ... };`` in a body."""
        return node.type in ("union_specifier", "struct_specifier") and self._cub_union(node)

    def cub_storage_decl(self, node: ts.Node) -> list[A.Stmt] | None:
        """A declaration of CUB storage (``__shared__ typename BR::TempStorage tmp[4];``): no
        statement; its names are remembered.  None when ``node`` is another declaration."""
        if not self.is_cub_storage_type(node.child_by_field_id(F.type)):
            return None
        for i, c in enumerate(node.children):
            if node.field_name_for_child(i) != "declarator":
                continue
            d = c
            while d.type in ("array_declarator", "reference_declarator"):
                d = d.child_by_field_id(F.declarator) or _kids(d)[0]
            if d.type != "identifier":
                raise self.fail("C2N1010", c, what="CUB temporary storage declared with a value")
            self._cub_storage.add(_text(d))
        return []

    def _is_storage_ref(self, node: ts.Node) -> bool:
        while node.type in ("field_expression", "subscript_expression", "parenthesized_expression"):
            node = (
                node.child_by_field_id(F.argument)
                if node.type != "parenthesized_expression"
                else _kids(node)[0]
            )
        return node.type == "identifier" and _text(node) in self._cub_storage

    # ------------------------------------------------------------------ calls

    def cub_call(
        self, node: ts.Node, obj: ts.Node, method: str, arg_nodes: list[ts.Node]
    ) -> A.Expr | None:
        """``BR(tmp).Sum(v)`` and the other collectives, else None (not a CUB object)."""
        if obj.type != "call_expression":
            return None
        fn = obj.child_by_field_id(F.function)
        ct = self.cub_type(fn) if fn is not None else None
        if ct is None:
            return None
        ctor = _kids(obj.child_by_field_id(F.arguments))
        if len(ctor) != 1 or not self._is_storage_ref(ctor[0]):
            raise self.fail(
                "C2N1010", obj, what=f"cub::{ct.kind} constructed other than on its TempStorage"
            )
        what = f"cub::{ct.kind}::{method}"
        if ct.kind == "BlockScan":
            return self._cub_scan(node, ct, method, arg_nodes, what)
        if method not in ("Sum", "Reduce"):
            raise self.fail("C2N1010", node, what=what)
        return self._cub_reduce(node, ct, method, arg_nodes, what)

    def _cub_value(self, node: ts.Node, ct: CubType, what: str) -> A.Expr:
        v = self.expr(node)
        if isinstance(unqualified(v.ty), A.ArrayType):
            raise self.fail("C2N1010", node, what=f"{what} over an array of items per thread")
        return self._convert(v, ct.elem)

    def _convert(self, v: A.Expr, to: A.CType) -> A.Expr:
        if unqualified(v.ty) == to or isinstance(to, A.OpaqueType):
            return v
        return N.Cast(loc=v.loc, to=to, operand=v, kind="c", ty=to)

    def _cub_op(self, node: ts.Node, ct: CubType, what: str) -> str:
        """The operation a functor argument constructs: add, max or min (else C2N1010)."""
        got = _op_name(node) or functor_op(node)
        if got is None:
            raise self.fail("C2N1010", node, what=f"{what} with the operation '{_text(node)}'")
        if got[0] != "add" and isinstance(ct.elem, A.VectorType):
            raise self.fail("C2N1010", node, what=f"{what} of a vector type with '{got[1]}'")
        return got[0]

    def _cub_reduce(
        self, node: ts.Node, ct: CubType, method: str, args: list[ts.Node], what: str
    ) -> A.Expr:
        n_op = 1 if method == "Reduce" else 0
        if not 1 + n_op <= len(args) <= 2 + n_op:
            raise self.fail("C2N1028", node, name=what, got=len(args), expected=1 + n_op)
        op = self._cub_op(args[1], ct, what) if n_op else "add"
        value = self._cub_value(args[0], ct, what)
        valid = self.expr(args[-1]) if len(args) == 2 + n_op else ct.threads
        kind = "warp_reduce" if ct.kind == "WarpReduce" else "block_reduce"
        return self._cub_intrinsic(node, f"{kind}_{op}", [value, valid], ct)

    def _cub_intrinsic(self, node: ts.Node, name: str, args: list[A.Expr], ct: CubType) -> A.Expr:
        loc = (node.byte_range, self.placer)
        return N.Call(loc=loc, func=PREFIX + name, args=(*args, ct.threads), ty=ct.elem)

    def _cub_scan(
        self, node: ts.Node, ct: CubType, method: str, args: list[ts.Node], what: str
    ) -> A.Expr:
        if method not in ("InclusiveSum", "ExclusiveSum", "InclusiveScan", "ExclusiveScan"):
            raise self.fail("C2N1010", node, what=what)
        if isinstance(ct.elem, A.VectorType):
            raise self.fail("C2N1010", node, what=f"{what} of a vector type")
        if len(args) < 2:
            raise self.fail("C2N1028", node, name=what, got=len(args), expected=2)
        rest = args[2:]
        init: ts.Node | None = None
        op = "add"
        if method.endswith("Scan"):
            if (
                method == "ExclusiveScan"
                and len(rest) >= 2
                and (_op_name(rest[1]) or functor_op(rest[1]))
            ):
                init, rest = rest[0], rest[1:]
            if not rest:
                raise self.fail("C2N1028", node, name=what, got=len(args), expected=3)
            op, rest = self._cub_op(rest[0], ct, what), rest[1:]
        if len(rest) > 1:
            raise self.fail("C2N1028", node, name=what, got=len(args), expected=len(args) - 1)
        agg = rest[0] if rest else None
        if agg is not None and not self._lvalue_node(agg):
            raise self.fail("C2N1010", agg, what=f"{what} with a prefix callback")
        loc = (node.byte_range, self.placer)
        tmp = N.Name(loc=loc, name=f"__cubin{node.start_byte}", ty=ct.elem)
        self.prologue.append(N.VarDecl(loc=loc, name=tmp.name, ty=ct.elem, init=None))
        steps: list[A.Expr] = [
            N.Assign(
                loc=loc, op="=", target=tmp, value=self._cub_value(args[0], ct, what), ty=ct.elem
            )
        ]
        if method.startswith("Inclusive"):
            scan = self._cub_intrinsic(node, f"block_inclusive_{op}", [tmp], ct)
        elif method == "ExclusiveSum" or init is not None:
            first = (
                self._convert(self.expr(init), ct.elem)
                if init is not None
                else _lit(node, self, 0, ct.elem)
            )
            scan = self._cub_intrinsic(node, f"block_exclusive_{op}", [tmp, first], ct)
        else:
            scan = self._cub_intrinsic(node, f"block_exclusive0_{op}", [tmp], ct)
        steps.append(self._store(args[1], scan))
        if agg is not None:
            steps.append(
                self._store(agg, self._cub_intrinsic(node, f"block_total_{op}", [tmp], ct))
            )
        void = A.ScalarType(name="void")
        return N.Comma(loc=loc, exprs=tuple(steps), ty=void)

    @staticmethod
    def _lvalue_node(node: ts.Node) -> bool:
        return node.type in ("identifier", "field_expression", "subscript_expression") or (
            node.type == "pointer_expression" and _text(node).startswith("*")
        )

    def _store(self, target_node: ts.Node, value: A.Expr) -> A.Expr:
        target = self.expr(target_node)
        ty = unqualified(target.ty)
        return N.Assign(loc=value.loc, op="=", target=target, value=self._convert(value, ty), ty=ty)


def _lit(node: ts.Node, low: CubLowering, v: int, ty: A.CType = _INT) -> A.Expr:
    loc = (node.byte_range, low.placer)
    if isinstance(ty, A.ScalarType) and ty.name.startswith("float"):
        return N.FloatLit(loc=loc, value=float(v), ty=ty)
    return N.IntLit(loc=loc, value=v, ty=ty)


def _scoped_cub(node: ts.Node) -> bool:
    """``cub::X<...>::TempStorage`` (the ``cub::X<...>`` part is no node of its own)."""
    head = _text(node).replace(" ", "").rsplit("::TempStorage", 1)[0]
    return head.startswith("cub::") and head[5:].split("<")[0] in KINDS


def _op_name(node: ts.Node) -> tuple[str, str] | None:
    """``cub::Sum()``, ``cuda::std::plus<float>{}``...: (add/max/min, the name), else None."""
    fn: ts.Node | None = node
    if node.type in ("call_expression", "compound_literal_expression"):
        fn = node.child_by_field_id(F.function) or node.child_by_field_id(F.type)
        if _kids(node.child_by_field_id(F.arguments) or node.child_by_field_id(F.value)):
            return None
    if fn is None or fn.type not in ("qualified_identifier", "template_function", "template_type"):
        return None
    head = _text(fn).replace(" ", "").split("<")[0].lstrip(":")
    space, _, name = head.rpartition("::")
    op = _OPS.get(name) if space in _OP_SPACES else None
    return (op, head) if op is not None else None
