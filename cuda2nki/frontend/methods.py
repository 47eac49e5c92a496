"""Member functions of aggregate structs: ``s.norm()``, ``p->scale(2.0f)``, ``payoff(S)``.

A struct of plain data members may define ``__device__`` member functions in its body::

    struct PayoffCall {
        double m_K;
        __host__ __device__ double operator()(double S) const { return max(S - m_K, 0.0); }
        __host__ __device__ int in_the_money(double S) const { return S > m_K; }
    };

Each member function is lowered as a device function named ``S::name`` whose first
parameters point to the members of the object it is called on (``__this__m_K``, one per
member, in order; an array member is a pointer to its first element), followed by its own
parameters.  In its body a member's name (``m_K``, or ``this->m_K``) reads and writes through
that pointer, and a call of another member function (``in_the_money(S)``) passes the same
pointers on.  A call ``obj.f(a)`` / ``p->f(a)`` / ``p[i].f(a)`` passes the addresses of
``obj``'s members: those of a struct held by value (its member variables, see
:mod:`cuda2nki.frontend.aggregates`) or of a struct in memory (at their C layout offsets),
so a member function that writes a member writes the caller's object, as in C++.  A struct
variable called like a function (``payoff(S)``) calls its ``operator()``.

Refused (C2N1025): a member function of a struct with a struct member, a local variable of a
struct with a constructor declared without an initialiser (the constructor would have to
run; a default constructor that does nothing, ``S() {}``, need not), and member functions of class templates.  ``obj[i]`` calls ``operator[]`` and ``*obj``
calls ``operator*`` (an accessor returning a reference into an array: the call returns the
element's address, read or written through).  Other operators than ``operator()`` are called
by name (``a.operator+(b)``) or as operators (``a + b``, see :mod:`cuda2nki.frontend.structops`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.cst import F
from cuda2nki.frontend.lowerbase import _text, address_of

if TYPE_CHECKING:
    from cuda2nki.frontend.aggregates import AggregateType
    from cuda2nki.frontend.lower import BodyLowerer

    _Base = BodyLowerer
else:
    _Base = object

THIS = "__this__"  # the prefix of a member function's member pointers


def method_name(fn: ts.Node) -> str | None:
    """The name a member function definition declares (``norm``, ``operator()``), else None."""
    d = fn.child_by_field_id(F.declarator)
    while d is not None and d.type in ("pointer_declarator", "reference_declarator"):
        d = d.child_by_field_id(F.declarator) or (
            d.named_children[-1] if d.named_children else None
        )
    if d is None or d.type != "function_declarator":
        return None
    n = d.child_by_field_id(F.declarator)
    if n is None:
        return None
    if n.type in ("field_identifier", "identifier", "destructor_name"):
        return _text(n)
    if n.type == "operator_name":
        return "operator" + "".join(_text(n).split())[len("operator") :]
    return None


def this_params(agg: AggregateType) -> list[tuple[str, A.CType]] | None:
    """The member pointers a member function of ``agg`` takes first (None: a struct member,
    which has no single address to pass)."""
    from cuda2nki.frontend.aggregates import AggregateType as AT

    out: list[tuple[str, A.CType]] = []
    for member, mty in agg.fields:
        if isinstance(mty, AT):
            return None
        if isinstance(mty, A.ArrayType):
            elem = mty.elem if len(mty.dims) == 1 else N.ArrayType(elem=mty.elem, dims=mty.dims[1:])
            out.append((THIS + member, N.PointerType(pointee=elem)))
        else:
            out.append((THIS + member, N.PointerType(pointee=mty)))  # type: ignore[arg-type]
    return out


class MethodLowering(_Base):
    """Member functions: a mixin of :class:`cuda2nki.frontend.lower.BodyLowerer`."""

    #: the struct whose member function is being lowered (its members are in scope)
    this_agg: AggregateType | None = None

    def this_member(self, node: ts.Node, name: str) -> A.Expr | None:
        """``name`` inside a member function: the member it names, through its pointer."""
        agg = self.this_agg
        if agg is None:
            return None
        mty = dict(agg.fields).get(name)
        if mty is None:
            return None
        loc = (node.byte_range, self.placer)
        params = dict(this_params(agg) or ())
        ptr = N.Name(loc=loc, name=THIS + name, ty=params[THIS + name])
        if isinstance(mty, A.ArrayType):
            return ptr  # an array member decays to the pointer to its first element
        return N.Unary(loc=loc, op="*", operand=ptr, ty=mty)  # type: ignore[arg-type]

    def has_method(self, struct: str, name: str) -> bool:
        return name in self.u.methods.get(struct, ())

    def method_call(
        self,
        node: ts.Node,
        struct: AggregateType,
        leaves: list[A.Expr],
        method: str,
        arg_nodes: list[ts.Node],
        anchor: ts.Node,
    ) -> A.Expr:
        """The call of ``struct``'s member function ``method`` on the object whose member
        pointers are ``leaves``."""
        name = f"{struct.name}::{method}"
        fi = self.u.functions.get(name)
        if fi is None:
            raise self.fail("C2N1021", node, name=name)
        outs, self.agg_out = self.agg_out, None
        old_ok, self.agg_ok = self.agg_ok, True
        try:
            args = [self.expr(a) for a in arg_nodes]
        finally:
            self.agg_ok = old_ok
        nodes = [anchor] * len(leaves) + arg_nodes
        return self._user_call(node, name, fi, [*leaves, *args], [], nodes, outs)

    def struct_deref(self, node: ts.Node, obj: A.Expr, anchor: ts.Node) -> A.Expr | None:
        """``*obj`` for a struct ``obj`` that defines ``operator*`` (an accessor handing out a
        reference into an array): the call of that member function, else None."""
        from cuda2nki.frontend.aggregates import AggregateType as AT

        if type(obj.ty) is not AT:
            return None
        got = self.object_leaves(node, obj, False)
        if got is None or not self.has_method(got[0].name, "operator*"):
            return None
        return self.method_call(node, got[0], got[1], "operator*", [], anchor)

    def object_leaves(
        self, node: ts.Node, obj: A.Expr, arrow: bool
    ) -> tuple[AggregateType, list[A.Expr]] | None:
        """The struct ``obj`` is (``p`` for ``p->f()``) and the pointers to its members, else
        None when it is no aggregate struct."""
        from cuda2nki.frontend.aggregates import AggregateType as AT

        bt = obj.ty
        if arrow:
            if not isinstance(bt, A.PointerType):
                return None
            mem = self.blob_struct(bt.pointee)
            ptr = obj
        else:
            mem = self.blob_struct(bt)
            ptr = address_of(obj) if mem is not None else None
        if mem is not None and ptr is not None:
            out = []
            for member, mty in mem.fields:
                if isinstance(mty, AT):
                    raise self.fail(
                        "C2N1025",
                        node,
                        what=f"member function of struct '{mem.name}' with a struct member",
                    )
                m = self.mem_member(node, ptr, mem, member)
                out.append(m if isinstance(mty, A.ArrayType) else address_of(m))
            return mem, out
        if type(bt) is AT and isinstance(obj, A.Name):
            out = []
            for member, mty in bt.fields:
                if isinstance(mty, AT):
                    raise self.fail(
                        "C2N1025",
                        node,
                        what=f"member function of struct '{bt.name}' with a struct member",
                    )
                leaf = self.agg_member(node, obj, member)
                declared = dict(self._def_fields(bt)).get(member)
                # an array member (a local's array, a kernel parameter's buffer) decays
                out.append(leaf if isinstance(declared, A.ArrayType) else address_of(leaf))
            return bt, out
        return None

    def _def_fields(self, agg: AggregateType) -> tuple[tuple[str, object], ...]:
        """The members of ``agg`` as declared (a kernel parameter's arrays are pointers in
        ``agg``, arrays here)."""
        got = self.u.aggregate_types.get(agg.name)
        return got.fields if got is not None else agg.fields

    def own_leaves(self, node: ts.Node) -> list[A.Expr]:
        """Inside a member function: its member pointers, passed on to another one."""
        assert self.this_agg is not None
        loc = (node.byte_range, self.placer)
        return [N.Name(loc=loc, name=n, ty=t) for n, t in this_params(self.this_agg) or ()]
