"""Value ranges of integer inputs used as indices (``out[idx[i]]``, ``atomicAdd(&hist[bin], 1)``).

``check`` fills integer inputs with values in ``[0, 64)`` unless the binding gives a ``range``;
a tensor whose values index another array needs values inside that array's extent, else the
CUDA kernel itself reads or writes out of bounds on the generated inputs.  This module reads
the kernel: each load of an integer pointer parameter ``P`` that reaches the index of an array
``Q`` through casts, locals and constant shifts (``Q[P[i] - 1]``) bounds ``P``'s values by
``Q``'s extent.  An index that is reduced first (``% n``, ``& mask``, ``min``) needs no range.
A float input converted to an integer index (``int a = pos[i] - 1; y[i] = x[a];``) is bounded
the same way (floats drawn uniformly in the range truncate into it).  An integer input that
divides (``a[i] / d[i]``, ``v %= d[i] - 2``) gets a range that keeps the divisor from zero:
integer division by zero is undefined in CUDA, so such inputs would test nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass

from cuda2nki.diagnostics import SourceLoc
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk
from cuda2nki.lift.rowindex import row_count, row_split
from cuda2nki.lift.sharedindex import staged_index_arrays

_MAX_DEPTH = 8


@dataclass(frozen=True)
class IndexRange:
    """Values of ``tensor`` that index ``target``: ``[lo, hi)``, with the access's location."""

    tensor: str
    lo: int | str
    hi: int | str
    target: str
    loc: SourceLoc
    #: further arrays the values index, whose extents the range also keeps to
    others: tuple[str, ...] = ()


def index_ranges(
    fn: A.Function,
    extents: Mapping[str, int | str],
    int_params: set[str],
    no_rows: Set[str] = frozenset(),
) -> list[IndexRange]:
    """The ranges the kernel's indexing asks of each parameter in ``int_params``; ``extents``:
    the flat element count of each array an index may address (parameters and local arrays);
    ``no_rows``: arrays whose row count is a default, which bound no row index.  A shared
    array holding values of one parameter only reads as that parameter (lift.sharedindex)."""
    locals_ = _local_values(fn)
    staged = staged_index_arrays(fn, int_params)
    got: dict[str, IndexRange] = {}
    for node in walk(fn.body):
        addressed = _addressed(node, extents)
        if addressed is None:
            continue
        target, index = addressed
        for tensor, steps in _loads(index, locals_, int_params | set(staged), (), 0):
            tensor = staged.get(tensor, tensor)
            if tensor == target or (target in no_rows and any(k == "row" for k, _ in steps)):
                continue
            rng = _range(extents[target], steps)
            if rng is None:
                continue
            old = got.get(tensor)
            if old is None or _narrower(rng, (old.lo, old.hi)):
                got[tensor] = IndexRange(tensor, rng[0], rng[1], target, node.loc)
            elif _both_symbolic(rng, old) and target != old.target and target not in old.others:
                got[tensor] = _smallest(old, rng, target)
    return list(got.values())


def _addressed(node: object, extents: Mapping[str, int | str]) -> tuple[str, A.Expr] | None:
    """(array, index) of an element ``node`` addresses: ``Q[e]``, or ``Q + e`` with ``Q`` an
    array (``atomicAdd(hist + bin[i], 1)``); None for another node."""
    if isinstance(node, A.Index):
        target = _array_name(node.base)
        return (target, node.index) if target is not None and target in extents else None
    if isinstance(node, A.Binary) and node.op == "+":
        for ptr, index in ((node.left, node.right), (node.right, node.left)):
            if isinstance(ptr, A.Name) and ptr.name in extents and _pointer_like(ptr):
                return (ptr.name, index)
    return None


def _pointer_like(e: A.Name) -> bool:
    return isinstance(getattr(e, "ty", None), (A.PointerType, A.ArrayType))


def _both_symbolic(new: tuple[int | str, int | str], old: IndexRange) -> bool:
    return isinstance(new[1], str) and isinstance(old.hi, str) and new[1] != old.hi


def _smallest(old: IndexRange, new: tuple[int | str, int | str], target: str) -> IndexRange:
    """The values that index ``old.target`` and ``target`` in bounds: the larger lower end and
    the smaller upper one (``perm`` scattering into ``y[m]`` and ``z[q]``: ``[0, min(m, q))``)."""
    lo = max(old.lo, new[0]) if isinstance(old.lo, int) and isinstance(new[0], int) else old.lo
    hi = f"min({old.hi}, {new[1]})"
    return IndexRange(old.tensor, lo, hi, old.target, old.loc, (*old.others, target))


def _array_name(base: A.Expr) -> str | None:
    while isinstance(base, A.Cast):
        base = base.operand
    return base.name if isinstance(base, A.Name) else None


def _local_values(fn: A.Function) -> dict[str, list[A.Expr]]:
    """Every value each local is initialised or assigned with (``=`` only)."""
    out: dict[str, list[A.Expr]] = {}
    for node in walk(fn.body):
        if isinstance(node, A.VarDecl) and node.init is not None:
            out.setdefault(node.name, []).append(node.init)
        elif isinstance(node, A.Assign) and isinstance(node.target, A.Name):
            if node.op == "=":
                out.setdefault(node.target.name, []).append(node.value)
            else:  # `bin += ...`: no longer the loaded value
                out.setdefault(node.target.name, []).append(node)
    return out


#: how an index is made of a loaded value, outermost step first: ``("add", c)`` adds the
#: constant ``c``, ``("div", d)`` divides by the positive constant ``d`` (``/ d``, ``>> log2 d``),
#: ``("row", C)`` multiplies by a row length ``C`` and adds a column (:mod:`cuda2nki.lift.rowindex`)
Steps = tuple[tuple[str, int | str], ...]


def _loads(
    e: A.Expr, locals_: Mapping[str, list[A.Expr]], params: set[str], steps: Steps, depth: int
) -> list[tuple[str, Steps]]:
    """(parameter, steps from its value to the index) for each load of a parameter in
    ``params`` that is the index's value up to casts, locals, constant shifts and divisions by
    a positive constant (``bins[(c[i] - 'a') / 4]``)."""
    if depth > _MAX_DEPTH:
        return []
    while isinstance(e, A.Cast) and isinstance(e.to, A.ScalarType):
        e = e.operand
    if isinstance(e, A.Index):
        name = _array_name(e.base)
        return [(name, steps)] if name in params else []
    if isinstance(e, A.Unary) and e.op == "*":  # `*(idx + i)`
        inner = e.operand
        if isinstance(inner, A.Binary) and inner.op == "+":
            for side in (inner.left, inner.right):
                name = _array_name(side)
                if name in params:
                    return [(name, steps)]
        return []
    row = row_split(e, lambda x: _mentions_load(x, locals_, params, depth + 1))
    if row is not None:  # `idx[i] * C + c`: a row of C elements (lift.rowindex)
        return _loads(row[0], locals_, params, (*steps, ("row", row[1])), depth + 1)
    if isinstance(e, A.Binary) and e.op in ("+", "-"):
        for var, const in ((e.left, e.right), (e.right, e.left)):
            if isinstance(const, A.IntLit) and (e.op == "+" or var is e.left):
                step = const.value if e.op == "+" else -const.value
                return _loads(var, locals_, params, (*steps, ("add", step)), depth + 1)
        return []
    divisor = _const_divisor(e)
    if divisor is not None and isinstance(e, A.Binary):
        return _loads(e.left, locals_, params, (*steps, ("div", divisor)), depth + 1)
    if isinstance(e, A.Name) and e.name in locals_:
        values = locals_[e.name]
        if len(values) != 1 or isinstance(values[0], A.Assign):
            return []  # reassigned: the value at the index is not one load
        return _loads(values[0], locals_, params, steps, depth + 1)
    return []


def _mentions_load(
    e: A.Expr, locals_: Mapping[str, list[A.Expr]], params: set[str], depth: int
) -> bool:
    """Whether ``e`` reads a parameter in ``params``, directly or through a local's values."""
    carriers = _loaded_locals(locals_, params)
    return any(_reads(n, params, carriers) for n in walk(e))


def _loaded_locals(locals_: Mapping[str, list[A.Expr]], params: set[str]) -> set[str]:
    """The locals some value of which reads a parameter in ``params`` (through other locals
    too): a fixpoint over the locals' values, linear in their size per round."""
    out: set[str] = set()
    while True:
        more = {
            name
            for name, values in locals_.items()
            if name not in out and any(_reads(n, params, out) for v in values for n in walk(v))
        }
        if not more:
            return out
        out |= more


def _reads(n: object, params: set[str], carriers: set[str]) -> bool:
    if isinstance(n, A.Index) and _array_name(n.base) in params:
        return True
    return isinstance(n, A.Name) and (n.name in params or n.name in carriers)  # `*(idx + i)`


def _const_divisor(e: A.Expr) -> int | None:
    """``d`` of ``x / d`` or ``x >> k`` (``d = 2**k``) with a positive constant ``d``."""
    if not isinstance(e, A.Binary) or not isinstance(e.right, A.IntLit):
        return None
    if e.op == "/" and e.right.value > 0:
        return e.right.value
    if e.op == ">>" and 0 <= e.right.value < 31:
        return 1 << e.right.value
    return None


def _shift(steps: Steps) -> int | None:
    """The constant the steps add, None where they divide."""
    if any(kind != "add" for kind, _ in steps):
        return None
    return sum(c for _, c in steps)


def _range(extent: int | str, steps: Steps) -> tuple[int | str, int | str] | None:
    """``Q[f(v)]`` in bounds, ``f`` made of ``steps``: ``v`` in ``[lo, hi)`` (never below 0).
    A division's values are taken from its non-negative side (``(v + s) / d`` in ``[0, E)``:
    ``v + s`` in ``[0, E * d)``), which C's truncation keeps in bounds.  A row step
    (``v * C + col``) takes the row count ``E / C``; None where ``C`` does not divide ``E``."""
    lo: int = 0
    hi: int | str = extent
    pending = 0  # constants added since the last division, folded into one term

    def settle(hi: int | str, shift: int) -> int | str:
        if isinstance(hi, int) or not shift:
            return hi - shift if isinstance(hi, int) else hi
        return f"({hi}) + {-shift}" if shift < 0 else f"({hi}) - {shift}"

    for kind, c in steps:
        if kind == "row":
            rows = row_count(hi, c) if lo == 0 and not pending else None
            if rows is None:
                return None
            hi = rows
            continue
        if kind == "add":
            lo -= c
            pending += c
            continue
        hi = settle(hi, pending)
        pending = 0
        lo *= c
        hi = hi * c if isinstance(hi, int) else f"({hi}) * {c}"
    return max(lo, 0), settle(hi, pending)


def _narrower(new: tuple[int | str, int | str], old: tuple[int | str, int | str]) -> bool:
    if isinstance(new[1], int) and isinstance(old[1], int):
        return new[1] - new[0] < old[1] - old[0]  # type: ignore[operator]
    return isinstance(new[1], int) and not isinstance(old[1], int)


def local_extents(fn: A.Function) -> dict[str, int]:
    """Element counts of the kernel's fixed-size local and shared arrays."""
    out: dict[str, int] = {}
    for node in walk(fn.body):
        if isinstance(node, A.VarDecl) and isinstance(node.ty, A.ArrayType):
            dims = node.ty.dims
            if dims and all(isinstance(d, int) for d in dims):
                n = 1
                for d in dims:
                    n *= d  # type: ignore[operator]
                out[node.name] = n
    return out


#: integer inputs are drawn from ``[0, 64)`` when the binding gives no range
_DEFAULT_HI = 64


@dataclass(frozen=True)
class DivisorRange:
    """Values of ``tensor`` that divide (``/``, ``%``): ``[lo, hi)`` keeps the divisor, the
    loaded value plus a constant shift, away from zero; ``loc`` is the division."""

    tensor: str
    lo: int
    hi: int | str
    loc: SourceLoc


def divisor_ranges(
    fn: A.Function, int_params: set[str], known: Mapping[str, tuple[int | str, int | str]]
) -> list[DivisorRange]:
    """The ranges that keep each integer divisor loaded from a parameter in ``int_params`` away
    from zero: integer division by zero is undefined in CUDA (the interpreter stops on it), so
    inputs that make it happen test nothing.  ``known``: ranges the parameters already have (an
    index range stays, its lower end raised); a divisor that cannot reach zero needs nothing."""
    locals_ = _local_values(fn)
    got: dict[str, DivisorRange] = {}
    for node in walk(fn.body):
        divisor = _divisor(node)
        if divisor is None:
            continue
        for tensor, steps in _loads(divisor, locals_, int_params, (), 0):
            shift = _shift(steps)
            if shift is None:  # a divisor divided first: its range is not kept from zero here
                continue
            lo, hi = known.get(tensor, (0, _DEFAULT_HI))
            need = 1 - shift  # tensor + shift >= 1
            if not isinstance(lo, int) or lo >= need:
                continue
            if isinstance(hi, int) and hi <= need:
                continue  # every value is negative after the shift: never zero
            old = got.get(tensor)
            if old is None or need > old.lo:
                got[tensor] = DivisorRange(tensor, need, hi, node.loc)
    return list(got.values())


def _divisor(node: object) -> A.Expr | None:
    if isinstance(node, A.Binary) and node.op in ("/", "%"):
        return node.right
    if isinstance(node, A.Assign) and node.op in ("/=", "%="):
        return node.value
    return None


def float_inputs(params: dict) -> set[str]:
    """Float inputs without a range: one whose value, converted to an integer, indexes an
    array (``int a = pos[i] - 1; out[i] = in[a];``) needs values inside that array too."""
    return {
        name
        for name, spec in params.items()
        if isinstance(spec, dict)
        and spec.get("role") in ("in", "inout")
        and str(spec.get("dtype", "")).startswith(("float", "bfloat", "half"))
        and "range" not in spec
        and "distribution" not in spec
    }


def add_divisor_ranges(
    params: dict, fn: A.Function, ints: set[str], kernel: str, diags: list
) -> None:
    """Integer inputs that divide get values that are never zero
    (:func:`cuda2nki.lift.valranges.divisor_ranges`), with a note."""

    known = {n: tuple(params[n]["range"]) for n in ints if "range" in params[n]}
    for r in divisor_ranges(fn, ints, known):
        why = f"its use as a divisor ({r.loc.file}:{r.loc.line}): never zero"
        record_range(params, fn, r, kernel, why, diags)


def record_range(
    params: dict,
    fn: A.Function,
    r: IndexRange | DivisorRange,
    kernel: str,
    source: str,
    diags: list,
) -> None:
    """Give input ``r.tensor`` the values ``[r.lo, r.hi)`` and say why (a C2N2100 note at the
    parameter, ``source`` naming the use that asks for it)."""
    from cuda2nki.diagnostics import make

    params[r.tensor]["range"] = [r.lo, r.hi]
    p = next(q for q in fn.params if q.name == r.tensor)
    what = f"'{r.tensor}' values in [{r.lo}, {r.hi})"
    diags.append(make("C2N2100", p.loc, what=what, kernel=kernel, source=source))


def row_extents(fn: A.Function, extents: Mapping[str, int | str]) -> dict[str, str]:
    """Row lengths of local pointers into a parameter's rows: ``p_row = p + b * T * V + t * V``
    (every term of the offset a multiple of the size parameter ``V``) addresses a row of ``V``
    elements, so an index of ``p_row`` read from data stays inside ``[0, V)``.  Keyed by the
    local's name; a pointer assigned more than once, or whose offset has no common size factor,
    is left out."""
    sizes = {p.name for p in fn.params if not isinstance(p.ty, (A.PointerType, A.ArrayType))}
    locals_ = _local_values(fn)
    out: dict[str, str] = {}
    for node in walk(fn.body):
        if not (isinstance(node, A.VarDecl) and isinstance(node.ty, A.PointerType)):
            continue
        values = locals_.get(node.name, [])
        if node.name in extents or len(values) != 1 or node.init is None:
            continue
        terms = _terms(node.init)
        bases = [t for t in terms if _array_name(t) in extents]
        if len(bases) != 1 or len(terms) < 2:
            continue
        row = _common_factor([t for t in terms if t is not bases[0]], sizes)
        if row:
            out[node.name] = " * ".join(row)
    return out


def _common_factor(offsets: list[A.Expr], sizes: set[str]) -> list[str]:
    """The size parameters that multiply every term (in the first term's order)."""
    terms = [_factors(t) for t in offsets]
    common = [f for f in terms[0] if f in sizes]
    for t in terms[1:]:
        rest = list(t)
        keep = []
        for f in common:
            if f in rest:
                rest.remove(f)
                keep.append(f)
        common = keep
    return common


def _terms(e: A.Expr) -> list[A.Expr]:
    while isinstance(e, A.Cast):
        e = e.operand
    if isinstance(e, A.Binary) and e.op == "+":
        return _terms(e.left) + _terms(e.right)
    return [e]


def _factors(e: A.Expr) -> list[str]:
    """Names multiplied in ``e`` (``b * T * V``: b, T, V); a non-name factor is left out."""
    while isinstance(e, A.Cast):
        e = e.operand
    if isinstance(e, A.Binary) and e.op == "*":
        return _factors(e.left) + _factors(e.right)
    return [e.name] if isinstance(e, A.Name) else []
