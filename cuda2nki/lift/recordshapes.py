"""Extents of the member arrays of an array of structs (:mod:`cuda2nki.frontend.recordsplit`).

The member arrays of one struct array all have its record count: a member whose accesses do
not bound it (``boxes[b].nbr[k].id`` under a loop to ``boxes[b].count``, data the kernel reads)
takes the record count its siblings' accesses give, and a member holding ``c`` elements per
record (an array member, or a member of an array member of structs) is ``[records, c]``.
"""

from __future__ import annotations

from cuda2nki.frontend import ast as A


def member_shapes(fn: A.Function, shapes: dict) -> None:
    """Fill in ``shapes`` (parameter -> shape, None where unknown) for the member arrays of
    each struct array from the record count of their siblings."""
    groups: dict[str, list[A.Param]] = {}
    for p in fn.params:
        if p.record and p.record_at:
            groups.setdefault(p.record, []).append(p)
    for members in groups.values():
        rows = _records(members, shapes)
        if rows is None:
            continue
        for p in members:
            if shapes.get(p.name) is None:
                count = p.record_at[2]
                shapes[p.name] = [rows] if count == 1 else [rows, count]


def _records(members: list[A.Param], shapes: dict) -> object | None:
    """The record count: the extent of a one-element member bound by its accesses, or the
    outer extent of a several-element member bound as ``[records, count]``."""
    for p in members:
        got = shapes.get(p.name)
        if got is None:
            continue
        if p.record_at[2] == 1 and len(got) == 1:
            return got[0]
        if len(got) == 2 and str(got[1]) == str(p.record_at[2]):
            return got[0]
    return None
