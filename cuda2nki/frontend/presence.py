"""Optional pointer parameters: null tests on a kernel's pointer parameters, decided per port.

Real kernels take optional inputs and outputs as pointers that may be null and test them in the
body: ``(bias != NULL) ? bias[oc] : 0.0f``, ``if (mean != nullptr) mean[row] = m;``,
``if (bias) ...``, ``!bias``.  Whether a pointer is null is the same for every thread of a launch,
so a port decides it once, when it is traced: :func:`specialise` makes the kernel of one
decision (each null test replaced by its truth value and the dead branch dropped), and a port
that supports the parameter's absence is made of two such kernels (see
:mod:`cuda2nki.codegen.optional`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk

Rewrite = Callable[[A.Node], A.Node]


class StillUsed(ValueError):
    """An absent pointer is used outside its null tests: that kernel needs the pointer."""

    def __init__(self, use: A.Name) -> None:
        super().__init__(f"'{use.name}' is used outside a null test of it")
        self.use = use


def _pointer_params(fn: A.Function) -> frozenset[str]:
    return frozenset(p.name for p in fn.params if isinstance(p.ty, A.PointerType))


def _is_null(e: A.Expr) -> bool:
    """``NULL``, ``nullptr``, ``0`` (possibly cast to a pointer type)."""
    while isinstance(e, A.Cast):
        e = e.operand
    return isinstance(e, A.IntLit) and e.value == 0


def _tested(e: A.Expr, pointers: frozenset[str]) -> tuple[str, bool] | None:
    """(parameter, truth when present) of a null test ``p != NULL`` / ``p == NULL`` / ``!p``."""
    if isinstance(e, A.Binary) and e.op in ("==", "!="):
        for side, other in ((e.left, e.right), (e.right, e.left)):
            if isinstance(side, A.Name) and side.name in pointers and _is_null(other):
                return side.name, e.op == "!="
    if isinstance(e, A.Unary) and e.op == "!" and _pointer_name(e.operand, pointers):
        return _pointer_name(e.operand, pointers) or "", False
    return None


def _pointer_name(e: A.Expr, pointers: frozenset[str]) -> str | None:
    if isinstance(e, A.Name) and e.name in pointers:
        return e.name
    return None


def _conditions(fn: A.Function) -> Iterable[A.Expr]:
    """Every expression used as a truth value: conditions and operands of ``&&`` / ``||`` / ``!``."""
    for n in walk(fn.body):
        if isinstance(n, (A.If, A.While, A.DoWhile, A.Ternary)):
            yield n.cond
        elif isinstance(n, A.For) and n.cond is not None:
            yield n.cond
        elif isinstance(n, A.Binary) and n.op in ("&&", "||"):
            yield from (n.left, n.right)
        elif isinstance(n, A.Unary) and n.op == "!":
            yield n.operand
        if isinstance(n, A.Expr) and _tested(n, _pointer_params(fn)) is not None:
            yield n


def null_tested(fn: A.Function) -> tuple[str, ...]:
    """The pointer parameters that ``fn`` tests against null, in parameter order."""
    pointers = _pointer_params(fn)
    found: set[str] = set()
    for c in _conditions(fn):
        t = _tested(c, pointers)
        if t is not None:
            found.add(t[0])
        elif (name := _pointer_name(c, pointers)) is not None:
            found.add(name)
    return tuple(p.name for p in fn.params if p.name in found)


def _bool(loc: A.SourceLoc, value: bool) -> A.BoolLit:
    return A.BoolLit(loc=loc, value=value, ty=A.ScalarType(name="bool"))


def _map(node: object, f: Rewrite) -> object:
    """Rebuild ``node`` bottom-up with ``f`` applied to every AST node (types untouched)."""
    if isinstance(node, tuple):
        return tuple(_map(x, f) for x in node)
    if isinstance(node, A.Case):
        return dataclasses.replace(node, body=_map(node.body, f))
    if not isinstance(node, A.Node):
        return node
    changes: dict[str, object] = {}
    for fld in dataclasses.fields(node):
        if fld.name in ("loc", "ty"):
            continue
        old = getattr(node, fld.name)
        if isinstance(old, (A.Node, tuple)):
            new = _map(old, f)
            if new is not old and new != old:
                changes[fld.name] = new
    rebuilt = dataclasses.replace(node, **changes) if changes else node
    return f(rebuilt)


def _truth(e: A.Expr) -> bool | None:
    return e.value if isinstance(e, A.BoolLit) else None


def _fold(node: A.Node, decide: Callable[[A.Expr], bool | None]) -> A.Node:
    """One rewrite step: a decided null test becomes a literal; decided branches are dropped."""
    if isinstance(node, A.Expr):
        d = decide(node)
        if d is not None:
            return _bool(node.loc, d)
    if isinstance(node, A.Unary) and node.op == "!" and _truth(node.operand) is not None:
        return _bool(node.loc, not _truth(node.operand))
    if isinstance(node, A.Binary) and node.op in ("&&", "||"):
        lt, rt = _truth(node.left), _truth(node.right)
        stop = node.op == "||"  # the value that decides the whole expression
        if lt is not None:
            return _bool(node.loc, stop) if lt == stop else node.right
        if rt is not None and rt != stop:
            return node.left
    if isinstance(node, A.Ternary) and _truth(node.cond) is not None:
        return node.then if _truth(node.cond) else node.else_
    if isinstance(node, A.If) and _truth(node.cond) is not None:
        chosen = node.then if _truth(node.cond) else node.else_
        return chosen if chosen is not None else A.Empty(loc=node.loc)
    return node


def specialise(fn: A.Function, present: Iterable[str], absent: Iterable[str]) -> A.Function:
    """``fn`` with each null test on ``present`` / ``absent`` pointers decided and folded away;
    the ``absent`` parameters are dropped from the signature.  An absent pointer still used
    after folding (dereferenced outside its test) raises :class:`StillUsed`."""
    have, lack = frozenset(present), frozenset(absent)
    pointers = _pointer_params(fn)

    def decide(e: A.Expr) -> bool | None:
        t = _tested(e, pointers)
        if t is not None and t[0] in have | lack:
            return t[1] if t[0] in have else not t[1]
        return None

    def as_condition(n: A.Node) -> A.Node:
        return _fold(_decide_bare(n, have, lack), lambda e: decide(e))

    body = _map(fn.body, as_condition)
    assert isinstance(body, A.Block)
    for n in walk(body):
        if isinstance(n, A.Name) and n.name in lack:
            raise StillUsed(n)
    params = tuple(p for p in fn.params if p.name not in lack)
    return dataclasses.replace(fn, body=body, params=params)


def _decide_bare(n: A.Node, have: frozenset[str], lack: frozenset[str]) -> A.Node:
    """A pointer used bare as a truth value (``if (bias)``, ``bias && x``, ``c ? .. : ..``)."""

    def bare(e: A.Expr) -> A.Expr:
        if isinstance(e, A.Name) and e.name in have | lack:
            return _bool(e.loc, e.name in have)
        return e

    if isinstance(n, (A.If, A.While, A.DoWhile, A.Ternary)):
        return dataclasses.replace(n, cond=bare(n.cond))
    if isinstance(n, A.For) and n.cond is not None:
        return dataclasses.replace(n, cond=bare(n.cond))
    if isinstance(n, A.Binary) and n.op in ("&&", "||"):
        return dataclasses.replace(n, left=bare(n.left), right=bare(n.right))
    if isinstance(n, A.Unary) and n.op == "!":
        return dataclasses.replace(n, operand=bare(n.operand))
    return n


def specialise_unit(
    tu: A.TranslationUnit, kernel: str, present: Iterable[str], absent: Iterable[str]
) -> A.TranslationUnit:
    """``tu`` with the kernel ``kernel`` replaced by :func:`specialise` of it."""
    fns = tuple(specialise(f, present, absent) if f.name == kernel else f for f in tu.functions)
    return dataclasses.replace(tu, functions=fns)
