"""The port line, loop iteration and mechanism behind a wrong output.

The sandboxed run of each test point's first input set notes which store wrote every output
element (``nkisim/provenance.py``): the store's line, the port frame's integer locals and the
lines that produced the stored tile.  For the elements a comparison found wrong this module names

* the store(s) that last wrote them and the loop iterations they ran in (the loop counters are
  the ``for`` targets around the store's line in the port's text), and
* a mechanism, where the values support one, tested in order, each with its evidence:
  ``stale accumulator`` (each wrong tile holds its own result plus the tile stored before it:
  an accumulator not reset between tiles), ``wrong reduction axis``, ``transposed operand``
  (the port's values are the CUDA kernel's on a transposed input), ``changed constant`` (the
  port's values are the CUDA kernel's with one literal changed) and ``eps misplaced`` (the
  wrong elements are those the CUDA kernel's eps dominates; both in ``constants.py``).

Each mechanism comes with the port line it points at and advice that follows from it.
"""

from __future__ import annotations

import ast
import dataclasses
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cuda2nki.fidelity.wire import WireError

#: how many (line, op) producing instructions a write event may carry across the boundary
_MAX_CHAIN = 16


@dataclass(frozen=True)
class WriteEvent:
    line: int
    op: str
    counters: tuple[tuple[str, int], ...]  # the port frame's int locals at the store
    chain: tuple[tuple[int, str], ...]  # the lines that produced the stored tile, nearest first


@dataclass(frozen=True)
class Writers:
    """Per returned output, the write event of each element (-1: never stored into)."""

    maps: tuple[np.ndarray | None, ...]
    events: Mapping[int, WriteEvent]


@dataclass(frozen=True)
class Mechanism:
    name: str
    line: int
    evidence: str
    advice: str


@dataclass(frozen=True)
class Cause:
    """Where the wrong elements of one output come from."""

    store_line: int
    iterations: str  # "m=128, n=0; m=256, n=0 (2 of 6 stores at this line)"
    single: bool  # exactly one store (one loop iteration) wrote every wrong element
    chain: tuple[tuple[int, str], ...]
    mechanism: Mechanism | None = None
    loop_names: tuple[str, ...] = ()  # the for targets around the store's line
    #: a producing line on the wrong stores' path that no right store's path went through
    departs: tuple[int, str] | None = None

    @property
    def line(self) -> int:
        if self.mechanism:
            return self.mechanism.line
        return self.departs[0] if self.departs else self.store_line

    def notes(self) -> list[str]:
        where = f"written by the store at port line {self.store_line}"
        if self.iterations:
            where += f" at {self.iterations}"
        out = [where]
        if self.chain:
            made = ", ".join(f"{op} (line {ln})" for ln, op in self.chain[:6])
            out.append(f"the stored tile was produced by {made}")
        if self.mechanism is not None:
            m = self.mechanism
            out.append(f"root cause: {m.name} at port line {m.line}: {m.evidence}")
            out.append(f"advice: {m.advice}")
        elif self.departs is not None:
            ln, op = self.departs
            scope = "a single loop iteration" if self.single else "these iterations"
            out.append(
                f"root cause: wrong output at {scope}: only the wrong stores' tiles went "
                f"through {op} at port line {ln}; the right ones did not"
            )
            out.append(
                f"advice: make line {ln}'s path compute what the other iterations' path does "
                "(or drop the special case)"
            )
        elif self.single:
            out.append(
                "root cause: wrong output at a single loop iteration: every other iteration of "
                "this store is right; compare the port's code for that iteration's indices "
                "and conditions with the others'"
            )
        return out

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "port_line": self.line,
            "store_line": self.store_line,
            "iterations": self.iterations,
        }
        if self.mechanism is not None:
            d["mechanism"] = self.mechanism.name
        elif self.departs is not None or self.single:
            d["mechanism"] = "single iteration"
        return d


# --------------------------------------------------------------------------- from the sandbox


def writer_maps_from_wire(raw: Any, arrays: Mapping[str, np.ndarray], ri: int, n: int) -> Writers:
    """The child's ``writers`` entry and ``r{ri}.w{i}`` arrays, validated."""
    if not isinstance(raw, dict):
        raise WireError("malformed writer events")
    events: dict[int, WriteEvent] = {}
    for k, v in raw.items():
        if not isinstance(k, int) or not isinstance(v, tuple | list) or len(v) != 4:
            raise WireError("malformed writer event")
        line, op, counters, chain = v
        if not isinstance(line, int) or not isinstance(op, str) or not isinstance(counters, dict):
            raise WireError("malformed writer event")
        cnt = tuple(
            (str(a), int(b)) for a, b in counters.items() if isinstance(b, int) and len(str(a)) < 80
        )
        ch = tuple(
            (int(p[0]), str(p[1])[:40])
            for p in list(chain)[:_MAX_CHAIN]
            if isinstance(p, tuple | list) and len(p) == 2 and isinstance(p[0], int)
        )
        events[k] = WriteEvent(line, op[:40], cnt, ch)
    maps: list[np.ndarray | None] = []
    for i in range(n):
        m = arrays.get(f"r{ri}.w{i}")
        maps.append(None if m is None or m.dtype.kind not in "iu" else m.astype(np.int64))
    return Writers(tuple(maps), events)


# --------------------------------------------------------------------------- the port's loops


def loop_targets(port_text: str) -> dict[int, tuple[str, ...]]:
    """Port line -> the names bound by the ``for`` loops around it (outermost first)."""
    try:
        tree = ast.parse(port_text)
    except SyntaxError:
        return {}
    out: dict[int, tuple[str, ...]] = {}

    def names(t: ast.AST) -> list[str]:
        return [n.id for n in ast.walk(t) if isinstance(n, ast.Name)]

    def visit(node: ast.AST, bound: tuple[str, ...]) -> None:
        for child in ast.iter_child_nodes(node):
            inner = bound
            if isinstance(child, ast.For | ast.AsyncFor):
                inner = bound + tuple(n for n in names(child.target) if n not in bound)
            if isinstance(child, ast.stmt):
                for ln in range(child.lineno, (child.end_lineno or child.lineno) + 1):
                    out[ln] = inner if len(inner) >= len(out.get(ln, ())) else out[ln]
            visit(child, inner)

    visit(tree, ())
    return out


def name_reads(port_text: str) -> dict[str, frozenset[int]]:
    """Name -> the lines of the port's simple statements that read it (``nisa.dma_copy(dst=t,
    src=weight[k : k + kk, :])`` reads ``weight``); a statement spanning lines counts at each."""
    try:
        tree = ast.parse(port_text)
    except SyntaxError:
        return {}
    out: dict[str, set[int]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Expr):
            continue
        lines = range(node.lineno, (node.end_lineno or node.lineno) + 1)
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                out.setdefault(n.id, set()).update(lines)
    return {k: frozenset(v) for k, v in out.items()}


def accumulations(port_text: str) -> dict[int, str]:
    """Port line -> the tile it accumulates into: ``acc += nl.matmul(...)`` (legacy API) or a
    call with ``accumulate=`` (``nisa.nc_matmul(dst=acc[...], ..., accumulate=k > 0)``)."""
    try:
        tree = ast.parse(port_text)
    except SyntaxError:
        return {}
    out: dict[int, str] = {}
    for node in ast.walk(tree):
        target: ast.AST | None = None
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
            target = node.target
        elif isinstance(node, ast.Call) and any(k.arg == "accumulate" for k in node.keywords):
            target = next((k.value for k in node.keywords if k.arg == "dst"), None)
        while isinstance(target, ast.Subscript | ast.Attribute):
            target = target.value
        if isinstance(target, ast.Name):
            out[node.lineno] = target.id
    return out


# --------------------------------------------------------------------------- localisation


def localise(
    writers: Writers | None,
    index: int,
    bad: np.ndarray,
    loops: Mapping[int, tuple[str, ...]],
) -> Cause | None:
    """The store line and iterations that wrote the ``bad`` elements of output ``index``."""
    if writers is None or index >= len(writers.maps):
        return None
    m = writers.maps[index]
    if m is None or m.size != bad.size:
        return None
    ids = m.reshape(-1)[bad.reshape(-1)]
    ids = ids[ids >= 0]
    if not ids.size:
        return None
    per_event = Counter(int(e) for e in ids)
    by_line: Counter[int] = Counter()
    for e, c in per_event.items():
        ev = writers.events.get(e)
        if ev is not None:
            by_line[ev.line] += c
    if not by_line:
        return None
    line = by_line.most_common(1)[0][0]
    bad_events = [e for e in sorted(per_event) if _line_of(writers, e) == line]
    all_events = sorted({int(e) for e in np.unique(m) if e >= 0 and _line_of(writers, e) == line})
    names = loops.get(line, ())
    text = _iterations(writers, bad_events, all_events, names)
    single = len(bad_events) == 1 and len(all_events) > 1
    chain = writers.events[bad_events[0]].chain
    good = [e for e in all_events if e not in set(bad_events)]
    return Cause(line, text, single, chain, None, tuple(names), _departs(writers, bad_events, good))


def _departs(writers: Writers, bad: Sequence[int], good: Sequence[int]) -> tuple[int, str] | None:
    """The nearest producing (line, op) on every wrong store's path and on no right one's."""
    if not good:
        return None
    seen_good = {p for e in good for p in writers.events[e].chain}
    common = [p for p in writers.events[bad[0]].chain if p not in seen_good]
    for e in bad[1:]:
        chain = writers.events[e].chain
        common = [p for p in common if p in chain]
    return common[0] if common else None


def _line_of(writers: Writers, e: int) -> int | None:
    ev = writers.events.get(e)
    return ev.line if ev is not None else None


def _iterations(
    writers: Writers, bad: Sequence[int], every: Sequence[int], names: Sequence[str]
) -> str:
    if not names:
        return ""
    rows = [dict(writers.events[e].counters) for e in bad]
    everyrows = [dict(writers.events[e].counters) for e in every]
    varying = [n for n in names if len({r.get(n) for r in everyrows}) > 1] or list(names)
    shown = [", ".join(f"{n}={r[n]}" for n in varying if n in r) for r in rows[:6]]
    text = "; ".join(s for s in shown if s)
    if len(rows) > 6:
        text += f" and {len(rows) - 6} more"
    return f"{text} ({len(bad)} of {len(every)} stores at this line)" if text else ""


# --------------------------------------------------------------------------- mechanisms


Rerun = Callable[[Mapping[str, np.ndarray]], np.ndarray | None]


def diagnose(
    cause: Cause,
    writers: Writers,
    index: int,
    got: np.ndarray,
    expected: np.ndarray,
    bad: np.ndarray,
    bound: np.ndarray,
    inputs: Mapping[str, np.ndarray],
    wrong_axis: str = "",
    rerun: Rerun | None = None,
    extra: Sequence[Callable[[], Mechanism | None]] = (),
    reads: Mapping[str, frozenset[int]] = {},
    accumulated: Mapping[int, str] = {},
) -> Cause:
    """``cause`` with the first mechanism whose evidence holds (defect classes in order, then
    ``extra``: the literal-based ones of ``constants.py``)."""
    tests: list[Callable[[], Mechanism | None]] = [
        lambda: _stale_accumulator(cause, writers, index, got, expected, bad, reads, accumulated),
        lambda: _wrong_axis(cause, wrong_axis, reads),
        lambda: _transposed_operand(cause, got, expected, bound, inputs, rerun, reads, accumulated),
        *extra,
    ]
    for test in tests:
        m = test()
        if m is not None:
            return dataclasses.replace(cause, mechanism=m)
    return cause


def _producer(cause: Cause, *ops: str) -> int:
    """The nearest producing line whose op contains one of ``ops`` (else the store's line)."""
    for ln, op in cause.chain:
        if any(o in op for o in ops):
            return ln
    return cause.store_line


def _box(mask: np.ndarray) -> tuple[slice, ...] | None:
    idx = np.nonzero(mask)
    if not idx or not idx[0].size:
        return None
    box = tuple(slice(int(i.min()), int(i.max()) + 1) for i in idx)
    return box if mask[box].all() else None


def _stale_accumulator(
    cause: Cause,
    writers: Writers,
    index: int,
    got: np.ndarray,
    expected: np.ndarray,
    bad: np.ndarray,
    reads: Mapping[str, frozenset[int]] = {},
    accumulated: Mapping[int, str] = {},
) -> Mechanism | None:
    """Each wrong tile = its own result + the tile the same store wrote before it.  The port
    line is the accumulation on the wrong stores' path (else the one into a tile the store's
    path reads: ``acc += nl.matmul(...)`` evacuated by ``nl.copy(acc)`` on the store's line)."""
    m = writers.maps[index]
    if m is None or got.shape != expected.shape or got.ndim < 1:
        return None
    m = m.reshape(got.shape)
    events = sorted(
        int(e) for e in np.unique(m) if e >= 0 and _line_of(writers, int(e)) == cause.store_line
    )
    if len(events) < 2:
        return None
    g = np.asarray(got, dtype=np.float64)
    x = np.asarray(expected, dtype=np.float64)
    boxes = [_box(m == e) for e in events]
    hits = tested = 0
    first_hit = None
    for k in range(1, len(events)):
        box, prev = boxes[k], boxes[k - 1]
        if box is None or prev is None or not bad[box].any():
            continue
        shape = tuple(s.stop - s.start for s in box)
        pshape = tuple(s.stop - s.start for s in prev)
        if any(a > b for a, b in zip(shape, pshape)):
            continue
        tested += 1
        resid = g[box] - x[box]
        held = g[prev][tuple(slice(0, n) for n in shape)]
        scale = float(np.linalg.norm(resid))
        if scale > 0 and float(np.linalg.norm(resid - held)) <= 1e-3 * (
            scale + float(np.linalg.norm(x[box]))
        ):
            hits += 1
            first_hit = first_hit if first_hit is not None else (events[k - 1], events[k])
    if not tested or hits * 2 < tested or first_hit is None:
        return None
    line = _producer(cause, "matmul", "tensor_tensor", "reduce")
    if line == cause.store_line:
        line = _accumulation(cause, reads, accumulated) or line
    a, b = (_counters_text(writers.events[e], cause.loop_names) for e in first_hit)
    return Mechanism(
        "stale accumulator",
        line,
        f"{hits} of {tested} wrong tiles hold their own result plus the tile stored before them "
        f"(e.g. the tile at {b} adds the one at {a}): the accumulator written at line {line} "
        "keeps the previous tile's sums",
        f"start every output tile from a zeroed accumulator: allocate it (or zero it) inside the "
        f"tile loop, before the first accumulation at line {line}",
    )


def _loaded_at(cause: Cause, lines: frozenset[int]) -> int:
    """The farthest line of the wrong stores' path that reads an input (its load); 0: none."""
    on_path = [ln for ln, _op in cause.chain if ln in lines]
    return on_path[-1] if on_path else 0


def _accumulation(
    cause: Cause, reads: Mapping[str, frozenset[int]], accumulated: Mapping[int, str]
) -> int:
    """The last accumulation before the store into a tile read on the wrong stores' path."""
    path = {cause.store_line, *(ln for ln, _op in cause.chain)}
    hits = [
        ln
        for ln, name in accumulated.items()
        if ln < cause.store_line and reads.get(name, frozenset()) & path
    ]
    return max(hits, default=0)


def _read_before_accumulation(
    cause: Cause,
    name: str,
    reads: Mapping[str, frozenset[int]],
    accumulated: Mapping[int, str],
) -> int:
    """The last line reading ``name`` before the accumulation that feeds the wrong stores
    (0: no such accumulation or read)."""
    acc = _accumulation(cause, reads, accumulated)
    return max((ln for ln in reads.get(name, frozenset()) if ln < acc), default=0)


def _counters_text(ev: WriteEvent, names: Sequence[str]) -> str:
    vals = dict(ev.counters)
    return ", ".join(f"{k}={vals[k]}" for k in names if k in vals) or f"line {ev.line}"


def _wrong_axis(
    cause: Cause, evidence: str, reads: Mapping[str, frozenset[int]] = {}
) -> Mechanism | None:
    if not evidence:
        return None
    from cuda2nki.fidelity.axisswap import layout_input

    swapped = layout_input(evidence)
    line = _loaded_at(cause, reads.get(swapped, frozenset())) if swapped else 0
    if line:  # the input enters with its axes exchanged: the load is the line to change
        return Mechanism(
            "wrong reduction axis",
            line,
            evidence,
            f"read '{swapped}' at line {line} with its rows along the free axis, as the CUDA "
            f"kernel indexes it (the load exchanges its axes, so every reduction that follows "
            "runs down the columns)",
        )
    line = _producer(cause, "reduce", "matmul", "activation")
    return Mechanism(
        "wrong reduction axis",
        line,
        evidence,
        f"reduce along the axis the CUDA kernel sums over at line {line} (the evidence names it)",
    )


def _transposed_operand(
    cause: Cause,
    got: np.ndarray,
    expected: np.ndarray,
    bound: np.ndarray,
    inputs: Mapping[str, np.ndarray],
    rerun: Rerun | None,
    reads: Mapping[str, frozenset[int]] = {},
    accumulated: Mapping[int, str] = {},
) -> Mechanism | None:
    """The port's values are the CUDA kernel's with one square 2-D input transposed.  The port
    line is the one on the wrong stores' path that reads that input (its load), else the last
    read of it before the accumulation feeding the store (``acc += nl.matmul(a, w)`` hides the
    matmul's operands from the path), else the matmul or transpose that consumes it."""
    if rerun is None:
        return None
    g = np.asarray(got, dtype=np.float64)
    for name, x in inputs.items():
        if x.ndim != 2 or x.shape[0] != x.shape[1] or x.shape[0] < 2:
            continue
        alt = rerun({**inputs, name: np.ascontiguousarray(x.T)})
        if alt is None or np.size(alt) != g.size:
            continue
        a = np.asarray(alt, dtype=np.float64).reshape(g.shape)
        if np.all(np.abs(g - a) <= np.broadcast_to(bound, g.shape)):
            line = _loaded_at(cause, reads.get(name, frozenset()))
            line = line or _read_before_accumulation(cause, name, reads, accumulated)
            line = line or _producer(cause, "matmul", "transpose", "dma")
            return Mechanism(
                "transposed operand",
                line,
                f"the port's output equals the CUDA kernel's with input '{name}' transposed "
                f"(the CUDA kernel re-run on '{name}'.T matches it everywhere); '{name}' enters "
                f"the wrong stores' path at port line {line}",
                f"read '{name}' in the layout the CUDA kernel indexes it: at line {line} the "
                f"port takes it as its transpose (transpose it on the way in, or swap the "
                "indices of the load, so that the contraction axis lands on the partitions)",
            )
    return None
