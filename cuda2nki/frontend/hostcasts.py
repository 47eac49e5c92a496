"""Functional casts in host code: ``float(0.5)``, ``T(2.0)`` in a template over ``T``,
``__half(1)``, ``static_cast<float>(n)``, ``size_t(n)``.

A scalar argument is often written as a cast of a literal to the kernel's element type
(``const fp alpha = fp(2.0);`` in a launcher templated over ``fp``).  Read as a call of a
function the file does not define, it took a default; it is the cast of its one argument.  A cast
to a template type parameter whose argument is not known keeps the argument's value as written (the
parameter is the kernel's element type: a literal written for it is one of its values)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend.hostidioms import type_alias
from cuda2nki.frontend.hostsyntax import _txt
from cuda2nki.frontend.hostvalue import _SIZEOF, _V, _cast, _Scope

if TYPE_CHECKING:
    from cuda2nki.frontend.hostvals import HostEvaluator

_NAMED_CASTS = frozenset({"static_cast", "reinterpret_cast", "const_cast"})


def cast_type(ev: HostEvaluator, f: ts.Node, s: _Scope) -> str | None:
    """The type ``f`` (the function of a call) names when the call is a cast to it: a builtin
    type, a bound template type, a typedef of one, or ``""`` for a template type parameter of
    the enclosing function; None when the call is no cast."""
    text = " ".join(_txt(f).split())
    if f.type == "template_function":
        name = _txt(f.child_by_field_name("name")).strip()
        args = f.child_by_field_name("arguments")
        if name not in _NAMED_CASTS or args is None or len(args.named_children) != 1:
            return None
        text = " ".join(_txt(args.named_children[0]).split())
        return _known(ev, text) or ""
    if f.type not in ("primitive_type", "identifier", "type_identifier", "sized_type_specifier"):
        return None
    known = _known(ev, text)
    if known is not None:
        return known
    return "" if text in _template_types(s.fnode) else None


def _known(ev: HostEvaluator, text: str) -> str | None:
    """``text`` as a type whose size is known (a builtin, a bound template type, a typedef of
    one); None otherwise."""
    text = text.replace("const ", "").strip()
    for _ in range(4):
        if text in _SIZEOF:
            return text
        bound = ev._types.get(text)
        alias = type_alias(ev.root, text) if bound is None else None
        if bound is None and alias is None:
            return None
        text = bound if bound is not None else _txt(alias).replace("const ", "").strip()
    return None


def _template_types(fnode: ts.Node | None) -> set[str]:
    """The type parameters of the template declaring ``fnode`` (none when it is no template)."""
    parent = fnode.parent if fnode is not None else None
    if parent is None or parent.type != "template_declaration":
        return set()
    params = parent.child_by_field_name("parameters")
    out = set()
    for p in params.named_children if params is not None else ():
        if p.type in ("type_parameter_declaration", "optional_type_parameter_declaration"):
            name = p.child_by_field_name("name") or next(
                (c for c in p.named_children if c.type == "type_identifier"), None
            )
            if name is not None:
                out.add(_txt(name).strip())
    return out


def functional_cast(ev: HostEvaluator, n: ts.Node, items: list[ts.Node], s: _Scope) -> _V | None:
    """The value of the call ``n`` (arguments ``items``) when it is a cast of one value."""
    f = n.child_by_field_name("function")
    if f is None or len(items) != 1:
        return None
    ty = cast_type(ev, f, s)
    if ty is None:
        return None
    v = ev.eval(items[0], s)
    return v if ty == "" else _cast(ty, v)
