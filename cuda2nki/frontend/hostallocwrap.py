"""Allocations through a helper of the host code: ``alloc_dev((void**)&p, n * sizeof(float))``
where the helper's body allocates through its pointer parameter (``cudaMalloc(ptr, bytes)``,
``cudaMallocManaged((void**)ptr, bytes)``, ... as :mod:`cuda2nki.frontend.hostalloc` knows them).

The helper's size expression is evaluated in the helper with its parameters bound to the
caller's arguments (evaluated at the call), so ``p`` gets the caller's size, in kernel parameter
names where the launch passes them.  The evidence cites the call and the allocation in the
helper.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import tree_sitter as ts

if TYPE_CHECKING:
    from cuda2nki.frontend.hostvals import HostEvaluator, HostExpr


def wrapped_bytes(
    ev: HostEvaluator,
    call: ts.Node,
    name: str,
    fnode: ts.Node,
    argmap: dict[str, int],
    depth: int,
) -> HostExpr | None:
    """The bytes a helper call ``call`` allocates for ``&name`` (None: ``call`` does not pass
    ``&name``, is not a helper of the file that allocates through that parameter, or its size
    does not evaluate)."""
    from cuda2nki.frontend.hostalloc import _address_of, _args, _callee
    from cuda2nki.frontend.hostsyntax import _params

    items = _args(call)
    slots = [k for k, a in enumerate(items) if _address_of(a) == name]
    if not slots:
        return None
    for helper in ev.functions(_callee(call)):
        params = _params(helper)
        for k in slots:
            if k >= len(params) or not params[k]:
                continue
            inner = _inner_allocation(helper, params[k])
            if inner is None:
                continue
            got = _evaluate(ev, inner, helper, params, items, call, fnode, argmap, depth)
            if got is not None:
                return got
    return None


def _inner_allocation(helper: ts.Node, param: str) -> tuple[ts.Node, ts.Node] | None:
    """(the allocation call, its size) where ``helper`` allocates through parameter ``param``."""
    from cuda2nki.frontend.hostalloc import _OUT_ALLOC, _args, _callee, _pointer_name, _walk

    body = helper.child_by_field_name("body")
    for n in _walk(body) if body is not None else ():
        if n.type == "call_expression" and _callee(n) in _OUT_ALLOC:
            items = _args(n)
            if len(items) >= 2 and _pointer_name(items[0]) == param:
                return n, items[1]
    return None


def _evaluate(
    ev: HostEvaluator,
    inner: tuple[ts.Node, ts.Node],
    helper: ts.Node,
    params: list[str],
    items: list[ts.Node],
    call: ts.Node,
    fnode: ts.Node,
    argmap: dict[str, int],
    depth: int,
) -> HostExpr | None:
    from cuda2nki.frontend.hostalloc import _size_value
    from cuda2nki.frontend.hostsyntax import _one_line
    from cuda2nki.frontend.hostvalue import HostExpr, _NoValue, _Scope

    alloc, size = inner
    used = set(re.findall(r"[A-Za-z_]\w*", (size.text or b"").decode("utf-8", "replace")))
    outer = _Scope(fnode, call.start_byte, dict(argmap), depth + 1)
    try:
        bound = {
            p: ev.eval(items[j], outer)
            for j, p in enumerate(params)
            if p and p in used and j < len(items)
        }
        v = _size_value(ev, size, _Scope(helper, size.start_byte, {}, depth + 1, bound))
    except _NoValue:
        return None
    if v.items is not None or (v.text is None and v.num is None):
        return None
    where = (f"{ev.where(call)}: {_one_line(call)}", f"{ev.where(alloc)}: {_one_line(alloc)}")
    return HostExpr(v.text, v.num, tuple(dict.fromkeys(where + v.ev)), v.notes)
