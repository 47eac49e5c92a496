"""Variable templates in device memory: ``template <typename T> __constant__ T mask[W];``.

A file-scope ``__constant__`` or ``__device__`` declaration under a template header declares
one array (or variable) per instantiation; device code names one as ``mask<T>[j]`` and the
host fills it with ``cudaMemcpyToSymbol(mask<T>, ...)``.  :func:`register` keeps each such
declaration by name; :func:`instance` gives the use ``mask<float>`` (the arguments resolved in
the lowering's environment) as the global variable of that instantiation, declared the first
time it is named: its type the declaration's with the parameters bound, its name
``mask__of_float32`` (:func:`instance_name`, one per argument list, so the ``double`` and
``float`` instances of one file stay apart).  The host's writes of the template name count for
each instance (:func:`template_of`), so a host-filled instance is an input as a host-filled
``__constant__`` array is (:mod:`cuda2nki.frontend.constparams`).

Inside a template not instantiated yet the use is an opaque name of the parameters' types.
Declarations of struct type, and arguments that are no types or integer constants, are not
instances: the caller refuses the use as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.cst import QUALIFIER_IDS, F
from cuda2nki.frontend.lowerbase import _text
from cuda2nki.frontend.typesys import unqualified
from cuda2nki.frontend.vartemplates import VarTemplate, _bound, _params

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer
    from cuda2nki.frontend.unit import UnitContext

#: between a variable template's name and its arguments in an instance's name
SEP = "__of_"
_SPACES = {"__constant__": "constant", "__device__": "device"}
_WORD_KINDS = ("type_qualifier", "storage_class_specifier", "attribute_specifier")


def register(unit: UnitContext, tdecl: ts.Node) -> None:
    """Keep the device-memory variable template ``tdecl`` declares, if it declares one."""
    decl = next((c for c in tdecl.named_children if c.type == "declaration"), None)
    plist = tdecl.child_by_field_id(F.parameters)
    if decl is None or plist is None or _space(decl) is None:
        return
    params = _params(plist)
    if params is None:
        return
    for d in decl.children_by_field_id(F.declarator):
        inner = d.child_by_field_id(F.declarator) if d.type == "init_declarator" else d
        while inner is not None and inner.type == "array_declarator":
            inner = inner.child_by_field_id(F.declarator)
        if inner is not None and inner.type == "identifier":
            unit.global_templates[_text(inner)] = VarTemplate(params, decl, d)


def _space(decl: ts.Node) -> str | None:
    """``constant`` or ``device``: the memory a declaration's qualifiers put it in, else None."""
    words = {
        _text(c) if c.is_named else c.type
        for c in decl.children
        if c.type in _WORD_KINDS or not c.is_named
    }
    return next((s for w, s in _SPACES.items() if w in words), None)


def template_of(name: str) -> str:
    """The variable template an instance's global is of (any other name: itself)."""
    return name.split(SEP)[0]


def instance_name(name: str, env: dict, vt: VarTemplate) -> str:
    parts = []
    for pname, kind, _ in vt.params:
        v = env[pname]
        parts.append(str(v).replace("-", "m") if kind == "int" else getattr(v, "name", "t"))
    return name + SEP + "_".join(parts)


def instance(low: BodyLowerer, node: ts.Node) -> A.Expr | None:
    """The global variable the use ``node`` (``name<args>``) names, else None."""
    name_node, args_node = node.child_by_field_id(F.name), node.child_by_field_id(F.arguments)
    if name_node is None or args_node is None:
        return None
    name = _text(name_node)
    vt = low.u.global_templates.get(name)
    args = [a for a in args_node.named_children if a.type != "comment"]
    if vt is None or len(args) > len(vt.params):
        return None
    env = _bound(low, vt, args)
    if env is None:
        return None
    loc = (node.byte_range, low.placer)
    ty = _instance_type(low, vt, env)
    if not isinstance(ty, (A.ScalarType, A.VectorType, A.ArrayType, A.OpaqueType)):
        return None
    if any(isinstance(env[p], A.OpaqueType) for p, _, _ in vt.params):
        return N.Name(loc=loc, name=_text(node), ty=ty)  # a template not instantiated yet
    inst = instance_name(name, env, vt)
    if inst not in low.u.globals:
        _declare(low, vt, env, inst, ty)
    return N.Name(loc=loc, name=inst, ty=low.u.globals[inst])


def _instance_type(low: BodyLowerer, vt: VarTemplate, env: dict) -> object:
    from cuda2nki.frontend.lower import BodyLowerer

    sub = BodyLowerer(low.u, "<file>", env=env, host=True)
    quals = tuple(c for c in vt.decl.children if c.kind_id in QUALIFIER_IDS and _text(c) == "const")
    base = sub.type_of(vt.decl.child_by_field_id(F.type), quals)
    d = vt.declarator
    dnode = d.child_by_field_id(F.declarator) if d.type == "init_declarator" else d
    _, ty = sub._declarator_type(dnode, base)
    return ty


def _declare(low: BodyLowerer, vt: VarTemplate, env: dict, inst: str, ty: A.CType) -> None:
    from cuda2nki.frontend.lower import BodyLowerer
    from cuda2nki.frontend.unsized import sized_by_init

    d = vt.declarator
    value = d.child_by_field_id(F.value) if d.type == "init_declarator" else None
    sub = BodyLowerer(low.u, "<file>", env=env, host=True)
    init = sub._initializer(value, ty) if value is not None else None
    if isinstance(init, A.InitList) and isinstance(ty, A.ArrayType):
        init = _folded(sub, init, ty.elem)  # `{T(0.5), T(1)}` under T = float: numbers
    ty = sized_by_init(ty, init)
    space = _space(vt.decl) or "device"
    low.u.globals[inst] = ty
    low.u.global_vars.append(
        N.GlobalVar(loc=low.u.placer.at(d), name=inst, ty=ty, init=init, space=space)
    )


def _folded(low: BodyLowerer, init: A.InitList, elem: A.CType) -> A.InitList:
    """``init`` with each item that is a constant (a cast of a number...) as a literal of
    ``elem``, the element type (a nested list: folded in turn)."""
    from cuda2nki.frontend.constfold import convert

    to = unqualified(elem)
    items = []
    for item in init.items:
        v = low.const_value(item) if not isinstance(item, A.InitList) else None
        if isinstance(item, A.InitList) and isinstance(to, A.ArrayType):
            item = _folded(low, item, to.elem)
        elif isinstance(v, (int, float)) and isinstance(to, A.ScalarType):
            c = convert(v, to)
            lit = N.FloatLit if to.is_float else N.IntLit
            item = lit(loc=item.loc, value=c, ty=to)
        items.append(item)
    return N.InitList(loc=init.loc, items=tuple(items), ty=init.ty)
