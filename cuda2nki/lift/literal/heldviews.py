"""Loads through a pointer local spelled as the view they read (literal lowering).

A pointer local that moves per thread (``const Node* p = nodes + tid``) is held in a tuple of
its view, ``p_off = (base, cp, cf)``, and a read through it loads ``_c2n_load(t, p_off[0] + 1,
p_off[1], p_off[2], ...)``.  The same element read directly (``nodes[tid].count``, a struct copied
to a local) loads ``_c2n_load(t, tid * 2 + 1, 4, 2, ...)``: one view, two spellings, so the reuse
of repeated loads (:mod:`.reuse`) does not see that the second read is the first one again.

This pass spells each ``p_off[k]`` in a load's view as the tuple's element where the element
still holds the same value -- nothing assigned the tuple or a name its elements read since the
tuple was made -- and writes the view's operands in one canonical form.  It follows the program
as :mod:`.reuse` does: a branch keeps what holds on both sides, a loop (and a runtime loop's body)
drops what it assigns before its body is walked, and the per-block function starts afresh.
"""

from __future__ import annotations

import ast as pyast
from collections import Counter
from dataclasses import replace

from cuda2nki.lift.literal.program import Branch, Instr, Node
from cuda2nki.lift.literal.reuse import ANY, _effects, _target, runtime_body

#: tuple local -> (its elements, the names they read)
_Held = dict[str, tuple[tuple[pyast.expr, ...], frozenset[str]]]

#: the operands of a load instruction that spell its view
_VIEW = ("base", "cp", "cf")


def spell_held_views(body: tuple[Node, ...], counts: Counter[str]) -> tuple[Node, ...]:
    """``body`` with the loads through held pointer views spelled as those views."""
    return _walk(body, {}, counts)[0]


def _walk(
    nodes: tuple[Node, ...], held: _Held, counts: Counter[str]
) -> tuple[tuple[Node, ...], _Held]:
    out: list[Node] = []
    for n in nodes:
        if isinstance(n, Instr):
            if n.kind == "load" and held:
                n = _respell(n, held)
            held = _drop(held, _effects((n,)).assigned)
            tup = _tuple_let(n, counts)
            if tup is not None:
                held[_target(n.get("dst"))] = tup
        elif isinstance(n, Branch):
            then, a = _walk(n.then, dict(held), counts)
            orelse, b = _walk(n.else_, dict(held), counts)
            held = {k: v for k, v in a.items() if b.get(k) is v}
            n = replace(n, then=then, else_=orelse)
        elif n.kind == "def" and not runtime_body(n):
            n = replace(n, body=_walk(n.body, {}, counts)[0])
        else:
            held = _drop(held, _effects((n,)).assigned)
            n = replace(n, body=_walk(n.body, dict(held), counts)[0])
        out.append(n)
    return tuple(out), held


def _drop(held: _Held, assigned: frozenset[str]) -> _Held:
    if ANY in assigned:
        return {}
    return {k: v for k, v in held.items() if k not in assigned and not (v[1] & assigned)}


def _tuple_let(
    n: Instr, counts: Counter[str]
) -> tuple[tuple[pyast.expr, ...], frozenset[str]] | None:
    """The elements of ``dst = (a, b, c)`` (a name assigned once), and the names they read."""
    if n.kind != "let":
        return None
    ops = dict(n.operands)
    dst = ops.get("dst", "")
    if not dst.isidentifier() or counts[dst] != 1:
        return None
    try:
        node = pyast.parse(ops.get("value", "").strip(), mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, pyast.Tuple):
        return None
    names = frozenset(x.id for e in node.elts for x in pyast.walk(e) if isinstance(x, pyast.Name))
    return tuple(node.elts), names | {dst}


class _Subst(pyast.NodeTransformer):
    def __init__(self, held: _Held) -> None:
        self.held = held

    def visit_Subscript(self, node: pyast.Subscript) -> pyast.AST:
        base, key = node.value, node.slice
        if (
            isinstance(base, pyast.Name)
            and base.id in self.held
            and isinstance(key, pyast.Constant)
            and isinstance(key.value, int)
            and 0 <= key.value < len(self.held[base.id][0])
        ):
            return self.held[base.id][0][key.value]
        return self.generic_visit(node)


def _respell(n: Instr, held: _Held) -> Instr:
    ops = list(n.operands)
    for k, (name, text) in enumerate(ops):
        if name not in _VIEW:
            continue
        try:
            tree = pyast.parse(text.strip(), mode="eval")
        except SyntaxError:
            continue
        new = pyast.unparse(_Subst(held).visit(tree))
        if new != text.strip() and any(f"{h}[" in text for h in held):
            ops[k] = (name, new)
    return replace(n, operands=tuple(ops))
