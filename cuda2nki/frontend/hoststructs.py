"""Host values of the members of a struct passed to a kernel by value.

A kernel that takes ``Matrix A`` receives one parameter per member (``A__width``,
``A__elements``, see :mod:`cuda2nki.frontend.aggregates`), while its launch passes one argument,
``d_A`` or ``*state``.  For each such argument this module reads what the host code says about
each member, as :mod:`cuda2nki.frontend.hostvals` does for a plain argument:

* the member's value (``d_A.width = n;``, ``state->rows = 64;``; see
  :mod:`cuda2nki.frontend.hostmembers` for where a value is looked for);
* for a pointer member, the bytes allocated for it (``cudaMalloc(&d_A.elements, w * h *
  sizeof(float))``, ``cudaMalloc((void**)&s->flags, n * sizeof(int))``): first in the launching
  function for the argument itself, else anywhere in the file for the same member.

Members are listed in the order the front end flattens them, so that the kernel's parameters
and the launch's arguments line up (a nested struct member is one path of several names).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import tree_sitter as ts

if TYPE_CHECKING:
    from cuda2nki.frontend.hostvals import HostEvaluator, HostExpr

#: a struct nested deeper than this is not followed (its members stay unknown)
_MAX_NESTING = 4


@dataclass(frozen=True)
class MemberFacts:
    """One member of a struct argument: its path (``("inner", "x")`` for ``s.inner.x``), its
    host value and, for a pointer, its allocation in bytes (None: not found)."""

    path: tuple[str, ...]
    value: HostExpr | None
    alloc: HostExpr | None
    #: a member of a struct in device memory the argument points to (the kernel's parameter
    #: is split only where it reads that struct as values: :mod:`cuda2nki.frontend.pointedsplit`)
    behind: bool = False


class Pointed(tuple):
    """The member paths of a struct of device pointers passed behind a pointer."""


def member_paths(unit: Any, kernel_node: ts.Node) -> list[tuple[tuple[str, ...], ...] | None]:
    """Per parameter of the kernel definition ``kernel_node``: the member paths (in flattening
    order) of a struct passed by value, None for any other parameter."""
    return [_paths(unit, p, 0) for p in _param_decls(kernel_node)]


def member_facts(
    ev: HostEvaluator, call: ts.Node, arg: ts.Node, paths: tuple[tuple[str, ...], ...]
) -> tuple[MemberFacts, ...]:
    """What the host code at the launch ``call`` says about each member of struct argument
    ``arg``."""
    from cuda2nki.frontend.hostinit import (
        assigned_alloc,
        member_source,
        source_alloc,
        source_value,
    )
    from cuda2nki.frontend.hostsyntax import _enclosing

    fnode = _enclosing(call)
    behind = isinstance(paths, Pointed)
    base = _base_name(arg)
    if behind:  # the host struct copied into the device one, else the (managed) one itself
        base = mirror_of(fnode, base, call.start_byte) if base and fnode is not None else None
    out = []
    for path in paths:
        value = alloc = None
        if base is not None and len(path) == 1:
            alloc = _alloc(ev, fnode, base, path[0], own=True)
        src = member_source(ev, call, arg, path, paths, base) if alloc is None else None
        if src is not None:  # what the host stores in it: `p.a = d_a;`, `Pair p = {d_k, d_v};`
            value, alloc = source_value(ev, src), source_alloc(ev, src)
        if base is not None and len(path) == 1:
            value = value or _value(ev, fnode, base, path[0], call.start_byte)
            alloc = alloc or _alloc(ev, fnode, base, path[0])
            alloc = alloc or assigned_alloc(ev, fnode, base, path[0], call.start_byte)
        out.append(MemberFacts(path, value, alloc, behind))
    return tuple(out)


def mirror_of(fnode: ts.Node, name: str, before: int) -> str:
    """The host struct last copied into the device struct ``name`` before byte ``before``
    (``cudaMemcpy(name, &h, ...)``: ``h``; ``cudaMemcpy(name, hp, ...)``: ``hp``), else
    ``name`` (managed memory the host fills itself)."""
    from cuda2nki.frontend.hostalloc import _COPIES, _args, _callee, _pointer_name, _strip, _walk

    found = name
    for n in _walk(fnode):
        if n.start_byte >= before:
            break
        if n.type != "call_expression" or _callee(n) not in _COPIES:
            continue
        items = _args(n)
        if len(items) < 3 or _pointer_name(items[0]) != name:
            continue
        src = _strip(items[1])
        if src.type == "pointer_expression" and (src.text or b"").startswith(b"&"):
            src = _strip(src.child_by_field_name("argument") or src)
        if src.type == "identifier":
            found = (src.text or b"").decode()
    return found


# ---------------------------------------------------------------------- the struct's members
def _param_decls(fnode: ts.Node) -> list[ts.Node]:
    decl = fnode.child_by_field_name("declarator")
    while decl is not None and decl.type != "function_declarator":
        decl = decl.child_by_field_name("declarator")
    plist = decl.child_by_field_name("parameters") if decl is not None else None
    if plist is None:
        return []
    return [c for c in plist.named_children if c.type == "parameter_declaration"]


def _paths(unit: Any, decl: ts.Node, depth: int) -> tuple[tuple[str, ...], ...] | None:
    """The member paths of the by-value struct parameter ``decl``, or of a pointer parameter
    to a struct with a pointer member (:class:`Pointed`); None: neither."""
    d = decl.child_by_field_name("declarator")
    if d is not None and d.type == "pointer_declarator":
        inner = d.child_by_field_name("declarator")
        if inner is None or inner.type != "identifier":
            return None
        tnode = decl.child_by_field_name("type")
        got = _nested(unit, tnode, depth)
        return Pointed(got) if got and _has_pointer(unit, tnode, depth) else None
    if d is None or d.type != "identifier":
        return None  # a reference or array is not a struct held by value
    got = _nested(unit, decl.child_by_field_name("type"), depth)
    return tuple(got) if got else None


def _has_pointer(unit: Any, type_node: ts.Node | None, depth: int) -> bool:
    """Whether the struct ``type_node`` names has a pointer member (nested structs too)."""
    ag = _aggregate(unit, type_node)
    if ag is None or depth > _MAX_NESTING:
        return False
    for _name, tnode, _quals, declarator in ag.members:
        if declarator is not None and declarator.type == "pointer_declarator":
            return True
        if declarator is not None and declarator.type == "field_identifier":
            if _has_pointer(unit, tnode, depth + 1):
                return True
    return False


def _nested(unit: Any, type_node: ts.Node | None, depth: int) -> list[tuple[str, ...]] | None:
    """The leaf member paths of the struct type ``type_node`` names, a member that is itself a
    struct held by value flattened in turn (None: not a struct the front end flattens)."""
    ag = _aggregate(unit, type_node)
    if ag is None or depth > _MAX_NESTING or getattr(ag, "union", False):
        return None
    out: list[tuple[str, ...]] = []
    for name, tnode, _quals, declarator in ag.members:
        inner = None
        if declarator is not None and declarator.type == "field_identifier":
            inner = _nested(unit, tnode, depth + 1)
        if inner:
            out.extend((name, *p) for p in inner)
        else:
            out.append((name,))
    return out


def _aggregate(unit: Any, type_node: ts.Node | None) -> Any:
    if type_node is None:
        return None
    text = (type_node.text or b"").decode("utf-8", "replace")
    for word in ("struct", "const", "class"):
        text = text.replace(word + " ", "")
    name = text.strip().split("<")[0].split("::")[-1].strip()
    if "<" in text:  # an instance of a struct template: its members are the template's
        st = getattr(unit, "struct_templates", {}).get(name)
        return st.agg if st is not None else None
    return unit.aggregates.get(name)


# ---------------------------------------------------------------------- host values
def _base_name(arg: ts.Node) -> str | None:
    """``d_A`` of ``d_A``, ``state`` of ``*state`` (casts and parentheses aside)."""
    from cuda2nki.frontend.hostalloc import _strip

    n = _strip(arg)
    if n.type == "pointer_expression" and (n.text or b"").startswith(b"*"):
        n = _strip(n.child_by_field_name("argument") or n)
    return (n.text or b"").decode() if n.type == "identifier" else None


def _value(
    ev: HostEvaluator, fnode: ts.Node | None, base: str, field: str, before: int
) -> HostExpr | None:
    from cuda2nki.frontend.hostmembers import member_values
    from cuda2nki.frontend.hostsyntax import _one_line
    from cuda2nki.frontend.hostvalue import HostExpr, _NoValue

    for fn, right in member_values(ev.root, fnode, base, field, before):
        if right is None:
            continue
        try:
            v = ev.assigned(fn, right, 1)
        except (_NoValue, RecursionError):
            continue
        if v.items is not None or v.num is None:
            continue
        line = f"{ev.where(right)}: {_one_line(right.parent or right)}"
        return HostExpr(None, v.num, (line, *v.ev), v.notes)
    return None


def field_alloc(ev: HostEvaluator, fnode: ts.Node, arg: ts.Node) -> HostExpr | None:
    """The bytes allocated for the struct member ``arg`` (``s->data``, ``grid.cells``) passed
    as a pointer argument."""
    from cuda2nki.frontend.hostalloc import _strip

    obj = _strip(arg.child_by_field_name("argument") or arg)
    name = arg.child_by_field_name("field")
    if obj.type != "identifier" or name is None:
        return None
    return _alloc(ev, fnode, (obj.text or b"").decode(), (name.text or b"").decode())


def _alloc(
    ev: HostEvaluator, fnode: ts.Node | None, base: str, field: str, own: bool = False
) -> HostExpr | None:
    """The bytes of ``cudaMalloc(&base.field, size)``, in ``fnode`` first, else (unless
    ``own``) of the same member of any variable in the file."""
    from cuda2nki.frontend.hostalloc import _bytes
    from cuda2nki.frontend.hostsyntax import _enclosing

    found = list(_field_allocations(ev).get(field, ()))
    own_only = own
    own = [(c, b, s) for c, b, s in found if b == base and _enclosing(c) == fnode]
    # a size the source gives first; else one a default completes (its note says so)
    for guess in (False, True):
        for call, _b, size in own + ([] if own_only else [x for x in found if x not in own]):
            fn = _enclosing(call)
            if fn is None:
                continue
            was = ev._guess
            ev._guess = guess
            try:
                got = _bytes(ev, size, call, fn, {}, 0)
            except RecursionError:
                got = None
            finally:
                ev._guess = was
            if got is not None and got.value is not None:
                return got
    if own_only or found or fnode is None:
        return None
    return _foreign_alloc(ev, base, field)


def _foreign_alloc(ev: HostEvaluator, base: str, field: str) -> HostExpr | None:
    """The bytes of ``cudaMalloc(&X.field, size)`` in another source file of the tree (a
    struct filled by an init function in its own file: ``init.cu`` allocates the members of
    the struct that ``run.cu`` passes to its kernel), in file order."""
    from cuda2nki.frontend.callers import foreign_evaluators

    memo = ev.__dict__.setdefault("_foreign_allocs", {})
    key = (base, field)
    if key not in memo:
        memo[key] = None
        others = foreign_evaluators(getattr(ev, "path", None), field)
        for other in others:
            memo[key] = _alloc(other, None, base, field)
            if memo[key] is not None:
                break
    return memo[key]


def _field_allocations(ev: HostEvaluator) -> dict[str, list[tuple[ts.Node, str, ts.Node]]]:
    """Per member name, (call, base, size node) of every ``cudaMalloc(&X.member, size)`` of the
    file, in source order: found by one walk of the file, remembered by its evaluator (a file
    asks for the members of each launch's struct arguments, tens of times)."""
    index = getattr(ev, "_field_allocs", None)
    if index is None:
        index = {}
        for call, base, field, size in _allocations(ev.root):
            index.setdefault(field, []).append((call, base, size))
        ev._field_allocs = index  # type: ignore[attr-defined]
    return index


def _allocations(root: ts.Node):  # noqa: ANN202 - a generator of quadruples
    """(call, base, member, size node) of every ``cudaMalloc(&X.member, size)`` /
    ``&X->member``."""
    from cuda2nki.frontend.hostalloc import _OUT_ALLOC, _args, _callee, _strip

    stack = [root]
    while stack:
        n = stack.pop()
        if n.type == "call_expression" and _callee(n) in _OUT_ALLOC:
            items = _args(n)
            target = _strip(items[0]) if len(items) >= 2 else None
            if target is not None and target.type == "pointer_expression":
                inner = _strip(target.child_by_field_name("argument") or target)
                if inner.type == "field_expression":
                    name = inner.child_by_field_name("field")
                    obj = _strip(inner.child_by_field_name("argument") or inner)
                    if name is not None and obj.type == "identifier":
                        member = (name.text or b"").decode()
                        yield n, (obj.text or b"").decode(), member, items[1]
        stack.extend(reversed(n.children))
