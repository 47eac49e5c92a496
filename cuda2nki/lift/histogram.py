"""Histograms counted by comparison, as scatter-adds.

A histogram privatised in shared memory (``atomicAdd(&local[key[i]], 1)`` per block, then
``atomicAdd(&hist[b], local[b])``) resolves, element by element, to a count of the keys equal to
the bin::

    hist[b] add= reduce(add, j, k, l: v where key(j, k, l) == index(b) && g) for b < B

which is the scatter-add ``hist[$(key)] add= v`` over the elements (each key in ``[0, B)`` matches
exactly one bin; the others none).  :func:`as_scatter` rewrites the first form into the second so
both spellings of a histogram reach the same lowering: the reduction axes become the element
domain (fused into one axis where they only occur as one mixed-radix combination, as a grid-stride
loop's block, thread and trip do), the comparison becomes the target's data index, and the other
conditions plus ``0 <= key < B`` the domain guard.  ``where c != 0`` around a reduction whose
value is ``c`` (``if (c != 0) atomicAdd(&hist[b], c)``) adds nothing and is dropped.
"""

from __future__ import annotations

from cuda2nki.ir import nodes as N
from cuda2nki.ir.ops import AxisKind, Op


def as_scatter(c: N.Compute) -> N.Compute | None:
    if c.accumulate is not Op.ADD or len(c.target.index) != 1 or len(c.domain.axes) != 1:
        return None
    (b,) = c.domain.axes
    if c.target.index[0] != N.Sym(b.name) or c.domain.guard is not None:
        return None
    axes: list[N.Axis] = []
    conds: list[N.Expr] = []
    value = _peel(c.expr, axes, conds)
    if value is None or not axes:
        return None
    key, rest = _key(conds, b.name)
    if key is None or b.name in _syms(value) or any(b.name in _syms(x) for x in rest):
        return None
    fused = _fuse(axes, (key, value, *rest))
    if fused is not None:
        axes, (key, value, *rest) = fused
    lo = N.Binary(Op.GE, key, N.Lit(0, "int32"), loc=c.loc)
    hi = N.Binary(Op.LT, key, N.IndexValue(b.extent), loc=c.loc)
    guard = None
    for x in (*rest, lo, hi):
        guard = x if guard is None else N.Binary(Op.LAND, guard, x, loc=c.loc)
    domain = N.Domain(tuple(N.Axis(a.name, a.extent) for a in axes), guard)
    target = N.Access(c.target.tensor, (N.Dyn(key),), loc=c.target.loc)
    return c.replace(target=target, domain=domain, expr=value)


def _peel(e: N.Expr, axes: list, conds: list) -> N.Expr | None:
    """Nested sums down to the value; their masks and zero-else selects into ``conds``."""
    while True:
        if isinstance(e, N.Reduce):
            if e.op is not Op.ADD:
                return None
            if e.where is not None and not _self_nonzero(e.where, e):
                conds.append(e.where)
            axes.extend(e.axes)
            e = e.body
        elif isinstance(e, N.Select) and _zero(e.b):
            conds.append(e.cond)
            e = e.a
        else:
            return e


def _self_nonzero(where: N.Expr, r: N.Reduce) -> bool:
    """``where c != 0`` on a sum of the ``c`` (the same reduction as its body): adding only
    non-zero terms adds the same.  ``c > 0`` too where ``c`` is a count (a sum of non-negative
    literals)."""
    if not (isinstance(where, N.Binary) and _zero(where.b) and where.a == r.body):
        return False
    return where.op is Op.NE or (where.op is Op.GT and _count(r.body))


def _count(e: N.Expr) -> bool:
    """A sum of non-negative literals (masked or selected against zero)."""
    if isinstance(e, N.Reduce):
        return e.op is Op.ADD and _count(e.body)
    if isinstance(e, N.Select):
        return _count(e.a) and _count(e.b)
    if isinstance(e, N.Cast):
        return _count(e.x)
    return isinstance(e, N.Lit) and e.value >= 0


def _zero(e: N.Expr) -> bool:
    return isinstance(e, N.Lit) and e.value == 0


def _key(conds: list, b: str):
    """The conjunct ``key == index(b)`` (either side), and the other conjuncts."""
    flat: list = []
    for x in conds:
        flat.extend(_conjuncts(x))
    for x in flat:
        if not (isinstance(x, N.Binary) and x.op is Op.EQ):
            continue
        for key, other in ((x.a, x.b), (x.b, x.a)):
            if other == N.IndexValue(N.Sym(b)) and b not in _syms(key):
                return key, [y for y in flat if y is not x]
    return None, flat


def _conjuncts(e: N.Expr) -> list:
    if isinstance(e, N.Binary) and e.op is Op.LAND:
        return _conjuncts(e.a) + _conjuncts(e.b)
    return [e]


def _syms(e) -> set[str]:
    out: set[str] = set()
    for n in _walk(e):
        if isinstance(n, N.SizeExpr) and not isinstance(n, N.Dyn):
            out |= n.free_syms()
    return out


def _walk(x):
    yield x
    if isinstance(x, tuple):
        for y in x:
            yield from _walk(y)
    elif hasattr(x, "__dataclass_fields__"):
        for f in x.__dataclass_fields__:
            if f != "loc":
                yield from _walk(getattr(x, f))


# --------------------------------------------------------------------------- axis fusion


def _linear(e: N.SizeExpr) -> dict | None:
    """``e`` as ``{sym: coeff, "": const}`` with integer coefficients, if it is linear."""
    if isinstance(e, N.Const):
        return {"": e.value}
    if isinstance(e, N.Sym):
        return {e.name: 1}
    if isinstance(e, (N.Add, N.Sub)):
        a, b = _linear(e.a), _linear(e.b)
        if a is None or b is None:
            return None
        sign = 1 if isinstance(e, N.Add) else -1
        out = dict(a)
        for k, v in b.items():
            out[k] = out.get(k, 0) + sign * v
        return out
    if isinstance(e, N.Mul):
        a, b = _linear(e.a), _linear(e.b)
        if a is None or b is None:
            return None
        for x, y in ((a, b), (b, a)):
            if set(x) <= {""}:
                return {k: x.get("", 0) * v for k, v in y.items()}
    return None


def _fuse(axes: list, exprs: tuple):
    """Axes that only occur as one mixed-radix combination ``sum c_a * a`` (coefficient 1 for
    the innermost, each next one the product of the extents inside it; only the outermost extent
    may be symbolic) become one axis; returns ``(axes, exprs)`` rewritten, or None."""
    if len(axes) < 2:
        return None
    names = {a.name for a in axes}
    combos = set()
    for n in _walk(exprs):
        if isinstance(n, N.SizeExpr) and not isinstance(n, N.Sym) and n.free_syms() & names:
            lin = _linear(n)
            if lin is None:
                continue  # a non-linear size around the combination: checked after rewriting
            part = tuple(sorted((k, v) for k, v in lin.items() if k in names))
            combos.add(part)
        elif isinstance(n, N.Sym) and n.name in names:
            combos.add(((n.name, 1),))
    full = [c for c in combos if {k for k, _ in c} == names]
    if len(full) != 1:
        return None
    coeff = dict(full[0])
    order = sorted(axes, key=lambda a: coeff[a.name])
    step = 1
    for k, a in enumerate(order):
        if coeff[a.name] != step:
            return None
        if k < len(order) - 1:
            if not isinstance(a.extent, N.Const):
                return None
            step *= a.extent.value
    fused = "e" if "e" not in names else "e_" + "_".join(sorted(names))
    extent = order[-1].extent * step
    out = tuple(_replace_combo(x, names, coeff, fused) for x in exprs)
    if any(names & _syms(x) for x in out):
        return None
    return [N.Axis(fused, extent, AxisKind.PARALLEL)], out


def _replace_combo(x, names: set, coeff: dict, fused: str):
    """Rewrite every maximal linear size expression that holds the full combination."""
    if isinstance(x, N.SizeExpr) and not isinstance(x, N.Dyn):
        lin = _linear(x)
        if lin is not None and {k: v for k, v in lin.items() if k in names} == coeff:
            rest = N.Const(lin.get("", 0))
            out: N.SizeExpr = N.Sym(fused)
            for k, v in lin.items():
                if k and k not in names:
                    out = N.Add(out, N.Mul(N.Const(v), N.Sym(k)) if v != 1 else N.Sym(k))
            return out if rest.value == 0 else N.Add(out, rest)
        return x
    if isinstance(x, tuple):
        return tuple(_replace_combo(y, names, coeff, fused) for y in x)
    if hasattr(x, "__dataclass_fields__") and not isinstance(x, N.SizeExpr):
        import dataclasses

        ch = {}
        for f in dataclasses.fields(x):
            if f.name == "loc":
                continue
            old = getattr(x, f.name)
            new = _replace_combo(old, names, coeff, fused)
            if new is not old:
                ch[f.name] = new
        return dataclasses.replace(x, **ch) if ch else x
    if isinstance(x, N.Dyn):
        return N.Dyn(_replace_combo(x.expr, names, coeff, fused))
    return x
