"""Values, frames and small array helpers of the intent-layer evaluator (:mod:`cuda2nki.ir.evaluate`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cuda2nki.diagnostics import SourceLoc
from cuda2nki.ir import nodes as n
from cuda2nki.ir.ops import AxisKind, Op


@dataclass
class Val:
    """An evaluated expression, broadcastable over the current frame."""

    v: np.ndarray
    dtype: str
    e: Any = 0.0  # error bound (analysis mode); for bool values: > 0 where it may flip
    m: Any = 0.0  # magnitude (analysis mode)
    oob: np.ndarray | None = None  # True where an out-of-bounds read fed the value
    k: int = 0  # longest reduction length feeding the value
    acc: str | None = None  # accumulation dtype of that reduction
    #: a min/max over candidates (analysis mode): the extremum and the runner-up, and the gap
    #: between them (see :mod:`cuda2nki.ir.extremum`)
    top2: Any = None
    gap: Any = None


@dataclass
class Analysis:
    """Result of :func:`analyse`, per output tensor."""

    values: dict[str, np.ndarray]  # float64 oracle
    bound: dict[str, np.ndarray]  # e: |one implementation - exact| <= e
    magnitude: dict[str, np.ndarray]
    reduction_length: dict[str, int]
    acc_dtype: dict[str, str | None]


@dataclass
class _Frame:
    """Iteration variables: arrays right-aligned in a frame of ``rank`` dims."""

    vars: dict[str, np.ndarray] = field(default_factory=dict)
    dims: dict[str, int] = field(default_factory=dict)  # var -> negative dim index
    extents: dict[int, int] = field(default_factory=dict)  # negative dim -> extent
    rank: int = 0

    def extend(self, axes: list[tuple[str, int]]) -> _Frame:
        f = _Frame(dict(self.vars), dict(self.dims), dict(self.extents), self.rank + len(axes))
        for j, (name, ext) in enumerate(axes):
            d = -(f.rank - j)
            shape = [1] * f.rank
            shape[j] = ext
            f.vars[name] = np.arange(ext, dtype=np.int64).reshape(shape)
            f.dims[name] = d
            f.extents[d] = ext
        return f

    def with_var(self, name: str, arr: np.ndarray) -> _Frame:
        f = _Frame(dict(self.vars), dict(self.dims), dict(self.extents), self.rank)
        f.vars[name] = arr
        d = f.dims[name]
        f.extents[d] = arr.shape[self.rank + d]
        return f


def _text(e: Any) -> str:
    from cuda2nki.ir.printer import to_text

    return to_text(e)


def _merge(op: Op, a: Any, b: Any) -> Any:
    """Merge one ingredient of two chunks' reduction bounds (sums add, products multiply)."""
    if op is Op.ADD:
        return a + b
    if op is Op.MUL:
        return a * b
    return np.maximum(a, b)


def _start(var: np.ndarray) -> int:
    return int(var.flat[0]) if var.size else 0


def _var_key(frame: _Frame, name: str) -> tuple:
    """What a frame variable's values are: a run of consecutive integers along one dim."""
    var = frame.vars[name]
    d = frame.dims[name]
    return name, d, _start(var), frame.extents[d]


def _free_vars(node: Any) -> frozenset[str] | None:
    """Names a node reads that it does not bind (axis variables, scalars), or None when its value
    may vary over every frame variable: a scan spans the whole frame, and the value of a
    ``carry`` of an enclosing iteration is shaped by that iteration's frame."""
    out: set[str] = set()
    return frozenset(out) if _collect_free(node, out) else None


def _collect_free(node: Any, out: set[str]) -> bool:
    """Add the free names of ``node`` to ``out``; False if it depends on the whole frame."""
    if node is None or isinstance(node, (str, int, float, bool, Op, SourceLoc)):
        return True
    if isinstance(node, tuple):
        return all(_collect_free(x, out) for x in node)
    if isinstance(node, (n.Scan, n.Carry)):
        return False
    if isinstance(node, n.Sym):
        out.add(node.name)
        return True
    if isinstance(node, n.Param):
        out.add(node.name)
        return True
    if isinstance(node, n.Reduce):
        inner: set[str] = set()
        ok = _collect_free((node.body, node.where), inner)
        out.update(inner - {a.name for a in node.axes})
        return ok and _collect_free(tuple(a.extent for a in node.axes), out)
    if isinstance(node, n.Iterate):
        return _collect_iterate(node, out)
    fields = getattr(node, "__dataclass_fields__", None)
    if fields is None:
        return True
    return all(_collect_free(getattr(node, f), out) for f in fields if f != "loc")


def _collect_iterate(it: n.Iterate, out: set[str]) -> bool:
    """An iteration's free names; the ``carry`` of its own variables is bound by it."""
    if not _collect_free((it.init, it.trips, it.enter), out):
        return False
    own = set(it.names)
    stack: list[Any] = [it.update, it.cond]
    while stack:
        x = stack.pop()
        if isinstance(x, n.Carry) and x.name in own:
            continue
        if isinstance(x, tuple):
            stack.extend(x)
        elif isinstance(x, (n.Unary, n.Binary, n.Select, n.Cast, n.Bitcast)):
            stack.extend(getattr(x, f) for f in x.__dataclass_fields__ if f != "loc")
        elif not _collect_free(x, out):
            return False
    return True


def _chunkable(c: n.Compute) -> bool:
    axes = c.domain.axes
    if not axes or axes[0].kind is not AxisKind.PARALLEL:
        return False
    return not _mentions(c.expr, c.target.tensor) and not _mentions(c.domain.guard, c.target.tensor)


def _mentions(node: Any, tensor: str) -> bool:
    """True if ``node`` reads ``tensor`` or contains a scan (either forbids slab evaluation)."""
    if node is None:
        return False
    if isinstance(node, n.Scan) or (isinstance(node, n.Read) and node.tensor == tensor):
        return True
    if isinstance(node, tuple):
        return any(_mentions(x, tensor) for x in node)
    fields = getattr(node, "__dataclass_fields__", None)
    if fields is None:
        return False
    return any(_mentions(getattr(node, f), tensor) for f in fields if f != "loc")


def _or(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    return np.logical_or(a, b)


def _and(a: Any, b: Any) -> Any:
    return None if a is None else np.logical_and(a, b)


def _inexact(a: Any, b: Any) -> Any:
    return np.maximum(np.asarray(a, np.float64), np.asarray(b, np.float64))


def _clean(e: Any) -> Any:
    e = np.asarray(e, np.float64)
    return np.where(np.isnan(e), np.inf, e)


def _squeeze(x: np.ndarray, letters: str, exts: list[int]) -> tuple[np.ndarray, str]:
    """Drop the broadcast (size-1 where the frame is larger) dims of ``x`` and their letters."""
    keep = [d for d in range(x.ndim) if not (x.shape[d] == 1 and exts[d] != 1)]
    sq = x.reshape([x.shape[d] for d in keep])
    return sq, "".join(letters[d] for d in keep)


def _pad(x: np.ndarray, rank: int) -> np.ndarray:
    return x.reshape((1,) * (rank - x.ndim) + x.shape) if x.ndim < rank else x


def _bcast_lead(x: np.ndarray, lead: tuple, rank: int) -> np.ndarray:
    """``x`` padded to ``rank`` dims with its leading ``len(lead)`` dims broadcast to ``lead``."""
    x = _pad(np.asarray(x), rank)
    m = len(lead)
    return np.broadcast_to(x, tuple(lead) + x.shape[m:])


def _reduce_oob(oob: Any, m: int, rank: int, mask: Any) -> Any:
    if oob is None:
        return None
    o = _pad(np.asarray(oob), rank)
    if mask is not None:
        o = np.logical_and(o, mask)
    return np.any(o, axis=tuple(range(m)))


def _shift(v: np.ndarray, dim: int, fill: Any) -> np.ndarray:
    out = np.empty_like(v)
    src = [slice(None)] * v.ndim
    dst = [slice(None)] * v.ndim
    src[dim], dst[dim] = slice(0, -1), slice(1, None)
    out[tuple(dst)] = v[tuple(src)]
    first = [slice(None)] * v.ndim
    first[dim] = slice(0, 1)
    out[tuple(first)] = fill
    return out
