"""Fewer DMAs in a literal program: loads reused and hoisted, never repeated needlessly.

The literal lowering emits one DMA for every CUDA read, where the CUDA code reads it: a value
read twice is loaded twice, and a read inside a loop that does not change it (``sum += a[i]``
in a loop over ``j``) is loaded on every iteration.  On a GPU the second read hits a cache or a
register; on Trainium each is a DMA from HBM.  Two rewrites of the program (operands are the
Python expressions the port evaluates when it is traced) remove them:

* **Hoisting.** A load at the top level of a loop's body whose operands name nothing the loop
  assigns (its counter, locals it updates) and whose tensor the loop does not write moves in
  front of the loop; a load of the per-block function that uses only values of the kernel
  prologue and reads a tensor no block writes moves in front of the function (every block
  shares it).  A literal load is safe to run early: its view is clipped to the tensor (elements
  outside read as zero), so a loop that runs no iteration loses nothing.
* **Reuse.** A load of the same tensor at the same view as an earlier one, with no write to
  that tensor and no new value of an operand in between, takes the earlier tile.

Both work on the structured program: a write the rewrite cannot see through (a call of the
per-block function, an atomic, a scatter) ends every reuse, and a branch keeps only what holds
on both of its sides.  Stores are never moved or merged, so the order of writes -- the
thread order CUDA defines -- is the lowering's.
"""

from __future__ import annotations

import ast as pyast
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cache

from cuda2nki.lift.literal.dataloop import BODY_PREFIX
from cuda2nki.lift.literal.program import Branch, Instr, LiteralProgram, Loop, Node
from cuda2nki.lift.literal.reinterpret import base_tensor

#: helpers that read a tensor (a ``let`` whose value calls one is a load of its first argument)
_READS = ("_c2n_load_at", "_c2n_gather", "_c2n_gather_data", "_c2n_gather_run")
#: calls that only check a trace-time condition: they write nothing
_CHECKS = ("_c2n_nonneg", "_c2n_lane_mask")
#: a written set that stands for "any tensor" (a call the rewrite cannot see into)
ANY = "*"


@dataclass(frozen=True)
class _Effects:
    """What a node (and everything in it) assigns and which tensors it writes."""

    assigned: frozenset[str]
    written: frozenset[str]


def reuse_loads(program: LiteralProgram) -> LiteralProgram:
    """``program`` with loop-invariant loads hoisted and repeated loads reused."""
    counts = _assignment_counts(program.body)
    written = _effects(program.body).written
    from cuda2nki.lift.literal.heldviews import spell_held_views
    from cuda2nki.lift.literal.runs import load_runs

    body = spell_held_views(program.body, counts)
    body = _hoist(body, counts, written)
    body = _reuse(body, {}, counts)[0]
    body = load_runs(body, counts)
    return replace(program, body=body)


# ---- names -------------------------------------------------------------------------------


@cache
def _names(expr: str) -> frozenset[str]:
    """The Python names an operand expression reads (every name: conservative)."""
    try:
        tree = pyast.parse(expr.strip() or "None", mode="eval")
    except SyntaxError:
        return frozenset({ANY})
    return frozenset(n.id for n in pyast.walk(tree) if isinstance(n, pyast.Name))


@cache
def _canon(expr: str) -> str:
    """An operand in one spelling (``(a * 2) + 1`` and ``a * 2 + 1`` read alike)."""
    try:
        return pyast.unparse(pyast.parse(expr.strip(), mode="eval"))
    except SyntaxError:
        return expr


@cache
def _target(dst: str) -> str:
    """The name an assignment target rebinds or mutates (``t[k]`` mutates ``t``)."""
    try:
        node = pyast.parse(dst.strip(), mode="eval").body
    except SyntaxError:
        return ANY
    while isinstance(node, (pyast.Subscript, pyast.Attribute)):
        node = node.value
    return node.id if isinstance(node, pyast.Name) else ANY


def _loop_targets(loop: Loop) -> frozenset[str]:
    if loop.kind == "for":
        var = loop.header.split(" in ", 1)[0]
        return frozenset(_target(v) for v in var.split(","))
    if loop.kind == "def":
        inside = loop.header[loop.header.find("(") + 1 : loop.header.rfind(")")]
        return frozenset(p.split("=")[0].strip() for p in inside.split(",") if p.strip())
    return frozenset()


def _call_name(expr: str) -> str | None:
    try:
        node = pyast.parse(expr.strip(), mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, pyast.Call) and isinstance(node.func, pyast.Name):
        return node.func.id
    return None


# ---- effects -----------------------------------------------------------------------------


def _instr_effects(i: Instr) -> _Effects:
    ops = dict(i.operands)
    assigned = (
        frozenset({_target(ops["dst"])}) if "dst" in ops and i.kind != "fill" else frozenset()
    )
    if i.kind == "store":  # a write through a dtype view writes the tensor
        return _Effects(assigned, frozenset({base_tensor(ops["tensor"])}))
    if i.kind == "fill":
        return _Effects(assigned, frozenset({ops["dst"]}))
    if i.kind == "call":
        return _call_effects(ops["expr"], assigned)
    if i.kind == "let" and any(n.startswith(("_c2n_store", "_c2n_atomic", "_c2n_scatter",
                                             "_c2n_put", "_c2n_fill", "_c2n_update", "_c2n_block"))
                               for n in _names(ops["value"])):  # fmt: skip
        return _Effects(assigned, frozenset({ANY}))
    return _Effects(assigned, frozenset())


def _call_effects(expr: str, assigned: frozenset[str]) -> _Effects:
    """A call statement: a check writes nothing; ``_c2n_keep(slot, x)`` writes the SBUF slot
    of a runtime loop (no tensor); ``nl.while_loop(reg, body)`` runs the body function defined
    just before it, whose effects are that function's; anything else may write any tensor."""
    name = _call_name(expr)
    if name in _CHECKS or expr.strip().startswith("nl.while_loop("):
        return _Effects(assigned, frozenset())
    if name == "_c2n_keep":
        call = pyast.parse(expr.strip(), mode="eval").body
        first = call.args[0] if isinstance(call, pyast.Call) and call.args else None
        if isinstance(first, pyast.Name):
            return _Effects(assigned | {first.id}, frozenset())
    return _Effects(assigned, frozenset({ANY}))


def runtime_body(n: Node) -> bool:
    """Whether ``n`` is the body function of a runtime loop (``nl.while_loop``): a loop,
    for hoisting and reuse, that runs where it is defined."""
    return isinstance(n, Loop) and n.kind == "def" and n.header.startswith(BODY_PREFIX)


def _effects(nodes: Iterable[Node]) -> _Effects:
    assigned: set[str] = set()
    written: set[str] = set()
    for n in nodes:
        if isinstance(n, Instr):
            e = _instr_effects(n)
        elif isinstance(n, Branch):
            a, b = _effects(n.then), _effects(n.else_)
            e = _Effects(a.assigned | b.assigned, a.written | b.written)
        else:
            inner = _effects(n.body)
            e = _Effects(inner.assigned | _loop_targets(n), inner.written)
        assigned |= e.assigned
        written |= e.written
    return _Effects(frozenset(assigned), frozenset(written))


def _assignment_counts(nodes: Iterable[Node]) -> Counter[str]:
    out: Counter[str] = Counter()
    for n in nodes:
        if isinstance(n, Instr):
            out.update(_instr_effects(n).assigned)
        elif isinstance(n, Branch):
            out += _assignment_counts(n.then) + _assignment_counts(n.else_)
        else:
            out.update(_loop_targets(n))
            out += _assignment_counts(n.body)
    return out


# ---- loads -------------------------------------------------------------------------------


def _load(n: Node) -> tuple[str, str, frozenset[str]] | None:
    """(tensor, key, names read) of a load instruction, else None.  The key is the view: two
    loads with one key read the same elements as the same dtype."""
    if not isinstance(n, Instr):
        return None
    ops = dict(n.operands)
    if n.kind == "load":
        key = "|".join(_canon(ops[k]) for k in ("tensor", "base", "cp", "cf", "dtype"))
        names = frozenset().union(*(_names(ops[k]) for k in ("base", "cp", "cf", "dtype")))
        return base_tensor(ops["tensor"]), key, names | _names(ops["tensor"])
    if n.kind == "let" and _call_name(ops["value"]) in _READS:
        call = pyast.parse(ops["value"].strip(), mode="eval").body
        assert isinstance(call, pyast.Call)
        first = call.args[0] if call.args else None
        if not isinstance(first, pyast.Name):
            return None
        return first.id, ops["value"], _names(ops["value"])
    return None


def _movable(n: Node, counts: Counter[str]) -> bool:
    """A load whose destination nothing else assigns: moving or dropping it changes no other
    value of that name."""
    ld = _load(n)
    return ld is not None and counts[_target(n.get("dst"))] == 1  # type: ignore[union-attr]


# ---- hoisting ----------------------------------------------------------------------------


def _hoist(nodes: tuple[Node, ...], counts: Counter[str], written: frozenset[str],
           outer: frozenset[str] = frozenset()) -> tuple[Node, ...]:  # fmt: skip
    """Hoist invariant loads out of every loop of ``nodes`` (inner loops first).  ``outer``:
    the names assigned before a ``def`` at this level (what a hoisted load may use there)."""
    out: list[Node] = []
    assigned_here: set[str] = set(outer)
    for n in nodes:
        if isinstance(n, Branch):
            n = replace(n, then=_hoist(n.then, counts, written),
                        else_=_hoist(n.else_, counts, written))  # fmt: skip
        elif isinstance(n, Loop):
            body = _hoist(n.body, counts, written)
            n = replace(n, body=body)
            if n.kind == "def" and not runtime_body(n):
                moved, kept = _split_def(n, counts, written, frozenset(assigned_here))
            else:
                moved, kept = _split_loop(n, counts)
            out.extend(moved)
            n = replace(n, body=kept or (Instr("comment", (("text", "nothing"),)),))
        assigned_here |= _effects((n,)).assigned
        out.append(n)
    return tuple(out)


def _hoistable(n: Node, counts: Counter[str], written: frozenset[str] | set[str],
               changed: frozenset[str] | set[str]) -> bool:  # fmt: skip
    """Whether ``n`` is a movable load of a tensor nothing in the region writes, through names
    the region does not change."""
    ld = _load(n)
    return (
        ld is not None
        and _movable(n, counts)
        and ANY not in written
        and ld[0] not in written
        and not (ld[2] & changed)
    )


def _split_loop(loop: Loop, counts: Counter[str]) -> tuple[list[Node], tuple[Node, ...]]:
    inner = _effects(loop.body)
    changed = inner.assigned | _loop_targets(loop)
    moved: list[Node] = []
    kept: list[Node] = []
    for n in loop.body:
        if _hoistable(n, counts, inner.written, changed):
            moved.append(n)
        else:
            kept.append(n)
    return moved, tuple(kept)


def _split_def(block: Loop, counts: Counter[str], written: frozenset[str],
               before: frozenset[str]) -> tuple[list[Node], tuple[Node, ...]]:  # fmt: skip
    """Loads of the per-block function that every block makes alike: they use parameters,
    module names and names the kernel set before the function only, and read a tensor that
    nothing writes."""
    changed = _effects(block.body).assigned | _loop_targets(block)
    moved: list[Node] = []
    kept: list[Node] = []
    for n in block.body:
        ld = _load(n)
        if _hoistable(n, counts, written, changed) and all(
            name in before or counts[name] == 0 for name in ld[2]
        ):
            moved.append(n)
        else:
            kept.append(n)
    return moved, tuple(kept)


# ---- reuse -------------------------------------------------------------------------------

#: available loads: key -> (tensor, names read, destination holding the tile)
_Avail = dict[str, tuple[str, frozenset[str], str]]


def _kill(avail: _Avail, e: _Effects) -> _Avail:
    if ANY in e.written or ANY in e.assigned:
        return {}
    return {
        k: v
        for k, v in avail.items()
        if v[0] not in e.written and not (v[1] & e.assigned) and v[2] not in e.assigned
    }


def _reuse(nodes: tuple[Node, ...], avail: _Avail,
           counts: Counter[str]) -> tuple[tuple[Node, ...], _Avail]:  # fmt: skip
    out: list[Node] = []
    for n in nodes:
        if isinstance(n, Instr):
            ld = _load(n)
            dst = _target(n.get("dst")) if ld is not None else ""
            if ld is not None and ld[1] in avail:
                out.append(
                    Instr("let", (("dst", n.get("dst")), ("value", avail[ld[1]][2])), n.line)
                )
                continue
            avail = _kill(avail, _instr_effects(n))
            if ld is not None and _movable(n, counts) and dst not in ld[2]:
                avail[ld[1]] = (ld[0], ld[2], dst)
            out.append(n)
        elif isinstance(n, Branch):
            then, a = _reuse(n.then, dict(avail), counts)
            orelse, b = _reuse(n.else_, dict(avail), counts)
            avail = {k: v for k, v in a.items() if b.get(k) == v}
            out.append(replace(n, then=then, else_=orelse))
        elif n.kind == "def" and not runtime_body(n):
            body, _ = _reuse(n.body, {}, counts)
            out.append(replace(n, body=body))
        else:
            e = _effects((n,))
            avail = _kill(avail, e)
            body, _ = _reuse(n.body, dict(avail), counts)
            out.append(replace(n, body=body))
    return tuple(out), avail
