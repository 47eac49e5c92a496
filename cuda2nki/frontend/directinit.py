"""Direct initialisation read as a function declaration: ``float lo(v), hi(v);``,
``constexpr unsigned n(rows * cols);`` inside a function body.

The grammar cannot tell ``T x(a)`` (a variable initialised from ``a``) from a declaration of a
function ``x`` taking a parameter of type ``a``; C++ can, because it knows that ``a`` names a
value.  So does the lowering: when every "parameter" of such a declarator begins with the name
of a variable, constant or template value, the parentheses are respelled as braces
(``float lo{v};``, the same initialisation for the scalars and vectors concerned) and the
function is parsed again.  A declarator with a real parameter type, or with none
(``T x();``, a true function declaration), stays refused."""

from __future__ import annotations

import tree_sitter as ts

from cuda2nki.frontend.cst import COMMENT_IDS, F
from cuda2nki.frontend.lowerbase import Reparse, _text


def _names_a_value(low: object, name: str) -> bool:
    s = low.lookup(name)  # type: ignore[attr-defined]
    u = low.u  # type: ignore[attr-defined]
    if s is not None:
        return not s.cg
    if isinstance(low.env.get(name), int):  # type: ignore[attr-defined]
        return True
    return name in u.globals or name in u.consts or name in u.file_shared


def _value_first(low: object, param: ts.Node) -> bool:
    """Whether the "parameter" ``param`` is an expression whose first name is a value."""
    if param.type != "parameter_declaration":
        return False
    t = param.child_by_field_id(F.type)
    if t is None or t.type != "type_identifier":
        return False
    if any(c.type in ("type_qualifier", "storage_class_specifier") for c in param.children):
        return False
    return _names_a_value(low, _text(t))


def direct_initialiser(low: object, fdecl: ts.Node) -> None:
    """Raise :class:`Reparse` (braces for the parentheses) when the function declarator
    ``fdecl`` met in a body is a variable's direct initialiser; else return."""
    params = fdecl.child_by_field_id(F.parameters)
    if params is None or getattr(low, "host", False):
        return
    kids = [c for c in params.named_children if c.kind_id not in COMMENT_IDS]
    if not kids or not all(_value_first(low, c) for c in kids):
        return
    if params.child_count < 2 or params.children[0].type != "(":
        return
    if params.children[-1].type != ")":
        return
    raise Reparse(params.children[0].start_byte, params.children[-1].start_byte, brace=True)
