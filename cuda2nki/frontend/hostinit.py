"""What the host stores in one member of a struct that a launch passes by value.

:mod:`cuda2nki.frontend.hoststructs` asks, for member ``path`` of the struct argument ``arg``
of a launch, which host expression the member holds.  The first of these that names it:

1. the argument is itself a braced value (``k<<<g, b>>>(Pair{d_k, d_v}, n)``);
2. the last assignment to the member of the argument's variable in the launching function
   before the launch (``p.vals = d_v;``, ``a.inner.x = buf;``, ``hp->vals = d_v;``);
3. the variable's declaration with a braced initializer (``Pair p = {d_k, d_v};``,
   ``Pair p{d_k, d_v};``, ``V d = {.v = dv, .n = n};``, ``Pair p = Pair{d_k, d_v};``) or a
   braced assignment (``p = {d_k, d_v};``);
4. where the variable is a parameter of the launching function, the same in each caller for
   the argument it passes (a launcher chain), first caller first.

A positional element goes to the members in declaration order, an inner braced list to the
members of a nested struct; an element that fills a nested struct without braces (brace
elision) leaves that member and the ones after it unknown rather than guessed.

The expression found is then read as a value (a number for a size member) or, for a pointer
member, followed to its allocation like any pointer argument
(:func:`cuda2nki.frontend.hostalloc.alloc_bytes`): ``p.vals = d_v;`` with
``cudaMalloc(&d_v, n * sizeof(float))`` gives the member ``n * sizeof(float)`` bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend.cst import COMMENT_IDS

if TYPE_CHECKING:
    from cuda2nki.frontend.hostvals import HostEvaluator, HostExpr

#: launcher chains followed at most this deep
_MAX_CALLERS = 4
#: stores of a pointer into a member, outside the launching function, followed at most
_MAX_ASSIGNED = 4
_BRACED = ("initializer_list", "compound_literal_expression")


@dataclass(frozen=True)
class Source:
    """The host expression ``node`` stored in a member, in function ``fnode`` (launch argument
    positions of that function's names: ``argmap``)."""

    fnode: ts.Node
    node: ts.Node
    argmap: dict[str, int]


def _txt(n: ts.Node | None) -> str:
    return "" if n is None else "".join((n.text or b"").decode("utf-8", "replace").split())


def _kids(n: ts.Node | None) -> list[ts.Node]:
    return [] if n is None else [c for c in n.named_children if c.kind_id not in COMMENT_IDS]


def member_source(
    ev: HostEvaluator,
    call: ts.Node,
    arg: ts.Node,
    path: tuple[str, ...],
    order: tuple[tuple[str, ...], ...],
    base: str | None = None,
) -> Source | None:
    """The host expression stored in member ``path`` of the struct argument ``arg`` of the
    launch (or call) ``call``; ``order``: the struct's member paths in declaration order;
    ``base``: the host variable holding the struct, where it is not the argument (the host
    struct copied into the device struct the argument points to)."""
    from cuda2nki.frontend.hostsyntax import _enclosing

    fnode = _enclosing(call)
    if fnode is None:
        return None
    args = _kids(call.child_by_field_name("arguments"))
    argmap = {_txt(a): i for i, a in enumerate(args) if a.type == "identifier"}
    if base is not None and base != _txt(arg):
        return _named(ev, fnode, base, path, order, call.start_byte, argmap, 0)
    return _source(ev, fnode, arg, path, order, call.start_byte, argmap, 0)


def _source(
    ev: HostEvaluator,
    fnode: ts.Node,
    arg: ts.Node,
    path: tuple[str, ...],
    order: tuple[tuple[str, ...], ...],
    before: int,
    argmap: dict[str, int],
    depth: int,
) -> Source | None:
    from cuda2nki.frontend.hostalloc import _strip

    a = _strip(arg)
    if a.type in _BRACED:
        got = braced_member(a, path, order)
        return Source(fnode, got, argmap) if got is not None else None
    if a.type != "identifier":
        return None
    return _named(ev, fnode, _txt(a), path, order, before, argmap, depth)


def _named(
    ev: HostEvaluator,
    fnode: ts.Node,
    base: str,
    path: tuple[str, ...],
    order: tuple[tuple[str, ...], ...],
    before: int,
    argmap: dict[str, int],
    depth: int,
) -> Source | None:
    got = _assigned(fnode, base, path, before)
    if got is None:
        init = _initializer(fnode, base, before)
        got = braced_member(init, path, order) if init is not None else None
    if got is not None:
        return Source(fnode, got, argmap)
    return _from_callers(ev, fnode, base, path, order, argmap, depth)


def _assigned(fnode: ts.Node, base: str, path: tuple[str, ...], before: int) -> ts.Node | None:
    """The value of the last ``base.path = v`` in ``fnode`` before byte ``before``."""
    from cuda2nki.frontend.declindex import member_assignments

    lefts = {".".join((base, *path)), base + "->" + ".".join(path)}
    found = None
    for a in member_assignments(fnode, _txt).get(path[-1], ()):
        if a.start_byte < before and _txt(a.child_by_field_name("left")) in lefts:
            found = a.child_by_field_name("right")
    return found


def _initializer(fnode: ts.Node, base: str, before: int) -> ts.Node | None:
    """The braced value ``base`` is last declared or assigned with in ``fnode`` before byte
    ``before`` (None: none, or a plain assignment after it: the value is then unknown)."""
    from cuda2nki.frontend.hostalloc import _walk

    found = None
    body = fnode.child_by_field_name("body")
    for n in _walk(body) if body is not None else ():
        if n.start_byte >= before:
            break
        value = None
        if n.type == "init_declarator" and _txt(n.child_by_field_name("declarator")) == base:
            value = n.child_by_field_name("value")
            if value is None:  # `Pair p{d_k, d_v};`
                value = next((c for c in _kids(n) if c.type == "initializer_list"), None)
        elif n.type == "assignment_expression" and _txt(n.child_by_field_name("left")) == base:
            value = n.child_by_field_name("right")
        elif n.type == "declaration" and any(
            _txt(d) == base for d in n.children_by_field_name("declarator")
        ):
            found = None  # declared again without a value
            continue
        if value is not None:
            found = value if value.type in _BRACED else None
    return found


def braced_member(
    value: ts.Node, path: tuple[str, ...], order: tuple[tuple[str, ...], ...]
) -> ts.Node | None:
    """The element of the braced value ``value`` that initializes member ``path``."""
    if value.type == "compound_literal_expression":
        value = value.child_by_field_name("value") or next(
            (c for c in _kids(value) if c.type == "initializer_list"), value
        )
    if value.type != "initializer_list":
        return None
    members = list(dict.fromkeys(p[0] for p in order))
    want = path[0]
    if want not in members:
        return None
    at = 0
    for el in _kids(value):
        if el.type == "initializer_pair":
            name = _designated(el)
            if name is None or name not in members:
                return None
            at = members.index(name)
            el = el.child_by_field_name("value") or _kids(el)[-1]
        if at >= len(members):
            return None
        member = members[at]
        inner = tuple(p[1:] for p in order if p[0] == member and len(p) > 1)
        if inner and el.type not in _BRACED:
            return None  # brace elision: which element goes where is not followed
        if member == want:
            if len(path) == 1:
                return None if inner else el
            return braced_member(el, path[1:], inner)
        at += 1
    return None


def _designated(pair: ts.Node) -> str | None:
    """``v`` of ``.v = x`` (a nested designator ``.a.b = x`` is not followed)."""
    names = [c for c in pair.children_by_field_name("designator")]
    if len(names) != 1 or names[0].type != "field_designator":
        return None
    return _txt(names[0]).lstrip(".")


def _from_callers(
    ev: HostEvaluator,
    fnode: ts.Node,
    base: str,
    path: tuple[str, ...],
    order: tuple[tuple[str, ...], ...],
    argmap: dict[str, int],
    depth: int,
) -> Source | None:
    """``base`` is a parameter of the launching function: what each caller passes for it."""
    from cuda2nki.frontend.hostalloc import _caller_argmap, _launcher_calls
    from cuda2nki.frontend.hostsyntax import _enclosing, _function_name, _params

    params = _params(fnode)
    if depth >= _MAX_CALLERS or base not in params:
        return None
    idx = params.index(base)
    for c, _cev in _launcher_calls(ev, _function_name(fnode) or ""):
        caller = _enclosing(c)
        items = _kids(c.child_by_field_name("arguments"))
        if caller is None or caller is fnode or idx >= len(items):
            continue
        where = _caller_argmap(argmap, params, items)
        got = _source(ev, caller, items[idx], path, order, c.start_byte, where, depth + 1)
        if got is not None:
            return got
    return None


# ---------------------------------------------------------------------- what the source says
def source_value(ev: HostEvaluator, src: Source) -> HostExpr | None:
    """The number the member holds (None: not a number the host code gives)."""
    from cuda2nki.frontend.hostsyntax import _one_line
    from cuda2nki.frontend.hostvalue import HostExpr, _NoValue

    try:
        v = ev.assigned(src.fnode, src.node, 1)
    except (_NoValue, RecursionError):
        return None
    if v.items is not None or v.num is None:
        return None
    line = f"{ev.where(src.node)}: {_one_line(src.node.parent or src.node)}"
    return HostExpr(None, v.num, (line, *v.ev), v.notes)


def source_alloc(ev: HostEvaluator, src: Source) -> HostExpr | None:
    """The bytes allocated for the pointer the member holds (``p.vals = d_v;``: ``d_v``'s)."""
    from cuda2nki.frontend.hostalloc import _find, _pointer_name, _strip
    from cuda2nki.frontend.hoststructs import field_alloc

    node = _strip(src.node)
    if node.type == "field_expression":
        return field_alloc(ev, src.fnode, node)
    name = _pointer_name(node)
    if name is None:
        return None
    was = ev._guess
    try:  # a size the source gives first; else one a default completes (its note says so)
        for guess in (False, True):
            ev._guess = guess
            try:
                got = _find(ev, name, src.fnode, src.argmap, 0, mirror=True)
            except RecursionError:
                got = None
            if got is not None and (got.value is not None or got.text):
                return got
    finally:
        ev._guess = was
    return None


def assigned_alloc(
    ev: HostEvaluator, fnode: ts.Node | None, base: str, field: str, before: int
) -> HostExpr | None:
    """The allocation of a pointer the host stores in member ``field`` outside the launching
    function (``void setup(Params* p) { cudaMalloc(&buf, n * 4); p->vals = buf; }``): the
    assignments :func:`cuda2nki.frontend.hostmembers.member_values` finds, the launching
    variable's first, each followed to its pointer's allocation in its own function."""
    from cuda2nki.frontend.hostalloc import _pointer_name
    from cuda2nki.frontend.hostmembers import member_values

    tried = 0
    for fn, right in member_values(ev.root, fnode, base, field, before):
        if fn is None or right is None or _pointer_name(right) is None:
            continue
        got = source_alloc(ev, Source(fn, right, {}))
        if got is not None:
            return got
        tried += 1
        if tried >= _MAX_ASSIGNED:
            break
    return None
