"""Who wrote each output element: the last store into it, and the instructions behind that store.

Off by default (a run asks for it, ``run(track_writers=True)``).  While on, every traced
instruction notes, per destination storage, its line and the storages it read; every store into
an HBM tensor stamps the elements it writes with a *write event*: the store's port line, the
integer locals of the port's frame (its loop counters) and the chain of lines that produced the
stored tile, walked back through the on-chip storages it came from.

At the end each returned output has a parallel ``int32`` array of event numbers (``-1``: never
stored into), so a checker can ask which line, at which loop iteration, wrote a wrong element.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: how many producing instructions a write event's chain keeps
CHAIN_DEPTH = 8
#: a writer map's entry for an element no store wrote, and for one a store may have written
UNSTORED = -1
UNKNOWN = -2
#: write events kept per run (a per-element store loop stops being described past this)
MAX_EVENTS = 200_000


@dataclass
class WriterLog:
    """Per-run bookkeeping (on :class:`~cuda2nki.nkisim.state.SimState` while tracking)."""

    maps: dict[int, tuple[Any, np.ndarray]] = field(default_factory=dict)  # HBM uid -> map
    events: list[tuple[int, str, dict[str, int], tuple[tuple[int, str], ...]]] = field(
        default_factory=list
    )
    # on-chip storage uid -> (line, op, operand storage uids) of its last writer
    producers: dict[int, tuple[int, str, tuple[int, ...]]] = field(default_factory=dict)


def note(log: WriterLog, eng: str, op: str, ts: tuple, frame: Any, line: int) -> None:
    """Book one traced instruction (``ts[0]`` is its destination)."""
    if not ts or ts[0] is None:
        return
    dst = ts[0]
    stg = dst.storage
    srcs = tuple(t.storage.uid for t in ts[1:] if t is not None and hasattr(t, "storage"))
    if stg.buffer.on_chip:
        log.producers[stg.uid] = (line, op, srcs)
        return
    if eng != "dma" or stg.is_input:
        return
    if len(log.events) >= MAX_EVENTS:  # past the cap later stores are not stamped
        ent = log.maps.get(stg.uid)
        if ent is not None:
            ent[1][ent[1] == UNSTORED] = UNKNOWN
        return
    ent = log.maps.get(stg.uid)
    if ent is None:
        ent = log.maps[stg.uid] = (stg, np.full(stg.flat.size, -1, dtype=np.int32))
    ev = len(log.events)
    try:
        _stamp(dst, ent[1], ev)
    except (ValueError, TypeError, IndexError):
        # a store whose elements cannot be worked out: nothing of this output is known to be
        # unwritten any more (-2: written by some store, which is not known)
        ent[1][ent[1] == UNSTORED] = UNKNOWN
        return
    log.events.append((line, op, _counters(frame), _chain(log, srcs)))


def _stamp(dst: Any, arr: np.ndarray, ev: int) -> None:
    if dst.index is not None:
        idx = np.asarray(dst.index).reshape(-1)
        arr[idx[idx >= 0]] = ev
        return
    if dst.dtype.np_dtype != dst.storage.flat.dtype:
        return  # a reinterpreting view: its element positions are not the storage's
    dst._parallel_view(arr)[...] = ev


def _counters(frame: Any) -> dict[str, int]:
    """The port frame's integer locals (its loop counters among them)."""
    if frame is None:
        return {}
    try:
        items = frame.f_locals.items()
    except Exception:  # noqa: BLE001 - a frame without readable locals
        return {}
    return {k: v for k, v in items if type(v) is int and not k.startswith("_")}


def _chain(log: WriterLog, srcs: tuple[int, ...]) -> tuple[tuple[int, str], ...]:
    """The lines that produced the stored tile, nearest first (breadth-first, no repeats)."""
    out: list[tuple[int, str]] = []
    seen: set[int] = set()
    todo = list(srcs)
    while todo and len(out) < CHAIN_DEPTH:
        uid = todo.pop(0)
        if uid in seen:
            continue
        seen.add(uid)
        p = log.producers.get(uid)
        if p is None:
            continue
        if (p[0], p[1]) not in out:
            out.append((p[0], p[1]))
        todo.extend(p[2])
    return tuple(out)


def output_writers(out: Any, log: WriterLog) -> list[np.ndarray | None]:
    """Per returned output (in the order the checker flattens them) its event map, shaped."""
    values = (
        list(out.values())
        if isinstance(out, dict)
        else (list(out) if isinstance(out, (list, tuple)) else [out])
    )
    maps: list[np.ndarray | None] = []
    for v in values:
        stg = getattr(v, "storage", None)
        ent = log.maps.get(stg.uid) if stg is not None else None
        if ent is None:
            maps.append(None)
            continue
        try:
            maps.append(np.array(v._parallel_view(ent[1]), copy=True).reshape(v.shape))
        except (ValueError, TypeError, AttributeError):
            maps.append(None)
    return maps
