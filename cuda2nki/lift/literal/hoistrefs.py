"""Calls writing through a reference, taken out of the expression that uses their value.

``int j = (int)(next_random(&seed) * n) + 1;`` calls a function that updates the caller's
``seed`` and uses the value it returns inside a larger expression.  The scalarisation
(:mod:`.scalarise`) inlines such a call only where it is a whole initialiser or right-hand
side, so the call is first moved into a temporary declared just before the statement::

    unsigned int __c2n_ref1 = next_random(&seed);  // then inlined, `seed` aliased
    int j = (int)(__c2n_ref1 * n) + 1;

A call is moved only from where C evaluates it exactly once, before the rest of the statement
is complete: not from the branches of ``?:`` nor from the right of ``&&``/``||``, not from a
loop condition or step, and only when it returns a scalar.  The calls an expression holds are
taken out left to right.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk


def hoist_calls(
    e: A.Expr, writes: Callable[[A.Call], set[str] | None], fresh: Callable[[str], str]
) -> tuple[list[A.VarDecl], A.Expr]:
    """The temporaries holding the calls in ``e`` for which ``writes`` names the caller's
    locals they change (outside the whole of ``e`` itself), and ``e`` reading them instead.
    Nothing is moved where the rest of ``e``, or another such call, reads or changes a local
    one of them changes: C leaves the order of those unspecified, so the value is not one
    thing a port could compute."""
    decls: list[A.VarDecl] = []
    changed: list[set[str]] = []

    def visit(x: A.Expr, top: bool) -> A.Expr:
        if isinstance(x, A.Ternary):
            return dataclasses.replace(x, cond=visit(x.cond, False))
        if isinstance(x, A.Binary) and x.op in ("&&", "||"):
            return dataclasses.replace(x, left=visit(x.left, False))
        changes = {}
        for f in dataclasses.fields(x):
            if f.name in ("loc", "ty", "to", "of"):
                continue
            old = getattr(x, f.name)
            if isinstance(old, A.Expr):
                new = visit(old, False)
            elif isinstance(old, tuple) and old and all(isinstance(y, A.Expr) for y in old):
                new = tuple(visit(y, False) for y in old)
            else:
                continue
            if new is not old:
                changes[f.name] = new
        out = dataclasses.replace(x, **changes) if changes else x
        if (
            not top
            and isinstance(out, A.Call)
            and isinstance(out.ty, A.ScalarType)
            and out.ty.name != "void"
            and (names := writes(out)) is not None
        ):
            changed.append(names)
            ty = dataclasses.replace(out.ty, const=False)
            name = fresh("__c2n_ref")
            decls.append(A.VarDecl(loc=out.loc, name=name, ty=ty, init=out))
            return A.Name(loc=out.loc, name=name, ty=ty)
        return out

    got = visit(e, True)
    if not decls:
        return [], e
    reads = {n.name for n in walk(got) if isinstance(n, A.Name)}
    inits = [{n.name for n in walk(d.init) if isinstance(n, A.Name)} for d in decls]
    for k, names in enumerate(changed):
        others = reads.union(*(inits[j] for j in range(len(decls)) if j != k))
        if names & others:
            return [], e
    return decls, got
