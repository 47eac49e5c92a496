"""Record structs: plain structs whose data members all have one scalar type.

``struct SoftmaxParams { float scale; float offset; };``, ``typedef struct { int lo, hi; } Span;``
and ``struct __align__(8) Pair { float a; float b; }`` are laid out in memory exactly as a short
vector of that scalar (no padding: every member has the same size and alignment).  The front end
types such a struct as a :class:`~cuda2nki.frontend.ast.VectorType` named after the struct, with
one lane per member in declaration order; ``s.member`` and ``p->member`` become that lane
(``Member`` with ``x``/``y``/``z``/``w`` for up to four members, an ``Index`` by the lane number
beyond), ``S{a, b}`` / ``S s = {a, b}`` are aggregate initialisations, and arrays and pointers of
the struct are arrays and pointers of the vector.

A union of a single member (``union Word { uint64_t data; };``) has that member's layout and
is a one-lane record.  A struct with a member function, a static or array member, a bit field, a
nested type or members of different types is not a record, nor is a union of several members
(see :mod:`cuda2nki.frontend.aggregates` and :mod:`cuda2nki.frontend.unions`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import tree_sitter as ts

from cuda2nki.frontend.cst import F

_STRUCT_KINDS = ("struct_specifier", "class_specifier", "union_specifier")
_SKIPPED = ("access_specifier", "comment")


@dataclass(frozen=True)
class RecordStruct:
    """A record struct: its name, its members in order and their (shared) type node."""

    name: str
    fields: tuple[str, ...]
    elem: ts.Node
    quals: tuple[ts.Node, ...]


def _text(node: ts.Node | None) -> str:
    return node.text.decode() if node is not None and node.text is not None else ""


def _field_names(decl: ts.Node) -> list[str] | None:
    """The member names of one ``field_declaration`` (``float a, b;``), None if one is not a
    plain name (pointer, array, bit field, default value)."""
    names: list[str] = []
    for i, c in enumerate(decl.children):
        fname = decl.field_name_for_child(i)
        if fname == "declarator":
            if c.type != "field_identifier":
                return None
            names.append(_text(c))
        elif fname == "default_value" or c.type == "bitfield_clause":
            return None
    return names or None


def _type_key(decl: ts.Node) -> str:
    """The member type's spelling with ``const``/``volatile`` and spacing normalised."""
    parts = [
        _text(c)
        for i, c in enumerate(decl.children)
        if decl.field_name_for_child(i) == "type" or c.type == "type_qualifier"
    ]
    words = " ".join(parts).replace("volatile", " ").split()
    return re.sub(r"\s+", " ", " ".join(w for w in words if w != "const"))


def record_struct(node: ts.Node, alias: str | None = None) -> RecordStruct | None:
    """The record struct ``node`` defines (named ``alias`` when it has no tag), else None."""
    if node.type not in _STRUCT_KINDS:
        return None
    body = node.child_by_field_id(F.body)
    name = _text(node.child_by_field_id(F.name)) or (alias or "")
    if body is None or not name or "<" in name:
        return None
    fields: list[str] = []
    key: str | None = None
    elem: ts.Node | None = None
    quals: tuple[ts.Node, ...] = ()
    for f in body.named_children:
        if f.type in _SKIPPED:
            continue
        if f.type != "field_declaration":
            return None
        if any(c.type == "storage_class_specifier" for c in f.children):
            return None
        names = _field_names(f)
        t_node = f.child_by_field_id(F.type)
        if names is None or t_node is None or t_node.type in _STRUCT_KINDS:
            return None
        k = _type_key(f)
        if key is not None and k != key:
            return None
        if key is None:
            key, elem = k, t_node
            quals = tuple(c for c in f.children if c.type == "type_qualifier")
        fields.extend(names)
    if elem is None or len(set(fields)) != len(fields):
        return None
    if node.type == "union_specifier" and len(fields) != 1:
        return None  # overlapping members
    return RecordStruct(name, tuple(fields), elem, quals)
