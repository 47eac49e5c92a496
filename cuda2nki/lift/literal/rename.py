"""One name per local declaration (literal lowering).

The literal lowering classifies locals by name (uniform, thread-affine, index, per-thread tile;
see :mod:`.classify`), so two loops that each declare their own ``i`` (``for (int i = tid; ...)``
then ``for (int i = 1; i < K; i++)``) share one class, the joined one: the uniform counter of the
second loop becomes per-thread, and a local array it indexes can no longer be indexed at trace
time.  :func:`unshadow` gives every declaration that reuses a name already declared in the
function (or a parameter's) a fresh name, and renames the references in its scope: what the
kernel computes does not change, and each declaration is classified on its own.
"""

from __future__ import annotations

import dataclasses

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.bound import nodes


def redeclares(fn: A.Function) -> bool:
    """Whether some local of ``fn`` reuses the name of a parameter or of another local."""
    seen = {p.name for p in fn.params}
    for n in nodes(fn.body):
        if isinstance(n, A.VarDecl):
            if n.name in seen:
                return True
            seen.add(n.name)
    return False


def unshadow(fn: A.Function) -> A.Function:
    """``fn`` with one name per local declaration (see the module)."""
    taken = {p.name for p in fn.params} | {
        n.name for n in nodes(fn.body) if isinstance(n, A.VarDecl | A.Name)
    }
    r = _Renamer(taken, {p.name for p in fn.params})
    return dataclasses.replace(fn, body=r.block(fn.body, [{}]))


class _Renamer:
    def __init__(self, taken: set[str], declared: set[str]) -> None:
        self.taken = set(taken)
        self.declared = set(declared)

    def fresh(self, name: str) -> str:
        k = 2
        while f"{name}_{k}" in self.taken:
            k += 1
        self.taken.add(f"{name}_{k}")
        return f"{name}_{k}"

    def block(self, b: A.Block, scopes: list[dict[str, str]]) -> A.Block:
        inner = [*scopes, {}]
        return dataclasses.replace(b, body=tuple(self.stmt(s, inner) for s in b.body))

    def stmt(self, s: A.Stmt, scopes: list[dict[str, str]]) -> A.Stmt:  # noqa: PLR0911
        if isinstance(s, A.Block):
            return self.block(s, scopes)
        if isinstance(s, A.VarDecl):
            init = None if s.init is None else self.expr(s.init, scopes)
            name = s.name
            if name in self.declared:
                name = self.fresh(name)
            self.declared.add(s.name)
            scopes[-1][s.name] = name
            return dataclasses.replace(s, name=name, init=init)
        if isinstance(s, A.For):
            inner = [*scopes, {}]
            init = tuple(self.stmt(x, inner) for x in s.init)
            return dataclasses.replace(
                s,
                init=init,
                cond=None if s.cond is None else self.expr(s.cond, inner),
                step=None if s.step is None else self.expr(s.step, inner),
                body=self.scoped(s.body, inner),
            )
        if isinstance(s, A.If):
            return dataclasses.replace(
                s,
                cond=self.expr(s.cond, scopes),
                then=self.scoped(s.then, scopes),
                else_=None if s.else_ is None else self.scoped(s.else_, scopes),
            )
        if isinstance(s, A.While):
            return dataclasses.replace(s, cond=self.expr(s.cond, scopes),
                                       body=self.scoped(s.body, scopes))  # fmt: skip
        if isinstance(s, A.DoWhile):
            body = self.scoped(s.body, scopes)
            return dataclasses.replace(s, body=body, cond=self.expr(s.cond, scopes))
        if isinstance(s, A.Switch):
            inner = [*scopes, {}]
            cases = tuple(
                dataclasses.replace(c, body=tuple(self.stmt(x, inner) for x in c.body))
                for c in s.cases
            )
            return dataclasses.replace(s, cond=self.expr(s.cond, scopes), cases=cases)
        return self.expr(s, scopes)  # type: ignore[return-value]

    def scoped(self, s: A.Stmt, scopes: list[dict[str, str]]) -> A.Stmt:
        """A loop or branch body: a scope of its own even when it is no block."""
        return self.stmt(s, [*scopes, {}])

    def expr(self, e: A.Node, scopes: list[dict[str, str]]) -> A.Node:
        if isinstance(e, A.Name):
            for frame in reversed(scopes):
                if e.name in frame:
                    new = frame[e.name]
                    return e if new == e.name else dataclasses.replace(e, name=new)
            return e
        changes = {}
        for f in dataclasses.fields(e):
            if f.name in ("loc", "ty", "to", "of"):
                continue
            v = getattr(e, f.name)
            if isinstance(v, A.Node):
                nv = self.expr(v, scopes)
                if nv is not v:
                    changes[f.name] = nv
            elif isinstance(v, tuple) and any(isinstance(x, A.Node) for x in v):
                nt = tuple(self.expr(x, scopes) if isinstance(x, A.Node) else x for x in v)
                if any(a is not b for a, b in zip(nt, v)):
                    changes[f.name] = nt
        return dataclasses.replace(e, **changes) if changes else e
