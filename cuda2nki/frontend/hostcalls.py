"""Which calls of a file can call a host function of it (a launcher, a helper).

The host values of a launch are followed into the callers of the function holding it, found by
name.  Two kinds of call share a launcher's name without calling it:

* a call in device code (a ``__global__`` or ``__device__`` function): device code never calls
  a host launcher, e.g. ``cg::reduce(tile, v, cg::plus<T>())`` in a kernel beside a host
  ``reduce(size, threads, blocks, ...)`` that launches it;
* a qualified call ``lib::name(...)`` whose scope (``lib``) is no namespace, class or struct the
  file defines: it calls the library's function, not the file's.

:func:`host_calls` drops both from the index of calls by name.
"""

from __future__ import annotations

import tree_sitter as ts

_SCOPES = ("namespace_definition", "class_specifier", "struct_specifier")
_DEVICE = (b"__global__", b"__device__")


def host_calls(root: ts.Node, calls: dict[str, list[ts.Node]]) -> dict[str, list[ts.Node]]:
    """``calls`` (name -> call nodes) without the calls that cannot call a host function of the
    file (see the module docstring)."""
    scopes = _defined_scopes(root)
    out: dict[str, list[ts.Node]] = {}
    for name, found in calls.items():
        kept = [c for c in found if _may_call_host(c, scopes)]
        if kept:
            out[name] = kept
    return out


def _defined_scopes(root: ts.Node) -> set[str]:
    """Names of the namespaces, classes and structs the file defines."""
    out: set[str] = set()
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type in _SCOPES:
            name = n.child_by_field_name("name")
            if name is not None and name.text:
                out.add(name.text.decode("utf-8", "replace"))
        if n.type == "compound_statement":
            continue
        stack.extend(n.named_children)
    return out


def _may_call_host(call: ts.Node, scopes: set[str]) -> bool:
    f = call.child_by_field_name("function")
    if f is not None and f.type == "qualified_identifier":
        scope = f.child_by_field_name("scope")
        text = (scope.text or b"").decode("utf-8", "replace") if scope is not None else ""
        if text and text.split("<")[0] not in scopes:
            return False
    return not _in_device_code(call)


def _in_device_code(n: ts.Node) -> bool:
    """Whether ``n`` lies in the body of a ``__global__`` or ``__device__`` function (not
    ``__host__ __device__``, which the host may run)."""
    p = n.parent
    while p is not None and p.type != "function_definition":
        p = p.parent
    if p is None:
        return False
    body = p.child_by_field_name("body")
    head = (p.text or b"")[: (body.start_byte - p.start_byte) if body is not None else None]
    return any(d in head for d in _DEVICE) and b"__host__" not in head
