"""Index data staged through shared memory: ``s_idx[t] = idx[g]; __syncthreads(); out[s_idx[j]]``.

A block often copies a slice of an index array into shared memory and reads the values back at
other lanes (a gather by a shared list of neighbours, a block-wide permutation).  The value read
back is still a value of the index array: a shared array whose every write stores a load of one
integer pointer parameter ``P`` (directly, through casts, or through a local holding only such
loads) reads back values of ``P``.  The extent scan (:mod:`cuda2nki.lift.dataindex`) and the
value ranges (:mod:`cuda2nki.lift.valranges`) then treat ``s_idx[j]`` as they treat ``P[e]``.

The array must be an integer ``__shared__`` array of the kernel that is used only by indexing
it: written by plain ``=`` and read; an array also written by ``+=``, ``++``, an atomic or
through a pointer (its address taken, or passed to a function) holds other values.
"""

from __future__ import annotations

from collections.abc import Iterable

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk

_SHARED = ("shared", "extern_shared")


def root_name(e: A.Expr) -> str | None:
    """The array name at the root of ``a[i]`` / ``a[i][j]`` (through casts), else None."""
    while isinstance(e, A.Index | A.Cast):
        e = e.base if isinstance(e, A.Index) else e.operand
    return e.name if isinstance(e, A.Name) else None


def staged_index_arrays(fn: A.Function, pointers: Iterable[str]) -> dict[str, str]:
    """Shared arrays of ``fn`` that hold values of one pointer of ``pointers`` only: array ->
    the pointer (see the module docstring)."""
    pointers = set(pointers)
    shared = _integer_shared(fn)
    if not shared or not pointers:
        return {}
    carriers = carrier_locals(fn, pointers)
    sources: dict[str, set[str | None]] = {n: set() for n in shared}
    for n in walk(fn.body):
        if isinstance(n, A.Assign) and (arr := _indexed(n.target)) in sources:
            source = _source(n.value, pointers, carriers) if n.op == "=" else None
            sources[arr].add(source)
        elif isinstance(n, A.Unary) and n.op != "*" and (arr := _indexed(n.operand)) in sources:
            sources[arr].add(None)  # `++s[i]`, `&s[i]`: written another way
    out = {}
    for arr, got in sources.items():
        if len(got) == 1 and None not in got and _only_indexed(fn, arr):
            out[arr] = next(iter(got))  # type: ignore[assignment]
    return out


def _integer_shared(fn: A.Function) -> set[str]:
    """Names of the kernel's integer shared arrays declared once."""
    seen: dict[str, int] = {}
    out = set()
    for n in walk(fn.body):
        if isinstance(n, A.VarDecl):
            seen[n.name] = seen.get(n.name, 0) + 1
            if n.storage in _SHARED and _integer_elements(n.ty):
                out.add(n.name)
    params = {p.name for p in fn.params}
    return {n for n in out if seen[n] == 1 and n not in params}


def _integer_elements(ty: A.CType) -> bool:
    while isinstance(ty, A.ArrayType | A.PointerType):
        ty = ty.elem if isinstance(ty, A.ArrayType) else ty.pointee
    return isinstance(ty, A.ScalarType) and not ty.is_float and ty.name != "bool"


def _indexed(e: A.Expr) -> str | None:
    return root_name(e) if isinstance(e, A.Index) else None


def _pointer_load(e: A.Expr, pointers: set[str]) -> str | None:
    """``P[e]`` (through casts) for a pointer ``P`` of ``pointers``: ``P``."""
    while isinstance(e, A.Cast):
        e = e.operand
    if isinstance(e, A.Index):
        base = e.base
        while isinstance(base, A.Cast):
            base = base.operand
        if isinstance(base, A.Name) and base.name in pointers:
            return base.name
    return None


def carrier_locals(fn: A.Function, pointers: set[str]) -> dict[str, str]:
    """Scalar locals every value of which (initialiser and ``=`` assignments; a declaration
    without one gives none) is a load of one pointer: local -> the pointer."""
    values: dict[str, set[str | None]] = {}
    for n in walk(fn.body):
        if isinstance(n, A.VarDecl) and isinstance(n.ty, A.ScalarType):
            got = _pointer_load(n.init, pointers) if n.init is not None else None
            values.setdefault(n.name, set()).update({got} if n.init is not None else set())
        elif isinstance(n, A.Assign) and isinstance(n.target, A.Name):
            got = _pointer_load(n.value, pointers) if n.op == "=" else None
            values.setdefault(n.target.name, set()).add(got)
        elif isinstance(n, A.Unary) and isinstance(n.operand, A.Name) and n.op != "*":
            values.setdefault(n.operand.name, set()).add(None)
    params = {p.name for p in fn.params}
    return {
        k: next(iter(v))  # type: ignore[misc]
        for k, v in values.items()
        if len(v) == 1 and None not in v and k not in params
    }


def _source(value: A.Expr, pointers: set[str], carriers: dict[str, str]) -> str | None:
    got = _pointer_load(value, pointers)
    if got is not None:
        return got
    while isinstance(value, A.Cast):
        value = value.operand
    return carriers.get(value.name) if isinstance(value, A.Name) else None


def _only_indexed(fn: A.Function, arr: str) -> bool:
    """Whether every mention of ``arr`` in the body is the root of an indexing."""
    names = sum(1 for n in walk(fn.body) if isinstance(n, A.Name) and n.name == arr)
    roots = sum(
        1
        for n in walk(fn.body)
        if isinstance(n, A.Index) and isinstance(n.base, A.Name) and n.base.name == arr
    )
    return names == roots
