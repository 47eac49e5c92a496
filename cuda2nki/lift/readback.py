"""Does a kernel read memory it writes?  Read from the kernel's syntax, for a pointer whose
loads symbolic execution did not record: a load into shared memory (``tile[i] = m[off + i]``
staged, then written back), a read through a local alias (``float* row = m + off;
... = row[j]``), a compound assignment (``m[k] -= s``).

Such a pointer written back after the read is ``inout``: its initial contents are an input.
"""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk
from cuda2nki.lift.readonly import _aliases, _base


def with_reads(fn: A.Function, name: str, acc: list) -> list:
    """``acc`` (access entries ``(kind, index, guard, loops)``) with a role-only read entry
    added when every recorded access writes but the kernel's syntax reads ``name``'s memory."""
    kinds = {a[0] for a in acc}
    if kinds != {"w"} or not reads_memory(fn, name):
        return acc
    return [*acc, ("r", None, None, ())]


def reads_memory(fn: A.Function, name: str) -> bool:
    """Whether an expression of the kernel loads from memory reached through ``name`` or a
    local pointer made from it; a plain ``=`` store's target is no load."""
    names = _alias_names(fn, name)
    stored = _store_places(fn)
    for n in walk(fn.body):
        if id(n) in stored or not _is_load(n):
            continue
        b = _base(n)
        if isinstance(b, A.Name) and b.name in names:
            return True
    return False


def _is_load(n: object) -> bool:
    return isinstance(n, A.Index) or (isinstance(n, A.Unary) and n.op == "*")


def _store_places(fn: A.Function) -> set[int]:
    """Ids of the nodes that make up the place a plain ``=`` assigns (``p[i]``, ``p[i].x``,
    ``*(p + i)``): written, not read.  A compound assignment reads its place, so it is kept."""
    out: set[int] = set()
    for n in walk(fn.body):
        if isinstance(n, A.Assign) and n.op == "=":
            e = n.target
            while isinstance(e, A.Index | A.Member | A.Cast | A.Unary):
                out.add(id(e))
                if isinstance(e, A.Index | A.Member):
                    e = e.base
                elif isinstance(e, A.Unary) and e.op == "*":
                    e = e.operand
                elif isinstance(e, A.Cast):
                    e = e.operand
                else:
                    break
    return out


def _alias_names(fn: A.Function, name: str) -> set[str]:
    """``name`` and the local pointers declared or assigned from an address into its memory
    (``float* row = m + off``, ``q = &m[k]``), transitively."""
    names = {name}
    changed = True
    while changed:
        changed = False
        for n in walk(fn.body):
            new = None
            if isinstance(n, A.VarDecl) and isinstance(n.ty, A.PointerType) and n.init is not None:
                if any(_aliases(n.init, x) for x in names):
                    new = n.name
            elif isinstance(n, A.Assign) and n.op == "=" and isinstance(n.target, A.Name):
                if isinstance(n.target.ty, A.PointerType) and any(
                    _aliases(n.value, x) for x in names
                ):
                    new = n.target.name
            if new is not None and new not in names:
                names.add(new)
                changed = True
    return names
