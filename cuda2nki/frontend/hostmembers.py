"""Sizes kept in a struct: ``cfg.width``, ``p->n``, ``args.block_size``, ``size->x``.

:mod:`cuda2nki.frontend.hostvals` evaluates a member of a struct (not a ``dim3``) from the first
of these that gives a number:

1. the last assignment to the same member of the same variable (``cfg.width = 640;``) in the
   function before the use;
2. an assignment to that member of any variable in the file (``a->block_size = 256;`` in the
   function that fills the struct, ``grid.numBlocks = n / 128;``), in file order;
3. what a constructor of a struct stores in the member first (``Params() : block(128)``, or
   ``n_threads = 16;`` at the top of a constructor that then parses the command line);
4. the member's default initializer in its struct (``struct Args { int block_size = 128; };``).

When none does (the struct is filled from a file, or by code not in the tree), a default with a
note: sizes need no exact value, and a non-size value is best set in the binding.
"""

from __future__ import annotations

from collections.abc import Iterator

import tree_sitter as ts

from cuda2nki.frontend.cst import COMMENT_IDS


def _txt(n: ts.Node | None) -> str:
    return "" if n is None else "".join((n.text or b"").decode("utf-8", "replace").split())


def _kids(n: ts.Node) -> list[ts.Node]:
    return [c for c in n.named_children if c.kind_id not in COMMENT_IDS]


def _enclosing(n: ts.Node) -> ts.Node | None:
    p = n.parent
    while p is not None and p.type != "function_definition":
        p = p.parent
    return p


def _assignments(scope: ts.Node, field: str) -> list[ts.Node]:
    """``X.field = v`` / ``X->field = v`` assignments in ``scope``, in source order (the scope
    is indexed once: :mod:`cuda2nki.frontend.declindex`)."""
    from cuda2nki.frontend.declindex import member_assignments

    return list(member_assignments(scope, _txt).get(field, ()))


def _base(assign: ts.Node) -> str:
    left = assign.child_by_field_name("left")
    return _txt(left.child_by_field_name("argument")) if left is not None else ""


def _field_defaults(root: ts.Node, field: str) -> list[ts.Node]:
    """Default member initializers ``int field = v;`` of the file's structs and classes (the
    file is indexed once: :mod:`cuda2nki.frontend.declindex`)."""
    from cuda2nki.frontend.declindex import field_defaults

    return field_defaults(root, _txt).get(field, [])


def member_values(
    root: ts.Node, fnode: ts.Node | None, base: str, field: str, before: int
) -> Iterator[tuple[ts.Node | None, ts.Node]]:
    """Candidate values of member ``field`` of ``base`` used in ``fnode`` before byte
    ``before``: (the function to evaluate it in, the value), best first."""
    if fnode is not None:
        own = [a for a in _assignments(fnode, field) if a.start_byte < before and _base(a) == base]
        for a in reversed(own):
            yield fnode, a.child_by_field_name("right")
    for a in _assignments(root, field):
        if fnode is not None and _enclosing(a) == fnode and _base(a) == base:
            continue  # tried above
        yield _enclosing(a), a.child_by_field_name("right")
    from cuda2nki.frontend.declindex import constructor_values

    yield from constructor_values(root, _txt).get(field, ())
    for value in _field_defaults(root, field):
        yield None, value
