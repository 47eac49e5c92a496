"""The tree-sitter-cuda language and parser, created once per process, and CST helpers."""

from __future__ import annotations

import sys
import threading
from functools import lru_cache

import tree_sitter as ts


@lru_cache(maxsize=1)
def language() -> ts.Language:
    import tree_sitter_cuda

    return ts.Language(tree_sitter_cuda.language())


_local = threading.local()


def parser() -> ts.Parser:
    """This thread's parser (a ``Parser`` must not be shared between threads)."""
    p = getattr(_local, "parser", None)
    if p is None:
        p = _local.parser = ts.Parser(language())
    return p


def parse_bytes(data: bytes) -> ts.Tree:
    return parser().parse(data)


def first_error(node: ts.Node) -> ts.Node | None:
    """The first ERROR or MISSING node under ``node`` (pre-order), or None."""
    if not node.has_error:
        return None
    stack = [node]
    while stack:
        n = stack.pop()
        if n.is_error or n.is_missing:
            return n
        if n.has_error:
            stack.extend(reversed(n.children))
    return None


def describe_error(node: ts.Node) -> str:
    if node.is_missing:
        return f"expected '{node.type}'"
    text = (node.text or b"").decode("utf-8", "replace").strip().split("\n")[0]
    if len(text) > 40:
        text = text[:37] + "..."
    return f"unexpected '{text}'" if text else "unexpected input"


@lru_cache(maxsize=16)
def query(source: str) -> ts.Query:
    """A compiled query (compiling one costs milliseconds: always go through this cache)."""
    return ts.Query(language(), source)


def captures(source: str, node: ts.Node, name: str) -> list[ts.Node]:
    """Nodes captured as ``@name`` by query ``source`` under ``node``, in source order."""
    got = ts.QueryCursor(query(source)).captures(node).get(name, [])
    return sorted(got, key=lambda n: n.start_byte)


class _Fields:
    """Grammar field ids (``node.child_by_field_id(F.left)`` is several times faster than
    ``child_by_field_name("left")``).  ``F`` is an instance: reading an instance attribute is
    a specialised (cached) lookup, a class attribute is not (CPython 3.11)."""

    alternative: int
    argument: int
    arguments: int
    body: int
    condition: int
    consequence: int
    declarator: int
    default_type: int
    default_value: int
    directive: int
    field: int
    function: int
    indices: int
    initializer: int
    left: int
    name: int
    operator: int
    parameters: int
    right: int
    scope: int
    size: int
    type: int
    update: int
    value: int


F = _Fields()
for _name in (
    "alternative argument arguments body condition consequence declarator default_type "
    "default_value directive field function indices initializer left name operator parameters "
    "right scope size type update value"
).split():
    setattr(F, _name, language().field_id_for_name(_name))


def kind_ids(*names: str) -> frozenset[int]:
    """Every grammar symbol id (``node.kind_id``) named one of ``names`` (aliases share a
    name).  Testing ``node.kind_id`` against such a set gives the same answer as testing
    ``node.type`` against the names, without building the type's string on each access."""
    lang = language()
    return frozenset(i for i in range(lang.node_kind_count) if lang.node_kind_for_id(i) in names)


COMMENT_IDS = kind_ids("comment")
QUALIFIER_IDS = kind_ids("type_qualifier")
STORAGE_CLASS_IDS = kind_ids("storage_class_specifier")
PRIMITIVE_IDS = kind_ids("primitive_type")


def _kind_names() -> list[str | None]:
    lang = language()
    out: list[str | None] = [None] * 0x10000  # symbol ids are 16-bit; ERROR is 0xFFFF
    for i in range(lang.node_kind_count):
        name = lang.node_kind_for_id(i)
        out[i] = sys.intern(name) if name is not None else None
    out[0xFFFF] = "ERROR"
    return out


# ``KIND_NAMES[node.kind_id] == node.type``: one shared (interned, hashed once) string per kind
# instead of a new string per access -- for operator tokens, whose type is the operator
KIND_NAMES = _kind_names()
