"""File-scope ``__shared__`` variables.

In CUDA a ``__shared__`` variable declared at file scope is per-block shared memory of every
kernel that uses it, directly or through the device functions it calls: one array per block,
the same one for the kernel and its callees.  The front end gives it that meaning without a
new construct: the file's declaration becomes one :class:`~cuda2nki.frontend.ast.VarDecl`
(``shared``, or ``extern_shared`` for ``extern __shared__ T x[]``), which is

- put at the top of the body of every kernel that uses the variable, itself or through a callee
  (the port paths see an ordinary block-level shared array, visible to inlined callees), and
- listed in ``TranslationUnit.file_shared``, from which the SIMT interpreter makes the name
  visible to device functions; the buffer is keyed by the declaration itself, so the kernel and
  its callees address one array per block.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.aggregates import AggregateType
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.cst import F
from cuda2nki.frontend.lowerbase import _Placeholder


def register_file_shared(unit: object, node: ts.Node, words: set[str]) -> None:
    """Record the variables of the file-scope declaration ``node`` (``__shared__`` in ``words``)
    in ``unit.file_shared`` as shared-memory declarations; a variable whose type cannot be
    read here is recorded as None (its uses are refused)."""
    from cuda2nki.frontend.lower import BodyLowerer

    low = BodyLowerer(unit, "<file>", host=True)  # type: ignore[arg-type]
    storage = "extern_shared" if "extern" in words else "shared"
    type_node = node.child_by_field_id(F.type)
    base: A.CType | None = None
    if type_node is not None:
        try:
            base = low.type_of(type_node, ())
        except _Placeholder:
            base = None
    for d in node.children_by_field_id(F.declarator):
        dnode = d.child_by_field_id(F.declarator) if d.type == "init_declarator" else d
        name = _declared_name(dnode)
        if name is None:
            continue
        decl = None
        if base is not None and dnode is not None:
            try:
                _, ty = low._declarator_type(dnode, base)
                if isinstance(ty, AggregateType):  # a struct held by value: refused at its uses
                    raise _Placeholder
                if isinstance(base, AggregateType):  # an array of structs: their bytes
                    ty = low.memory_type(ty, dnode)
                decl = N.VarDecl(loc=unit.placer.at(dnode), name=name, ty=ty, storage=storage)  # type: ignore[attr-defined]
            except _Placeholder:
                decl = None
        unit.file_shared[name] = decl  # type: ignore[attr-defined]


def _declared_name(dn: ts.Node | None) -> str | None:
    while dn is not None and dn.type != "identifier":
        dn = dn.child_by_field_id(F.declarator)
    return None if dn is None else dn.text.decode() if dn.text is not None else None


def file_shared_name(low: object, node: ts.Node, name: str) -> A.Expr | None:
    """The use of the file-scope shared variable ``name`` in device code: a name of its type,
    recorded as used by the function being lowered; None when its declaration was not read."""
    decl = low.u.file_shared.get(name)  # type: ignore[attr-defined]
    if decl is None:
        return None
    low.file_shared_used.add(name)  # type: ignore[attr-defined]
    return N.Name(loc=(node.byte_range, low.placer), name=name, ty=decl.ty)  # type: ignore[attr-defined]


def used_transitively(
    direct: Mapping[str, set[str]], graph: Mapping[str, Iterable[tuple[str, object]]]
) -> dict[str, set[str]]:
    """Per function: the file-scope shared variables it uses itself or through its callees."""
    out: dict[str, set[str]] = {}

    def visit(fn: str, busy: set[str]) -> set[str]:
        if fn in out:
            return out[fn]
        if fn in busy:  # recursion is refused elsewhere
            return set(direct.get(fn, ()))
        busy.add(fn)
        got = set(direct.get(fn, ()))
        for target, _ in graph.get(fn, ()):
            got |= visit(target, busy)
        busy.discard(fn)
        out[fn] = got
        return got

    for fn in set(direct) | set(graph):
        visit(fn, set())
    return out


def with_file_shared(
    functions: list[A.Function],
    decls: Mapping[str, A.VarDecl | None],
    direct: Mapping[str, set[str]],
    graph: Mapping[str, Iterable[tuple[str, object]]],
) -> list[A.Function]:
    """``functions`` with the declaration of every file-scope shared variable a kernel uses
    (itself or through a callee) at the top of the kernel's body, in declaration order."""
    if not any(direct.values()):
        return functions
    uses = used_transitively(direct, graph)
    order = list(decls)
    out = []
    for f in functions:
        names = uses.get(f.name, set())
        if f.kind != "global" or not names or f.body is None:
            out.append(f)
            continue
        lead = tuple(d for n in order if n in names and (d := decls[n]) is not None)
        body = dataclasses.replace(f.body, body=(*lead, *f.body.body))
        out.append(dataclasses.replace(f, body=body))
    return out
