"""Control flow the symbolic executor runs in an equivalent, simpler form.

* ``switch`` becomes a chain of ``if`` statements over the value of its condition, evaluated once
  into a fresh local: case ``k`` runs when the value selects case ``k`` or an earlier case that
  falls through into it (no ``break`` at its end); ``default`` is selected by every value no case
  names.  A ``break`` anywhere but at the end of a case body is refused by the caller.
* ``while (v < stop) { ...; v += step; }`` -- a loop whose last statement steps a local that
  nothing else in the body assigns -- is the ``for`` loop ``for (v = v; v < stop; v += step)``
  (counted when the step is additive, unrolled when it multiplies or shifts).
"""

from __future__ import annotations

from cuda2nki.frontend import ast as A

_BOOL = A.ScalarType(name="bool")


class SwitchShape(Exception):
    """A switch whose control flow is not a chain of cases (``break`` in the middle of a case)."""


def _strip_break(body: tuple[A.Stmt, ...]) -> tuple[tuple[A.Stmt, ...], bool]:
    """``body`` without the ``break`` that ends it (also inside a trailing ``{ ... }``), and
    whether there was one."""
    if body and isinstance(body[-1], A.Break):
        return body[:-1], True
    if body and isinstance(body[-1], A.Block):
        inner, hit = _strip_break(body[-1].body)
        if hit:
            return body[:-1] + (A.Block(loc=body[-1].loc, body=inner),), True
    return body, False


def _has_inner_break(stmts: tuple[A.Stmt, ...]) -> bool:
    """A ``break`` of the switch that is not the last statement of its case (loops inside a case
    own their breaks)."""

    def walk(s: A.Stmt) -> bool:
        if isinstance(s, A.Break):
            return True
        if isinstance(s, A.Block):
            return any(walk(x) for x in s.body)
        if isinstance(s, A.If):
            return walk(s.then) or (s.else_ is not None and walk(s.else_))
        return False

    return any(walk(s) for s in stmts)


def _or(parts: list[A.Expr], loc) -> A.Expr:
    out = parts[0]
    for p in parts[1:]:
        out = A.Binary(loc=loc, ty=_BOOL, op="||", left=out, right=p)
    return out


def switch_to_ifs(s: A.Switch, tmp: str) -> A.Block:
    """The ``if`` chain equivalent to ``s``; ``tmp`` names the local that holds the value."""
    loc = s.loc
    ty = s.cond.ty if isinstance(s.cond.ty, A.ScalarType) else A.ScalarType(name="int32")
    value = A.Name(loc=loc, ty=ty, name=tmp)
    named = [v for c in s.cases for v in c.values]

    def selects(c: A.Case) -> A.Expr:
        if not c.values:  # default: a value no case names
            if not named:
                return A.BoolLit(loc=c.loc, ty=_BOOL, value=True)
            hit = _or([_eq(value, v, c.loc) for v in named], c.loc)
            return A.Unary(loc=c.loc, ty=_BOOL, op="!", operand=hit)
        return _or([_eq(value, v, c.loc) for v in c.values], c.loc)

    out: list[A.Stmt] = [A.VarDecl(loc=loc, name=tmp, ty=ty, init=s.cond)]
    entry: list[A.Expr] = []  # cases whose selection reaches the current one by falling through
    for c in s.cases:
        body, ends = _strip_break(c.body)
        if _has_inner_break(body):
            raise SwitchShape("a break that is not the last statement of its case")
        entry.append(selects(c))
        if body:
            then = A.Block(loc=c.loc, body=tuple(body))
            out.append(A.If(loc=c.loc, cond=_or(entry, c.loc), then=then, else_=None))
        if ends:
            entry = []
    return A.Block(loc=loc, body=tuple(out))


def _eq(value: A.Name, v: int, loc) -> A.Expr:
    lit = A.IntLit(loc=loc, ty=value.ty, value=v)
    return A.Binary(loc=loc, ty=_BOOL, op="==", left=value, right=lit)


def _steps(e: A.Expr, name: str) -> bool:
    """``e`` is ``name++``, ``name += x``, ``name = name op x``, ``name /= 2``, ``name >>= 1``..."""
    if isinstance(e, A.Unary) and e.op in ("pre++", "post++", "pre--", "post--"):
        return isinstance(e.operand, A.Name) and e.operand.name == name
    if isinstance(e, A.Assign) and isinstance(e.target, A.Name) and e.target.name == name:
        if e.op != "=":
            return True
        v = e.value
        return isinstance(v, A.Binary) and isinstance(v.left, A.Name) and v.left.name == name
    return False


def _cond_names(e: A.Expr) -> set[str]:
    out: set[str] = set()
    stack: list[object] = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, A.Name):
            out.add(x.name)
        if isinstance(x, A.Node):
            for f in x.__dataclass_fields__:
                v = getattr(x, f)
                if isinstance(v, A.Node):
                    stack.append(v)
                elif isinstance(v, tuple):
                    stack.extend(y for y in v if isinstance(y, A.Node))
    return out


def while_to_for(s: A.While) -> tuple[A.For, str] | None:
    """``s`` as an equivalent ``for`` loop and the name of its loop variable, or None when the
    body does not end by stepping a variable of the condition."""
    body = s.body.body if isinstance(s.body, A.Block) else (s.body,)
    if not body or not isinstance(body[-1], A.ExprStmt):
        return None
    step = body[-1].expr
    ty = _target_ty(step)
    if not isinstance(ty, A.ScalarType) or ty.is_float:
        return None  # a data value stepped until it converges: the data decide the trip count
    for name in sorted(_cond_names(s.cond)):
        if _steps(step, name):
            init = A.ExprStmt(
                loc=s.loc,
                expr=A.Assign(
                    loc=s.loc,
                    op="=",
                    target=A.Name(loc=s.loc, name=name, ty=_target_ty(step)),
                    value=A.Name(loc=s.loc, name=name, ty=_target_ty(step)),
                ),
            )
            rest = A.Block(loc=s.body.loc, body=tuple(body[:-1]))
            return A.For(loc=s.loc, init=(init,), cond=s.cond, step=step, body=rest), name
    return None


def _target_ty(step: A.Expr) -> A.CType | None:
    if isinstance(step, A.Unary):
        return step.operand.ty
    if isinstance(step, A.Assign):
        return step.target.ty
    return None


def flatten_init(init: A.InitList, dims: tuple) -> list | None:
    """The items of an array initialiser in row-major order, ``None`` for the elements it leaves
    out (nested braces per dimension, or one flat list); None when it does not fit ``dims``."""
    size = 1
    for d in dims:
        size *= d
    out: list = []
    if len(dims) > 1 and all(isinstance(x, A.InitList) for x in init.items):
        inner = size // dims[0]
        if len(init.items) > dims[0]:
            return None
        for x in init.items:
            sub = flatten_init(x, dims[1:])
            if sub is None:
                return None
            out.extend(sub)
        out.extend([None] * (inner * (dims[0] - len(init.items))))
        return out
    if any(isinstance(x, A.InitList) for x in init.items) or len(init.items) > size:
        return None
    return list(init.items) + [None] * (size - len(init.items))


def indexes_with(body: A.Stmt, var: str, arrays: set[str]) -> bool:
    """``body`` indexes one of ``arrays`` (local arrays, constant tables) with an expression of
    ``var``: such a loop is unrolled, its elements being separate values."""
    stack: list[object] = [body]
    while stack:
        x = stack.pop()
        if isinstance(x, A.Index):
            base, idx = x, []
            while isinstance(base, A.Index):
                idx.append(base.index)
                base = base.base
            if isinstance(base, A.Name) and base.name in arrays:
                if any(var in _cond_names(i) for i in idx):
                    return True
        if isinstance(x, A.Node):
            for f in x.__dataclass_fields__:
                v = getattr(x, f)
                if isinstance(v, A.Node):
                    stack.append(v)
                elif isinstance(v, tuple):
                    stack.extend(y for y in v if isinstance(y, A.Node))
    return False


def names_in(e: A.Expr) -> set[str]:
    """The variable names ``e`` reads."""
    return _cond_names(e)


def same_expr(a: object, b: object) -> bool:
    """``a`` and ``b`` spell the same expression (source locations and types aside)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, A.Node):
        return all(
            same_expr(getattr(a, f), getattr(b, f))
            for f in a.__dataclass_fields__
            if f not in ("loc", "ty")
        )
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same_expr(x, y) for x, y in zip(a, b))
    return a == b


def reads_target(assign: A.Assign) -> bool:
    """``t = f(..., t, ...)``: the assigned element is read by the value (an in-place update)."""
    stack: list[object] = [assign.value]
    while stack:
        x = stack.pop()
        if same_expr(x, assign.target):
            return True
        if isinstance(x, A.Node):
            for f in x.__dataclass_fields__:
                v = getattr(x, f)
                if isinstance(v, A.Node):
                    stack.append(v)
                elif isinstance(v, tuple):
                    stack.extend(y for y in v if isinstance(y, A.Node))
    return False


_WARP_EXCHANGES = ("__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync")


def shuffles_in(body: A.Stmt) -> bool:
    """``body`` calls a warp shuffle itself (``v += __shfl_down_sync(m, v, 32 >> k)``)."""
    from cuda2nki.lift.legacyshfl import LEGACY_SHUFFLES
    from cuda2nki.rewrite import nodes

    names = (*_WARP_EXCHANGES, *LEGACY_SHUFFLES)
    return any(isinstance(x, A.Call) and x.func in names for x in nodes(body))


def constant_bound(cond: A.Expr | None, var: str) -> bool:
    """``var < C`` (``<=``, ``>``, ``>=``, ``!=``, either side) with ``C`` an integer literal:
    with a constant start and step the loop's trips are known before it runs."""
    if not isinstance(cond, A.Binary) or cond.op not in ("<", "<=", ">", ">=", "!="):
        return False
    sides = (cond.left, cond.right)
    return any(
        isinstance(a, A.Name) and a.name == var and isinstance(b, A.IntLit)
        for a, b in (sides, sides[::-1])
    )
