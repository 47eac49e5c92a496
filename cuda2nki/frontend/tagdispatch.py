"""Tag types as compile-time values in host code.

C++ host code passes compile-time constants as *tags*: values of ``std::integral_constant<T, N>``
/ ``std::bool_constant<B>`` (``std::true_type``, ``std::false_type``) whose value is in their
type.  Two spellings reach a launch:

* a named tag object, ``constexpr std::bool_constant<true> on;`` at file scope, passed to a kernel
  parameter ``std::bool_constant<B>``: :func:`tag_constant` gives its value, so that the kernel's
  ``B`` is deduced as from ``std::bool_constant<true>{}``;
* a generic lambda that launches, ``auto go = [&](auto tag) { constexpr int bs = tag.value;
  k<bs><<<g, bs>>>(...); };``, called with tags by a dispatcher, ``switch (n) { case 32: return
  f(std::integral_constant<int, 32>{}); ... }`` (or called directly, ``go(std::true_type{})``):
  every tag a call passes is an admissible value of ``tag.value``.  :func:`lambda_tag` lists them
  and picks one, the block size a default launch takes (128) when admissible, else the first
  written; the launch is read with that value and a note says which was taken.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import tree_sitter as ts

from cuda2nki.diagnostics import make
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.hostsyntax import _enclosing, _walk_type

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer


def tag_constant(low: BodyLowerer, type_node: ts.Node | None) -> int | None:
    """The value of a tag type (``std::bool_constant<true>``, ``std::integral_constant<int, 8>``,
    ``std::true_type``) written at ``type_node``; None when it is no tag or not constant."""
    from cuda2nki.frontend.lowertables import std_constant

    if type_node is None:
        return None
    got = std_constant(low, type_node)
    if got is None or got[1] is None:
        return None
    return got[1]


#: the block size a default launch takes: the value picked when a dispatch admits it
PREFERRED = 128
#: dispatchers followed from a lambda at most (a dispatcher passing its functor on...)
MAX_DEPTH = 4

_TAG_RE = re.compile(
    r"^(?:::)?(?:cuda::)?std::(?:integral_constant<[^,<>]+,(?P<n>[^<>]+)>"
    r"|bool_constant<(?P<b>[^<>]+)>|(?P<t>true_type|false_type))(?:\{\}|\(\))$"
)


@dataclass(frozen=True)
class TagPick:
    """The value taken for ``param.value`` of a generic lambda: ``value`` of the admissible
    ``values`` (in the order the calls write them), passed by the call ``at``."""

    param: str
    value: int
    values: tuple[int, ...]
    at: ts.Node

    def note(self, where: str) -> str:
        """What was taken, for a note; ``where`` places the call passing it (file:line)."""
        others = ", ".join(str(v) for v in self.values)
        return (
            f"'{self.param}.value' taken as {self.value}, one of the tags ({others}) the generic "
            f"lambda is called with ({where}); each would give its own instantiation"
        )


def lambda_tag(ident: ts.Node) -> TagPick | None:
    """The tag value taken for the identifier ``ident`` when it names an ``auto`` parameter of
    a generic lambda around it that is called with constant tags; None otherwise."""
    name = _txt(ident)
    n = ident.parent
    while n is not None and n.type != "function_definition":
        if n.type == "lambda_expression":
            index = _auto_param(n, name)
            if index is not None:
                return _pick(name, _tags(n, index))
        n = n.parent
    return None


def in_tag_lambda(node: ts.Node) -> bool:
    """Whether ``node`` is in the body of a generic lambda (an ``auto`` parameter)."""
    n = node.parent
    while n is not None and n.type != "function_definition":
        if n.type == "lambda_expression" and any(_is_auto(p) for p in _lambda_params(n)):
            return True
        n = n.parent
    return False


def _pick(name: str, tags: list[tuple[int, ts.Node]]) -> TagPick | None:
    if not tags:
        return None
    values = tuple(dict.fromkeys(v for v, _ in tags))
    value = PREFERRED if PREFERRED in values else values[0]
    at = next(c for v, c in tags if v == value)
    return TagPick(name, value, values, at)


def _lambda_params(lam: ts.Node) -> list[ts.Node]:
    d = next((c for c in lam.named_children if c.type == "lambda_declarator"), None)
    plist = d.child_by_field_name("parameters") if d is not None else None
    return [c for c in plist.named_children if c.type == "parameter_declaration"] if plist else []


def _is_auto(p: ts.Node) -> bool:
    t = p.child_by_field_name("type")
    return t is not None and t.type == "placeholder_type_specifier" and _txt(t) == "auto"


def _param_name(p: ts.Node) -> str:
    d = p.child_by_field_name("declarator")
    while d is not None and d.type != "identifier":
        d = next((c for c in d.named_children if c.type != "type_qualifier"), None)
    return _txt(d)


def _auto_param(lam: ts.Node, name: str) -> int | None:
    """The position of the ``auto`` parameter ``name`` of the lambda ``lam`` (None: none)."""
    for i, p in enumerate(_lambda_params(lam)):
        if _param_name(p) == name:
            return i if _is_auto(p) else None
    return None


def _tags(lam: ts.Node, index: int) -> list[tuple[int, ts.Node]]:
    """(value, call) for each call of the lambda ``lam`` that passes a constant tag as its
    argument ``index``: direct calls of the variable it initialises and calls through the
    dispatchers it is passed to."""
    out: list[tuple[int, ts.Node]] = []
    for call in _calls_of_lambda(lam):
        args = _args(call)
        if index < len(args):
            v = tag_literal(args[index])
            if v is not None:
                out.append((v, call))
    return out


def _calls_of_lambda(lam: ts.Node) -> list[ts.Node]:
    parent = lam.parent
    root = _root(lam)
    if parent is not None and parent.type == "argument_list":  # `dispatch([&](auto t) {...}, n)`
        j = _position(parent, lam)
        return _through(root, parent.parent, j, 0) if parent.parent is not None else []
    if parent is None or parent.type != "init_declarator":
        return []
    name = _txt(parent.child_by_field_name("declarator"))
    scope = _enclosing(lam) or root
    out: list[ts.Node] = []
    for call in _walk_type(scope, "call_expression"):
        if _callee(call) == name:  # `go(std::integral_constant<int, 64>{})`
            out.append(call)
        for j, a in enumerate(_args(call)):
            if a.type == "identifier" and _txt(a) == name:  # `dispatch(go, n)`
                out += _through(root, call, j, 0)
    return out


def _through(root: ts.Node, call: ts.Node, j: int, depth: int) -> list[ts.Node]:
    """The calls that the functions named by ``call`` make of their parameter ``j``."""
    name = _callee(call)
    if not name or depth > MAX_DEPTH:
        return []
    out: list[ts.Node] = []
    for fn in _functions(root, name):
        params = _function_params(fn)
        if j >= len(params):
            continue
        pname = _param_name(params[j])
        body = fn.child_by_field_name("body")
        for inner in _walk_type(body, "call_expression") if body is not None and pname else ():
            if _callee(inner) == pname:
                out.append(inner)
            for k, a in enumerate(_args(inner)):
                if a.type == "identifier" and _txt(a) == pname:
                    out += _through(root, inner, k, depth + 1)
    return out


def tag_literal(n: ts.Node) -> int | None:
    """The value of a tag written at ``n``: ``std::integral_constant<int, 64>{}``,
    ``std::bool_constant<true>()``, ``std::false_type{}`` (None: no such literal)."""
    m = _TAG_RE.match("".join(_txt(n).split()))
    if m is None:
        return None
    if m.group("t"):
        return int(m.group("t") == "true_type")
    text = m.group("n") or m.group("b")
    if text in ("true", "false"):
        return int(text == "true")
    try:
        return int(text.rstrip("uUlL"), 0)
    except ValueError:
        return None


# ---------------------------------------------------------------------- syntax


def _txt(n: ts.Node | None) -> str:
    return "" if n is None else (n.text or b"").decode("utf-8", "replace").strip()


def _root(n: ts.Node) -> ts.Node:
    while n.parent is not None:
        n = n.parent
    return n


def _position(args: ts.Node, node: ts.Node) -> int:
    kids = [c for c in args.named_children if c.type != "comment"]
    return next(i for i, c in enumerate(kids) if c.id == node.id)


def _args(call: ts.Node) -> list[ts.Node]:
    a = call.child_by_field_name("arguments")
    return [c for c in a.named_children if c.type != "comment"] if a is not None else []


def _callee(call: ts.Node) -> str:
    f = call.child_by_field_name("function")
    if f is not None and f.type == "template_function":  # `dispatch<F>(go, n)`
        f = f.child_by_field_name("name")
    if f is None or f.type not in ("identifier", "qualified_identifier"):
        return ""
    return _txt(f).split("::")[-1]


def _functions(root: ts.Node, name: str) -> list[ts.Node]:
    out, stack = [], [root]
    while stack:
        n = stack.pop()
        if n.type == "function_definition":
            d = n.child_by_field_name("declarator")
            while d is not None and d.type != "function_declarator":
                d = d.child_by_field_name("declarator")
            f = d.child_by_field_name("declarator") if d is not None else None
            if f is not None and _txt(f).split("::")[-1] == name:
                out.append(n)
            continue
        stack.extend(n.children)
    return out


def _function_params(fn: ts.Node) -> list[ts.Node]:
    d = fn.child_by_field_name("declarator")
    while d is not None and d.type != "function_declarator":
        d = d.child_by_field_name("declarator")
    plist = d.child_by_field_name("parameters") if d is not None else None
    return [c for c in plist.named_children if c.type == "parameter_declaration"] if plist else []


def with_tag_arguments(
    unit: Any, site: A.LaunchSite, call: ts.Node, evaluator: Any
) -> A.LaunchSite:
    """The launch ``site`` of ``call`` (``k<bs><<<...>>>`` in a generic lambda, ``bs`` a
    ``constexpr`` of ``tag.value``) with each template argument the host lowering left
    unresolved replaced by its value under the picked tag, and a note (C2N2100) saying so."""
    if not any(_unresolved(t) for t in site.template_args) or not in_tag_lambda(call):
        return site
    fn = call.child_by_field_name("function")
    targs = fn.child_by_field_name("arguments") if fn is not None else None
    nodes = [c for c in targs.named_children if c.type != "comment"] if targs else []
    if len(nodes) != len(site.template_args):
        return site
    out: list[A.Expr | A.CType] = []
    for ta, node in zip(site.template_args, nodes):
        v = _value_at(evaluator, node, call) if _unresolved(ta) else None
        if v is None:
            out.append(ta)
            continue
        value, notes = v
        out.append(N.IntLit(loc=ta.loc, value=value, ty=N.ScalarType(name="int32")))  # type: ignore[union-attr]
        fd = unit.functions.get(site.kernel)  # the note is the kernel's: placed at it
        launch = unit.loc(node)
        unit.diags.append(
            make(
                "C2N2100",
                unit.loc(fd.node) if fd is not None else launch,
                what=f"template argument {_txt(node)} = {value}",
                kernel=site.kernel,
                source=f"the launch at line {launch.line}: " + ("; ".join(notes) or "host code"),
            )
        )
    return replace(site, template_args=tuple(out))


def _unresolved(ta: object) -> bool:
    return isinstance(ta, A.Expr) and not isinstance(ta, A.IntLit)


def _value_at(evaluator: Any, node: ts.Node, call: ts.Node) -> tuple[int, tuple[str, ...]] | None:
    """The integer ``node`` has where ``call`` is, read by the host evaluator without taking
    any default; None when the source does not give it."""
    from cuda2nki.frontend.hostvalue import _NoValue, _Scope

    if node.type == "type_descriptor":  # `k<bs>`: a lone name reads as a type
        kids = node.named_children
        if len(kids) != 1 or kids[0].type != "type_identifier":
            return None
        node = kids[0]
    saved, evaluator._guess = evaluator._guess, False
    try:
        v = evaluator.eval(node, _Scope(_enclosing(call), call.start_byte, {}, 0))
    except _NoValue:
        return None
    finally:
        evaluator._guess = saved
    if v.items is not None or not isinstance(v.num, int) or isinstance(v.num, bool):
        return None
    return v.num, tuple(v.notes)
