"""Class templates of plain data: ``template <typename Real> struct AsianOption { Real spot;
Real strike; enum CallPut { Call, Put }; CallPut type; };``.

Such a struct is an aggregate struct (see :mod:`cuda2nki.frontend.aggregates`) once its
parameters are known: :meth:`StructTemplateLowering.struct_instance` resolves
``AsianOption<float>`` to the :class:`~cuda2nki.frontend.aggregates.AggregateType` named
``AsianOption<float32>``, its member types read with the parameters bound (type parameters
and integer ones: ``template <typename T, int N> struct Tile { T v[N]; int n; }``).  Inside a
template not instantiated yet (an argument is still a parameter) it is an opaque type whose
members read as opaque values, so the generic kernel is still lowered.  An enum declared in
the struct is reachable as ``AsianOption<Real>::Put`` and ``AsianOption::Put``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.aggregates import AggregateDef, AggregateType, aggregate_def
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.cst import COMMENT_IDS, F
from cuda2nki.frontend.lowerbase import _text
from cuda2nki.frontend.typesys import type_str, unqualified

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer

    _Base = BodyLowerer
else:
    _Base = object

_PARAM_KINDS = {
    "type_parameter_declaration": "type",
    "optional_type_parameter_declaration": "type",
    "parameter_declaration": "int",
    "optional_parameter_declaration": "int",
}


@dataclass(frozen=True)
class StructTemplate:
    """A class template of plain data members: its members as :func:`aggregate_def` reads
    them, and its parameters (name, ``"type"`` or ``"int"``)."""

    agg: AggregateDef
    params: tuple[tuple[str, str], ...]


def struct_template(node: ts.Node, tparams: ts.Node) -> StructTemplate | None:
    """The class template ``template <tparams> struct node {...}`` of plain data members,
    else None (member functions, a specialisation, a parameter of another kind)."""
    agg = aggregate_def(node)
    if agg is None or agg.methods or agg.has_ctor:  # member functions: not of templates yet
        return None
    params: list[tuple[str, str]] = []
    for p in tparams.named_children:
        if p.kind_id in COMMENT_IDS:
            continue
        kind = _PARAM_KINDS.get(p.type)
        if kind is None:
            return None
        if kind == "type":
            n = p.child_by_field_id(F.name) or next(
                (c for c in p.named_children if c.type == "type_identifier"), None
            )
        else:
            n = p.child_by_field_id(F.declarator)
        if n is None or n.type not in ("type_identifier", "identifier"):
            return None
        params.append((_text(n), kind))
    return StructTemplate(agg, tuple(params)) if params else None


def nested_enums(node: ts.Node) -> list[ts.Node]:
    """The enums a struct's body declares (``enum CallPut { Call, Put };``)."""
    body = node.child_by_field_id(F.body)
    out = []
    for f in body.named_children if body is not None else ():
        t = f.child_by_field_id(F.type) if f.type == "field_declaration" else f
        if t is not None and t.type == "enum_specifier" and t.child_by_field_id(F.body):
            out.append(t)
    return out


class StructTemplateLowering(_Base):
    """``S<args>`` of a class template of plain data: a mixin of
    :class:`cuda2nki.frontend.lower.BodyLowerer`."""

    def struct_instance(self, node: ts.Node) -> A.CType | None:
        """The type ``S<args>`` (a ``template_type`` node) names when ``S`` is a class template
        of plain data, else None."""
        name = _text(node.child_by_field_id(F.name))
        st = self.u.struct_templates.get(name)
        if st is None:
            return None
        args_node = node.child_by_field_id(F.arguments)
        kids = [c for c in args_node.named_children if c.kind_id not in COMMENT_IDS]
        if len(kids) != len(st.params):
            return None
        env: dict[str, object] = {}
        shown: list[str] = []
        for (pname, kind), k in zip(st.params, kids):
            got = self._template_arg(k)
            if kind == "int":
                v = self.const_value(got) if isinstance(got, A.Expr) else None
                if not isinstance(v, int):
                    return self._dependent(node)
                env[pname], text = v, str(v)
            else:
                if isinstance(got, A.OpaqueType) or not isinstance(
                    got, A.ScalarType | A.VectorType | A.PointerType
                ):
                    return self._dependent(node)
                env[pname] = unqualified(got)
                text = type_str(env[pname])
            shown.append(text)
        iname = f"{name}<{','.join(shown)}>"
        got_t = self.u.aggregate_types.get(iname)
        if got_t is not None:
            return got_t  # type: ignore[return-value]
        from cuda2nki.frontend.lower import BodyLowerer

        self.u.aggregates[iname] = AggregateDef(iname, st.agg.members)
        sub = BodyLowerer(self.u, self.func_name, env=env)  # type: ignore[arg-type]
        return sub.aggregate_type(iname, node)  # type: ignore[return-value]

    def _dependent(self, node: ts.Node) -> A.CType:
        """``S<T>`` before ``T`` is known: opaque, its members opaque values."""
        text = _text(node).replace(" ", "")
        self.u.dependent_types.add(text)
        return N.OpaqueType(name=text)


__all__ = ["AggregateType", "StructTemplate", "StructTemplateLowering", "nested_enums"]
