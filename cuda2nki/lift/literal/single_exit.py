"""A device function with several ``return``s rewritten to return once, at its end.

The literal lowering inlines a device function's body into the caller and reads its value at
the end, so a ``return`` may only be the body's last statement.  This rewrite keeps the
function's meaning with a result variable and a ``done`` flag::

    if (mode == 0) return x;           float result = 0; int done = 0;
    for (k = 0; k < n; k++)            if (mode == 0) { result = x; done = 1; }
        if (w[k] > x) return k;   ->   if (!done) {
    return -1;                             for (k = 0; !done && k < n; k++)
                                               if (w[k] > x) { result = k; done = 1; }
                                           if (!done) { result = -1; done = 1; }
                                       }
                                       return result;

Every statement after one that may return runs under ``!done``; a loop that may return
tests ``!done`` before its own condition (the condition is not evaluated once the function has
returned, as in CUDA).  Where the flag depends on the thread the lowering masks by it like any
other condition.  A ``switch`` whose cases return is left as it is (the lowering names it).
"""

from __future__ import annotations

import dataclasses

from cuda2nki.diagnostics import SourceLoc
from cuda2nki.frontend import ast as A

_INT = A.ScalarType(name="int32")


def needs_single_exit(fn: A.Function) -> bool:
    """``fn`` returns somewhere other than as its body's last statement."""
    body = fn.body.body
    last = body[-1] if body else None
    early = [s for s in body if s is not last] + ([] if isinstance(last, A.Return) else [last])
    return any(_has_return(s) for s in early if s is not None)


def single_exit(fn: A.Function) -> A.Function:
    """``fn`` with one ``return``, at the end of its body (unchanged when it already has, when a
    ``switch`` returns, or when its value is not a scalar)."""
    if not needs_single_exit(fn) or _switch_returns(fn.body):
        return fn
    void = isinstance(fn.return_type, A.ScalarType) and fn.return_type.name == "void"
    if not void and not isinstance(fn.return_type, A.ScalarType):
        return fn
    taken = _names(fn)
    rw = _Rewrite(
        _fresh(f"{fn.name}_result", taken), _fresh(f"{fn.name}_done", taken), fn.return_type, void
    )
    loc = fn.body.loc
    head: list[A.Stmt] = []
    if not void:
        zero = A.IntLit(loc=loc, value=0, ty=_INT)
        ty = dataclasses.replace(fn.return_type, const=False)
        head.append(A.VarDecl(loc=loc, name=rw.result, ty=ty, init=zero))
    head.append(A.VarDecl(loc=loc, name=rw.done, ty=_INT, init=A.IntLit(loc=loc, value=0, ty=_INT)))
    tail: tuple[A.Stmt, ...] = ()
    if not void:
        tail = (A.Return(loc=_end(fn), value=rw.name(rw.result, fn.return_type, _end(fn))),)
    body = A.Block(loc=loc, body=(*head, *rw.stmts(fn.body.body), *tail))
    return dataclasses.replace(fn, body=body)


@dataclasses.dataclass(frozen=True)
class _Rewrite:
    result: str
    done: str
    ty: A.CType
    void: bool

    def name(self, n: str, ty: A.CType, loc: SourceLoc) -> A.Name:
        return A.Name(loc=loc, name=n, ty=ty)

    def not_done(self, loc: SourceLoc) -> A.Expr:
        return A.Unary(loc=loc, op="!", operand=self.name(self.done, _INT, loc), ty=_INT)

    def stmts(self, body: tuple[A.Stmt, ...]) -> tuple[A.Stmt, ...]:
        """Statements up to the first that may return, then the rest under ``!done``."""
        out: list[A.Stmt] = []
        for i, s in enumerate(body):
            if not _has_return(s):
                out.append(s)
                continue
            out.append(self.stmt(s))
            rest = body[i + 1 :]
            if rest and not isinstance(s, A.Return):
                block = A.Block(loc=rest[0].loc, body=self.stmts(rest))
                out.append(A.If(loc=rest[0].loc, cond=self.not_done(rest[0].loc), then=block))
            break
        return tuple(out)

    def block(self, s: A.Stmt) -> A.Stmt:
        return A.Block(loc=s.loc, body=self.stmts(s.body if isinstance(s, A.Block) else (s,)))

    def guard(self, cond: A.Expr | None, loc: SourceLoc) -> A.Expr:
        if cond is None:
            return self.not_done(loc)
        return A.Binary(loc=cond.loc, op="&&", left=self.not_done(cond.loc), right=cond, ty=_INT)

    def stmt(self, s: A.Stmt) -> A.Stmt:
        if isinstance(s, A.Return):
            return self.ret(s)
        if isinstance(s, A.Block):
            return self.block(s)
        if isinstance(s, A.If):
            else_ = self.block(s.else_) if s.else_ is not None else None
            return dataclasses.replace(s, then=self.block(s.then), else_=else_)
        if isinstance(s, A.For):
            return dataclasses.replace(s, cond=self.guard(s.cond, s.loc), body=self.block(s.body))
        if isinstance(s, A.While | A.DoWhile):
            return dataclasses.replace(s, cond=self.guard(s.cond, s.loc), body=self.block(s.body))
        return s

    def ret(self, s: A.Return) -> A.Stmt:
        one = A.IntLit(loc=s.loc, value=1, ty=_INT)
        done = A.Assign(loc=s.loc, op="=", target=self.name(self.done, _INT, s.loc), value=one)
        out: list[A.Stmt] = []
        if s.value is not None and not self.void:
            target = self.name(self.result, self.ty, s.loc)
            put = A.Assign(loc=s.loc, op="=", target=target, value=s.value, ty=self.ty)
            out.append(A.ExprStmt(loc=s.loc, expr=put))
        out.append(A.ExprStmt(loc=s.loc, expr=dataclasses.replace(done, ty=_INT)))
        return A.Block(loc=s.loc, body=tuple(out))


def _has_return(s: A.Stmt) -> bool:
    return any(isinstance(x, A.Return) for x in _walk(s))


def _switch_returns(s: A.Stmt) -> bool:
    return any(isinstance(x, A.Switch) and _has_return(x) for x in _walk(s))


def _walk(s: A.Stmt):  # noqa: ANN202 - a generator of statements
    yield s
    if isinstance(s, A.Block):
        for c in s.body:
            yield from _walk(c)
    elif isinstance(s, A.If):
        yield from _walk(s.then)
        if s.else_ is not None:
            yield from _walk(s.else_)
    elif isinstance(s, A.For | A.While | A.DoWhile):
        yield from _walk(s.body)
    elif isinstance(s, A.Switch):
        for case in s.cases:
            for c in case.body:
                yield from _walk(c)


def _names(fn: A.Function) -> set[str]:
    """Every identifier the function spells (parameters, locals, names it reads)."""
    out = {p.name for p in fn.params}

    def visit(x: object) -> None:
        if isinstance(x, A.Name | A.VarDecl):
            out.add(x.name)
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            for f in dataclasses.fields(x):
                visit(getattr(x, f.name))
        elif isinstance(x, tuple | list):
            for y in x:
                visit(y)

    visit(fn.body)
    return out


def _fresh(base: str, taken: set[str]) -> str:
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}{n}"
    taken.add(name)
    return name


def _end(fn: A.Function) -> SourceLoc:
    body = fn.body.body
    return body[-1].loc if body else fn.body.loc
