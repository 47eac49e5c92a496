"""Gather tables no allocation sizes: ``table[ids[i] * D + d]`` where ``ids`` is data.

The rows a gather picks are bounded only by the values of its index data, and where the tree
allocates the table nowhere the source can follow (a parameter block carved into tensors, a
launcher no file calls), nothing gives their count.  Such a table is read a row of ``D``
elements at a time: it gets a default number of rows, ``[ROWS, D]``, with a note saying so, and
the integer inputs its rows are picked by take values among those rows (the picks of
:func:`cuda2nki.lift.allocshape.from_allocations`), so the check reads inside the table.

Only tables the kernel reads are sized so: a store through a data index (a scatter) may have
several threads write one element, which no default makes deterministic.
"""

from __future__ import annotations

from cuda2nki.diagnostics import make
from cuda2nki.frontend import ast as A
from cuda2nki.lift import affine as af
from cuda2nki.lift.affine import Poly
from cuda2nki.lift.dataindex import data_pointers
from cuda2nki.lift.indexshape import _shape, poly_text

#: the rows a gather table gets when nothing in the source counts them
DEFAULT_ROWS = 64


def default_rows(
    fn: A.Function, shapes: dict, accesses: dict, block, kernel: str, diags: list
) -> dict[str, tuple[int, str]]:
    """Fill the shape of each read-only pointer still unsized whose offsets are one data value
    times a row width plus an offset inside the row; returns the picks (index input -> rows,
    table) for the ranges of the index inputs."""
    picks: dict[str, tuple[int, str]] = {}
    ints = data_pointers(fn)  # index data whose values the check can choose
    for p in fn.params:
        acc = accesses.get(p.name) or []
        if not isinstance(p.ty, A.PointerType) or shapes.get(p.name) is not None or not acc:
            continue
        if any(kind != "r" for kind, *_ in acc):
            continue
        got = _row_width(acc, block)
        if got is None:
            continue
        width, loaded = got
        if not loaded or not loaded <= ints:
            continue  # the rows are picked by values the check cannot keep inside the table
        shapes[p.name] = [DEFAULT_ROWS] if width == 1 else [DEFAULT_ROWS, width]
        for name in loaded:
            picks[name] = (DEFAULT_ROWS, p.name)
        by = ", ".join(f"'{n}'" for n in sorted(loaded))
        diags.append(
            make(
                "C2N2100",
                p.loc,
                what=f"'{p.name}' shape {shapes[p.name]}",
                kernel=kernel,
                source=f"a default: its rows are picked by the values of {by} and no "
                f"allocation in the tree counts them; {DEFAULT_ROWS} rows taken (set the real "
                f"shape under [params] if the kernel needs more)",
            )
        )
    return picks


def rows_of_ranges(
    params: dict, picks: dict[str, tuple[int, str]], fn: A.Function, kernel: str, diags: list
) -> None:
    """A default-sized table whose rows are picked by an input that already has a range (its
    values index another array too, sized by the source: ``listVol[list[b]]`` beside
    ``con[list[b] * 64 + t]``) takes that many rows, so every value the check gives it picks a
    row of the table."""
    for name, (rows, table) in picks.items():
        rng = (params.get(name) or {}).get("range") if isinstance(params.get(name), dict) else None
        spec = params.get(table)
        if not rng or not isinstance(spec, dict) or not spec.get("shape"):
            continue
        lo, hi = rng[0], rng[1]
        if lo != 0 or hi == rows or spec["shape"][0] != rows:
            continue
        spec["shape"] = [hi, *spec["shape"][1:]]
        p = next(q for q in fn.params if q.name == table)
        diags.append(
            make(
                "C2N2100",
                p.loc,
                what=f"'{table}' shape {spec['shape']}",
                kernel=kernel,
                source=f"the range of '{name}', whose values pick its rows: [0, {hi})",
            )
        )


def _row_width(acc: list, block) -> tuple[int | str, set[str]] | None:
    """The row width ``D`` that every offset steps by per data value, when the rest of each
    offset stays inside one row (its extent is ``D``); with the parameters the data values
    are loads of.  None when the offsets are of another form."""
    from cuda2nki.lift.allocshape import _loaded

    widths: set[Poly] = set()
    loaded: set[str] = set()
    rests = []
    for kind, index, guard, loops in acc:
        data_terms, rest = [], Poly.const(0)
        for m, c in index.terms:
            data = [a for a in m if isinstance(a, af.OpaqueAtom)]
            term = Poly.from_dict({m: c})
            if not data:
                rest = rest + term
                continue
            if len(data) != 1:
                return None
            name = _loaded(data[0].payload)
            if name is None:
                return None
            loaded.add(name)
            data_terms.append((data[0], m, c))
        if not data_terms:
            return None
        for atom, m, c in data_terms:
            width = Poly.const(c)
            for a in m:
                if a is not atom:
                    width = width * Poly.atom(a)
            widths.add(width)
        rests.append((kind, rest, guard, loops))
    if len(widths) != 1:
        return None
    (width,) = widths
    if width.depends_on(af.THREAD_COORDS) or (width.is_const and width.const_value < 1):
        return None
    if not all(_inside_row(r, width, block) for r in rests):
        return None
    return poly_text(width), loaded


def _inside_row(access: tuple, width: Poly, block) -> bool:
    """Whether the offset without its data terms spans at most one row: zero for a row width of
    one, else an extent (from guards and loop bounds) equal to the width."""
    kind, rest, guard, loops = access
    if width.is_const and width.const_value == 1:
        return rest == Poly.const(0)
    if rest == Poly.const(0) or af._in_range_below(rest, width):  # `i % D`, `threadIdx.x`
        return True
    top = _thread_top(rest, block)
    if top is not None and width.is_const:  # a part of the row (`t` and `32 + t` of 64)
        return top < width.const_value
    shape = _shape([(kind, rest, guard, loops)], block, {})
    if shape is None or len(shape) != 1:
        return False
    return str(shape[0]).replace(" ", "") == str(poly_text(width)).replace(" ", "")


def _thread_top(rest: Poly, block) -> int | None:
    """The largest value of an offset that is a constant plus non-negative multiples of thread
    coordinates (of a known block), None for another form."""
    if block is None:
        return None
    top = 0
    for m, c in rest.terms:
        if not m:
            top += c
            continue
        if len(m) != 1 or m[0] not in af.THREAD or c < 0:
            return None
        top += c * (int(block[af.THREAD.index(m[0])]) - 1)
    return top if top >= 0 and all(c >= 0 for m, c in rest.terms if not m) else None
