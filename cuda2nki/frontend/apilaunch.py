"""Kernel launches written as API calls rather than ``<<<grid, block>>>``.

* ``cudaLaunchKernel((void*)k, grid, block, args, smem, stream)`` and
  ``cudaLaunchCooperativeKernel`` (same arguments);
* ``cuLaunchKernel(f, gx, gy, gz, bx, by, bz, smem, stream, args, extra)`` of the driver API,
  where ``f`` comes from ``cuModuleGetFunction(&f, module, "k")`` (a kernel compiled with
  NVRTC or loaded from a cubin: the kernel is named by that string, its source is often another
  file of the tree);
* a CUDA graph kernel node: ``p.func = (void*)k; p.gridDim = ...; p.blockDim = ...;
  p.kernelParams = args; p.sharedMemBytes = ...``.

The kernel arguments are an array of pointers to the host values: ``void *args[] = {&d_a, &n}``
(or filled item by item: ``args[1] = (void*)&n;``), passed as ``args``, ``&args[0]`` or
``(void**)args``.  :func:`api_launches` returns each launch's parts as syntax nodes, which
:mod:`cuda2nki.frontend.driver` turns into launch sites like those of ``<<<...>>>``.  A launch
whose kernel or arguments are not visible (arguments packed in an ``extra`` buffer) gives none.
"""

from __future__ import annotations

from dataclasses import dataclass

import tree_sitter as ts

from cuda2nki.frontend.cst import COMMENT_IDS

RUNTIME_CALLS = frozenset({"cudaLaunchKernel", "cudaLaunchCooperativeKernel"})
DRIVER_CALLS = frozenset({"cuLaunchKernel", "cuLaunchCooperativeKernel"})
#: the members of ``cudaKernelNodeParams`` a graph kernel node sets
_NODE_FIELDS = ("gridDim", "blockDim", "kernelParams", "sharedMemBytes")


@dataclass(frozen=True)
class ApiLaunch:
    """One launch written as an API call: ``anchor`` is the node that stands for it (the call,
    or the graph node's last member assignment), ``grid`` and ``block`` one ``dim3`` node or
    three scalar nodes, ``args`` the host values passed (``&`` and casts removed)."""

    anchor: ts.Node
    kernel: str
    grid: tuple[ts.Node, ...]
    block: tuple[ts.Node, ...]
    shared: ts.Node | None
    args: tuple[ts.Node, ...]


def _kids(n: ts.Node) -> list[ts.Node]:
    return [c for c in n.named_children if c.kind_id not in COMMENT_IDS]


def _txt(n: ts.Node | None) -> str:
    return "" if n is None else "".join((n.text or b"").decode("utf-8", "replace").split())


def _strip(n: ts.Node | None, deref: bool = True) -> ts.Node | None:
    """``n`` without casts, parentheses and (with ``deref``) ``&`` around it."""
    while n is not None:
        if n.type == "cast_expression":
            n = n.child_by_field_name("value")
        elif n.type == "parenthesized_expression":
            kids = _kids(n)
            n = kids[0] if len(kids) == 1 else None
        elif deref and n.type == "pointer_expression" and _op(n) == "&":
            n = n.child_by_field_name("argument")
        elif n.type == "call_expression" and _is_cast_call(n):
            n = _args(n)[0]
        else:
            return n
    return None


_CASTS = frozenset({"reinterpret_cast", "static_cast", "const_cast"})


def _is_cast_call(call: ts.Node) -> bool:
    """``reinterpret_cast<void*>(x)`` (read as a call of a template function)."""
    f = call.child_by_field_name("function")
    name = (
        f.child_by_field_name("name") if f is not None and f.type == "template_function" else None
    )
    return _txt(name) in _CASTS and len(_args(call)) == 1


def _op(n: ts.Node) -> str:
    return _txt(n.child_by_field_name("operator"))


def _callee(call: ts.Node) -> str:
    return _txt(call.child_by_field_name("function")).split("::")[-1]


def _args(call: ts.Node) -> list[ts.Node]:
    a = call.child_by_field_name("arguments")
    return _kids(a) if a is not None else []


def _enclosing(n: ts.Node) -> ts.Node | None:
    p = n.parent
    while p is not None and p.type != "function_definition":
        p = p.parent
    return p


def _kernel_name(n: ts.Node | None) -> str | None:
    """``(void*)k``, ``&k``, ``k<float>``, ``ns::k``: the kernel's name."""
    n = _strip(n)
    if n is None:
        return None
    if n.type == "template_function":
        n = n.child_by_field_name("name")
    if n is None or n.type not in ("identifier", "qualified_identifier"):
        return None
    return _txt(n).split("::")[-1]


def _walk(root: ts.Node) -> list[ts.Node]:
    out, stack = [], [root]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(reversed(n.children))
    return out


def _module_functions(nodes: list[ts.Node]) -> dict[str, str]:
    """``cuModuleGetFunction(&f, module, "name")``: variable -> kernel name."""
    out: dict[str, str] = {}
    for n in nodes:
        if n.type != "call_expression" or _callee(n) != "cuModuleGetFunction":
            continue
        items = _args(n)
        if len(items) < 3 or items[2].type != "string_literal":
            continue
        var = _strip(items[0])
        name = _txt(items[2]).strip('"')
        if var is not None and name:
            out[_txt(var)] = name
    return out


def _array_items(fnode: ts.Node | None, root: ts.Node, name: str, before: int) -> list[ts.Node]:
    """The items of the argument array ``name`` as set before byte ``before``: its initializer
    list, else its item assignments ``name[i] = ...`` in index order."""
    scope = fnode if fnode is not None else root
    best: list[ts.Node] | None = None
    items: dict[int, ts.Node] = {}
    for n in _walk(scope):
        if n.start_byte >= before:
            continue
        if n.type == "init_declarator" and _declared(n.child_by_field_name("declarator")) == name:
            v = n.child_by_field_name("value")
            if v is not None and v.type == "initializer_list":
                best = _kids(v)
        elif n.type == "assignment_expression" and _op(n) == "=":
            left = n.child_by_field_name("left")
            if left is not None and left.type == "subscript_expression":
                arr = _txt(left.child_by_field_name("argument"))
                idx = left.child_by_field_name("index") or left.child_by_field_name("indices")
                text = _txt(idx).strip("[]")
                if arr == name and text.isdigit():
                    items[int(text)] = n.child_by_field_name("right")
    if best is not None:
        return best
    if items and sorted(items) == list(range(len(items))):
        return [items[i] for i in range(len(items))]
    return []


def _declared(d: ts.Node | None) -> str | None:
    while d is not None and d.type != "identifier":
        d = d.child_by_field_name("declarator")
    return _txt(d) if d is not None else None


def _arg_values(node: ts.Node | None, fnode: ts.Node | None, root: ts.Node, before: int):
    """The host values an argument array passes, ``&`` and casts removed; None when unknown."""
    n = _strip(node, deref=False)
    if n is not None and n.type == "pointer_expression" and _op(n) == "&":
        inner = _strip(n.child_by_field_name("argument"), deref=False)  # `&args[0]`
        if inner is not None and inner.type == "subscript_expression":
            n = _strip(inner.child_by_field_name("argument"))
    if n is None or n.type != "identifier":
        return None
    items = _array_items(fnode, root, _txt(n), before)
    vals = tuple(_strip(i) for i in items)
    if not vals or any(v is None for v in vals):
        return None
    return vals


def api_launches(root: ts.Node) -> list[ApiLaunch]:
    """Every launch written as an API call or a graph kernel node in the file."""
    nodes = _walk(root)
    modules: dict[str, str] | None = None
    out: list[ApiLaunch] = []
    for n in nodes:
        if n.type == "call_expression":
            callee = _callee(n)
            if callee in RUNTIME_CALLS:
                got = _runtime(n, root)
            elif callee in DRIVER_CALLS:
                if modules is None:
                    modules = _module_functions(nodes)
                got = _driver(n, root, modules)
            else:
                continue
        elif n.type == "assignment_expression" and _is_node_func(n):
            got = _graph_node(n, root)
        else:
            continue
        if got is not None:
            out.append(got)
    return out


def _runtime(call: ts.Node, root: ts.Node) -> ApiLaunch | None:
    items = _args(call)
    if len(items) < 4:
        return None
    kernel = _kernel_name(items[0])
    fnode = _enclosing(call)
    args = _arg_values(items[3], fnode, root, call.start_byte)
    if kernel is None or args is None:
        return None
    shared = items[4] if len(items) > 4 else None
    return ApiLaunch(call, kernel, (items[1],), (items[2],), shared, args)


def _driver(call: ts.Node, root: ts.Node, modules: dict[str, str]) -> ApiLaunch | None:
    items = _args(call)
    if len(items) < 10:
        return None
    f = _strip(items[0])
    kernel = modules.get(_txt(f)) if f is not None else None
    fnode = _enclosing(call)
    args = _arg_values(items[9], fnode, root, call.start_byte)
    if kernel is None or args is None:
        return None
    return ApiLaunch(call, kernel, tuple(items[1:4]), tuple(items[4:7]), items[7], args)


def _is_node_func(n: ts.Node) -> bool:
    left = n.child_by_field_name("left")
    return (
        _op(n) == "="
        and left is not None
        and left.type == "field_expression"
        and _txt(left.child_by_field_name("field")) == "func"
    )


def _graph_node(assign: ts.Node, root: ts.Node) -> ApiLaunch | None:
    """``p.func = (void*)k;`` and the members of ``p`` set after it (before ``p.func`` is set
    again)."""
    kernel = _kernel_name(assign.child_by_field_name("right"))
    left = assign.child_by_field_name("left")
    base = _txt(left.child_by_field_name("argument")) if left is not None else ""
    fnode = _enclosing(assign)
    scope = fnode if fnode is not None else root
    found: dict[str, ts.Node] = {}
    anchor = assign
    for n in _walk(scope):
        if n.start_byte <= assign.start_byte or n.type != "assignment_expression":
            continue
        lf = n.child_by_field_name("left")
        if lf is None or lf.type != "field_expression" or _op(n) != "=":
            continue
        if _txt(lf.child_by_field_name("argument")) != base:
            continue
        field = _txt(lf.child_by_field_name("field"))
        if field == "func":
            break
        if field in _NODE_FIELDS and field not in found:
            found[field] = n.child_by_field_name("right")
            anchor = n if n.end_byte > anchor.end_byte else anchor
    if kernel is None or not {"gridDim", "blockDim", "kernelParams"} <= set(found):
        return None
    args = _arg_values(found["kernelParams"], fnode, root, anchor.end_byte)
    if args is None:
        return None
    grid, block = (found["gridDim"],), (found["blockDim"],)
    return ApiLaunch(anchor, kernel, grid, block, found.get("sharedMemBytes"), args)
