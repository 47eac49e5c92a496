"""Arrays reached both data-free and at a loaded value: ``y[r] = s + x[r]`` beside ``x[ci[j]]``,
``h[v] = 0.5f * h[nbr[v]]`` in a CSR loop.  For the extent scan (:mod:`cuda2nki.lift.extents`).

The data-free accesses bound the array (``x`` of ``m`` elements under ``r < m``); nothing bounds
the loaded value, whose range the binding chooses.  The array then takes the data-free extent
and each index input read at a bare value (``x[ci[j]]``, ``int c = ci[j]; x[c]``) takes the range
``[0, extent)``: every access of the CUDA kernel stays inside the array, and no value the host
could pass inside the array is left out.  An access at a value with other terms (``x[ci[j] - 1]``,
``x[ci[j] + k]``) leaves the array unsized, as before.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from cuda2nki.lift import affine as af
from cuda2nki.lift.dataindex import DataRange, _reads_data, data_name

if TYPE_CHECKING:
    from cuda2nki.lift.extentaccess import Extent


def tied_extents(scan, first: dict[str, Extent]) -> dict[str, Extent]:
    """Extents for the pointers ``first`` (the ``scan`` just run) left unsized that are read at
    bare loaded values and accessed data-free elsewhere; each lists the inputs it ties
    (:attr:`Extent.ranges`)."""
    out = {}
    for name, ext in first.items():
        if ext.shape is not None or ext.role not in ("in", "inout"):
            continue
        split = _split(scan, [a for a in scan.accesses if a.ptr == name])
        if split is None:
            continue
        free, inputs = split
        if any(first.get(u) is None or first[u].role != "in" for u in inputs):
            continue  # index data the kernel writes: its values are not the host's
        try:
            shape, note = scan._shape(free)
        except af.BudgetExceeded:
            continue
        if shape is None or any(d in inputs for d in _names(shape)):
            continue
        hi = _flat(shape)
        by = ", ".join(f"'{u}'" for u in inputs)
        why = (
            f"its data-free accesses bound it; the values of {by} that pick its elements are "
            f"taken in [0, {hi})"
        )
        out[name] = replace(
            ext,
            shape=shape,
            note=f"{note}; {why}" if note else why,
            ranges=tuple(DataRange(u, 0, hi, name) for u in inputs),  # type: ignore[arg-type]
        )
    return out


def _split(scan, acc: list) -> tuple[list, list[str]] | None:
    """(the data-free accesses, the inputs read at bare values), or None where an access is
    unknown or reads data otherwise, or either kind is missing."""
    free, inputs = [], set()
    for a in acc:
        if a.offset is None:
            return None
        full = scan._expand(a.offset)
        if not any(_reads_data(x, scan) for x in full.atoms()):
            free.append(a)
            continue
        bare = _bare(full)
        if bare is None:
            return None
        inputs.add(bare)
    if not free or not inputs:
        return None
    return free, sorted(inputs)


def _bare(p) -> str | None:  # noqa: ANN001 - an affine Poly
    """The input of an offset that is one loaded value and nothing else."""
    if len(p.terms) != 1:
        return None
    ((mono, coef),) = p.terms
    if coef != 1 or len(mono) != 1:
        return None
    return data_name(mono[0])


def _flat(shape: tuple) -> int | str:
    if all(isinstance(d, int) for d in shape):
        n = 1
        for d in shape:
            n *= d
        return n
    if len(shape) == 1:
        return str(shape[0])
    return " * ".join(f"({d})" for d in shape)


def _names(shape: tuple) -> set[str]:
    import re

    return {w for d in shape for w in re.findall(r"[A-Za-z_]\w*", str(d))}
