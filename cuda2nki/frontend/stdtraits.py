"""Standard type traits as compile-time booleans: ``std::is_same_v<T, unsigned>``,
``std::is_same<T, U>::value``, ``std::is_floating_point_v<T>``, ``is_integral<T>::value`` ...

Templated kernels pick a code path per type argument with ``if constexpr`` (or a plain ``if``)
on a trait.  Once the template's arguments are bound, each trait is a constant: the front end
reads it as ``true`` or ``false`` and the untaken branch folds away.  Inside a template not yet
instantiated (an argument is still a type parameter) the trait is an unknown ``bool``."""

from __future__ import annotations

from collections.abc import Callable

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.lowerbase import _text
from cuda2nki.frontend.typesys import BOOL, unqualified


def _scalar(t: A.CType) -> str:
    return t.name if isinstance(t, A.ScalarType) else ""


def _floating(t: A.CType) -> bool:
    return _scalar(t).startswith(("float", "bfloat"))


def _integral(t: A.CType) -> bool:
    return _scalar(t).startswith(("int", "uint")) or _scalar(t) == "bool"


#: trait name -> (number of type arguments, predicate)
TRAITS: dict[str, tuple[int, Callable[..., bool]]] = {
    "is_same": (2, lambda a, b: a == b),
    "is_floating_point": (1, _floating),
    "is_integral": (1, _integral),
    "is_arithmetic": (1, lambda t: _floating(t) or _integral(t)),
    "is_signed": (1, lambda t: _floating(t) or _scalar(t).startswith("int")),
    "is_unsigned": (1, lambda t: _scalar(t).startswith("uint") or _scalar(t) == "bool"),
    "is_pointer": (1, lambda t: isinstance(t, A.PointerType)),
    "is_const": (1, lambda t: bool(getattr(t, "const", False))),
    "is_void": (1, lambda t: _scalar(t) == "void"),
}


def _trait_node(node: ts.Node) -> tuple[str, ts.Node] | None:
    """The trait name and its template argument list in ``std::is_x_v<...>``,
    ``is_x<...>::value`` (with or without ``std::``), else None."""
    while node.type == "qualified_identifier":
        scope = node.child_by_field_name("scope")
        name = node.child_by_field_name("name")
        if name is None:
            return None
        if scope is not None and scope.type == "template_type" and _text(name) == "value":
            node = scope  # `is_x<...>::value`
            break
        if scope is not None and _text(scope) != "std":
            return None
        node = name
    if node.type not in ("template_function", "template_type"):
        return None
    head = node.child_by_field_name("name")
    args = node.child_by_field_name("arguments")
    if head is None or args is None:
        return None
    word = _text(head)
    if node.type == "template_function":  # the variable template `is_x_v<...>`
        if not word.endswith("_v"):
            return None
        word = word[:-2]
    elif node.parent is None or node.parent.type != "qualified_identifier":
        return None
    return (word, args) if word in TRAITS else None


def trait_value(low: object, node: ts.Node) -> A.Expr | None:
    """The value of the type trait ``node`` spells (a ``bool`` literal; an unknown ``bool`` in
    a template not yet instantiated), else None when ``node`` is no trait."""
    got = _trait_node(node)
    if got is None:
        return None
    word, args = got
    arity, pred = TRAITS[word]
    kids = [c for c in args.named_children if c.type == "type_descriptor"]
    loc = (node.byte_range, low.placer)  # type: ignore[attr-defined]
    if len(kids) != arity or len(kids) != len(args.named_children):
        raise low.fail("C2N1030", node, what=f"'{_text(node)}'")  # type: ignore[attr-defined]
    types = [low.type_descriptor(k) for k in kids]  # type: ignore[attr-defined]
    if any(isinstance(t, A.OpaqueType) for t in types):
        return N.Name(loc=loc, name=_text(node), ty=BOOL)
    if word != "is_same" and word != "is_const":
        types = [unqualified(t) for t in types]
    return N.BoolLit(loc=loc, value=bool(pred(*types)), ty=BOOL)
