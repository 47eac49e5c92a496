"""``fuse-loops``: consecutive tile-loop sequences over the same ranges become one sequence.

Lowering compiles every intent statement on its own: a statement over ``i < n`` becomes a loop
over full tiles plus guard loops for the ragged tails, and the next statement over the same
domain repeats those loops, loading again what the first one loaded (AdamW's ``grads``, read by
the moment updates and by the parameter update).  Fusing the loops puts both bodies in one
iteration, where ``dedupe-loads`` then keeps a single load.

Before::  for t in range(T): A(t)   for u in range(1): A'    for s in range(T): B(s)   for w in range(1): B'
After::   for t in range(T): A(t); B(t)    for u in range(1): A'; B'

Parts are found by their headers: a run of loops (notes between them move in front) whose headers
(start, stop, step, kind) repeat with some period ``p`` is ``k`` parts of ``p`` loops each; loop
``j`` of every part becomes loop ``j`` of the fused sequence, the later parts' loop variables
renamed to the first part's.  Fusion moves statements of a later part before statements of an
earlier one, so it happens only when that cannot change a result:

* tiles allocated inside the fused loops have distinct names, and no later part mentions the
  first part's loop variable;
* where one part writes a tensor (HBM, or a tile allocated outside the loops) that another part
  accesses, the two views are provably disjoint (interleaved lanes: the same step, starts in
  different residue classes), or they are the identical view (after renaming) in the same loop of
  the sequence, moving with the loop variable (or the loop runs at most once), so iteration
  ``t`` of one part only meets iteration ``t`` of another.  A load of an
  input or ``inout`` tensor reads its kernel-entry value (the generated port stores an ``inout``
  to a separate output), so it never conflicts with a store.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from cuda2nki.ir.nodes import (
    Add,
    Alloc,
    At,
    Const,
    Kernel,
    Load,
    Loop,
    Min,
    Mul,
    Note,
    Param,
    SizeExpr,
    Slice,
    Store,
    Sub,
    Sym,
    View,
)
from cuda2nki.ir.ops import Role
from cuda2nki.passes._analysis import transform
from cuda2nki.passes.base import Pass, PassContext
from cuda2nki.passes.hoist_loads import _syms


@dataclass(frozen=True)
class FuseLoopsPass(Pass):
    name: ClassVar[str] = "fuse-loops"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        entry = {t.name for t in kernel.params if getattr(t, "role", None) in (Role.IN, Role.INOUT)}
        return kernel.replace(body=_block(kernel.body, frozenset(entry)))


def _block(stmts: tuple, entry: frozenset[str]) -> tuple:
    out: list = []
    run: list = []
    for s in stmts:
        if isinstance(s, Loop | Note):
            run.append(s)
            continue
        out.extend(_fuse_run(run, entry))
        run = []
        out.append(s)
    out.extend(_fuse_run(run, entry))
    return tuple(s.replace(body=_block(s.body, entry)) if isinstance(s, Loop) else s for s in out)


def _fuse_run(run: list, entry: frozenset[str]) -> list:
    """A run of loops and notes, with repeated loop sequences fused where legal."""
    out: list = []
    notes: list = []
    loops: list[tuple[list, Loop]] = []  # (notes before it, loop)
    for s in run:
        if isinstance(s, Note):
            notes.append(s)
        else:
            loops.append((notes, s))
            notes = []
    i = 0
    while i < len(loops):
        p, k = _group_at(loops, i, entry)
        if k < 2:
            out.extend(loops[i][0])
            out.append(loops[i][1])
            i += 1
            continue
        group = [[loops[i + q * p + j][1] for j in range(p)] for q in range(k)]
        for q in range(k):
            for j in range(p):
                out.extend(loops[i + q * p + j][0])
        out.extend(_fused(group))
        i += p * k
    out.extend(notes)
    return out


def _header(loop: Loop) -> tuple:
    return (loop.start, loop.stop, loop.step, loop.kind, loop.cond)


def _group_at(loops: list[tuple[list, Loop]], i: int, entry: frozenset[str]) -> tuple[int, int]:
    """The shortest period ``p`` and the most parts ``k >= 2`` fusable from loop ``i`` (``k < 2``:
    none)."""
    heads = [_header(lp) for _, lp in loops]
    for p in range(1, (len(loops) - i) // 2 + 1):
        k = 1
        while (
            i + (k + 1) * p <= len(loops) and heads[i + k * p : i + (k + 1) * p] == heads[i : i + p]
        ):
            parts = [[loops[i + q * p + j][1] for j in range(p)] for q in range(k + 1)]
            if not _legal(parts, entry):
                break
            k += 1
        if k >= 2:
            return p, k
    return 1, 1


def _fused(parts: list[list[Loop]]) -> list[Loop]:
    first = parts[0]
    out = []
    for j, loop in enumerate(first):
        body = list(loop.body)
        for part in parts[1:]:
            body.extend(_renamed(part[j], loop.var).body)
        out.append(loop.replace(body=tuple(body)))
    return out


def _renamed(loop: Loop, var: str) -> Loop:
    if loop.var == var:
        return loop
    old = loop.var

    def sub(x: Any) -> Any:  # the variable in indices and sizes, and as a scalar operand
        if isinstance(x, Sym | Param) and x.name == old:
            return x.replace(name=var)
        return x

    return loop.replace(var=var, body=transform(loop.body, sub))


# --------------------------------------------------------------------------- legality

Access = tuple[int, int, bool, View]  # (part, loop position, is a write, view after renaming)


def _legal(parts: list[list[Loop]], entry: frozenset[str]) -> bool:
    var = [lp.var for lp in parts[0]]
    local: list[str] = []
    for q, part in enumerate(parts):
        for j, lp in enumerate(part):
            if q and var[j] in _names(lp.body) and lp.var != var[j]:
                return False
            local.extend(_allocs(lp.body))
    if len(local) != len(set(local)):
        return False
    accesses: dict[str, list[Access]] = {}
    for q, part in enumerate(parts):
        for j, lp in enumerate(part):
            body = _renamed(lp, var[j]).body
            for name, write, view in _accesses(body, entry):
                if name not in local:
                    accesses.setdefault(name, []).append((q, j, write, view))
    return all(_independent(acc, parts[0]) for acc in accesses.values())


def _independent(acc: list[Access], first: list[Loop]) -> bool:
    """No access of one part to the tensor can meet a write of another part to it."""
    for k, (q, j, w, view) in enumerate(acc):
        for q2, j2, w2, view2 in acc[k + 1 :]:
            if q == q2 or not (w or w2) or _disjoint(view, view2):
                continue
            if j != j2 or view != view2:
                return False
            if first[j].var not in _syms(view) and not _at_most_once(first[j]):
                return False
    return True


def _disjoint(a: View, b: View) -> bool:
    """Provably no common element, in any iterations: on some dim both are slices with the same
    step whose starts fall in different residue classes modulo it (interleaved lanes), or
    single indices differing by a nonzero constant."""
    if a.tensor != b.tensor or len(a.dims) != len(b.dims):
        return False
    for da, db in zip(a.dims, b.dims):
        if isinstance(da, Slice) and isinstance(db, Slice) and da.step == db.step > 1:
            ra, rb = _residue(da.start, da.step), _residue(db.start, db.step)
            if ra is not None and rb is not None and ra != rb:
                return True
        if isinstance(da, At) and isinstance(db, At):
            diff = da.index - db.index
            if isinstance(diff, Const) and diff.value != 0:
                return True
    return False


def _residue(e: SizeExpr, m: int) -> int | None:
    """``e mod m`` when it is the same for every value of the symbols, else None."""
    if isinstance(e, Const):
        return e.value % m
    if isinstance(e, Add | Sub):
        ra, rb = _residue(e.a, m), _residue(e.b, m)
        if ra is None or rb is None:
            return None
        return (ra + rb if isinstance(e, Add) else ra - rb) % m
    if isinstance(e, Mul):
        ra, rb = _residue(e.a, m), _residue(e.b, m)
        if ra == 0 or rb == 0:
            return 0
        return None if ra is None or rb is None else ra * rb % m
    return None


def _at_most_once(loop: Loop) -> bool:
    trips = loop.stop - loop.start if loop.start != Const(0) else loop.stop
    if isinstance(trips, Const):
        return trips.value <= 1
    return isinstance(trips, Min) and Const(1) in (trips.a, trips.b) and loop.step == 1


def _names(node: Any) -> set[str]:
    """Symbols and scalar operands (a loop variable used as a value) mentioned in ``node``."""
    found = set(_syms(node))

    def visit(x: Any) -> Any:
        if isinstance(x, Param):
            found.add(x.name)
        return x

    transform(node, visit)
    return found


def _allocs(stmts: tuple) -> list[str]:
    out: list[str] = []
    for s in stmts:
        if isinstance(s, Alloc):
            out.append(s.name)
        elif isinstance(s, Loop):
            out.extend(_allocs(s.body))
    return out


def _accesses(stmts: tuple, entry: frozenset[str]) -> list[tuple[str, bool, View]]:
    """(tensor, is a write, view) of every statement: a load of an input/inout is no access."""
    out: list[tuple[str, bool, View]] = []
    for s in stmts:
        if isinstance(s, Loop):
            out.extend(_accesses(s.body, entry))
            continue
        if isinstance(s, Alloc | Note):
            continue
        dst = getattr(s, "dst", None)
        for f in s.__dataclass_fields__:
            v = getattr(s, f)
            if not isinstance(v, View):
                continue
            if isinstance(s, Load) and f == "src" and v.tensor in entry:
                continue
            write = v is dst or f == "reduce_dst"
            out.append((v.tensor, write, v))
            out.extend((x.tensor, False, x) for x in _index_views(v))
        if isinstance(s, Store) and s.accumulate is not None:
            out.append((s.dst.tensor, False, s.dst))
    return out


def _index_views(v: View) -> list[View]:
    found: list[View] = []

    def visit(x: Any) -> Any:
        if isinstance(x, View) and x is not v:
            found.append(x)
        return x

    transform(v.dims, visit, skip=(SizeExpr,))
    return found
