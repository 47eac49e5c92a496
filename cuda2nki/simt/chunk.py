"""Execution state of one chunk of blocks: thread coordinates, frames, shared memory, fault reports.

A chunk is a rectangular box of blocks ``[z0, z0+nz) x [y0, y0+ny) x [x0, x0+nx)`` of the grid.
Its ``T`` threads are numbered in CUDA's order: blocks z-major then y then x, and inside a block
``threadIdx.x`` fastest (the linear thread id ``x + y*bx + z*bx*by``).  An *active set* ``act`` is
either ``None`` (all ``T`` threads) or a sorted ``int64`` array of thread numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from cuda2nki.diagnostics import Diagnostic, SourceLoc, error, make
from cuda2nki.simt import deadline

if TYPE_CHECKING:
    from cuda2nki.simt.memory import Buffer

EMPTY = np.zeros(0, np.int64)


@dataclass
class Launch:
    """What is constant over a whole launch."""

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    max_steps: int
    warnings: dict = field(default_factory=dict)  # (code, loc) -> Diagnostic
    globals: dict = field(default_factory=dict)  # name -> Buffer
    buffers: dict = field(default_factory=dict)  # shared/local buffers reused across chunks
    fast: bool = True  # affine values and box-shaped active sets (off: plain index arrays only)
    depth: int = 0  # nesting of a grid launched from device code (0: the host's launch)

    @property
    def tpb(self) -> int:
        b = self.block
        return b[0] * b[1] * b[2]

    def warn(self, code: str, loc: SourceLoc, **fmt: object) -> None:
        key = (code, loc)
        if key not in self.warnings:
            self.warnings[key] = make(code, loc, **fmt)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return list(self.warnings.values())


class LoopFrame:
    __slots__ = ("brk", "cont")

    def __init__(self) -> None:
        self.brk: list[np.ndarray] = []
        self.cont: list[np.ndarray] = []


class Chunk:
    def __init__(
        self, launch: Launch, box: tuple[int, int, int, int, int, int], shared: Buffer | None
    ):
        self.launch = launch
        self.z0, self.nz, self.y0, self.ny, self.x0, self.nx = box
        self.nb = self.nz * self.ny * self.nx
        bx, by, bz = launch.block
        self.shape6 = (self.nz, self.ny, self.nx, bz, by, bx)
        self.starts = (self.z0, self.y0, self.x0, 0, 0, 0)
        self.tpb = launch.tpb
        self.T = self.nb * self.tpb
        self.shared = shared
        self.env: list = []
        self.owned: list = []
        self.loops: list[LoopFrame] = []
        self.rets: list[list] = []  # per device-function frame: [value, type]
        self.bufs: dict = {}  # per-chunk shared and local-array buffers, by declaration
        self.varbufs: dict = {}  # (frame id, slot) -> VarBuffer of an addressed local variable
        self.steps = 0
        self._exited: np.ndarray | None = None

    # ------------------------------------------------------------------ coordinates
    def _coord(self, axis: int) -> np.ndarray:
        """Per-thread coordinate: 0-2 threadIdx.x/y/z, 3-5 blockIdx.x/y/z (uint32, length T)."""
        bx, by, bz = self.launch.block
        shape = (self.nz, self.ny, self.nx, bz, by, bx)
        pos = (5, 4, 3, 2, 1, 0)[axis]
        n = shape[pos]
        start = (0, 0, 0, self.x0, self.y0, self.z0)[axis]
        vals = np.arange(start, start + n, dtype=np.uint32)
        sh = [1] * 6
        sh[pos] = n
        return np.broadcast_to(vals.reshape(sh), shape).reshape(-1)

    @cached_property
    def tid(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return (self._coord(0), self._coord(1), self._coord(2))

    @cached_property
    def bid(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return (self._coord(3), self._coord(4), self._coord(5))

    def builtin_extent(self, name: str, axis: int) -> int:
        """How many distinct values ``threadIdx``/``blockIdx`` takes along ``axis`` in this chunk."""
        if name == "threadIdx":
            return self.launch.block[axis]
        return (self.nx, self.ny, self.nz)[axis]

    @cached_property
    def blk(self) -> np.ndarray:
        """Block number inside the chunk, per thread (int64)."""
        return np.repeat(np.arange(self.nb, dtype=np.int64), self.tpb)

    @cached_property
    def linear_tid(self) -> np.ndarray:
        return np.tile(np.arange(self.tpb, dtype=np.int64), self.nb)

    @cached_property
    def lane(self) -> np.ndarray:
        return self.linear_tid & 31

    @cached_property
    def warp(self) -> np.ndarray:
        """Warp number inside the chunk, per thread (warps never straddle blocks)."""
        wpb = (self.tpb + 31) // 32
        return self.blk * wpb + (self.linear_tid >> 5)

    @property
    def nwarps(self) -> int:
        return self.nb * ((self.tpb + 31) // 32)

    @property
    def exited(self) -> np.ndarray:
        if self._exited is None:
            self._exited = np.zeros(self.T, bool)
        return self._exited

    # ------------------------------------------------------------------ helpers
    def count(self, act) -> int:
        return self.T if act is None else len(act)

    def thread_of(self, act, j: int) -> int:
        return int(j) if act is None else int(np.asarray(act)[j])

    def where(self, k: int) -> dict[str, int]:
        """Block and thread coordinates of chunk thread ``k`` (for messages)."""
        bx, by, _ = self.launch.block
        b, t = divmod(int(k), self.tpb)
        bz_, rem = divmod(b, self.ny * self.nx)
        by_, bx_ = divmod(rem, self.nx)
        tz, rem = divmod(t, bx * by)
        ty, tx = divmod(rem, bx)
        return {
            "bx": self.x0 + bx_,
            "by": self.y0 + by_,
            "bz": self.z0 + bz_,
            "tx": tx,
            "ty": ty,
            "tz": tz,
        }

    def fault(self, code: str, loc: SourceLoc, act, j: int, **fmt: object):
        return error(
            code, loc, kernel=self.launch.kernel, **self.where(self.thread_of(act, j)), **fmt
        )

    def step(self, loc: SourceLoc) -> None:
        self.steps += 1
        if not self.steps % deadline.EVERY:
            deadline.check()
        if self.steps > self.launch.max_steps:
            raise error("C2N1502", loc, kernel=self.launch.kernel, steps=self.launch.max_steps)


# --------------------------------------------------------------------------- active sets


class Box:
    """An active set that is a sub-box ``[lo, hi)`` of the chunk's 6-D thread box.

    Behaves as its (lazily built) sorted index array wherever an index array is expected
    (``len``, ``np.asarray``, indexing), while the hot paths (variable gather/scatter, affine
    addresses, builtins) use the box geometry directly.
    """

    __slots__ = ("chunk", "lo", "hi", "shape", "slices", "_idx", "_flat")

    def __init__(self, chunk: Chunk, lo: tuple[int, ...], hi: tuple[int, ...]):
        self.chunk, self.lo, self.hi = chunk, lo, hi
        self.shape = tuple(h - b for b, h in zip(lo, hi))
        self.slices = tuple(slice(b, h) for b, h in zip(lo, hi))
        self._idx: np.ndarray | None = None
        self._flat: slice | None | bool = False  # False: not computed yet

    def flat(self) -> slice | None:
        """The box as one run of consecutive thread positions of the chunk, when it is one (the
        axes before the first restricted one have extent 1, those after it are whole), else None.
        Selecting it from a full-width array gives the same elements, in the same order, as the
        6-D slices do, and a view as they do."""
        if self._flat is False:
            self._flat = _flat_run(self.chunk.shape6, self.lo, self.shape)
        return self._flat

    @classmethod
    def full(cls, chunk: Chunk) -> Box:
        return cls(chunk, (0,) * 6, chunk.shape6)

    @property
    def starts(self) -> tuple[int, ...]:
        return tuple(s + b for s, b in zip(self.chunk.starts, self.lo))

    def __len__(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def idx(self) -> np.ndarray:
        if self._idx is None:
            sh = self.chunk.shape6
            strides = [1] * 6
            for k in range(4, -1, -1):
                strides[k] = strides[k + 1] * sh[k + 1]
            r = np.int64(0)
            for k in range(6):
                v = (np.arange(self.lo[k], self.hi[k], dtype=np.int64) * strides[k]).reshape(
                    [-1 if j == k else 1 for j in range(6)]
                )
                r = r + v
            self._idx = np.broadcast_to(r, self.shape).reshape(-1)
        return self._idx

    def __array__(self, dtype=None, copy=None):
        i = self.idx()
        return i if dtype is None else i.astype(dtype)

    def __getitem__(self, m):
        return self.idx()[m]

    def restrict(self, axis: int, lo: int, hi: int):
        """The sub-box with positions ``[lo, hi)`` (relative to this box) on ``axis``."""
        if lo >= hi:
            return EMPTY
        nl, nh = list(self.lo), list(self.hi)
        nl[axis], nh[axis] = self.lo[axis] + lo, self.lo[axis] + hi
        b = Box(self.chunk, tuple(nl), tuple(nh))
        return None if len(b) == self.chunk.T else b


def _flat_run(full: tuple[int, ...], lo: tuple[int, ...], shape: tuple[int, ...]) -> slice | None:
    """:meth:`Box.flat` for a box at ``lo`` of extents ``shape`` in an array of shape ``full``."""
    k = 0
    while k < 5 and shape[k] == 1:
        k += 1
    if any(shape[j] != full[j] for j in range(k + 1, 6)):
        return None
    start, stride = 0, 1
    for j in range(5, -1, -1):
        start += lo[j] * stride
        stride *= full[j]
    n = 1
    for d in shape:
        n *= d
    return slice(start, start + n)


def sel(act, mask: np.ndarray) -> np.ndarray:
    """The threads of ``act`` where ``mask`` (one entry per active thread) holds."""
    if act is None:
        return np.flatnonzero(mask)
    if isinstance(act, Box):
        return act.idx()[mask]
    return act[mask]


def split(act, cond, T: int):
    """(threads where cond holds, threads where it does not); cond scalar or per active thread."""
    if not isinstance(cond, np.ndarray):
        return (act, EMPTY) if cond else (EMPTY, act)
    if cond.dtype != np.bool_:
        cond = cond != 0
    n = T if act is None else len(act)
    k = int(np.count_nonzero(cond))
    if k == n:
        return act, EMPTY
    if k == 0:
        return EMPTY, act
    return sel(act, cond), sel(act, ~cond)


def is_empty(act) -> bool:
    return act is not None and len(act) == 0


def union(parts: list, T: int):
    parts = [p for p in parts if p is None or len(p)]
    if not parts:
        return EMPTY
    if any(p is None for p in parts):
        return None
    if len(parts) == 1:
        out = parts[0]
        if isinstance(out, Box):
            return out
    else:
        total = sum(len(p) for p in parts)
        if total == T:
            return None
        if total * 8 > T:  # dense: a mask is cheaper than a sort
            m = np.zeros(T, bool)
            for p in parts:
                m[p] = True
            out = np.flatnonzero(m)
        else:
            out = np.sort(np.concatenate([np.asarray(p) for p in parts]))
    return None if len(out) == T else out
