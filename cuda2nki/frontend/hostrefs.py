"""Host variables written through a C++ reference parameter.

``getLaunchSize(n, blocks, threads)`` with ``void getLaunchSize(int n, int &blocks, int
&threads)`` writes ``blocks`` and ``threads`` as ``getLaunchSize(n, &blocks, &threads)`` would
through pointers, but the call site shows only the names.  :func:`reference_positions` gives the
argument positions a function of the same file takes by (non-const) reference, so that
:mod:`cuda2nki.frontend.hostouts` treats a local passed there as written by the call, never as
the placeholder it was declared with (``int threads = 0;``, which would launch no thread).
"""

from __future__ import annotations

import tree_sitter as ts

from cuda2nki.frontend.cst import COMMENT_IDS


def _root(n: ts.Node) -> ts.Node:
    while n.parent is not None:
        n = n.parent
    return n


def _name(decl: ts.Node) -> str:
    inner = decl.child_by_field_name("declarator")
    text = (inner.text or b"").decode("utf-8", "replace") if inner is not None else ""
    return text.split("::")[-1].split("<")[0].strip()


#: file text -> function name -> positions of its non-const reference parameters
_BY_FILE: dict[bytes, dict[str, frozenset[int]]] = {}
_MAX_FILES = 64


def _reference_table(root: ts.Node) -> dict[str, frozenset[int]]:
    """Per function declared in the file of ``root``, the positions it takes by non-const
    reference (only functions with one), computed once per file text."""
    key = root.text or b""
    got = _BY_FILE.get(key)
    if got is not None:
        return got
    table: dict[str, set[int]] = {}
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type == "function_declarator":
            params = n.child_by_field_name("parameters")
            items = (
                [c for c in params.named_children if c.kind_id not in COMMENT_IDS]
                if params is not None
                else []
            )
            refs = {i for i, p in enumerate(items) if _is_reference(p)}
            if refs:
                table.setdefault(_name(n), set()).update(refs)
            continue
        if n.type == "compound_statement":  # no function is declared inside a body we need
            continue
        stack.extend(n.named_children)
    if len(_BY_FILE) >= _MAX_FILES:
        _BY_FILE.clear()
    out = {k: frozenset(v) for k, v in table.items()}
    _BY_FILE[key] = out
    return out


def _is_reference(param: ts.Node) -> bool:
    """``int &x`` / ``int& x`` / ``T &x`` (not ``const int &x``, which is never written)."""
    if param.type != "parameter_declaration":
        return False
    d = param.child_by_field_name("declarator")
    if d is None or d.type != "reference_declarator":
        return False
    return not any(c.type == "type_qualifier" and c.text == b"const" for c in param.children)


def reference_positions(call: ts.Node, callee: str) -> frozenset[int]:
    """Positions of the arguments that ``callee``, a function of ``call``'s file, takes by
    non-const reference (empty when the file declares no such function)."""
    return _reference_table(_root(call)).get(callee, frozenset())
