"""Tensor extents from the host's allocations: ``cudaMalloc(&p, n * sizeof(T))``.

A pointer whose accesses do not bound it (a gather table indexed by data) takes the element
count the host allocates for it, in the kernel's size parameters where the host passes them.
"""

from __future__ import annotations

import re

from cuda2nki.diagnostics import make
from cuda2nki.frontend import ast as A
from cuda2nki.lift.affine import Poly
from cuda2nki.lift.indexshape import poly_text
from cuda2nki.lift.symexec import dtype_of


def from_allocations(
    fn: A.Function,
    site: A.LaunchSite | None,
    shapes: dict,
    kernel: str,
    diags: list,
    host: dict | None = None,
    accesses: dict | None = None,
) -> dict[str, tuple[int | str, str]]:
    """A pointer whose accesses do not bound it (a gather table indexed by data), or bound it
    only through an offset (``A[k * N + j]`` with the row ``k`` a parameter: see
    :func:`_offset_extent`), takes the extent the host code allocates for it (see
    :mod:`cuda2nki.frontend.hostalloc`); a table read a row at a time is that many rows
    (:func:`table_rows`)."""
    from cuda2nki.lift.hostargs import arg_names, slots

    picks: dict[str, tuple[int | str, str]] = {}
    if site is None or site.host is None:
        return picks
    params = {p.name: p for p in fn.params}
    names = arg_names(fn, site)
    for slot in slots(fn, site):
        p, got = params[slot.param], slot.alloc(site.host)
        if got is None or not isinstance(p.ty, A.PointerType):
            continue
        if shapes.get(p.name) is not None and not _offset_extent(shapes[p.name], fn):
            continue
        count = _elements(got, fn, dtype_of(p.ty), names)
        if count is None:
            continue
        if not got.notes:  # a default (a size read at run time) equals others by chance
            count = _named_count(count, fn, host or {})
        rows = table_rows(count, (accesses or {}).get(p.name, []), fn)
        shapes[p.name] = rows[0] if rows else [count]
        for index in rows[1] if rows else ():
            picks[index] = (rows[0][0], p.name)
        where = "; ".join(got.evidence[:2])
        diags.append(
            make(
                "C2N2100",
                p.loc,
                what=f"'{p.name}' shape [{', '.join(map(str, shapes[p.name]))}]",
                kernel=kernel,
                source=f"its allocation ({where})",
            )
        )
    return picks


def table_rows(count: int | str, acc: list, fn: A.Function) -> tuple[list, set[str]] | None:
    """``[K, S]`` for an allocation of ``K * S`` elements whose offsets step by ``S`` per value
    read from memory (``wte[tok[i] * C + c]`` in ``V * C`` elements: ``V`` rows of ``C``):
    the rows a gather picks, which the check's index values then stay inside; with the
    parameters those values are read from."""
    import ast as pyast

    from cuda2nki.lift import affine as af
    from cuda2nki.lift.extentgeom import _py_poly

    scalars = {q.name for q in fn.params if not isinstance(q.ty, A.PointerType)}
    total = _py_poly(pyast.parse(str(count), mode="eval").body, scalars)
    if total is None:
        return None
    strides, loaded = set(), set()
    for _, index, _, _ in acc:
        for m, c in index.terms:
            data = [a for a in m if isinstance(a, af.OpaqueAtom)]
            if len(data) == 1:
                name = _loaded(data[0].payload)
                if name is not None:
                    loaded.add(name)
                rest = Poly.const(c)
                for a in m:
                    if a is not data[0]:
                        rest = rest * Poly.atom(a)
                strides.add(rest)
    if len(strides) != 1:
        return None
    (row,) = strides
    if row.is_const and row.const_value <= 1 or row.depends_on(af.THREAD_COORDS):
        return None
    rows = af._exact_div(total, row) if len(row.terms) == 1 else None
    if rows is None or rows == af.ONE:
        return None
    return [poly_text(rows), poly_text(row)], loaded


def _loaded(value: object) -> str | None:
    """The parameter a data value is a load of, through casts (``(int)ids[r]``)."""
    from cuda2nki.lift import values as V

    while isinstance(value, V.Op) and len(value.args) == 1:
        value = value.args[0]
    return value.tensor if isinstance(value, V.Load) else None


def _offset_extent(shape: list, fn: A.Function) -> bool:
    """A flat extent from the accesses that grows with a scalar parameter the kernel never
    bounds an index by (``k * 2048 + n`` from ``A[k * N + j]``, ``j > k``: the row the host
    loop passes is an offset into the buffer, not its size)."""
    if len(shape) != 1 or not isinstance(shape[0], str):
        return False
    scalars = {p.name for p in fn.params if not isinstance(p.ty, A.PointerType)}
    words = set(re.findall(r"[A-Za-z_]\w*", shape[0])) & scalars
    return any(not bounds_above(fn, w) for w in words)


def bounds_above(fn: A.Function, name: str) -> bool:
    """Whether ``name`` is in an upper bound of some comparison (``x < name``, ``name * d > x``,
    or an exit guard ``if (x >= name) return;``)."""
    from cuda2nki.frontend.visit import walk

    def named(e: object) -> bool:
        return any(isinstance(x, A.Name) and x.name == name for x in walk(e))

    for n in walk(fn.body):
        if isinstance(n, A.Binary):
            if n.op in ("<", "<=", "!=") and named(n.right):
                return True
            if n.op in (">", ">=", "!=") and named(n.left):
                return True
            if n.op in (">", ">=") and named(n.right) and not named(n.left):
                return True  # `if (i >= n) return;`: past it, i < n
    return False


def _named_count(count: int | str, fn: A.Function, host: dict) -> int | str:
    """A constant allocation (``cudaMalloc(&buf, SIZE)``) whose count the host also passes as
    the one size parameter the kernel compares with (``while (i < size)``) is that parameter:
    the extent follows the sizes check chooses, and a production size can be reduced."""
    if not isinstance(count, int):
        return count
    same = [n for n, h in host.items() if h.value == count and not h.notes and _compared(fn, n)]
    return same[0] if len(same) == 1 else count


def _compared(fn: A.Function, name: str) -> bool:
    from cuda2nki.frontend.visit import walk

    for n in walk(fn.body):
        if isinstance(n, A.Binary) and n.op in ("<", "<=", ">", ">=", "!="):
            for side in (n.left, n.right):
                inner = side.operand if isinstance(side, A.Cast) else side
                if isinstance(inner, A.Name) and inner.name == name:
                    return True
    return False


def _elements(got, fn: A.Function, dtype: str, names: tuple) -> str | int | None:
    """The element count of an allocation of ``got`` bytes (a HostExpr), in the kernel's size
    parameters, when the bytes are a whole number of ``dtype`` elements."""
    import ast as pyast

    import numpy as np

    from cuda2nki.dtypes import NUMPY_DTYPES
    from cuda2nki.lift.extentgeom import _py_poly
    from cuda2nki.lift.hostargs import resolve

    try:  # bf16 and fp8 are no NumPy names
        size = (NUMPY_DTYPES[dtype] if dtype in NUMPY_DTYPES else np.dtype(dtype)).itemsize
    except TypeError:
        return None
    if got.value is not None:
        n = int(got.value)
        return n // size if n > 0 and n % size == 0 else None
    text = resolve(got.text, names)
    scalars = {q.name for q in fn.params if not isinstance(q.ty, A.PointerType)}
    try:
        poly = _py_poly(pyast.parse(text or "", mode="eval").body, scalars)
    except SyntaxError:
        return None
    if poly is None or not poly.terms or any(c % size for _, c in poly.terms):
        return None
    count = Poly.from_dict({m: c // size for m, c in poly.terms})
    return poly_text(count)


def from_declarations(fn: A.Function, shapes: dict, kernel: str, diags: list) -> None:
    """A host-filled ``__constant__`` table made a parameter that its accesses do not bound (a
    lookup indexed by data) takes its declared extent; a texture made a parameter, the extents
    its fetches are addressed by."""
    for p in fn.params:
        if p.dims:
            shapes[p.name] = list(p.dims)
            what = f"'{p.name}' shape {list(p.dims)}"
            source = "its texture or surface accesses (the extents they address)"
            diags.append(make("C2N2100", p.loc, what=what, kernel=kernel, source=source))
            continue
        if p.extent is None or shapes.get(p.name) is not None:
            continue
        shapes[p.name] = [p.extent]
        what = f"'{p.name}' shape [{p.extent}]"
        source = (
            "its __device__ declaration (memory the kernels of the file share)"
            if p.symbol
            else "its type (a vector taken by value: its lanes)"
            if p.by_value
            else "its __constant__ declaration (the host fills it)"
        )
        diags.append(make("C2N2100", p.loc, what=what, kernel=kernel, source=source))
