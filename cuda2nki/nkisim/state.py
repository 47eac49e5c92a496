"""Per-run simulator state: target, API generation, trace, memory accounting, engine registers.

One :class:`SimState` is active while a kernel runs (a stack, so nested runs work).  Outside a
kernel a default state is used so that ``nl`` helpers still work in plain Python (tests, REPL).
"""

from __future__ import annotations

import operator
import os
from dataclasses import dataclass, field

import numpy as np

from cuda2nki.diagnostics import Diagnostic, DiagnosticError, make


@dataclass(frozen=True)
class Target:
    """Per-target limits and clocks (reference NKI.md sections 3 and 10)."""

    name: str
    nc_version: int
    sbuf_bytes: int  # usable bytes per partition (tile_size.total_available_sbuf_size)
    sbuf_total_per_partition: int
    moving_fmax_f32: int  # matmul moving free size limit (fp32 PSUM dst)
    moving_fmax_bf16: int
    psum_tile_max_bytes: int  # largest single PSUM tile per partition
    pe_ghz: float
    vector_ghz: float
    scalar_ghz: float
    gpsimd_ghz: float
    dma_bytes_per_ns_per_engine: float


TARGETS: dict[str, Target] = {
    "trn1": Target("trn1", 2, 180224, 196608, 512, 512, 2048, 2.8, 1.12, 1.4, 1.4, 17.0),
    "trn2": Target("trn2", 3, 212984, 229376, 512, 512, 2048, 2.4, 0.96, 1.2, 1.2, 23.0),
    "trn3": Target("trn3", 4, 245752, 262144, 4096, 8192, 16384, 2.4, 1.2, 1.2, 1.2, 33.0),
}
TARGET_ALIASES = {"inf2": "trn1", "gen2": "trn1", "gen3": "trn2", "gen4": "trn3"}
PSUM_BANK_BYTES = 2048
PSUM_BANKS = 8
PMAX = 128


def resolve_target(cli: str | None = None, legacy_platform: str | None = None) -> Target:
    """Reference 14.1: CLI, then NEURON_PLATFORM_TARGET_OVERRIDE, then legacy platform_target."""
    for cand in (cli, os.environ.get("NEURON_PLATFORM_TARGET_OVERRIDE"), legacy_platform):
        if cand:
            name = TARGET_ALIASES.get(str(cand).lower(), str(cand).lower())
            if name not in TARGETS:
                raise DiagnosticError(
                    make("C2N0002", option="target", reason=f"unknown target '{cand}'")
                )
            return TARGETS[name]
    return TARGETS["trn2"]


_INSTR_FIELDS = (
    "engine",  # tensor | vector | scalar | gpsimd | dma
    "op",
    "shapes",
    "dtypes",
    "buffers",
    "partitions",
    "free",
    "dma_bytes",
    "file",
    "line",
    "extra",
)


class Instr(tuple):
    """One executed instruction (kept small; aggregated lazily by the profiler).

    A tuple with named fields: ``engine`` (tensor | vector | scalar | gpsimd | dma), ``op``,
    ``shapes``, ``dtypes``, ``buffers`` (per operand), ``partitions``, ``free``, ``dma_bytes``,
    ``file``, ``line`` (the port's source line) and ``extra`` (op-specific details).  Built with
    ``make_instr`` on the hot path (one C call, no Python ``__init__``).
    """

    __slots__ = ()

    def __new__(
        cls,
        engine: str,
        op: str,
        shapes: tuple,
        dtypes: tuple,
        buffers: tuple,
        partitions: int,
        free: int,
        dma_bytes: int,
        file: str,
        line: int,
        extra: tuple = (),
    ) -> Instr:
        return tuple.__new__(
            cls,
            (engine, op, shapes, dtypes, buffers, partitions, free, dma_bytes, file, line, extra),
        )

    def __repr__(self) -> str:
        body = ", ".join(f"{n}={v!r}" for n, v in zip(_INSTR_FIELDS, self))
        return f"Instr({body})"

    def __getnewargs__(self) -> tuple:
        return tuple(self)

    engine: str
    op: str
    shapes: tuple
    dtypes: tuple
    buffers: tuple
    partitions: int
    free: int
    dma_bytes: int
    file: str
    line: int
    extra: tuple


for _i, _name in enumerate(_INSTR_FIELDS):
    setattr(Instr, _name, property(operator.itemgetter(_i), doc=_name))
del _i, _name


def make_instr(fields: tuple) -> Instr:
    """An :class:`Instr` from its 11 fields in order (the fast constructor)."""
    return _tuple_new(Instr, fields)


_tuple_new = tuple.__new__


@dataclass
class SimState:
    target: Target = field(default_factory=lambda: TARGETS["trn2"])
    legacy: bool = False
    strict_uninit: bool = False
    #: run as the public simulator's Python API runs it (``nki.simulate_kernel``, ``@nki.jit`` on
    #: NumPy arrays): legacy kernels get the public simulator's leniencies, with a warning
    #: (:mod:`cuda2nki.nkisim.upstream_sim`)
    public: bool = False
    check_capacity: bool = True
    trace: list[Instr] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)
    program_id: tuple[int, ...] = ()
    grid: tuple[int, ...] = ()
    lnc: int = 1
    seed: int = 0
    # on-chip memory.  Occupancy is counted from each tile's allocation to its last use by an
    # instruction (liveness, as the compiler allocates), see ``settle_memory``.  While a tile's
    # Python object lives it is in ``live_sbuf`` / ``live_psum``: storage id -> (bytes per
    # partition or banks, alloc site, trace index at allocation, use cell[, bytes]); the use
    # cell (shared with ``Storage.use``) holds the index of the last instruction that used it.
    live_sbuf: dict[int, tuple] = field(default_factory=dict)
    live_psum: dict[int, tuple] = field(default_factory=dict)
    # totals of the Python-live tiles: an upper bound of the occupancy by liveness (a tile is
    # never used after its object dies), so while they fit nothing needs checking
    sbuf_now: int = 0
    psum_banks_now: int = 0
    psum_bytes_now: int = 0
    # live ranges of the tiles that died: (first, last, amount, site) per buffer kind
    ranges_sbuf: list = field(default_factory=list)
    ranges_psum: list = field(default_factory=list)
    peak_sbuf: int = 0
    peak_psum_bytes: int = 0
    peak_psum_banks: int = 0
    _settled_at: tuple = (-1, -1, -1)
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0))
    scalar_acc: np.ndarray = field(default_factory=lambda: np.zeros(PMAX, np.float32))
    vector_acc: np.ndarray = field(default_factory=lambda: np.zeros(PMAX, np.float32))
    input_storages: set[int] = field(default_factory=set)
    #: descriptions of outputs the kernel returned as host arrays (not written by instructions)
    host_outputs: list[str] = field(default_factory=list)
    #: legacy in/out kernel (returns nothing; writes its results into its arguments): the
    #: arguments are writable, and those written are copied back to the caller's arrays
    inout: bool = False
    #: id(storage) -> (caller's array, tensor) of each host-array argument of an in/out kernel
    host_args: dict = field(default_factory=dict)
    #: ids of the argument storages an in/out kernel wrote
    written_args: set[int] = field(default_factory=set)
    input_names: dict[int, str] = field(default_factory=dict)
    shared_outputs: dict = field(default_factory=dict)
    shared_seq: dict = field(default_factory=dict)
    # set while the Python-live tiles exceed a capacity: the next instruction checks that its
    # own operands fit (SimState.sample_memory)
    mem_dirty: bool = False
    #: legacy PSUM tiles created by nl.zeros whose memset is not recorded yet: storage uid ->
    #: (shape, dtype name, partitions, free) (language._filled)
    zero_psum: dict = field(default_factory=dict)
    last_dst: int = 0  # storage uid of the last instruction's destination (its first operand)
    affine: list = field(default_factory=list)  # active legacy affine_range loops: [token, i]
    #: per-element writers of HBM tensors (provenance.WriterLog) when the run tracks them
    writers: object = None
    kernel_code: object = None  # code of the running kernel function
    kernel_frame: object = None  # its frame, held so its locals outlive the return until settled
    kernel_entry: object = None  # errors._CODES entry of the kernel's code (with kernel_frame)
    #: fp32 copies of the caller's arrays read as matmul operands (widen.Widened), made lazily
    widened: object = None

    # ------------------------------------------------------------------ memory accounting
    def alloc_sbuf(self, sid: int, nbytes: int, site: tuple[str, int], use: list) -> None:
        self.live_sbuf[sid] = (nbytes, site, len(self.trace), use)
        self.sbuf_now += nbytes
        if self.sbuf_now > self.target.sbuf_bytes:
            self.mem_dirty = True
            self.check_tile(nbytes, 0, site)

    def check_tile(self, nbytes: int, banks: int, site: tuple[str, int]) -> None:
        """A single tile larger than the whole SBUF or PSUM fits no allocation."""
        if not self.check_capacity:
            return
        if nbytes > self.target.sbuf_bytes:
            raise _at(
                site, "C2N3017", size=nbytes, limit=self.target.sbuf_bytes, target=self.target.name
            )
        if banks > PSUM_BANKS:
            raise _at(site, "C2N3018", banks=banks)

    def free_sbuf(self, sid: int) -> None:
        ent = self.live_sbuf.pop(sid, None)
        if ent is not None:
            self.sbuf_now -= ent[0]
            last = ent[3][0]
            if last >= ent[2]:  # a tile no instruction used occupies nothing
                self.ranges_sbuf.append((ent[2], last, ent[0], ent[1]))
            if self.mem_dirty:
                self.mem_dirty = self._over()

    def alloc_psum(self, sid: int, nbytes: int, banks: int, site: tuple[str, int], use: list):
        self.live_psum[sid] = (banks, site, len(self.trace), use, nbytes)
        self.psum_banks_now += banks
        self.psum_bytes_now += nbytes
        if self.psum_banks_now > PSUM_BANKS:
            self.mem_dirty = True
            self.check_tile(0, banks, site)

    def free_psum(self, sid: int) -> None:
        ent = self.live_psum.pop(sid, None)
        if ent is not None:
            self.psum_banks_now -= ent[0]
            self.psum_bytes_now -= ent[4]
            last = ent[3][0]
            if last >= ent[2]:
                self.ranges_psum.append((ent[2], last, ent[0], ent[1], ent[4]))
            if self.mem_dirty:
                self.mem_dirty = self._over()

    def _over(self) -> bool:
        return self.sbuf_now > self.target.sbuf_bytes or self.psum_banks_now > PSUM_BANKS

    def sample_memory(self, ts: tuple = ()) -> None:
        """Called at an instruction while the Python-live tiles exceed a capacity: its own
        operands must fit at once (no allocation can hold them otherwise: C2N3017 / C2N3018,
        at the allocation of the newest of them); other live tiles can be spilled."""
        self.mem_dirty = self._over()
        if not self.check_capacity:
            return
        seen: dict = {}
        for t in ts:
            if t is not None:
                stg = t.storage
                if stg.use is not None:
                    seen[stg.uid] = stg
        sb = sum(self.live_sbuf[u][0] for u in seen if u in self.live_sbuf)
        if sb > self.target.sbuf_bytes:
            site = self.live_sbuf[max(u for u in seen if u in self.live_sbuf)][1]
            raise _at(
                site, "C2N3017", size=sb, limit=self.target.sbuf_bytes, target=self.target.name
            )
        banks = sum(self.live_psum[u][0] for u in seen if u in self.live_psum)
        if banks > PSUM_BANKS:
            site = self.live_psum[max(u for u in seen if u in self.live_psum)][1]
            raise _at(site, "C2N3018", banks=banks)

    def settle_memory(self) -> None:
        """Peaks of on-chip occupancy by liveness, over the trace so far; a peak above capacity
        that the compiler can meet by spilling is noted (C2N3031) with the spill's cost."""
        key = (len(self.trace), len(self.ranges_sbuf), len(self.ranges_psum))
        if key == self._settled_at:
            return
        self._settled_at = key
        n = len(self.trace)
        sb = list(self.ranges_sbuf)
        ps = list(self.ranges_psum)
        for ent in self.live_sbuf.values():
            if ent[3][0] >= ent[2]:
                sb.append((ent[2], ent[3][0], ent[0], ent[1]))
        for ent in self.live_psum.values():
            if ent[3][0] >= ent[2]:
                ps.append((ent[2], ent[3][0], ent[0], ent[1], ent[4]))
        self.warnings[:] = [w for w in self.warnings if w.code != "C2N3031"]
        occ = occupancy(sb, n, 2)
        self.peak_sbuf = int(occ.max()) if occ.size else 0
        if self.peak_sbuf > self.target.sbuf_bytes:
            self._spill_note(occ, self.target.sbuf_bytes, "SBUF", "bytes per partition", 1)
        banks = occupancy(ps, n, 2)
        self.peak_psum_banks = int(banks.max()) if banks.size else 0
        self.peak_psum_bytes = int(occupancy(ps, n, 4).max()) if ps else 0
        if self.peak_psum_banks > PSUM_BANKS:
            self._spill_note(banks, PSUM_BANKS, "PSUM", "banks", PSUM_BANK_BYTES)

    def _spill_note(self, occ: np.ndarray, limit: int, buf: str, unit: str, unit_bytes: int):
        over = np.maximum(occ - limit, 0)
        # each stretch of instructions over capacity spills its largest excess out and back
        starts = np.flatnonzero((over > 0) & ~np.concatenate(([False], over[:-1] > 0)))
        ends = np.append(starts[1:], over.size)
        spilled = sum(int(over[a:b].max()) for a, b in zip(starts, ends)) * unit_bytes
        moved = 2 * spilled * PMAX  # out to HBM and back, all partitions
        us = moved / (16 * self.target.dma_bytes_per_ns_per_engine) / 1000
        first = int(starts[0])  # where a tile first has to make room
        ins = self.trace[first] if first < len(self.trace) else None
        site = (ins.file, ins.line) if ins is not None else ("<unknown>", 0)
        from cuda2nki.diagnostics import SourceLoc

        self.warnings.append(
            make(
                "C2N3031",
                SourceLoc(site[0], site[1], 1),
                buffer=buf,
                size=int(occ[first]),
                peak=int(occ.max()),
                unit=unit,
                limit=limit,
                target=self.target.name,
                spilled=spilled,
                cost=f"{us:.2f}",
            )
        )


def occupancy(ranges: list, n: int, col: int) -> np.ndarray:
    """Per instruction index (0..n), the sum of column ``col`` of the live ranges covering it."""
    diff = np.zeros(n + 2, np.int64)
    if ranges:
        # one column at a time (np.array of a list of tuples reads each tuple as a sequence:
        # microseconds per range, and a legacy kernel has a range per instruction)
        k = len(ranges)
        first = np.fromiter(map(operator.itemgetter(0), ranges), np.int64, k)
        last = np.fromiter(map(operator.itemgetter(1), ranges), np.int64, k)
        size = np.fromiter(map(operator.itemgetter(col), ranges), np.int64, k)
        np.add.at(diff, first, size)
        np.add.at(diff, last + 1, -size)
    return np.cumsum(diff[:-1])


def _at(site: tuple[str, int], code: str, **fmt: object) -> DiagnosticError:
    from cuda2nki.diagnostics import SourceLoc
    from cuda2nki.nkisim.errors import error

    return error(make(code, SourceLoc(site[0], site[1], 1), **fmt))


_STACK: list[SimState] = [SimState()]


def current() -> SimState:
    return _STACK[-1]


def push(state: SimState) -> None:
    _STACK.append(state)


def pop() -> SimState:
    if len(_STACK) > 1:
        return _STACK.pop()
    return _STACK[-1]
