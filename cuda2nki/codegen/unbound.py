"""Names a generated port reads before it binds them.

A schedule whose bounds mention a loop variable outside its loop (a wrapped stencil split at a
point that moves with the tap) spells code that raises ``NameError`` / ``UnboundLocalError`` as
soon as it runs.  Such a port must never be written: :func:`unbound_reads` finds those reads in
the generated source, in program order, so the pipeline can refuse the schedule instead.

The analysis is conservative in the direction that matters: a name bound on any path before a
read (an ``if`` branch, a loop body) counts as bound, and nested functions, lambdas and
comprehensions are not looked into, so a finding is a read that no execution can satisfy.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass

_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@dataclass(frozen=True)
class UnboundRead:
    name: str
    line: int
    function: str


def unbound_reads(source: str) -> list[UnboundRead]:
    """Each read of a name no earlier statement of its kernel (an ``@nki.jit`` function) or
    the module binds."""
    tree = ast.parse(source)
    module = set(dir(builtins)) | _module_names(tree)
    out: list[UnboundRead] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _jit(node):
            bound = module | _params(node.args)
            _block(node.body, bound, node.name, out)
    return out


def _jit(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if isinstance(target, ast.Attribute | ast.Name) and ast.unparse(target).endswith("jit"):
            return True
    return False


def _module_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        else:
            names |= _stored(node)
    return names


def _params(args: ast.arguments) -> set[str]:
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    every += [a for a in (args.vararg, args.kwarg) if a is not None]
    return {a.arg for a in every}


def _block(body: list[ast.stmt], bound: set[str], fn: str, out: list[UnboundRead]) -> None:
    """Check ``body`` in order; ``bound`` grows with what it binds."""
    for stmt in body:
        _stmt(stmt, bound, fn, out)


def _stmt(s: ast.stmt, bound: set[str], fn: str, out: list[UnboundRead]) -> None:
    if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        bound.add(s.name)  # its body runs later, when called: not looked into
        return
    if isinstance(s, ast.For | ast.AsyncFor):
        _reads(s.iter, bound, fn, out)
        bound |= _stored(s.target)
        _block(s.body, bound, fn, out)
        _block(s.orelse, bound, fn, out)
        return
    if isinstance(s, ast.While | ast.If):
        _reads(s.test, bound, fn, out)
        _block(s.body, bound, fn, out)
        _block(s.orelse, bound, fn, out)
        return
    if isinstance(s, ast.With | ast.AsyncWith):
        for item in s.items:
            _reads(item.context_expr, bound, fn, out)
            if item.optional_vars is not None:
                bound |= _stored(item.optional_vars)
        _block(s.body, bound, fn, out)
        return
    if isinstance(s, ast.Try):
        _block(s.body, bound, fn, out)
        for h in s.handlers:
            if h.name:
                bound.add(h.name)
            _block(h.body, bound, fn, out)
        _block(s.orelse, bound, fn, out)
        _block(s.finalbody, bound, fn, out)
        return
    if isinstance(s, ast.Import | ast.ImportFrom):
        bound |= {(a.asname or a.name).split(".")[0] for a in s.names}
        return
    if isinstance(s, ast.Global | ast.Nonlocal):
        bound |= set(s.names)
        return
    if isinstance(s, ast.AugAssign):
        _reads(s.target, bound, fn, out, loads_only=False)
    for child in ast.iter_child_nodes(s):
        if isinstance(child, ast.expr):
            _reads(child, bound, fn, out)
    bound |= _stored(s)


def _reads(
    e: ast.AST, bound: set[str], fn: str, out: list[UnboundRead], *, loads_only: bool = True
) -> None:
    todo = [e]
    while todo:
        n = todo.pop()
        if isinstance(n, _SCOPES):
            continue
        if isinstance(n, ast.Name) and (not loads_only or isinstance(n.ctx, ast.Load)):
            if n.id not in bound:
                out.append(UnboundRead(n.id, n.lineno, fn))
                bound.add(n.id)  # reported once
        todo.extend(ast.iter_child_nodes(n))


def _stored(node: ast.AST) -> set[str]:
    """Names ``node`` binds outside nested scopes (targets, walrus)."""
    names: set[str] = set()
    todo = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, _SCOPES):
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
        todo.extend(ast.iter_child_nodes(n))
    return names
