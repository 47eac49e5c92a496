"""Why the index-expression scan left a pointer unsized, in words a user can act on: which
access, and what in its offset nothing bounds (a loop counter without a bound, a value loaded
from memory, a local the scan cannot follow, an address it cannot follow).

Used for the C2N2101 note of a missing shape (and the TODO ``cuda2nki bind`` writes from it).
"""

from __future__ import annotations

from cuda2nki.lift import affine as af
from cuda2nki.lift.dataindex import data_name
from cuda2nki.lift.extentshape import _bigger, _is_size


def unsized_reason(ext) -> str:
    """The words of a missing shape's note for the :class:`Extent` ``ext`` (None: not scanned)."""
    return getattr(ext, "missing", None) or "its offsets are not bounded by guards or loop bounds"


def why_unsized(scan, acc: list) -> str | None:
    """The reason the accesses ``acc`` of one pointer give no shape; None when they are none."""
    if not acc:
        return None
    tops = []
    for a in acc:
        where = _where(a)
        if a.offset is None:
            return f"the address{where} is not an index the scan can follow"
        guessed: set = set()
        top = scan._upper(af.canonical(a.offset, scan.block), dict(a.bounds), guessed)
        if top is None or top.depends_on(scan._index_atoms(top)):
            loose = _loose(scan, a)
            what = ", ".join(loose) if loose else "an index"
            return f"nothing bounds {what} in the offset {_offset(a.offset)}{where}"
        tops.append((top + a.width, where))
    first, at = tops[0]
    for ext, where in tops[1:]:
        if ext != first and _bigger(ext, first) is None:
            return (
                f"its accesses reach {_offset(first)}{at} and {_offset(ext)}{where}, "
                "which no relation between the sizes orders"
            )
    return None


def _where(a) -> str:
    loc = getattr(a, "loc", None)
    return f" (line {loc.line})" if loc is not None else ""


def _offset(p) -> str:
    """An offset in source words: counters and locals by name, a loaded value as ``x[...]``."""
    return "'" + p.text(_atom_text, " + ") + "'"


def _atom_text(atom: object) -> str:
    if not isinstance(atom, str):
        return f"({atom})"
    name = atom.rstrip("'")
    data = data_name(name)
    if data is not None:
        return f"{data}[...]"
    return name[1:] if name[:1] in "%?$" else name


def _loose(scan, a) -> list[str]:
    """The index atoms of ``a``'s offset (locals expanded) with no bound at the access."""
    bounds = dict(a.bounds)
    full = scan._expand(a.offset)
    out = []
    for atom in sorted(full.atoms(), key=str):
        if atom in bounds or _is_size(atom, scan.scalars) or atom in scan.masks:
            continue
        if isinstance(atom, str) and atom in scan.data_hi:
            continue
        text = _describe(atom)
        if text is not None and text not in out:
            out.append(text)
    return out


def _describe(atom: object) -> str | None:
    """An atom of the scan in words; None for one that is not a name (a quotient, say)."""
    if not isinstance(atom, str):
        return None
    name = atom.rstrip("'")
    data = data_name(name)
    if data is not None:
        return f"the values read from '{data}'"
    if name.startswith("%"):
        return f"the counter '{name[1:]}'"
    if name.startswith("?"):
        return f"the value of '{name[1:]}' (a computation the scan does not follow)"
    if name.startswith("$"):
        return f"the local '{name[1:]}'"
    return f"'{name}'"
