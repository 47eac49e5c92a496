"""Memo of the CUDA kernel's runs (the reference and its fp64 oracle) by what determines them.

A check runs the CUDA kernel in the SIMT interpreter once per test point and seed, and again in
fp64 where the kernel does not lift.  Checking several ports of one kernel in one process (flawed
and fixed drafts, a review of a set of ports, the benchmark) repeats those runs with the same
inputs: the interpreter is deterministic, so a run is looked up here by a digest of the kernel's
lowered functions, the launch (grid, block, shared bytes), the scalars, the shapes and the bytes of
every array, and computed only when none matches.  A run that raises is never remembered.

Entries are kept in least-recently-used order up to :data:`LIMIT_BYTES` of arrays; each lookup
hands out copies, so a caller that writes into what it got changes nothing remembered.
"""

from __future__ import annotations

import copy
import hashlib
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import numpy as np

#: bytes of arrays the memo keeps at most (the oldest entries go first)
LIMIT_BYTES = 256 << 20

T = TypeVar("T")

_ENTRIES: OrderedDict[str, tuple[Any, int]] = OrderedDict()
_TU_DIGESTS: OrderedDict[int, tuple[Any, str]] = OrderedDict()  # id -> (the unit, its digest)
_STATS = {"hits": 0, "misses": 0}


def tu_digest(tu: Any) -> str:
    """A digest of a translation unit's functions and globals (their reprs are deterministic and
    hold no addresses); remembered per unit object, which is kept alive while it is."""
    hit = _TU_DIGESTS.get(id(tu))
    if hit is not None and hit[0] is tu:
        _TU_DIGESTS.move_to_end(id(tu))
        return hit[1]
    text = repr((getattr(tu, "functions", ()), getattr(tu, "globals", ())))
    digest = hashlib.blake2b(text.encode(), digest_size=20).hexdigest()
    _TU_DIGESTS[id(tu)] = (tu, digest)
    while len(_TU_DIGESTS) > 32:
        _TU_DIGESTS.popitem(last=False)
    return digest


def run_key(kind: str, tu: Any, name: str, r: Any, arrays: Mapping[str, np.ndarray]) -> str:
    """The digest of one run of kernel ``name`` of ``tu`` at resolved point ``r`` on ``arrays``
    (``kind`` tells apart what is computed from them)."""
    h = hashlib.blake2b(digest_size=20)
    roles = [(t.name, t.role) for t in r.binding.tensors]
    head = (kind, tu_digest(tu), name, r.grid, r.block, r.shared_bytes, roles)
    h.update(repr(head).encode())
    h.update(repr(sorted((k, repr(v)) for k, v in r.scalars.items())).encode())
    h.update(repr(sorted(r.shapes.items())).encode())
    for k in sorted(arrays):
        a = np.ascontiguousarray(arrays[k])
        h.update(repr((k, a.dtype.str, a.shape)).encode())
        h.update(a.view(np.uint8).reshape(-1).data if a.size else b"")
    return h.hexdigest()


def remembered(key: str, compute: Callable[[], T]) -> T:
    """What ``compute()`` returns for ``key``: remembered from an earlier call, or computed now
    (an exception propagates and nothing is remembered)."""
    hit = _ENTRIES.get(key)
    if hit is not None:
        _ENTRIES.move_to_end(key)
        _STATS["hits"] += 1
        return copy.deepcopy(hit[0])
    _STATS["misses"] += 1
    value = compute()
    size = _nbytes(value)
    if size <= LIMIT_BYTES:
        _ENTRIES[key] = (copy.deepcopy(value), size)
        _trim()
    return value


def clear() -> None:
    """Forget every remembered run."""
    _ENTRIES.clear()
    _TU_DIGESTS.clear()
    _STATS.update(hits=0, misses=0)


def stats() -> dict[str, int]:
    """Lookups answered from the memo (``hits``) and computed (``misses``) since :func:`clear`."""
    return dict(_STATS)


def _trim() -> None:
    total = sum(size for _, size in _ENTRIES.values())
    while total > LIMIT_BYTES and _ENTRIES:
        _, (_, size) = _ENTRIES.popitem(last=False)
        total -= size


def _nbytes(value: Any) -> int:
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, Mapping):
        return sum(_nbytes(v) for v in value.values())
    if isinstance(value, tuple | list):
        return sum(_nbytes(v) for v in value)
    return 0
