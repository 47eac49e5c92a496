"""Storages and tensor views.

A :class:`Storage` is one allocation (flat NumPy buffer, NKI dtype, memory kind, allocation shape and
site).  A :class:`NkiTensor` is a view of a storage: either a strided NumPy view of the flat buffer
(the common case, zero copy) or, for gathers (legacy out-of-range/indirect indices, vector-offset
access patterns), an array of flat element indices (``-1`` = out of range).

Fresh storages are poisoned lazily (NaN for floats, 4 for integers, reference 8.5): the fill happens
at the first access unless that access is a write covering the whole storage, which makes
allocate-then-overwrite (the usual pattern) as cheap as ``np.empty``.
"""

from __future__ import annotations

import itertools
import math
import sys
from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import as_strided as _np_as_strided

from cuda2nki.nkisim import dtypes as dt
from cuda2nki.nkisim import oob as _oob
from cuda2nki.nkisim import state as st
from cuda2nki.nkisim.affine import aff_compare, aff_grid, affine_view, tile_slices
from cuda2nki.nkisim.affine_stamps import StampBoxes
from cuda2nki.nkisim.deferred import DeferredWrites, Lazy, frame_of
from cuda2nki.nkisim.errors import fail, invalid, new_site, port_site, unsupported
from cuda2nki.nkisim.overrun import overrun_key
from cuda2nki.nkisim.widen import join_rows

_UIDS = itertools.count()


def as_strided(x: np.ndarray, shape, strides) -> np.ndarray:
    """NumPy's ``as_strided``, also over one-byte floats (fp8): NumPy rebuilds the view from
    the array interface, whose ``'<f1'`` type it cannot read, so those go through ``uint8``."""
    if x.dtype.itemsize == 1 and x.dtype.kind == "f":
        return _np_as_strided(x.view(np.uint8), shape, strides).view(x.dtype)
    return _np_as_strided(x, shape, strides)


class MemoryRegion:
    """``nl.sbuf``, ``nl.psum``, ``nl.hbm``, ``nl.private_hbm``, ``nl.shared_hbm``."""

    __slots__ = ("name", "on_chip")

    def __init__(self, name: str, on_chip: bool):
        self.name = name
        self.on_chip = on_chip

    def __repr__(self) -> str:
        return f"nl.{self.name}"

    __str__ = __repr__


sbuf = MemoryRegion("sbuf", True)
psum = MemoryRegion("psum", True)
hbm = MemoryRegion("hbm", False)
private_hbm = MemoryRegion("private_hbm", False)
shared_hbm = MemoryRegion("shared_hbm", False)
REGIONS = {r.name: r for r in (sbuf, psum, hbm, private_hbm, shared_hbm)}
for _r in REGIONS.values():  # nl.MemoryRegion.sbuf, ... (an enum in the public API)
    setattr(MemoryRegion, _r.name, _r)
del _r


class par_dim:  # noqa: N801 - NKI spelling
    """Legacy block-dimension marker: ``nl.ndarray((nb, nl.par_dim(128), F))``."""

    __slots__ = ("size",)

    def __init__(self, size: int):
        self.size = int(size)

    def __index__(self) -> int:
        return self.size

    def __int__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"par_dim({self.size})"


# --------------------------------------------------------------------------- storage


class Storage:
    __slots__ = (
        "flat",
        "dtype",
        "buffer",
        "shape",
        "pdim",
        "name",
        "fresh",
        "written",
        "produced",
        "mm_written",
        "site",
        "is_input",
        "readonly",
        "old_flat",
        "gen",
        "pending",
        "mm_pending",
        "aff",
        "lazy",
        "deferred",
        "uid",
        "_free",
        "use",
        "__weakref__",
    )

    def __init__(
        self,
        flat: np.ndarray,
        dtype: dt.NkiDType,
        buffer: MemoryRegion,
        shape: tuple,
        pdim: int | None,
        name: str,
        site: tuple[str, int],
        fresh: bool,
    ):
        self.flat = flat
        self.dtype = dtype
        self.buffer = buffer
        self.shape = shape
        self.pdim = pdim
        self.name = name
        self.fresh = fresh
        self.written: np.ndarray | None = None
        # legacy: a tile first written by a masked instruction -- per element, whether an
        # instruction produced it; ``x[...] = tile`` then writes only those (see ``produced_view``)
        self.produced: np.ndarray | None = None
        self.mm_written: np.ndarray | None = None
        self.site = site
        self.is_input = False
        self.readonly = False  # a caller's array used in place; copied on the first write
        self.old_flat: np.ndarray | None = None
        self.gen = 0
        # HBM: elements written so far (lazy poison): WrittenBoxes, or a bool mask per element
        self.pending: WrittenBoxes | np.ndarray | None = None
        self._free = None  # callback releasing on-chip accounting when the storage dies
        self.mm_pending: list | None = None  # deferred PSUM matmul accumulation (see isa)
        # legacy affine_range checks: per element, the last writer's (loop << 32 | iteration)
        self.aff: np.ndarray | StampBoxes | None = None
        # while ``fresh``: a deferred DMA load or elementwise op on loaded tiles, see ``poison``
        self.lazy: Lazy | None = None
        # HBM, while ``pending``: stores whose values are still to be computed (deferred.py)
        self.deferred: DeferredWrites | None = None
        self.uid = next(_UIDS)  # unique for the process (``id()`` values are reused)
        # on chip: [index of the last instruction that used it] (SimState memory accounting)
        self.use: list[int] | None = None

    def flush_matmul(self) -> None:
        """Evaluate deferred matmuls: one GEMM over the concatenated contraction axis."""
        p = self.mm_pending
        if p is None:
            return
        self.mm_pending = None
        _key, view, mode, alist, blist, _k = p
        if len(alist) == 1:
            res = np.matmul(alist[0].T, blist[0])
        else:
            res = np.matmul(join_rows(alist).T, join_rows(blist))
        if self.fresh:
            if mode == "set" and view.size == self.flat.size and 0 not in view.strides:
                self.fresh = False
            else:
                self.poison()
        if mode == "set":
            view[...] = res
        else:
            view += res

    def __del__(self) -> None:
        f = self._free
        if f is not None:
            f(self.uid)

    def make_writable(self) -> None:
        """Copy-on-write of a caller's input array (views rebase lazily via ``gen``)."""
        if self.readonly:
            self.old_flat = self.flat
            self.flat = self.flat.copy()
            self.readonly = False
            self.gen += 1

    def settle(self) -> None:
        """Apply the deferred poison of an HBM storage to elements never written."""
        p = self.pending
        if p is None:
            return
        if self.deferred is not None:
            self.flush_deferred()
        self.pending = None
        fill = np.asarray(dt.poison_value(self.dtype), self.flat.dtype)
        if type(p) is WrittenBoxes:
            holes = p.holes()
            if holes is not None:
                arr = self.flat.reshape(self.shape)
                for h in holes:
                    arr[h] = fill
                return
            p = p.materialize(self.flat.size)
        if not p.all():
            np.copyto(self.flat, fill, where=~p)

    def poison(self) -> None:
        """Make the stored values real before they are read or partly overwritten.

        A fresh storage gets its poison, or, where a DMA load into the whole tile was deferred,
        the loaded values; where an elementwise op on such tiles was deferred, its result
        (``lazy``, see :class:`~cuda2nki.nkisim.deferred.Lazy`).
        """
        if self.pending is not None:
            self.settle()
        if self.fresh:
            self.fresh = False
            lazy = self.lazy
            if lazy is not None:
                self.lazy = None
                lazy.compute()
            else:
                self.flat.fill(dt.poison_value(self.dtype))

    def flush_deferred(self) -> None:
        """Compute the deferred stores (before this storage is read or otherwise written)."""
        d = self.deferred
        self.deferred = None
        if d is not None:
            d.run()

    def bytes_per_partition(self) -> int:
        if self.pdim is None:
            return 0
        p = self.shape[self.pdim]
        return (self.flat.size // p if p else 0) * self.dtype.itemsize


class WrittenBoxes:
    """The written part of a fresh HBM storage, as boxes of its index space.

    Tiled kernels write their outputs tile by tile; recording each tile as a box (start, stop per
    dimension) costs a few tuple operations, where a per-element mask costs a pass over the
    tile's elements and one over the whole tensor at the end.  A write that is not a box (a
    permuted, stepped, reinterpreted or masked view) turns the record into the per-element mask.
    """

    __slots__ = ("dims", "strides", "boxes")

    MAX_CELLS = 1 << 20  # coverage grid size above which the per-element mask is used instead
    MAX_BOXES = 1 << 14  # many small writes: the per-element mask is smaller than their boxes

    def __init__(self, dims: tuple[int, ...], itemsize: int):
        self.dims = dims
        strides = [0] * len(dims)
        acc = itemsize
        for d in range(len(dims) - 1, -1, -1):
            strides[d] = acc
            acc *= dims[d]
        self.strides = tuple(strides)
        self.boxes: list[tuple[tuple[int, ...], tuple[int, ...]]] = []

    def add(self, a: np.ndarray, boff: int) -> bool:
        """Record the strided view ``a`` (``boff`` bytes into the storage); False if not a box."""
        dims, base = self.dims, self.strides
        nd = len(dims)
        if nd == 2 and a.ndim == 2:  # the common case, spelled out
            n0, n1 = a.shape
            s0, s1 = a.strides
            b0, b1 = base
            if n0 and n1 and (s0 == b0 or n0 == 1) and (s1 == b1 or n1 == 1):
                r, rem = divmod(boff, b0)
                c, rem = divmod(rem, b1)
                if not rem and r + n0 <= dims[0] and c + n1 <= dims[1]:
                    self.boxes.append(((r, c), (r + n0, c + n1)))
                    return True
        ext = [1] * nd
        d = 0
        for n, stride in zip(a.shape, a.strides):
            if n == 1:
                continue
            if n == 0:
                return True  # nothing written
            while d < nd and base[d] != stride:
                d += 1
            if d == nd:
                return False
            ext[d] = n
            d += 1
        if nd == 0 or boff % base[-1]:
            return False
        start = []
        rem = boff
        for stride in base:
            q, rem = divmod(rem, stride)
            start.append(q)
        stop = []
        for i in range(nd):
            e = start[i] + ext[i]
            if e > dims[i]:
                return False
            stop.append(e)
        self.boxes.append((tuple(start), tuple(stop)))
        return True

    def materialize(self, size: int) -> np.ndarray:
        """The per-element written mask."""
        mask = np.zeros(size, dtype=bool)
        grid = mask.reshape(self.dims)
        for start, stop in self.boxes:
            grid[tuple(map(slice, start, stop))] = True
        return mask

    def holes(self) -> list[tuple[slice, ...]] | None:
        """Boxes covering exactly the unwritten elements (``None``: too fragmented to say)."""
        dims, boxes = self.dims, self.boxes
        nd = len(dims)
        if not boxes:
            return [tuple(slice(0, n) for n in dims)]
        flat_boxes = itertools.chain.from_iterable(itertools.chain.from_iterable(boxes))
        arr = np.fromiter(flat_boxes, np.int64, 2 * nd * len(boxes)).reshape(-1, 2, nd)
        bounds = []
        lo, hi = [], []
        cells = 1
        for d in range(nd):
            b = np.unique(np.concatenate(([0, dims[d]], arr[:, 0, d], arr[:, 1, d])))
            bounds.append(b.tolist())
            lo.append(np.searchsorted(b, arr[:, 0, d]))
            hi.append(np.searchsorted(b, arr[:, 1, d]))
            cells *= len(b) - 1
        if cells > self.MAX_CELLS:
            return None
        # coverage count per grid cell: +-1 at every box corner (inclusion-exclusion), then a
        # running sum along each axis
        grid = tuple(len(b) for b in bounds)
        size = math.prod(grid)
        diff = np.zeros(size, dtype=np.int64)
        for corner in range(1 << nd):
            idx = tuple(hi[d] if corner >> d & 1 else lo[d] for d in range(nd))
            n = np.bincount(np.ravel_multi_index(idx, grid), minlength=size)
            if bin(corner).count("1") % 2:
                diff -= n
            else:
                diff += n
        diff = diff.reshape(grid)
        for d in range(nd):
            np.cumsum(diff, axis=d, out=diff)
        cov = diff[tuple(slice(0, n - 1) for n in grid)] > 0
        if cov.all():
            return []
        return [
            tuple(slice(bounds[d][c[d]], bounds[d][c[d] + 1]) for d in range(nd))
            for c in np.argwhere(~cov).tolist()
        ]


_TENSOR_NOT_SIMULATED = {
    "rearrange": "einops-style view patterns are not modelled; use permute/reshape",
    "indirect": "trn3 tensor indirection is not modelled",
}


def _normalize_shape(shape) -> tuple[tuple[int, ...], int | None]:
    if type(shape) is tuple:
        for s in shape:
            if type(s) is not int:
                break
        else:
            return shape, None
    if isinstance(shape, (int, np.integer, par_dim)):
        shape = (shape,)
    dims, pdim = [], None
    for i, s in enumerate(shape):
        if isinstance(s, par_dim):
            pdim = i
        dims.append(int(s))
    return tuple(dims), pdim


def _what(name: str, dims: tuple) -> str:
    return f"'{name}'" if name else f"a tensor of shape {dims}"


class _Accumulated:
    """What legacy ``nl.matmul`` returns when it accumulated straight into the port's ``t`` of
    ``t += nl.matmul(...)`` (``fastpath.accumulate_target``): ``t += <this>`` is then done."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<matmul result accumulated into its PSUM tile>"


ACCUMULATED = _Accumulated()

#: the ``language`` module once imported (operators on tensors call it; ``language`` imports
#: this module, so it is imported on first use, not per call)
_LANG: list = [None]


def _language():
    from cuda2nki.nkisim import language

    _LANG[0] = language
    return language


#: ``language._setitem`` once imported (``NkiTensor.__setitem__`` runs for every legacy
#: ``t[...] = expr``; an import statement there costs more than the rest of the call)
_SETITEM: list = [None]


def allocate(
    shape,
    dtype,
    buffer: MemoryRegion | None = None,
    name: str = "",
    api: str = "nl.ndarray",
    fill=None,
    sim_callers: int = 0,
) -> NkiTensor:
    """Allocate a tensor (checks rank, partition size, PSUM bank size; accounts on-chip bytes).

    ``sim_callers``: how many of its callers are known to be simulator code (see ``port_site``).
    """
    state = st._STACK[-1]
    direct = None  # an nki.compiler placement (its PSUM banks)
    if buffer is None:
        buffer = sbuf
    elif type(buffer) is not MemoryRegion:
        direct = buffer
        buffer = _region(buffer, state, api)
    if (
        buffer is sbuf
        and fill is None
        and type(shape) is tuple
        and len(shape) == 2
        and type(dtype) is _NkiDType
        and not state.strict_uninit
    ):
        p, f = shape
        if type(p) is int and type(f) is int and 0 <= p <= _PMAX and f >= 0:
            try:
                fr = _getframe(1 + sim_callers)
            except ValueError:
                fr = None
            if fr is not None and fr is state.kernel_frame:
                # port_site for a call from the kernel's own body (see engine.record)
                ent = state.kernel_entry
                site = ent[3].get(fr.f_lasti)
                if site is None:
                    site = new_site(fr, ent)
            else:
                site = port_site(1 + sim_callers)
            return _sbuf_tile(p, f, shape, dtype, name, state, site)
    if type(dtype) is dt.NkiDType:
        ndt = dtype
    else:
        try:
            ndt = dt.as_dtype(dtype)
        except TypeError as exc:
            raise fail("C2N3016", api=api, detail=str(exc)) from None
    if type(shape) is tuple and len(shape) == 2 and type(shape[0]) is int and type(shape[1]) is int:
        dims, pdim = shape, None  # the common (P, F) case of _normalize_shape
    else:
        dims, pdim = _normalize_shape(shape)
    if dims and min(dims) < 0:
        raise invalid(api, f"negative dimension in shape {dims}")
    if buffer.on_chip:
        if pdim is None:
            pdim = 0
        if len(dims) - pdim < 2 and not (state.legacy and len(dims) - pdim == 1):
            # legacy tiles may be partition-only ((P,): one element per partition), as the
            # result of indexing one free column, ``nl.load(a[0:128, j])``
            raise fail("C2N3003", what=_what(name, dims), shape=dims)
        if dims[pdim] > st.PMAX:
            raise fail("C2N3002", what=_what(name, dims), size=dims[pdim])
    else:
        pdim = None
    site = port_site(1 + sim_callers)
    if buffer is shared_hbm and (state.grid or state.lnc > 1):
        # SPMD instances share their outputs: the n-th shared_hbm allocation at a site is one tensor.
        n = state.shared_seq.get(site, 0)
        state.shared_seq[site] = n + 1
        prev = state.shared_outputs.get((site, n))
        if prev is not None and prev.shape == dims and prev.dtype == ndt:
            return NkiTensor(prev, prev.flat.reshape(dims), ndt, None)
    # ``flat`` owns the memory (``arr`` is a view of it): copies are detected by ownership
    size = math.prod(dims)
    if fill is None:
        flat = np.empty(size, ndt.np_dtype)
        fresh = True
    else:
        flat = np.full(size, fill, dtype=ndt.np_dtype) if not isinstance(fill, np.ndarray) else fill
        fresh = False
    arr = flat.reshape(dims)
    stg = Storage(flat, ndt, buffer, dims, pdim, name, site, fresh)
    if state.strict_uninit:
        stg.written = np.full(size, not fresh, dtype=bool)
    if buffer is sbuf:
        p = dims[pdim]
        nbytes = (size // p if p else 0) * ndt.itemsize  # bytes per partition
        stg.use = use = [-1]
        state.alloc_sbuf(stg.uid, nbytes, site, use)
        stg._free = state.free_sbuf
    elif buffer is psum:
        tile_bytes = math.prod(dims[pdim + 1 :]) * ndt.itemsize
        if tile_bytes > state.target.psum_tile_max_bytes:
            raise fail("C2N3008", what=_what(name, dims), size=tile_bytes, target=state.target.name)
        nblocks = math.prod(dims[:pdim])
        placed = getattr(direct, "psum_banks", None)
        if placed is not None:  # blocks that share a bank reuse it
            nplaced = placed(dims[:pdim], dims[pdim], tile_bytes)
            nblocks = nblocks if nplaced is None else nplaced
        banks = nblocks * max(1, -(-tile_bytes // st.PSUM_BANK_BYTES))
        stg.use = use = [-1]
        state.alloc_psum(stg.uid, nblocks * tile_bytes, banks, site, use)
        stg._free = state.free_psum
    elif buffer is shared_hbm and (state.grid or state.lnc > 1):
        state.shared_outputs[(site, state.shared_seq[site] - 1)] = stg
    return NkiTensor(stg, arr, ndt, pdim, None, 0)


def _sbuf_tile(
    p: int,
    f: int,
    shape: tuple[int, int],
    ndt: dt.NkiDType,
    name: str,
    state: st.SimState,
    site: tuple[str, int],
) -> NkiTensor:
    """``allocate`` of a fresh (P, F) SBUF tile, P <= 128 (the common case, checks done).

    The storage and the view are built without their ``__init__`` calls (the same fields are
    set: a test checks them against the constructors).
    """
    flat = np.empty(p * f, ndt.np_dtype)
    # Storage(flat, ndt, sbuf, shape, 0, name, site, True)
    stg = _new_object(Storage)
    stg.flat = flat
    stg.dtype = ndt
    stg.buffer = sbuf
    stg.shape = shape
    stg.pdim = 0
    stg.name = name
    stg.fresh = True
    stg.written = None
    stg.produced = None
    stg.mm_written = None
    stg.site = site
    stg.is_input = False
    stg.readonly = False
    stg.old_flat = None
    stg.gen = 0
    stg.pending = None
    stg.mm_pending = None
    stg.aff = None
    stg.lazy = None
    stg.deferred = None
    stg.uid = uid = next(_UIDS)
    stg._free = state.free_sbuf
    stg.use = use = [-1]
    nbytes = f * ndt.itemsize if p else 0  # bytes per partition
    # SimState.alloc_sbuf, inlined
    state.live_sbuf[uid] = (nbytes, site, len(state.trace), use)
    now = state.sbuf_now = state.sbuf_now + nbytes
    if now > state.target.sbuf_bytes:
        state.mem_dirty = True
        state.check_tile(nbytes, 0, site)
    # NkiTensor(stg, flat.reshape(shape), ndt, 0, None, 0)
    t = _new_object(NkiTensor)
    t._boff = 0
    t.storage = stg
    t._a = flat.reshape(shape)
    t._gen = 0
    t.shape = shape
    t.dtype = ndt
    t.pdim = 0
    t.index = None
    return t


_new_object = object.__new__
_getframe = sys._getframe
_ZERO = 0
_F32 = np.dtype(np.float32)
_NkiDType = dt.NkiDType
_PMAX = st.PMAX


def _region(buffer, state: st.SimState, api: str) -> MemoryRegion:
    """A ``buffer=`` argument that is not a region object: legacy region names, else an error."""
    if isinstance(buffer, str):
        if state.legacy and buffer in REGIONS:
            return REGIONS[buffer]
        raise invalid(api, f"buffer must be nl.sbuf/nl.psum/nl.hbm/..., not the string '{buffer}'")
    if isinstance(getattr(buffer, "region", None), MemoryRegion):
        return buffer.region  # nki.compiler direct allocation: placed like any tile there
    if not isinstance(buffer, MemoryRegion):
        raise invalid(api, f"unknown buffer {buffer!r}")
    return buffer


def wrap_host(
    array: np.ndarray, dtype: dt.NkiDType | None = None, buffer: MemoryRegion = hbm, name: str = ""
) -> NkiTensor:
    """An HBM tensor holding a copy of a host array (kernel inputs)."""
    ndt = dtype or dt.from_numpy(array.dtype)
    src = np.asarray(array)
    vals = dt.convert(src, ndt)
    shared = vals is src and src.flags.c_contiguous
    if shared:
        flat = src.reshape(-1).view()
        flat.flags.writeable = False
    else:
        flat = np.array(vals, dtype=ndt.np_dtype, copy=True).reshape(-1)
    stg = Storage(flat, ndt, buffer, tuple(array.shape), None, name, ("<host>", 0), False)
    stg.readonly = shared
    if st.current().strict_uninit:
        stg.written = np.ones(flat.size, dtype=bool)
    return NkiTensor(stg, flat.reshape(array.shape), ndt, None, None, 0)


# --------------------------------------------------------------------------- legacy index exprs


def dynamic_offset(t: NkiTensor) -> int:
    """The value of a one-element integer tile used in an index expression: a runtime offset
    (legacy ``src[ix, offsets[0, i] + iy]``), read when the access is made."""
    api = "dynamic offset"
    if not t.on_chip:
        raise invalid(api, "a runtime offset must be read from an on-chip tile, not HBM")
    if t.dtype.is_float:
        raise invalid(api, f"a runtime offset must be an integer tile, got {t.dtype.name}")
    vals = np.asarray(t.values("index"))
    if vals.size != 1:
        raise unsupported(
            "a tile of several values in an index expression",
            "index with the tile itself, or one element of it per access",
        )
    return int(vals.reshape(-1)[0])


class IndexExpr:
    """Legacy affine index tile (``nl.arange``/``nl.mgrid``): an int array with NKI arithmetic."""

    #: ``aff``: ``(first, strides)`` when ``arr[i0, i1, ...] == first + sum(strides[k] * ik)``
    #: (a size-1 axis has stride 0), known from construction; ``None``: not known
    #: ``_arr`` is ``None`` until read when ``aff`` gives the values (``k * 128 + i_p`` and the
    #: like: most such grids are only turned into a slice, never read element by element)
    __slots__ = ("_arr", "aff", "_shape")
    __array_ufunc__ = None

    def __init__(self, arr, aff: tuple[int, tuple[int, ...]] | None = None):
        a = np.asarray(arr, dtype=np.int64)
        self._arr = a
        self.aff = aff
        self._shape = a.shape

    @property
    def arr(self) -> np.ndarray:
        a = self._arr
        if a is None:
            a = self._arr = aff_grid(self.aff, self._shape)  # type: ignore[arg-type]
        return a

    @classmethod
    def range(cls, start: int, stop: int, step: int) -> IndexExpr:
        arr = np.arange(start, stop, step, dtype=np.int64)
        return cls(arr, (start, (step if arr.size > 1 else 0,)))

    @property
    def shape(self) -> tuple:
        return self._shape

    def __getitem__(self, key) -> IndexExpr:
        arr = self.arr[key]
        aff = self.aff
        if aff is not None:
            aff = _newaxis_aff(aff, key, arr.ndim)
        return IndexExpr(arr, aff)

    def _bin(self, other, f, aff_op=None):
        if type(other) is int and aff_op is not None:
            # ``k * 128 + i_p`` and the like: the general path below, without its checks; the
            # values are computed from the affine form when read
            e = _new_object(IndexExpr)
            aff = self.aff
            shape = e._shape = self._shape
            if aff is not None and len(aff[1]) == len(shape):
                e._arr = None
                e.aff = aff_op(aff, other)
            else:
                e._arr = f(self.arr, other)
                e.aff = None if aff is None else aff_op(aff, other)
            return e
        if isinstance(other, NkiTensor):
            other = dynamic_offset(other)
        o = other.arr if isinstance(other, IndexExpr) else other
        arr = f(self.arr, o)
        aff = None
        if aff_op is not None and self.aff is not None:
            if isinstance(other, IndexExpr):
                if other.aff is not None:
                    aff = _sum_aff(self.aff, other.aff, aff_op)
            elif type(other) is int or isinstance(other, np.integer):
                aff = aff_op(self.aff, int(other))
        return IndexExpr(arr, aff)

    def __add__(self, o):
        return self._bin(o, np.add, _aff_add)

    __radd__ = __add__

    def _op_with_tile(self, name: str, tile: NkiTensor, tile_first: bool) -> IndexExpr:
        """``tile <op> self`` (``tile_first``) or ``self <op> tile``, for a tile that holds one
        runtime offset (see :func:`dynamic_offset`)."""
        if name == "add":
            return self + tile
        if name == "multiply":
            return self * tile
        if name == "subtract":
            return self.__rsub__(tile) if tile_first else self - tile
        raise unsupported(f"nl.{name} of a tile and an index expression")

    def __sub__(self, o):
        return self._bin(o, np.subtract, _aff_sub)

    def __rsub__(self, o):
        return self._bin(o, lambda a, b: b - a, _aff_rsub)

    def __mul__(self, o):
        return self._bin(o, np.multiply, _aff_mul)

    __rmul__ = __mul__

    def __floordiv__(self, o):
        return self._bin(o, np.floor_divide)

    def __mod__(self, o):
        return self._bin(o, np.mod)

    def __neg__(self):
        aff = self.aff
        return IndexExpr(-self.arr, None if aff is None else _aff_mul(aff, -1))

    def _cmp(self, o, f):
        if type(o) is int and self.aff is not None:
            known = aff_compare(self.aff, self._shape, f.__name__, o)
            if known is not None:
                return Mask(factors=(known,), full=True)
        o = o.arr if isinstance(o, IndexExpr) else o
        return Mask(f(self.arr, o))

    def __lt__(self, o):
        return self._cmp(o, np.less)

    def __le__(self, o):
        return self._cmp(o, np.less_equal)

    def __gt__(self, o):
        return self._cmp(o, np.greater)

    def __ge__(self, o):
        return self._cmp(o, np.greater_equal)

    def __eq__(self, o):  # type: ignore[override]
        return self._cmp(o, np.equal)

    def __ne__(self, o):  # type: ignore[override]
        return self._cmp(o, np.not_equal)

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"IndexExpr(shape={self._shape})"


def _aff_add(aff: tuple, c: int) -> tuple:
    return (aff[0] + c, aff[1])


def _aff_sub(aff: tuple, c: int) -> tuple:
    return (aff[0] - c, aff[1])


def _aff_rsub(aff: tuple, c: int) -> tuple:
    return (c - aff[0], tuple(-s for s in aff[1]))


def _aff_mul(aff: tuple, c: int) -> tuple:
    return (aff[0] * c, tuple(s * c for s in aff[1]))


def _sum_aff(a: tuple, b: tuple, op) -> tuple | None:
    """The affine form of ``a + b`` or ``a - b`` (broadcast: axes aligned to the right)."""
    if op is _aff_add:
        sign = 1
    elif op is _aff_sub:
        sign = -1
    elif op is _aff_rsub:
        a, b, sign = b, a, -1
    else:
        return None
    sa, sb = a[1], b[1]
    n = max(len(sa), len(sb))
    sa = (0,) * (n - len(sa)) + sa
    sb = (0,) * (n - len(sb)) + sb
    return (a[0] + sign * b[0], tuple(x + sign * y for x, y in zip(sa, sb)))


def _newaxis_aff(aff: tuple, key, ndim: int) -> tuple | None:
    """The affine form after ``[:, None]``-style indexing (full slices and new axes only)."""
    if not isinstance(key, tuple):
        key = (key,)
    strides = list(aff[1])
    out: list[int] = []
    i = 0
    for k in key:
        if k is None:
            out.append(0)
        elif isinstance(k, slice) and k == slice(None):
            if i >= len(strides):
                return None
            out.append(strides[i])
            i += 1
        else:
            return None
    out.extend(strides[i:])
    return (aff[0], tuple(out)) if len(out) == ndim else None


class Mask:
    """Legacy ``mask=`` predicate: a boolean array over the (broadcast) index grid.

    ``a & b`` keeps its operands as ``factors`` (broadcastable boolean arrays whose AND is the
    mask) and builds the full grid only when ``arr`` is read: the usual tail mask
    ``(i_p < rows) & (i_f < cols)`` is a (P, 1) and a (1, F) factor, whose box
    (``legacy_isa._box``) is read from the factors alone.
    """

    #: ``full``: every factor is known to be all true (tail masks of full tiles, from the
    #: index grids' affine forms: ``affine.aff_compare``)
    __slots__ = ("factors", "_arr", "full")
    __array_ufunc__ = None

    def __init__(self, arr=None, factors: tuple[np.ndarray, ...] | None = None, full: bool = False):
        if factors is None:
            factors = (np.asarray(arr, dtype=bool),)
        self.factors = factors
        self._arr = factors[0] if len(factors) == 1 else None
        self.full = full

    @property
    def arr(self) -> np.ndarray:
        a = self._arr
        if a is None:
            f = self.factors
            a = f[0]
            for g in f[1:]:
                a = a & g
            self._arr = a
        return a

    def __and__(self, o):
        if isinstance(o, Mask):
            return Mask(factors=self.factors + o.factors, full=self.full and o.full)
        return Mask(factors=(*self.factors, _mask_arr(o)))

    __rand__ = __and__

    def __or__(self, o):
        return Mask(self.arr | _mask_arr(o))

    __ror__ = __or__

    def __invert__(self):
        return Mask(~self.arr)

    def __bool__(self) -> bool:
        from cuda2nki.nkisim.upstream_sim import truthy_mask

        return truthy_mask()


def _mask_arr(o) -> np.ndarray:
    if isinstance(o, Mask):
        return o.arr
    if isinstance(o, (bool, np.bool_)):
        return np.asarray(o)
    raise invalid("mask", f"cannot combine a mask with {type(o).__name__}")


# --------------------------------------------------------------------------- tensor view


def _strided_bytes(flat: np.ndarray, off: int, like: np.ndarray) -> np.ndarray:
    """A view of ``flat`` starting ``off`` bytes in, with ``like``'s shape, strides and dtype."""
    b = flat.view(np.uint8)[off:]
    n = (b.size // like.itemsize) * like.itemsize
    return as_strided(b[:n].view(like.dtype), like.shape, like.strides)


def _offset_of(a: np.ndarray, base: np.ndarray) -> int:
    return (a.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // a.itemsize


class NkiTensor:
    """A view of a :class:`Storage` (``nl.ndarray`` results, kernel arguments, slices)."""

    __slots__ = ("storage", "_a", "_gen", "dtype", "pdim", "index", "shape", "_boff", "__weakref__")
    __array_ufunc__ = None

    def __init__(
        self,
        storage: Storage,
        a: np.ndarray | None,
        dtype: dt.NkiDType,
        pdim: int | None,
        index: np.ndarray | None = None,
        boff: int | None = None,
    ):
        self._boff = boff  # byte offset of the view in the storage (None: not computed yet)
        self.storage = storage
        self._a = a
        self._gen = storage.gen
        self.shape: tuple[int, ...] = a.shape if a is not None else index.shape  # type: ignore[union-attr]
        self.dtype = dtype
        self.pdim = pdim
        self.index = index

    # ------------------------------------------------------------------ properties
    @property
    def a(self) -> np.ndarray | None:
        """The strided NumPy view (``None`` for gathered views)."""
        if self._gen != self.storage.gen:
            self._rebase()
        return self._a

    def _rebase(self) -> None:
        stg = self.storage
        old = self._a
        if old is not None and stg.old_flat is not None:
            off = old.__array_interface__["data"][0] - stg.old_flat.__array_interface__["data"][0]
            self._a = _strided_bytes(stg.flat, off, old)
        self._gen = stg.gen

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def buffer(self) -> MemoryRegion:
        return self.storage.buffer

    @property
    def name(self) -> str:
        return self.storage.name

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def on_chip(self) -> bool:
        return self.storage.buffer.on_chip

    @property
    def offset(self) -> int:
        """Element offset of the view's first element in the storage."""
        if self._a is None:
            raise unsupported("offset of an indirect (gathered) tensor view")
        return self._byte_offset() // self._a.itemsize

    def _byte_offset(self) -> int:
        """Byte offset of a strided view's first element in its storage (cached)."""
        b = self._boff
        if b is None:
            a = self.a
            b = self._boff = (
                a.__array_interface__["data"][0] - self.storage.flat.__array_interface__["data"][0]
            )
        return b

    @property
    def strides(self) -> tuple[int, ...]:
        if self.a is None:
            raise unsupported("strides of an indirect (gathered) tensor view")
        return tuple(s // self.a.itemsize for s in self.a.strides)

    def partitions(self) -> int:
        """Partitions spanned (1 for HBM views)."""
        pd = self.pdim
        return 1 if pd is None else self.shape[pd]

    def free_size(self) -> int:
        """Elements per partition (for on-chip) or total elements (HBM)."""
        shape = self.shape
        pd = self.pdim
        if pd == 0 and len(shape) == 2:
            return shape[1]
        if pd is None:
            return math.prod(shape)
        p = shape[pd]
        return math.prod(shape) // p if p else 0

    def is_indirect(self) -> bool:
        return self.index is not None

    def describe(self) -> str:
        n = f"'{self.name}' " if self.name else ""
        return f"{n}{tuple(self.shape)} {self.dtype.name} in {self.buffer.name}"

    def __repr__(self) -> str:
        return f"NkiTensor({self.describe()})"

    def __len__(self) -> int:
        return self.shape[0]

    def __iter__(self):
        raise invalid("NkiTensor", "tensors are not iterable; index them explicitly")

    def __bool__(self) -> bool:
        if not self.storage.buffer.on_chip:
            # ``if bias:`` on an optional HBM argument tests whether it was passed: the tensor
            # object exists at trace time (its values are never read)
            return True
        raise invalid(
            "NkiTensor",
            "the truth value of a tensor is not known at trace time "
            "(control flow on tensor values is not allowed)",
        )

    # ------------------------------------------------------------------ data access
    def values(self, api: str = "read") -> np.ndarray:
        """Stored values (storage dtype); a view for strided tensors, a gather otherwise."""
        stg = self.storage
        if stg.mm_pending is not None:
            stg.flush_matmul()
        if stg.fresh or stg.pending is not None:
            stg.poison()
        if stg.written is not None:
            self._check_written(api)
        if self.index is None:
            if self._gen == stg.gen:
                return self._a  # type: ignore[return-value]
            return self.a  # type: ignore[return-value]
        idx = self.index
        ok = idx >= 0
        flat = (
            stg.flat
            if self.a is None and self.dtype.np_dtype == stg.flat.dtype
            else stg.flat.view(self.dtype.np_dtype)
        )
        vals = flat[np.where(ok, idx, 0)]
        if not ok.all():
            vals[~ok] = dt.poison_value(self.dtype)
        return vals

    def f32(self, api: str = "read") -> np.ndarray:
        v = self.values(api)
        if self.dtype.is_float:
            if v.dtype == dt.F32:
                return v
            if dt.is_bf16(v.dtype):
                return dt.bf16_to_f32(v)
            return v.astype(np.float32)
        return v.astype(np.float32)

    def _parallel_view(self, w: np.ndarray) -> np.ndarray:
        """The same view over a parallel per-element array of the storage (strided views)."""
        a = self.a
        flat = self.storage.flat
        off = self._byte_offset() // flat.itemsize
        strides = tuple([st_ // flat.itemsize * w.itemsize for st_ in a.strides])
        if not a.size or 0 in strides:
            return as_strided(w[off:] if a.size else w, a.shape, strides)
        # the view lies inside ``w`` (as ``a`` lies inside ``flat``): a bounds-checked ndarray
        # over w's buffer is the same view, built without as_strided's Python overhead
        return np.ndarray(a.shape, w.dtype, w, off * w.itemsize, strides)

    def _written_view(self) -> np.ndarray:
        w = self.storage.written
        assert w is not None
        if self.index is not None:
            ok = self.index >= 0
            return np.where(ok, w[np.where(ok, self.index, 0)], True)
        a = self.a
        off = (
            _offset_of(a, self.storage.flat.view(a.dtype))
            if a.dtype != self.storage.flat.dtype
            else _offset_of(a, self.storage.flat)
        )
        strides = tuple(s // a.itemsize for s in a.strides)
        return as_strided(w[off:] if a.size else w, a.shape, strides)

    def _check_written(self, api: str) -> None:
        if self.dtype.np_dtype != self.storage.flat.dtype:
            return
        if not self._written_view().all():
            raise fail("C2N3020", api=api, what=self.describe())

    def fills_fresh(self, out: np.ndarray) -> bool:
        """This view (array ``out``) covers the whole of a fresh storage that nothing has read,
        written or deferred yet: a fast path may write it without :meth:`out_view`'s
        bookkeeping (it then clears ``fresh`` itself)."""
        s = self.storage
        return (
            s.fresh
            and s.pending is None
            and s.written is None
            and s.mm_pending is None
            and not s.readonly
            and not s.is_input
            and self._gen == s.gen
            and out.size == s.flat.size
            and 0 not in out.strides
        )

    def out_view(self, raw: bool = False) -> np.ndarray | None:
        """The float32 NumPy view to compute straight into (whole view written), or ``None``.

        ``raw``: any dtype; the caller writes values already in this tensor's storage format
        (a same-dtype copy).  Does the bookkeeping of a full write first (copy-on-write,
        deferred matmuls, poison, written/pending marks); callers must then write every element
        of the returned view.
        """
        stg = self.storage
        a = self._a if self._gen == stg.gen else self.a
        if (
            a is None
            or (
                not raw
                and (
                    (a.dtype is not _F32 and a.dtype != np.float32) or self.dtype.name != "float32"
                )
            )
            or stg.written is not None
            or (stg.is_input and st.current().legacy)
            or 0 in a.strides
        ):
            return None
        if stg.readonly:
            stg.make_writable()
            a = self.a
        if stg.mm_pending is not None:
            stg.flush_matmul()
        if stg.deferred is not None:
            stg.flush_deferred()
        if stg.fresh:
            if a.size == stg.flat.size:
                stg.fresh = False
            elif not stg.buffer.on_chip:
                stg.fresh = False
                stg.pending = WrittenBoxes(stg.shape, stg.flat.itemsize)
            else:
                stg.poison()
        if stg.pending is not None:
            self._mark_pending(None)
        if stg.produced is not None:
            self._note_produced(None)
        return a

    def defer_write(self, lazy: Lazy) -> bool:
        """Write ``lazy``'s values (a deferred load or elementwise op, see ``Storage.poison``)
        into this whole view later (see deferred.py): True if deferred, False if the caller must
        write them now.

        Only into a fresh or lazily poisoned HBM storage, through a plain 2-D view, from
        sources whose rows deferred.py can place (same dtype, element-contiguous rows).
        """
        stg = self.storage
        a = self._a
        if (
            stg.buffer.on_chip
            or not (stg.fresh or type(stg.pending) is WrittenBoxes)
            or stg.written is not None
            or stg.readonly
            or stg.is_input
            or stg.mm_pending is not None
            or self._gen != stg.gen
            or a is None
        ):
            return False
        dst = frame_of(a, stg.flat, self._byte_offset())
        if dst is None:
            return False
        srcs = []
        for v, (flat, boff) in zip(lazy.srcs, lazy.locs):
            f = frame_of(v, flat, boff) if v.shape == a.shape and v.dtype == a.dtype else None
            if f is None:
                return False
            srcs.append(f)
        fn = lazy.fn
        key = DeferredWrites.key_of(fn, dst, tuple(srcs))
        d = stg.deferred
        if d is None or d.key != key:
            stg.flush_deferred()
            d = stg.deferred = DeferredWrites(key, fn, dst, tuple(srcs))
        if stg.fresh:
            stg.fresh = False
            stg.pending = WrittenBoxes(stg.shape, stg.flat.itemsize)
        self._mark_pending(None)
        d.boxes.append((dst.row, dst.col, dst.row + a.shape[0], dst.col + a.shape[1]))
        return True

    def _mark_pending(self, where: np.ndarray | None) -> None:
        """Note this view's elements (``where`` selects) as written in a lazily poisoned storage."""
        stg = self.storage
        p = stg.pending
        if type(p) is WrittenBoxes:
            if (
                where is None
                and len(p.boxes) < p.MAX_BOXES
                and p.add(self._a if self._gen == stg.gen else self.a, self._byte_offset())
            ):
                return
            p = stg.pending = p.materialize(stg.flat.size)
        pv = self._parallel_view(p)
        if where is None:
            pv[...] = True
        else:
            pv |= np.broadcast_to(where, self.shape)

    def assign(self, vals, where: np.ndarray | None = None, api: str = "write") -> None:
        """Write computed values (converted to this tensor's dtype with NKI rounding)."""
        stg = self.storage
        if stg.is_input and st.current().legacy:
            state = st.current()
            if not state.inout:
                raise fail("C2N3012", api=api, what=stg.name or "?")
            state.written_args.add(id(stg))
        if where is not None and where.all():
            where = None  # a mask that selects everything (a legacy tile inside the bounds)
        shape = self.shape
        if not isinstance(vals, np.ndarray):
            vals = np.asarray(vals, dtype=np.float32 if isinstance(vals, float) else None)
        conv = dt.convert(vals, self.dtype)
        if conv.shape != shape:
            if conv.size == math.prod(shape) and conv.ndim:
                conv = conv.reshape(shape)
            else:
                try:
                    conv = np.broadcast_to(conv, shape)
                except ValueError:
                    raise fail(
                        "C2N3014",
                        api=api,
                        detail=f"cannot write values of shape {conv.shape} into {self.describe()}",
                    ) from None
        if stg.readonly:
            stg.make_writable()
        if stg.mm_pending is not None:
            stg.flush_matmul()
        if stg.deferred is not None:
            stg.flush_deferred()
        if self.index is not None:
            self._scatter(conv, where, api)
            return
        a = self.a
        if stg.fresh:
            if where is None and a.size == stg.flat.size and 0 not in a.strides:
                stg.fresh = False
            elif not stg.buffer.on_chip:
                stg.fresh = False
                stg.pending = WrittenBoxes(stg.shape, stg.flat.itemsize)
            else:
                if where is not None and st.current().legacy:
                    stg.produced = np.zeros(stg.flat.size, dtype=bool)
                stg.poison()
        try:
            if where is None:
                a[...] = conv
            else:
                np.copyto(a, conv, where=np.broadcast_to(where, shape))
        except ValueError as exc:
            raise invalid(api, f"cannot write into this view ({exc})") from None
        if stg.produced is not None:
            self._note_produced(where)
        if stg.written is not None:
            wv = self._written_view()
            if where is None:
                wv[...] = True
            else:
                wv |= np.broadcast_to(where, shape)
        if stg.pending is not None:
            self._mark_pending(where)
        if stg.buffer is shared_hbm:
            aff = st.current().affine
            if aff:
                self._check_affine(aff[-1], where)

    def _note_produced(self, where: np.ndarray | None) -> None:
        """Mark this view's elements (``where`` selects) as produced in a masked result tile."""
        stg = self.storage
        a = self.a
        if a is None or a.dtype != stg.flat.dtype:
            stg.produced = None  # a reinterpreted view: stop telling produced elements apart
            return
        if where is None and a.size == stg.flat.size and 0 not in a.strides:
            stg.produced = None  # every element written since
            return
        view = self._parallel_view(stg.produced)
        if where is None:
            view[...] = True
        else:
            view |= np.broadcast_to(where, self.shape)

    def produced_view(self) -> np.ndarray | None:
        """Per element of this view, whether the masked instruction that made its tile produced
        it; ``None`` when every element holds a value an instruction wrote (or may have).

        Legacy ``t[...] = nl.op(x, mask=m)`` is one instruction writing ``t`` where ``m`` holds
        (reference 4.2: "outputs there keep previous contents"), not a copy of a whole tile
        whose other elements were never written."""
        stg = self.storage
        if stg.produced is None or self.index is not None or self.a is None:
            return None
        if self.a.dtype != stg.flat.dtype:
            return None
        return self._parallel_view(stg.produced)

    def _check_affine(self, loop: list, where: np.ndarray | None) -> None:
        """Legacy affine_range independence: one writer iteration per output element.

        Each element keeps a stamp of its last write in an affine loop: the loop's serial
        number (``language._affine_iter``, increasing) in the high 32 bits, the iteration in the
        low ones (0: never written in one).  Stamps of other loops are ignored, so a new loop
        (each run of an inner loop is one) needs no reset of the whole tensor.
        """
        stg = self.storage
        serial, it = loop
        base = serial << 32
        mark = base | (it & 0xFFFFFFFF)
        stamps = stg.aff
        if type(stamps) is not np.ndarray:
            # boxes while each write is a new box (affine_stamps.py)
            if stamps is None:
                stamps = stg.aff = StampBoxes(WrittenBoxes(stg.shape, stg.flat.itemsize))
            a = self.a
            if (
                where is None
                and a is not None
                and a.dtype == stg.flat.dtype
                and stamps.add(a, self._byte_offset(), mark)
            ):
                return
            stg.aff = stamps.materialize(stg.flat.size)
        view = self._parallel_view(stg.aff)
        sel = view if where is None else view[np.broadcast_to(where, self.shape)]
        # stamps of earlier loops are below ``base``: when all are, nothing clashes (the usual
        # case, each element written once) and one pass over the stamps tells it
        if sel.size and sel.max() >= base:
            clash = (sel >= base) & (sel < base + (1 << 32)) & (sel != mark)
        else:
            clash = None
        if clash is not None and clash.any():
            low = int(np.asarray(sel)[clash].reshape(-1)[0]) & 0xFFFFFFFF
            first = low - (1 << 32) if low >= 1 << 31 else low  # the iteration, signed
            raise fail("C2N3030", first=first, second=it, what=stg.name or "an output")
        if where is None:
            view[...] = mark
        else:
            np.copyto(view, mark, where=np.broadcast_to(where, self.shape))

    def _scatter(self, conv: np.ndarray, where: np.ndarray | None, api: str) -> None:
        stg = self.storage
        stg.poison()
        idx = self.index
        sel = idx >= 0
        if where is not None:
            w = np.broadcast_to(where, idx.shape)
            if (w & ~sel).any():
                raise _oob.out_of_bounds(self, f"{api} writes outside {stg.name or 'the tensor'}")
            sel = sel & w
        elif not sel.all():
            raise _oob.out_of_bounds(self, f"{api} writes outside {stg.name or 'the tensor'}")
        flat = (
            stg.flat
            if self.dtype.np_dtype == stg.flat.dtype
            else stg.flat.view(self.dtype.np_dtype)
        )
        flat[idx[sel]] = np.broadcast_to(conv, idx.shape)[sel]
        if stg.written is not None:
            stg.written[idx[sel]] = True
        if stg.produced is not None:
            stg.produced[idx[sel]] = True

    # ------------------------------------------------------------------ indexing
    def __getitem__(self, key) -> NkiTensor:
        if key is Ellipsis:
            return self  # ``t[...]``: every element, as ``t`` (legacy ``t[...] = expr``)
        a = self._a
        if type(key) is tuple and len(key) == 2 and a is not None:
            # the common case t[p0:p1, f0:f1] on a 2-D strided view
            k0, k1 = key
            shape = self.shape
            if type(k0) is IndexExpr and type(k1) is IndexExpr and len(shape) == 2:
                # legacy t[r + nl.arange(P)[:, None], c + nl.arange(F)[None, :]] (affine.py)
                found = self._tile_view(k0, k1)
                if found is not None:
                    return found
            if (
                type(k0) is slice
                and type(k1) is slice
                and len(shape) == 2
                and k0.step is None
                and k1.step is None
            ):
                n0, n1 = shape
                b0 = k0.stop
                b1 = k1.stop
                if b0 is None:
                    b0 = n0
                if b1 is None:
                    b1 = n1
                if type(b0) is int and type(b1) is int:
                    a0 = k0.start
                    a1 = k1.start
                    # ``is _ZERO``: exactly the int 0 (CPython shares small ints; another 0 takes
                    # the full check below)
                    if (
                        (a0 is _ZERO or a0 is None)
                        and (a1 is _ZERO or a1 is None)
                        and b0 == n0
                        and b1 == n1
                    ):
                        return self  # the whole view (views are immutable)
                    if a0 is None:
                        a0 = 0
                    if a1 is None:
                        a1 = 0
                    if (
                        type(a0) is int
                        and type(a1) is int
                        and self._gen == self.storage.gen  # else the general path rebases
                        and 0 <= a0 <= n0
                        and 0 <= b0 <= n0
                        and 0 <= a1 <= n1
                        and 0 <= b1 <= n1
                    ):
                        b = self._boff
                        if b is not None:
                            s0, s1 = a.strides
                            b += a0 * s0 + a1 * s1
                        # NkiTensor(self.storage, a[key], self.dtype, self.pdim, None, b),
                        # without the __init__ call
                        v = a[key]
                        t = _new_object(NkiTensor)
                        t._boff = b
                        t.storage = self.storage
                        t._a = v
                        t._gen = self._gen
                        t.shape = v.shape
                        t.dtype = self.dtype
                        t.pdim = self.pdim
                        t.index = None
                        return t
        if not isinstance(key, tuple):
            key = (key,)
        if a is not None and len(key) == a.ndim and self._gen == self.storage.gen:
            fast = _fast_slices(key, a.shape)
            if fast:
                b = self._boff
                if b is not None:
                    for k, stride in zip(key, a.strides):
                        if k.start:
                            b += k.start * stride
                return NkiTensor(self.storage, a[key], self.dtype, self.pdim, None, b)
        for k in key:
            if isinstance(k, (IndexExpr, NkiTensor, np.ndarray, list)):
                return self._advanced(key)
        return self._basic(key)

    def _expand(self, key: tuple) -> tuple:
        n_ell = sum(1 for k in key if k is Ellipsis)
        if n_ell > 1:
            raise invalid("indexing", "at most one '...' in an index")
        nd = self.ndim
        if n_ell:
            i = key.index(Ellipsis)
            fill = nd - (len(key) - 1)
            key = key[:i] + (slice(None),) * max(fill, 0) + key[i + 1 :]
        if len(key) > nd:
            raise fail(
                "C2N3019", detail=f"{len(key)} indices for a {nd}-D tensor {self.describe()}"
            )
        return key + (slice(None),) * (nd - len(key))

    def _basic(self, key: tuple) -> NkiTensor:
        key = self._expand(key)
        if self.pdim is None and st._STACK[-1].legacy:
            wide = overrun_key(key, self.shape)  # a slice past the end, for a masked access
            if wide is not None:
                return self._advanced(wide)
        shape = self.shape
        pdim = self.pdim
        on_chip = pdim is not None
        new_key: list = []
        dropped_free: list[int] = []  # positions in new_key of dropped free-dim ints
        new_pdim = None
        kept = 0
        for d, k in enumerate(key):
            n = shape[d]
            if isinstance(k, (int, np.integer)) and not isinstance(k, bool):
                i = int(k)
                if i < 0:
                    i += n
                if not 0 <= i < n:
                    raise fail(
                        "C2N3019",
                        detail=f"index {int(k)} on dimension {d} of size {n} ({self.describe()})",
                    )
                if on_chip and d == pdim:
                    new_key.append(slice(i, i + 1))
                    new_pdim = kept
                    kept += 1
                else:
                    if not on_chip or d > pdim:  # type: ignore[operator]
                        dropped_free.append(len(new_key))
                    new_key.append(i)
            elif isinstance(k, slice):
                new_key.append(_check_slice(k, n, d, self))
                if on_chip and d == pdim:
                    new_pdim = kept
                kept += 1
            elif k is None:
                new_key.append(None)
                kept += 1
            else:
                raise invalid("indexing", f"unsupported index {k!r} of type {type(k).__name__}")
        min_rank = 2 if on_chip else 1
        while kept < min_rank and dropped_free:
            pos = dropped_free.pop()
            i = new_key[pos]
            new_key[pos] = slice(i, i + 1)
            kept += 1
        if self.index is not None:
            return NkiTensor(self.storage, None, self.dtype, new_pdim, self.index[tuple(new_key)])
        return NkiTensor(
            self.storage,
            self.a[tuple(new_key)],
            self.dtype,  # type: ignore[index]
            new_pdim if on_chip else None,
        )

    def _tile_view(self, k0: IndexExpr, k1: IndexExpr) -> NkiTensor | None:
        """``self[k0, k1]`` of a 2-D strided view as a basic slice (``affine.tile_slices``)."""
        if (
            k0.aff is None
            or k1.aff is None
            or self._gen != self.storage.gen
            or self.index is not None
        ):
            return None
        a = self._a
        sl = tile_slices(k0.aff, k0.shape, k1.aff, k1.shape, self.shape)
        if sl is None:
            return None
        b = self._boff
        if b is not None:
            s0, s1 = a.strides
            b += sl[0].start * s0 + sl[1].start * s1
        return NkiTensor(
            self.storage, a[sl], self.dtype, 0 if self.pdim is not None else None, None, b
        )

    def _advanced(self, key: tuple) -> NkiTensor:
        """Legacy affine/indirect indexing with index tiles (reference 4.2)."""
        a = self._a
        if (
            a is not None
            and self.index is None
            and self._gen == self.storage.gen
            and len(key) <= a.ndim
            and all(type(k) is IndexExpr and k.aff is not None for k in key)
        ):
            # the common case: affine index tiles of known form (affine.py)
            boff = self._boff
            if boff is None:
                boff = self._byte_offset()
            found = affine_view(
                a,
                boff,
                self.storage.flat,
                self.shape,
                [k.aff for k in key],
                [k.shape for k in key],
            )
            if found is not None:
                view, boff = found
                pdim = 0 if self.pdim is not None else None
                return NkiTensor(self.storage, view, self.dtype, pdim, None, boff)
        if any(isinstance(k, slice) for k in key):
            raise invalid(
                "indexing",
                "mixing basic (slice) and advanced (arange) indexing in one "
                "subscript is not allowed",
            )
        if len(key) > self.ndim:
            raise fail("C2N3019", detail=f"{len(key)} indices for a {self.ndim}-D tensor")
        arrs = []
        affs = []
        for k in key:
            affs.append(k.aff if isinstance(k, IndexExpr) else None)
            if isinstance(k, IndexExpr):
                arrs.append(k.arr)
            elif isinstance(k, NkiTensor):
                v = k.values("index")
                arrs.append(np.asarray(v).astype(np.int64))
            elif isinstance(k, (int, np.integer)):
                arrs.append(np.asarray(int(k), dtype=np.int64))
            else:
                arrs.append(np.asarray(k, dtype=np.int64))
        shape = self.shape
        nrest = self.ndim - len(key)
        bshape = np.broadcast_shapes(*[a.shape for a in arrs])
        if self.index is None and not any(isinstance(k, NkiTensor) for k in key):
            view = self._affine_view(arrs, bshape, affs)
            if view is not None:
                return view
        rest = shape[len(key) :]
        out_shape = tuple(bshape) + tuple(rest)
        nb = len(bshape)
        lead = [a.reshape(a.shape + (1,) * nrest) for a in arrs]
        for j in range(nrest):
            r = np.arange(rest[j], dtype=np.int64).reshape(
                (1,) * (nb + j) + (rest[j],) + (1,) * (nrest - j - 1)
            )
            lead.append(r)
        inb = np.ones(out_shape, dtype=bool)
        for d, a in enumerate(lead):
            inb &= (a >= 0) & (a < shape[d])
        if self.index is not None:
            safe = [np.where(inb, np.broadcast_to(a, out_shape), 0) for a in lead]
            idx = self.index[tuple(safe)]
            idx = np.where(inb, idx, -1)
            return NkiTensor(
                self.storage, None, self.dtype, 0 if self.pdim is not None else None, idx
            )
        base = (
            self.storage.flat
            if self.a.dtype == self.storage.flat.dtype
            else self.storage.flat.view(self.a.dtype)
        )
        off = _offset_of(self.a, base)
        strides = [s // self.a.itemsize for s in self.a.strides]
        flat = np.full(out_shape, off, dtype=np.int64)
        for d, a in enumerate(lead):
            if strides[d]:
                flat = flat + strides[d] * a
        flat = np.broadcast_to(flat, out_shape)
        pdim = 0 if self.pdim is not None else None
        # an index tile is a dynamic (indirect) access even where its values happen to be
        # affine: a scatter through it must still see every repeated index
        dynamic = any(isinstance(k, NkiTensor) for k in key)
        if inb.all() and not dynamic:
            aff = _affine_strides(flat)
            if aff is not None:
                f0 = int(flat.reshape(-1)[0]) if flat.size else off
                a = as_strided(base[f0:], out_shape, tuple(s * base.itemsize for s in aff))
                return NkiTensor(self.storage, a, self.dtype, pdim)
        out = NkiTensor(self.storage, None, self.dtype, pdim, np.where(inb, flat, -1))
        if not inb.all():
            _oob.record(out, flat, inb, base.size)
        return out

    def _affine_view(
        self, arrs: list[np.ndarray], bshape: tuple[int, ...], affs: list | None = None
    ) -> NkiTensor | None:
        """``_advanced``'s strided view, found from the index tiles themselves: when each is
        affine in its own axes (``base + nl.arange(P)[:, None]`` and the like) and within its
        dimension, the access is a view whose strides combine theirs; no per-element index
        grid is built.  ``None``: take the general path."""
        a = self.a
        if a is None:
            return None
        base = self.storage.flat
        if a.dtype != base.dtype:
            base = base.view(a.dtype)
        isz = a.itemsize
        nb = len(bshape)
        f0 = _offset_of(a, base)
        strides = [0] * nb
        for d, (ix, n) in enumerate(zip(arrs, self.shape)):
            if ix.size == 0:
                return None
            aff = affs[d] if affs is not None else None
            if aff is not None and len(aff[1]) == ix.ndim:
                # known affine form: its range from the ends of each axis
                own, first = aff[1], aff[0]
                lo = hi = first
                for s_, m in zip(own, ix.shape):
                    lo += min(0, s_ * (m - 1))
                    hi += max(0, s_ * (m - 1))
                if lo < 0 or hi >= n:
                    return None
            else:
                own = _affine_strides(ix)
                if own is None or ix.min() < 0 or ix.max() >= n:
                    return None
                first = int(ix.reshape(-1)[0])
            step = a.strides[d] // isz
            f0 += step * first
            lead = nb - ix.ndim  # broadcasting aligns the index tile's axes to the right
            for k, s_ in enumerate(own):
                strides[lead + k] += step * s_
        rest = self.shape[len(arrs) :]
        shape = tuple(bshape) + tuple(rest)
        el = strides + [s_ // isz for s_ in a.strides[len(arrs) :]]
        view = as_strided(base[f0:], shape, tuple(s_ * isz for s_ in el))
        return NkiTensor(self.storage, view, self.dtype, 0 if self.pdim is not None else None)

    def __setitem__(self, key, value) -> None:
        if value is self and key is Ellipsis and self.index is None:
            return  # ``t[...] = t``: the store of an instruction that wrote ``t`` (fastpath.py)
        f = _SETITEM[0]
        if f is None:
            from cuda2nki.nkisim import language as _nl

            f = _SETITEM[0] = _nl._setitem
        f(self, key, value)

    # ------------------------------------------------------------------ view methods (0.5.0+)
    # (documented methods the simulator does not model are refused with C2N3001 where they are
    # read: properties of their own, see _refused_attribute below -- not a class-level
    # __getattr__, which would slow down every attribute read of every tensor)

    def vector_select(self, dim: int, offsets) -> NkiTensor:
        """Per-partition row gather of an HBM tensor: row ``p`` of the result is ``t[offsets[p]]``.

        ``offsets`` is a ``(P, 1)`` integer tensor; the result is an indirect view (rows out of
        range are reported by the instruction that reads them, or skipped with ``oob_mode.skip``).
        """
        api = "NkiTensor.vector_select"
        if int(dim) != 0:
            raise unsupported(f"{api}(dim={dim})", "only dim 0 is documented")
        if self.pdim is not None:
            raise invalid(api, "vector_select applies to HBM tensors only")
        a = self._need_strided(api)
        if not isinstance(offsets, NkiTensor):
            raise invalid(api, f"offsets must be a (P, 1) tensor, got {type(offsets).__name__}")
        if offsets.dtype.is_float:
            raise fail("C2N3016", api=api, detail=f"offsets dtype {offsets.dtype.name}")
        rows = np.asarray(offsets.values(api)).reshape(-1).astype(np.int64)
        n0 = a.shape[0]
        esz = a.itemsize
        strides = [st_ // esz for st_ in a.strides]
        idx = self.offset + rows.reshape((-1,) + (1,) * (a.ndim - 1)) * strides[0]
        for k in range(1, a.ndim):
            shp = [1] * a.ndim
            shp[k] = a.shape[k]
            idx = idx + np.arange(a.shape[k], dtype=np.int64).reshape(shp) * strides[k]
        shape = (rows.size,) + a.shape[1:]
        ok = np.broadcast_to(
            ((rows >= 0) & (rows < n0)).reshape((-1,) + (1,) * (a.ndim - 1)), shape
        )
        return NkiTensor(self.storage, None, self.dtype, None, np.where(ok, idx, -1))

    def _with(self, a: np.ndarray, pdim=...) -> NkiTensor:
        return NkiTensor(self.storage, a, self.dtype, self.pdim if pdim is ... else pdim)

    def _need_strided(self, api: str) -> np.ndarray:
        if self.a is None:
            raise unsupported(api, "on an indirect (gathered) view")
        return self.a

    def slice(self, dim: int, start: int, end: int, step: int = 1) -> NkiTensor:
        key = [slice(None)] * self.ndim
        key[dim] = slice(start, end, step)
        return self[tuple(key)]

    def select(self, dim: int, index) -> NkiTensor:
        if isinstance(index, NkiTensor):
            index = int(np.asarray(index.values("select")).reshape(-1)[0])
        if self.pdim is not None and dim == self.pdim:
            raise invalid("select", "cannot select on the partition dimension of an on-chip tensor")
        n = self.shape[dim]
        i = int(index) + (n if int(index) < 0 else 0)
        if not 0 <= i < n:
            raise fail("C2N3019", detail=f"select index {index} on dimension {dim} of size {n}")
        a = self._need_strided("select")
        key = [slice(None)] * self.ndim
        key[dim] = i
        pd = self.pdim
        if pd is not None and dim < pd:
            pd -= 1
        return self._with(a[tuple(key)], pd)

    def permute(self, dims: Sequence[int]) -> NkiTensor:
        dims = tuple(int(d) for d in dims)
        if self.pdim is not None and dims[0] != self.pdim:
            raise invalid("permute", "the partition dimension must stay first on-chip")
        return self._with(
            self._need_strided("permute").transpose(dims), 0 if self.pdim is not None else None
        )

    def broadcast(self, dim: int, size: int) -> NkiTensor:
        if self.shape[dim] != 1:
            raise invalid("broadcast", f"dimension {dim} has size {self.shape[dim]}, not 1")
        if self.pdim is not None and dim == self.pdim:
            raise invalid("broadcast", "cannot broadcast the partition dimension on-chip")
        a = self._need_strided("broadcast")
        shape = list(a.shape)
        shape[dim] = int(size)
        strides = list(a.strides)
        strides[dim] = 0
        return self._with(as_strided(a, tuple(shape), tuple(strides)))

    def broadcast_to(self, shape) -> NkiTensor:
        from cuda2nki.nkisim import language as _nl

        return _nl.broadcast_to(self, shape)

    def expand_dim(self, dim: int) -> NkiTensor:
        a = self._need_strided("expand_dim")
        pd = self.pdim
        if pd is not None and dim <= pd:
            pd += 1
        return self._with(np.expand_dims(a, dim), pd)

    def squeeze_dim(self, dim: int) -> NkiTensor:
        if self.shape[dim] != 1:
            raise invalid("squeeze_dim", f"dimension {dim} has size {self.shape[dim]}, not 1")
        a = self._need_strided("squeeze_dim")
        pd = self.pdim
        if pd is not None and dim < pd:
            pd -= 1
        return self._with(np.squeeze(a, axis=dim), pd)

    def reshape(self, *dims, shape=None) -> NkiTensor:
        """``t.reshape(a, b)``, ``t.reshape((a, b))`` or ``t.reshape(shape=(a, b))``."""
        if shape is not None:
            if dims:
                raise invalid("reshape", "give the new shape once (positionally or as shape=)")
            dims = (shape,)
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        shape = tuple(int(s) for s in dims)
        a = self._need_strided("reshape")
        if -1 not in shape and math.prod(shape) != a.size:
            raise invalid("reshape", f"cannot reshape {a.shape} ({a.size} elements) to {shape}")
        if self.pdim is not None and shape[0] != a.shape[0]:
            raise invalid(
                "reshape",
                f"on-chip reshape must keep the partition dimension ({a.shape[0]} -> {shape[0]})",
            )
        r = a.view()
        try:
            r.shape = shape
        except (AttributeError, ValueError):
            raise invalid(
                "reshape", f"view {a.shape} is not contiguous enough to reshape to {shape}"
            ) from None
        return self._with(r)

    def reshape_dim(self, dim: int, shape: Sequence[int]) -> NkiTensor:
        s = list(self.shape)
        return self.reshape(tuple(s[:dim]) + tuple(shape) + tuple(s[dim + 1 :]))

    def flatten_dims(self, start: int, end: int) -> NkiTensor:
        s = list(self.shape)
        return self.reshape(
            tuple(s[:start]) + (math.prod(s[start : end + 1]),) + tuple(s[end + 1 :])
        )

    def view(self, dtype) -> NkiTensor:
        ndt = dt.as_dtype(dtype)
        a = self._need_strided("view")
        try:
            r = a.view(ndt.np_dtype)
        except ValueError as exc:
            raise invalid("view", f"cannot reinterpret as {ndt.name}: {exc}") from None
        return NkiTensor(self.storage, r, ndt, self.pdim)

    reinterpret_cast = view

    def get_pattern(self) -> list[list[int]]:
        return [[s, n] for s, n in zip(self.strides, self.shape)]

    def is_contiguous(self) -> bool:
        a = self._need_strided("is_contiguous")
        if self.pdim is not None and a.ndim > 1:
            return bool(a[0:1].flags.c_contiguous) if a.shape[0] else True
        return bool(a.flags.c_contiguous)

    def ap(
        self,
        pattern,
        offset=None,
        scalar_offset=None,
        vector_offset=None,
        indirect_dim=0,
        dtype=None,
    ) -> NkiTensor:
        return access_pattern(
            self, pattern, offset, scalar_offset, vector_offset, indirect_dim, dtype
        )

    # ------------------------------------------------------------------ operators
    def _op(self, name: str, other, reverse: bool = False):
        if isinstance(other, IndexExpr):  # ``offsets[0, i] + iy``: a runtime offset
            return other._op_with_tile(name, self, not reverse)
        f = getattr(_LANG[0] or _language(), name)
        return f(other, self) if reverse else f(self, other)

    def __add__(self, o):
        return self._op("add", o)

    def __radd__(self, o):
        return self._op("add", o, True)

    def __sub__(self, o):
        return self._op("subtract", o)

    def __rsub__(self, o):
        return self._op("subtract", o, True)

    def __mul__(self, o):
        return self._op("multiply", o)

    def __rmul__(self, o):
        return self._op("multiply", o, True)

    def __truediv__(self, o):
        return self._op("divide", o)

    def __rtruediv__(self, o):
        return self._op("divide", o, True)

    def __pow__(self, o):
        return self._op("power", o)

    def __rpow__(self, o):
        return self._op("power", o, True)

    def __mod__(self, o):
        return self._op("mod", o)

    def __and__(self, o):
        return self._op("bitwise_and", o)

    def __or__(self, o):
        return self._op("bitwise_or", o)

    def __xor__(self, o):
        return self._op("bitwise_xor", o)

    def __lshift__(self, o):
        return self._op("left_shift", o)

    def __rshift__(self, o):
        return self._op("right_shift", o)

    def __lt__(self, o):
        return self._op("less", o)

    def __le__(self, o):
        return self._op("less_equal", o)

    def __gt__(self, o):
        return self._op("greater", o)

    def __ge__(self, o):
        return self._op("greater_equal", o)

    def __eq__(self, o):  # type: ignore[override]
        if o is None:  # `bias == None`: Python's identity test, not an instruction
            return False
        return self._op("equal", o)

    def __ne__(self, o):  # type: ignore[override]
        if o is None:
            return True
        return self._op("not_equal", o)

    __hash__ = object.__hash__

    def __neg__(self):
        from cuda2nki.nkisim import language as _nl

        return _nl.negative(self)

    def __abs__(self):
        from cuda2nki.nkisim import language as _nl

        return _nl.abs(self)

    def __invert__(self):
        from cuda2nki.nkisim import language as _nl

        return _nl.invert(self)

    def _inplace(self, name: str, other):
        if other is ACCUMULATED:
            return self  # ``t += nl.matmul(...)`` accumulated into t already (fastpath.py)
        (_LANG[0] or _language())._inplace(self, name, other)
        return self

    def __iadd__(self, o):
        return self._inplace("add", o)

    def __isub__(self, o):
        return self._inplace("subtract", o)

    def __imul__(self, o):
        return self._inplace("multiply", o)

    def __itruediv__(self, o):
        return self._inplace("divide", o)

    def __imax__(self, o):  # pragma: no cover - not a Python operator
        return self._inplace("maximum", o)


def _fast_slices(key: tuple, shape: tuple) -> bool:
    """True if ``key`` is only unit-step slices with in-range non-negative int bounds."""
    for k, n in zip(key, shape):
        if type(k) is not slice or k.step is not None:
            return False
        a, b = k.start, k.stop
        if a is not None and (type(a) is not int or a < 0 or a > n):
            return False
        if b is not None and (type(b) is not int or b < 0 or b > n):
            return False
    return True


def _check_slice(k: slice, n: int, d: int, t: NkiTensor) -> slice:
    start, stop, step = k.start, k.stop, k.step
    for v in (start, stop, step):
        if v is not None and not isinstance(v, (int, np.integer)):
            if isinstance(v, (IndexExpr, NkiTensor)):
                raise invalid("indexing", "mixing basic (slice) and advanced indexing")
            raise invalid("indexing", f"slice bound {v!r} is not an integer")
    if step is not None and step == 0:
        raise invalid("indexing", "slice step cannot be zero")
    s0 = int(start) if start is not None else None
    s1 = int(stop) if stop is not None else None
    if (step or 1) > 0:
        if (s0 is not None and (s0 > n or s0 < -n)) or (s1 is not None and (s1 > n or s1 < -n)):
            raise fail(
                "C2N3019",
                detail=f"slice {s0 if s0 is not None else ''}:"
                f"{s1 if s1 is not None else ''} on dimension {d} of size {n} "
                f"({t.describe()})",
            )
    return k


def _affine_strides(flat: np.ndarray) -> tuple[int, ...] | None:
    """Element strides if ``flat`` (index grid) is affine in its axes, else ``None``."""
    if flat.size == 0:
        return tuple(0 for _ in flat.shape)
    f0 = flat.reshape(-1)[0]
    strides = []
    recon = np.full((1,) * flat.ndim, f0, dtype=np.int64)
    for k, n in enumerate(flat.shape):
        if n > 1:
            e = [0] * flat.ndim
            e[k] = 1
            s = int(flat[tuple(e)] - f0)
        else:
            s = 0
        strides.append(s)
        shp = [1] * flat.ndim
        shp[k] = n
        recon = recon + s * np.arange(n, dtype=np.int64).reshape(shp)
    if not np.array_equal(np.broadcast_to(recon, flat.shape), flat):
        return None
    return tuple(strides)


def access_pattern(
    t: NkiTensor,
    pattern,
    offset=None,
    scalar_offset=None,
    vector_offset=None,
    indirect_dim: int = 0,
    dtype=None,
) -> NkiTensor:
    """``t.ap(...)``: an explicit access pattern on the underlying storage (reference 4.3)."""
    try:
        pairs = [(int(p[0]), int(p[1])) for p in pattern]
    except (TypeError, ValueError, IndexError):
        raise fail(
            "C2N3029", api="ap", detail=f"pattern must be [[stride, count], ...], got {pattern!r}"
        ) from None
    if not pairs:
        raise fail("C2N3029", api="ap", detail="empty pattern")
    stg = t.storage
    ndt = dt.as_dtype(dtype) if dtype is not None else t.dtype
    base = stg.flat if ndt.np_dtype == stg.flat.dtype else stg.flat.view(ndt.np_dtype)
    if offset is None:
        offset = t.offset if t.a is not None else 0
    offset = int(offset)
    if scalar_offset is not None:
        v = scalar_offset
        if isinstance(v, NkiTensor):
            v = int(np.asarray(v.values("ap")).reshape(-1)[0])
        offset += int(v) * math.prod(stg.shape[indirect_dim + 1 :])
    shape = tuple(n for _, n in pairs)
    strides = tuple(s for s, _ in pairs)
    pdim = 0 if stg.buffer.on_chip else None
    if stg.buffer.on_chip and len(pairs) < 2:
        raise fail(
            "C2N3029",
            api="ap",
            detail="an on-chip pattern needs [partition stride, P] "
            "followed by at least one free pair",
        )
    if vector_offset is not None:
        if indirect_dim != 0:
            raise unsupported("ap(vector_offset=..., indirect_dim != 0)")
        rows = np.asarray(vector_offset.values("ap")).reshape(-1).astype(np.int64)
        if rows.size < shape[0]:
            raise fail(
                "C2N3029",
                api="ap",
                detail=f"vector_offset has {rows.size} rows, pattern needs {shape[0]}",
            )
        row_stride = math.prod(stg.shape[1:])
        grids = np.ix_(*[np.arange(n, dtype=np.int64) for n in shape])
        flat = offset + rows[: shape[0]].reshape((-1,) + (1,) * (len(shape) - 1)) * row_stride
        for k in range(1, len(shape)):
            flat = flat + strides[k] * grids[k]
        flat = np.broadcast_to(flat, shape)
        nrows = stg.shape[0]
        okrow = (rows[: shape[0]] >= 0) & (rows[: shape[0]] < nrows)
        ok = (
            np.broadcast_to(okrow.reshape((-1,) + (1,) * (len(shape) - 1)), shape)
            & (flat >= 0)
            & (flat < base.size)
        )
        return NkiTensor(stg, None, ndt, pdim, np.where(ok, flat, -1))
    lo = offset + sum(s * (n - 1) for s, n in pairs if s < 0 and n > 0)
    hi = offset + sum(s * (n - 1) for s, n in pairs if s > 0 and n > 0)
    if lo < 0 or hi >= base.size:
        raise fail(
            "C2N3019",
            detail=f"access pattern {[list(p) for p in pairs]} at offset {offset} "
            f"reaches elements {lo}..{hi} of a {base.size}-element storage",
        )
    a = as_strided(base[offset:], shape, tuple(s * base.itemsize for s in strides))
    return NkiTensor(stg, a, ndt, pdim)


def _refused_attribute(name: str, reason: str) -> property:
    def refused(self):
        raise unsupported(f"NkiTensor.{name}", reason)

    return property(refused, doc=f"Not simulated (C2N3001): {reason}.")


for _name, _reason in _TENSOR_NOT_SIMULATED.items():
    setattr(NkiTensor, _name, _refused_attribute(_name, _reason))
