"""Extents of pointers indexed by loaded data, for the extent scan (:mod:`cuda2nki.lift.extents`).

Graph, sparse and lookup kernels index one array by values read from another: ``x[col[j]]``,
``val[j]`` under ``for (j = row_ptr[r]; j < row_ptr[r + 1]; j++)``, ``w[nd.first + k]``.  Nothing
in the source bounds such an offset: its extent is whatever the host's data makes it.  Sizes
never need the host's values, so the scan chooses them: every integer input the kernel only reads
and whose values reach an offset takes values in ``[0, DATA_VALUES)`` (``check`` draws them so),
and each array indexed through them gets the extent those values reach (``x`` of ``DATA_VALUES``
elements, ``val`` of one less: ``j < row_ptr[r + 1] <= DATA_VALUES - 1``).  The inputs' ranges
travel in the binding beside the shapes (:class:`DataRange`), so ``check`` can neither report a
false out-of-bounds access nor hide a real one.

How the scan models it (hooks in :class:`~cuda2nki.lift.extentscan._Scan`):

* a load ``P[e]`` of an integer pointer parameter is the atom ``@P``, unbounded in the first
  scan (offsets through it give no extent, as before) and bounded by ``DATA_VALUES`` in the
  second, which only runs for read-only pointers the first left without one;
* ``e & m`` with ``m`` a size expression is an atom below ``m + 1`` (``x & m <= m`` for any
  ``x >= 0``; a hash table's ``h & (cap - 1)``), whatever ``e`` is: no range is needed;
* a local assigned only such masked values (``slot = h & (cap - 1)`` and, in a probe loop,
  ``slot = (slot + 1) & (cap - 1)``, or ``% cap``) is an atom with that bound, though it changes
  in a loop.

Only arrays the kernel reads, or updates by atomic functions only (``atomicAdd(&y[col[j]], v)``,
whose result does not depend on the order of the threads), are sized so: a plain store through
a data index may have several threads write one element (a scatter), which no choice of values
makes deterministic.  An offset with a
negative term (``x[col[j] - 1]``) is left unsized: values from ``0`` would reach below it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk
from cuda2nki.lift import affine as af
from cuda2nki.lift.affine import Poly

if TYPE_CHECKING:
    from cuda2nki.diagnostics import Diagnostic, SourceLoc
    from cuda2nki.lift.extentaccess import Extent

#: the values a data input takes when nothing in the source bounds them: ``[0, DATA_VALUES)``
DATA_VALUES = 64

_DATA = "@"
_MASK = "&"


@dataclass(frozen=True)
class DataRange:
    """Integer input ``tensor`` takes values in ``[lo, hi)``; ``target`` is an array its values
    index."""

    tensor: str
    lo: int
    hi: int | str
    target: str


def data_pointers(fn: A.Function) -> set[str]:
    """Pointer parameters to integers: loads of them are data atoms."""
    out = set()
    for p in fn.params:
        if isinstance(p.ty, A.PointerType) and isinstance(p.ty.pointee, A.ScalarType):
            if not p.ty.pointee.is_float:
                out.add(p.name)
    return out


def data_atom(name: str) -> str:
    return f"{_DATA}{name}"


def data_name(atom: object) -> str | None:
    """The pointer a data atom loads from; None for another atom."""
    if isinstance(atom, str) and atom.startswith(_DATA):
        return atom[len(_DATA) :]
    return None


def loaded(e: A.Index, pointers: set[str]) -> Poly | None:
    """The data atom of ``P[e]`` for a data pointer ``P`` (through casts), else None."""
    base = e.base
    while isinstance(base, A.Cast):
        base = base.operand
    if isinstance(base, A.Name) and base.name in pointers:
        return Poly.atom(data_atom(base.name))
    return None


def mask_atom(value: Poly, mask: Poly, masks: dict[str, Poly]) -> Poly:
    """``value & mask`` for a size expression ``mask``: an atom below ``mask + 1``, recorded in
    ``masks`` (atom -> exclusive bound)."""
    atom = f"{_MASK}({value})&({mask})"
    masks[atom] = mask + 1
    return Poly.atom(atom)


def masked_locals(fn: A.Function) -> dict[str, A.Expr]:
    """Integer locals whose every assignment (its initialiser included) is ``e & m`` or
    ``e % m``: name -> the ``m`` of its first one.  The scan bounds such a local by ``m`` (by
    ``m + 1`` for a mask) when every ``m`` is the same size expression."""
    values: dict[str, list[A.Expr | None]] = {}
    for n in walk(fn.body):
        if isinstance(n, A.VarDecl) and isinstance(n.ty, A.ScalarType) and not n.ty.is_float:
            values.setdefault(n.name, []).append(n.init)
        elif isinstance(n, A.Assign) and isinstance(n.target, A.Name):
            values.setdefault(n.target.name, []).append(n.value if n.op == "=" else None)
        elif isinstance(n, A.Unary) and n.op in ("pre++", "pre--", "post++", "post--"):
            if isinstance(n.operand, A.Name):
                values.setdefault(n.operand.name, []).append(None)
    out = {}
    for name, vals in values.items():
        ops = [_reduced(v) for v in vals]
        if ops and all(o is not None for o in ops) and len({_key(o) for o in ops}) == 1:
            out[name] = ops[0]  # type: ignore[assignment]
    return out


def _reduced(v: A.Expr | None) -> A.Binary | None:
    while isinstance(v, A.Cast):
        v = v.operand
    if isinstance(v, A.Binary) and v.op in ("&", "%"):
        return v
    return None


def _key(b: A.Binary | None) -> tuple:
    from cuda2nki.frontend.dump import expr_text

    assert b is not None
    return (b.op, expr_text(b.right))


def local_bound(scan, op: A.Binary) -> Poly | None:
    """The exclusive bound of a local assigned only ``e & m`` / ``e % m`` values (see
    :func:`masked_locals`), when ``m`` is a size expression of ``scan``."""
    from cuda2nki.lift.extentaccess import _Opaque

    try:
        m = scan._poly(op.right)
    except (_Opaque, af.BudgetExceeded):
        return None
    if m.depends_on(scan._index_atoms(m)):
        return None
    return m + 1 if op.op == "&" else m


def data_extents(scan, first: dict[str, Extent]) -> dict[str, Extent]:
    """Extents for the read-only pointers ``first`` (the scan without data bounds) left
    unsized, with every read-only data input bounded by ``DATA_VALUES``: ``scan`` is a fresh
    scan of the same kernel, run here.  Each returned extent lists the inputs its offsets read
    values of (:attr:`Extent.ranges`)."""
    from dataclasses import replace

    unsized = [n for n, e in first.items() if e.shape is None and e.role != "out"]
    inputs = {n for n in scan.data if first.get(n) is not None and first[n].role == "in"}
    if not unsized or not inputs:
        return {}
    scan.data_hi = {data_atom(n): Poly.const(DATA_VALUES) for n in inputs}
    try:
        scan.run()
    except (af.BudgetExceeded, RecursionError):
        return {}
    out = {}
    for name in unsized:
        acc = [a for a in scan.accesses if a.ptr == name]
        scan.data_used = set()
        if not acc or any(not _non_negative(a.offset, scan) for a in acc):
            continue
        if first[name].role != "in" and any(_scatters(a, scan) for a in acc):
            continue  # a plain store through data: a scatter
        shape, note = scan._shape(acc)
        if shape is None:  # values standing where a counter does take its range
            shape, note = _with_peers(acc, scan)
        used = sorted(scan.data_used)
        if shape is None or not used:
            continue
        tops = {u: _text(scan.data_hi[data_atom(u)]) for u in used}
        ranges = tuple(DataRange(u, 0, tops[u], name) for u in used)
        by = ", ".join(f"'{u}'" for u in used)
        taken = ", ".join(f"[0, {t})" for t in dict.fromkeys(tops.values()))
        why = (
            f"its elements are picked by the values of {by}, which no size bounds: "
            f"those taken in {taken} (set the real shape and `range` under [params] "
            "if the kernel needs others)"
        )
        base = replace(first[name], shape=shape, note=f"{note}; {why}" if note else why)
        out[name] = replace(base, ranges=ranges)
    return out


def _with_peers(acc: list, scan) -> tuple[tuple | None, str | None]:
    """The shape of ``acc`` with each data value that stands where a counter stands taking the
    counter's range (:mod:`cuda2nki.lift.datapeers`); the scan keeps those ranges."""
    from cuda2nki.lift.datapeers import peer_bounds

    peers = peer_bounds(acc, scan)
    if not peers:
        return None, None
    scan.data_hi.update(peers)
    scan.data_used = set()
    return scan._shape(acc)


def _text(p: Poly) -> int | str:
    """A bound as the binding writes it: a number, or the text of a size expression."""
    return p.const_value if p.is_const else str(p)


def _scatters(a, scan) -> bool:
    """Whether access ``a`` is a plain store whose offset reads data (several threads may write
    one element); a store at an offset free of data (``y[row * P + i]`` beside a read
    ``y[row * P + label[row]]``) is no scatter."""
    if a.kind == "r" or a.atomic:
        return False
    return a.offset is None or any(_reads_data(x, scan) for x in scan._expand(a.offset).atoms())


def _non_negative(offset: Poly | None, scan) -> bool:
    """Whether every term of ``offset`` (its locals expanded) that reads data is added, and no
    constant is below zero: drawn values from zero then never index below the array."""
    if offset is None:
        return False
    full = scan._expand(offset)
    for m, c in full.terms:
        if not m and c < 0:
            return False
        if c < 0 and any(_reads_data(a, scan) for a in m):
            return False
    return True


def _reads_data(a: object, scan, depth: int = 0) -> bool:
    if data_name(a) is not None:
        return True
    if depth > 6:
        return False
    d = scan.defs.get(a) if isinstance(a, str) else None
    return d is not None and any(_reads_data(x, scan, depth + 1) for x in d.atoms())


def data_shapes(
    fn: A.Function, shapes: dict, syntax: dict[str, Extent], kernel: str, diags: list
) -> set[str]:
    """Fill each shape still unsized once allocations and declarations had their say from an
    extent of :func:`data_extents`, with a note; returns the pointers so sized."""
    from cuda2nki.lift.extentsyntax import in_scalars

    out = set()
    for name, ext in sorted(syntax.items()):
        if shapes.get(name) is not None or ext.shape is None or not ext.ranges:
            continue
        p = next(q for q in fn.params if q.name == name)
        shapes[name] = in_scalars(list(ext.shape), p.ty)
        out.add(name)
        diags.append(syntax_shape_note(name, ext, p.loc, kernel))
    return out


def syntax_shape_note(name: str, ext: Extent, loc: SourceLoc, kernel: str) -> Diagnostic:
    """The note (C2N2100) that ``name`` took its shape from its index expressions."""
    from cuda2nki.diagnostics import make

    return make(
        "C2N2100",
        loc,
        what=f"'{name}' shape {list(ext.shape or ())}",
        kernel=kernel,
        source=f"its index expressions, {ext.note}",
    )


def data_ranges(
    params: dict, syntax: dict, unsized: set[str], fn: A.Function, kernel: str, diags: list
) -> None:
    """Give each data input the range the shapes of :func:`data_shapes` assume, with a note;
    only for the shapes it filled (``unsized``) and inputs without a range already."""
    from cuda2nki.lift.valranges import IndexRange, record_range

    for name in sorted(unsized):
        ext = syntax.get(name)
        spec = params.get(name)
        if ext is None or not ext.ranges or not isinstance(spec, dict) or not spec.get("shape"):
            continue
        for r in ext.ranges:
            got = params.get(r.tensor)
            if not isinstance(got, dict) or "range" in got:
                continue
            loc = _first_access(fn, r.target) or fn.loc
            why = (
                f"its values pick the elements of '{r.target}' ({loc.file}:{loc.line}), "
                f"whose shape assumes them"
            )
            record_range(params, fn, IndexRange(r.tensor, r.lo, r.hi, r.target, loc), kernel,
                         why, diags)  # fmt: skip


def _first_access(fn: A.Function, name: str):
    """The location of the first ``name[...]`` in the kernel's body, None if none."""
    for n in walk(fn.body):
        if isinstance(n, A.Index):
            base = n.base
            while isinstance(base, A.Cast):
                base = base.operand
            if isinstance(base, A.Name) and base.name == name:
                return n.loc
    return None
