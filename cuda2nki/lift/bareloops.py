"""A ``for`` loop with no initialisation that steps a variable declared before it, as in a
grid-stride loop written ``int i = gid; for (; i < n; i += stride)``: the same loop with
``i = i`` as its initialisation, which counted-loop execution handles.  The variable's value
after the loop is not tracked."""

from __future__ import annotations

import dataclasses

from cuda2nki.frontend import ast as A

_STEPS = ("pre++", "pre--", "post++", "post--")


def with_own_init(s: A.For) -> tuple[A.For, str] | None:
    """``s`` with ``v = v`` as its initialisation and the stepped variable ``v``; None when
    ``s`` has an initialisation, no condition or step, or a step of another form."""
    if s.init or s.cond is None or s.step is None:
        return None
    var = _stepped(s.step)
    if var is None:
        return None
    init = A.ExprStmt(expr=A.Assign(op="=", target=var, value=var, ty=var.ty, loc=s.loc), loc=s.loc)
    return dataclasses.replace(s, init=(init,)), var.name


def _stepped(step: A.Expr) -> A.Name | None:
    if isinstance(step, A.Assign) and step.op in ("+=", "-=") and isinstance(step.target, A.Name):
        return step.target
    if isinstance(step, A.Unary) and step.op in _STEPS and isinstance(step.operand, A.Name):
        return step.operand
    return None
