"""Loads that walk a row across the iterations of a counted loop, read in runs.

In ``for (int k = 0; k < K; k++) s += a[row * K + k]`` each iteration of the literal port loads
one tile whose view moves by a fixed stride: one small DMA per iteration.  When the loop is
counted (``while int(k < K)`` with ``k`` stepped by a positive constant once per iteration, or a
``for`` over a ``range``), its load's view depends on the counter alone among the values the loop
changes, and nothing in the loop writes the tensor, the port reads a run of iterations' tiles
with one DMA: the helper ``_c2n_run`` takes the view's base for each counter value (computed when
the port is traced), loads as many consecutive iterations as fit a per-partition budget in one
3-D access pattern where the bases step evenly and the run lies inside the tensor, and hands each
iteration its slice (else it loads that iteration alone, as before).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace

from cuda2nki.lift.literal.program import Branch, Instr, Loop, Node
from cuda2nki.lift.literal.reuse import ANY, _effects, _load, _movable, _names, _target

_WRAP = re.compile(
    r"^\(\(\(\s*(?P<v>\w+)\s*\+\s*(?P<s>\d+)\s*\)\s*\+\s*2147483648\s*\)\s*%\s*4294967296\s*-\s*2147483648\s*\)$"
)
_PLAIN = re.compile(r"^(?P<v>\w+)\s*\+\s*(?P<s>\d+)$")
_COND = re.compile(r"^int\(\s*(?P<v>\w+)\s*(?P<op><=|<)\s*(?P<b>.+)\)$")


def load_runs(body: tuple[Node, ...], counts: Counter[str]) -> tuple[Node, ...]:
    """``body`` with the row-walking loads of its counted loops read in runs."""
    out: list[Node] = []
    for n in body:
        if isinstance(n, Branch):
            n = replace(n, then=load_runs(n.then, counts), else_=load_runs(n.else_, counts))
        elif isinstance(n, Loop):
            n = replace(n, body=load_runs(n.body, counts))
            counter = _counter(n) if n.kind != "def" else None
            if counter is not None:
                pre, n = _runs(n, counter, counts)
                out.extend(pre)
        out.append(n)
    return tuple(out)


def _counter(loop: Loop) -> tuple[str, str] | None:
    """(counter, the Python iterable of its values) of a counted loop, else None."""
    if loop.kind == "for":
        var, _, it = loop.header.partition(" in ")
        var = var.strip()
        return (var, it.strip()) if var.isidentifier() and it.strip().startswith("range(") else None
    m = _COND.match(loop.header.strip())
    if m is None:
        return None
    var, bound = m.group("v"), m.group("b")
    steps = [s for s in loop.body if isinstance(s, Instr) and _assigns(s, var)]
    nested = _effects(tuple(s for s in loop.body if not isinstance(s, Instr))).assigned
    if len(steps) != 1 or steps[0] is not loop.body[-1] or var in nested:
        return None
    value = steps[0].get("value").strip()
    step = _WRAP.match(value) or _PLAIN.match(value)
    if step is None or step.group("v") != var or int(step.group("s")) <= 0:
        return None
    if var in _names(bound) or ANY in _names(bound):
        return None
    bound = bound.strip()
    simple = re.fullmatch(r"[\w.]+", bound) is not None
    end = bound if simple else f"({bound})"
    end = f"{end} + 1" if m.group("op") == "<=" else end
    return var, f"range({var}, {end}, {step.group('s')})"


def _assigns(i: Instr, var: str) -> bool:
    ops = dict(i.operands)
    return "dst" in ops and i.kind != "fill" and _target(ops["dst"]) == var


def _runs(loop: Loop, counter: tuple[str, str], counts: Counter[str]) -> tuple[list[Node], Loop]:
    var, values = counter
    inner = _effects(loop.body)
    changed = inner.assigned - {var}
    if ANY in inner.written or ANY in changed or (loop.kind == "for" and var in inner.assigned):
        return [], loop
    pre: list[Node] = []
    body: list[Node] = []
    for n in loop.body:
        ld = _load(n)
        if (
            ld is None
            or not isinstance(n, Instr)
            or n.kind != "load"
            or not _movable(n, counts)
            or ld[0] in inner.written
            or ld[2] & changed
            or var not in _names(n.get("base"))
            or var in _names(n.get("cp")) | _names(n.get("cf")) | _names(n.get("dtype"))
        ):
            body.append(n)
            continue
        dst = n.get("dst")
        run = f"_run{dst.lstrip('_')}"
        bases = f"{{{var}: {n.get('base')} for {var} in {values}}}"
        pre.append(Instr("let", (("dst", run), ("value", f"_c2n_run({n.get('tensor')}, {bases}, "
                                                         f"{n.get('cp')}, {n.get('cf')}, "
                                                         f"{n.get('dtype')})")), n.line))  # fmt: skip
        body.append(Instr("let", (("dst", dst), ("value", f"{run}.at({var})")), n.line))
    return pre, replace(loop, body=tuple(body))
