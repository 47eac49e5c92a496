"""Local arrays kept in "registers": one value per element instead of per-thread memory.

``float acc[TM * TN]; for (...) acc[i] += a * b;`` -- register tiling, as in SGEMM kernels --
indexes a small per-thread array with loop counters that are the same for every thread.  When a
local array is only ever used as ``a[i]`` / ``a[i][j]`` (never decayed to a pointer, never
addressed), it is promoted: the frame slot holds a :class:`RegArray`, a list of element values
(each a uniform scalar or a per-thread array).  A uniform index reads or writes one element
directly; a per-thread index selects among elements.  Everything else keeps the byte buffer.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np

from cuda2nki.diagnostics import SourceLoc
from cuda2nki.frontend import ast as A
from cuda2nki.simt.affine import mat
from cuda2nki.simt.chunk import Chunk, sel
from cuda2nki.simt.memory import Vec, gather

MAX_ELEMS = 1024


class RegArray:
    __slots__ = ("vals", "owned")

    def __init__(self, n: int):
        self.vals: list = [None] * n
        self.owned: list[bool] = [False] * n


def promotable(body: A.Node, name: str, depth: int) -> bool:
    """Every use of ``name`` in ``body`` is a full-depth subscript that is not address-taken."""
    ok = True

    def chain_root(e: A.Expr, d: int) -> bool:
        while d and isinstance(e, A.Index):
            e, d = e.base, d - 1
        return d == 0 and isinstance(e, A.Name) and e.name == name

    def walk(n, parent_is_addr: bool = False) -> None:
        nonlocal ok
        if not ok:
            return
        if isinstance(n, A.Index) and chain_root(n, depth):
            if parent_is_addr:
                ok = False
                return
            e = n
            for _ in range(depth):  # the indices may use the array themselves
                walk(e.index)
                e = e.base
            return
        if isinstance(n, A.Name) and n.name == name:
            ok = False
            return
        if isinstance(n, A.VarDecl) and n.name == name and n.storage != "local":
            ok = False
            return
        if isinstance(n, A.Node):
            addr = isinstance(n, A.Unary) and n.op == "&"
            for f in fields(n):
                v = getattr(n, f.name)
                if isinstance(v, A.Node):
                    walk(v, addr)
                elif isinstance(v, tuple):
                    for x in v:
                        if isinstance(x, A.Node):
                            walk(x, addr)

    walk(body)
    return ok


class RegLV:
    """``a[i][j]`` on a promoted array (an lvalue of the element type)."""

    def __init__(
        self,
        slot: int,
        strides: tuple[int, ...],
        n: int,
        idx_fns,
        ty,
        zero,
        loc: SourceLoc,
        name: str,
    ):
        self.slot, self.strides, self.n, self.idx_fns = slot, strides, n, idx_fns
        self.ty, self.zero, self.loc, self.name = ty, zero, loc, name

    def _array(self, c: Chunk) -> RegArray:
        ra = c.env[self.slot]
        if ra is None:
            ra = c.env[self.slot] = RegArray(self.n)
        return ra

    def _index(self, c: Chunk, act, access: str):
        flat = None
        for f, s in zip(self.idx_fns, self.strides):
            v = mat(f(c, act))
            v = np.asarray(v, np.int64) * s if isinstance(v, np.ndarray) else int(v) * s
            flat = v if flat is None else flat + v
        if isinstance(flat, np.ndarray):
            bad = (flat < 0) | (flat >= self.n)
            if np.any(bad):
                j = int(np.flatnonzero(bad)[0])
                raise self._oob(c, act, j, int(flat[j]), access)
            return flat
        if not 0 <= flat < self.n:
            raise self._oob(c, act, 0, flat, access)
        return flat

    def _oob(self, c: Chunk, act, j: int, index: int, access: str):
        return c.fault(
            "C2N1500",
            self.loc,
            act,
            j,
            space="local",
            access=access,
            buffer=self.name,
            index=index,
            limit=self.n,
        )

    def load(self, c: Chunk, act):
        ra = self._array(c)
        i = self._index(c, act, "read")
        if not isinstance(i, np.ndarray):
            v = ra.vals[i]
            if v is None:
                return self.zero
            if act is None:
                ra.owned[i] = False
                return v
            return gather(v, act)
        return self._select(c, act, ra, i)

    def _select(self, c: Chunk, act, ra: RegArray, i: np.ndarray):
        n = len(i)
        parts = {}
        for e in np.unique(i):
            v = ra.vals[int(e)]
            p = self.zero if v is None else gather(v, act)
            parts[int(e)] = Vec(tuple(mat(x) for x in p.lanes)) if isinstance(p, Vec) else mat(p)
        first = next(iter(parts.values()))
        if isinstance(first, Vec):
            lanes = len(first.lanes)
            return Vec(
                tuple(
                    self._merge_lane(i, {e: p.lanes[k] for e, p in parts.items()}, n)
                    for k in range(lanes)
                )
            )
        return self._merge_lane(i, parts, n)

    @staticmethod
    def _merge_lane(i: np.ndarray, parts: dict, n: int) -> np.ndarray:
        dt = np.result_type(*[np.asarray(p).dtype for p in parts.values()])
        out = np.empty(n, dt)
        for e, p in parts.items():
            m = i == e
            out[m] = p[m] if isinstance(p, np.ndarray) else p
        return out

    def store(self, c: Chunk, act, v) -> None:
        from cuda2nki.simt.compiler import var_store

        ra = self._array(c)
        i = self._index(c, act, "write")
        if not isinstance(i, np.ndarray):
            if ra.vals[i] is None:  # threads not written keep the never-written (poison) value
                ra.vals[i] = self.zero
            var_store(c, ra.vals, ra.owned, i, act, v, self.loc)
            return
        for e in np.unique(i):
            m = i == e
            sub = sel(act, m)
            part = _take(v, m)
            if ra.vals[int(e)] is None:
                ra.vals[int(e)] = self.zero
            var_store(c, ra.vals, ra.owned, int(e), sub, part, self.loc)

    def addr(self, c: Chunk, act):  # pragma: no cover - promotion excludes address-taking
        raise AssertionError("address of a register-promoted array element")


def _take(v, m: np.ndarray):
    v = mat(v)
    if isinstance(v, Vec):
        return Vec(tuple(_take(x, m) for x in v.lanes))
    if isinstance(v, np.ndarray):
        return v[m]
    return v
