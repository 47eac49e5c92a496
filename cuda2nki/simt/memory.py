"""Buffers, pointers and vector values of the SIMT interpreter.

All memory is byte-addressed: a :class:`Buffer` owns a ``uint8`` array and a pointer is a buffer
plus a byte offset (a scalar when uniform, else one offset per active thread).  Shared memory and
per-thread local arrays are *segmented* buffers: each block (shared) or thread (local) owns a
segment of ``seg`` bytes and a pointer's offset is relative to the segment of the thread using it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from cuda2nki.simt.affine import Aff
from cuda2nki.simt.chunk import Box


@dataclass(eq=False)
class Buffer:
    name: str
    kind: str  # "global" | "shared" | "local" | "constant"
    data: np.ndarray  # uint8, length a multiple of 16
    seg: int = 0  # segment bytes (shared: per block, local: per thread); 0 = not segmented
    limit: int = 0  # addressable bytes (global: the array's size; segmented: seg)
    dirty: bool = False  # written by the kernel
    cow: bool = False  # ``data`` is the caller's array: copy before the first write
    readonly: bool = False  # declared ``const``: loads may return views instead of copies
    #: one byte per byte of the buffer, set where the kernel reads (``None``: reads not tracked)
    reads: np.ndarray | None = None
    _views: dict = field(default_factory=dict)

    def view(self, dt: np.dtype) -> np.ndarray:
        v = self._views.get(dt)
        if v is None:
            d = self.data
            extra = d.size % dt.itemsize
            v = (d[: d.size - extra] if extra else d).view(dt)
            self._views[dt] = v
        return v

    def for_write(self) -> None:
        """Make the buffer private (copy-on-write) before a store."""
        self.dirty = True
        if self.cow:
            padded = max(16, (self.data.size + 15) // 16 * 16)
            data = np.zeros(padded, np.uint8)
            data[: self.data.size] = self.data
            self.data = data
            self.cow = False
            self._views.clear()


class VarBuffer(Buffer):
    """The storage of a local scalar/vector variable whose address was taken (``&x``, ``T&``).

    Loads and stores through a pointer to it read and write the variable's frame slot."""

    frame: list
    owned_flags: list
    slot: int
    ty: object


def wrap_array(name: str, arr: np.ndarray, readonly: bool) -> Buffer:
    """A global buffer over the caller's array, copied only if the kernel writes it."""
    a = np.ascontiguousarray(arr)
    raw = a.reshape(-1).view(np.uint8)
    ro = raw.view()
    ro.flags.writeable = False
    return Buffer(name, "global", ro, limit=raw.size, cow=True, readonly=readonly)


def make_buffer(
    name: str, kind: str, nbytes: int, seg: int = 0, fill: bytes | None = None
) -> Buffer:
    padded = max(16, (nbytes + 15) // 16 * 16)
    if fill:
        data = np.empty(padded, np.uint8)
        word = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[len(fill)]
        data.view(word)[:] = np.frombuffer(fill, word)[0]
    else:
        data = np.zeros(padded, np.uint8)
    return Buffer(name, kind, data, seg=seg, limit=seg if seg else nbytes)


@dataclass(frozen=True, eq=False)
class Ptr:
    """A pointer value: ``buf`` (uniform across threads) and byte offset ``off``."""

    buf: Buffer | None  # None: null pointer
    off: object  # np.int64 scalar or int64 array


@dataclass(frozen=True, eq=False)
class Vec:
    """A vector-type value (``float4``...): one value (scalar or array) per lane."""

    lanes: tuple


def gather(v, act):
    """Select the active threads' values from a full-width value."""
    if act is None or isinstance(v, np.generic):
        return v  # a uniform NumPy scalar (the most common value) is every thread's
    if isinstance(act, Box):
        if isinstance(v, Aff):
            return v.on(act)
        if isinstance(v, np.ndarray):
            run = act.flat()
            if run is not None:
                return v[run]
            return v.reshape(act.chunk.shape6)[act.slices].reshape(-1)
    if isinstance(v, Aff):
        return v.at(act)
    if isinstance(v, np.ndarray):
        return v[act]
    if isinstance(v, Vec):
        return Vec(tuple(gather(x, act) for x in v.lanes))
    if isinstance(v, Ptr):
        return Ptr(v.buf, gather(v.off, act))
    return v


def is_uniform(v) -> bool:
    if isinstance(v, np.ndarray | Aff):
        return False
    if isinstance(v, Vec):
        return all(is_uniform(x) for x in v.lanes)
    if isinstance(v, Ptr):
        return not isinstance(v.off, np.ndarray)
    return True


def widen(v, n: int, dt: np.dtype | None = None):
    """A full-width (length ``n``) copy of ``v``."""
    if isinstance(v, Aff):
        return np.array(v.values())
    if isinstance(v, np.ndarray):
        return v.copy()
    if isinstance(v, Vec):
        return Vec(tuple(widen(x, n) for x in v.lanes))
    if isinstance(v, Ptr):
        return Ptr(v.buf, widen(v.off, n))
    return np.full(n, v, dtype=dt if dt is not None else np.asarray(v).dtype)


def scatter(old, new, act, n: int, owned: bool):
    """``old`` with the ``act`` threads replaced by ``new``; returns (value, owned)."""
    if isinstance(old, Vec) or isinstance(new, Vec):
        ol = old.lanes if isinstance(old, Vec) else (None,) * len(new.lanes)
        return Vec(tuple(scatter(o, x, act, n, False)[0] for o, x in zip(ol, new.lanes))), False
    if isinstance(old, Ptr) or isinstance(new, Ptr):
        if old is None or not isinstance(old, Ptr):
            old = Ptr(new.buf, np.int64(0))
        if old.buf is not None and new.buf is not None and old.buf is not new.buf:
            raise PointerDivergence()
        buf = new.buf if new.buf is not None else old.buf
        off, _ = scatter(old.off, new.off, act, n, False)
        return Ptr(buf, off), False
    if old is None:
        dt = np.asarray(new).dtype
        base = np.zeros(n, dt)
    elif isinstance(old, np.ndarray) and owned:
        base = old
    else:
        dt = np.asarray(old).dtype
        base = widen(old, n, dt)
    if isinstance(new, Aff):
        new = new.values()
    if base.dtype != np.asarray(new).dtype:
        new = np.asarray(new).astype(base.dtype)
    if isinstance(act, Box):
        run = act.flat()
        if run is not None:
            base[run] = new
            return base, True
        view = base.reshape(act.chunk.shape6)[act.slices]
        view[...] = new.reshape(act.shape) if isinstance(new, np.ndarray) else new
        return base, True
    base[act] = new
    return base, True


class PointerDivergence(Exception):
    """Threads of one variable point into different buffers (not representable)."""
