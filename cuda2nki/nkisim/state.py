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
    check_capacity: bool = True
    trace: list[Instr] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)
    program_id: tuple[int, ...] = ()
    grid: tuple[int, ...] = ()
    lnc: int = 1
    seed: int = 0
    # live on-chip memory: storage id -> (bytes per partition or banks, alloc site)
    live_sbuf: dict[int, tuple[int, tuple[str, int]]] = field(default_factory=dict)
    live_psum: dict[int, tuple[int, tuple[str, int]]] = field(default_factory=dict)
    sbuf_now: int = 0
    psum_banks_now: int = 0
    psum_bytes_now: int = 0
    peak_sbuf: int = 0
    peak_psum_bytes: int = 0
    peak_psum_banks: int = 0
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
    # set when on-chip usage may exceed a peak or a peak candidate awaits settling: the next
    # instruction samples memory (SimState.sample_memory)
    mem_dirty: bool = False
    _cand_sbuf: tuple | None = None
    _cand_psum: tuple | None = None
    affine: list = field(default_factory=list)  # active legacy affine_range loops: [token, i]
    #: per-element writers of HBM tensors (provenance.WriterLog) when the run tracks them
    writers: object = None
    kernel_code: object = None  # code of the running kernel function
    kernel_frame: object = None  # its frame, held so its locals outlive the return until settled
    kernel_entry: object = None  # errors._CODES entry of the kernel's code (with kernel_frame)
    _watch: set = field(default_factory=set)
    _died: dict = field(default_factory=dict)
    _death_seq: int = 0

    # ------------------------------------------------------------------ memory accounting
    def alloc_sbuf(self, sid: int, nbytes: int, site: tuple[str, int]) -> None:
        self.live_sbuf[sid] = (nbytes, site)
        self.sbuf_now += nbytes
        if self.sbuf_now > self.peak_sbuf:
            self.mem_dirty = True

    def free_sbuf(self, sid: int) -> None:
        ent = self.live_sbuf.pop(sid, None)
        if ent is not None:
            now = self.sbuf_now = self.sbuf_now - ent[0]
            if sid in self._watch:
                self._note_death(sid)
            if (
                self.mem_dirty
                and now <= self.peak_sbuf
                and self._cand_sbuf is None
                and self._cand_psum is None
                and self.psum_bytes_now <= self.peak_psum_bytes
                and self.psum_banks_now <= self.peak_psum_banks
            ):
                # back under the peaks with nothing to settle: sample_memory would only clear
                # the flag (a tile rebound in a loop is over the peak only until the old one dies)
                self.mem_dirty = False

    def alloc_psum(self, sid: int, nbytes: int, banks: int, site: tuple[str, int]) -> None:
        self.live_psum[sid] = (banks, site, nbytes)  # type: ignore[assignment]
        self.psum_banks_now += banks
        self.psum_bytes_now += nbytes
        if self.psum_banks_now > self.peak_psum_banks or self.psum_bytes_now > self.peak_psum_bytes:
            self.mem_dirty = True

    def free_psum(self, sid: int) -> None:
        ent = self.live_psum.pop(sid, None)
        if ent is not None:
            self.psum_banks_now -= ent[0]
            self.psum_bytes_now -= ent[2]  # type: ignore[misc]
            if sid in self._watch:
                self._note_death(sid)

    # Sampling.  A tile created by an instruction's own statement while the previous tile bound
    # to the same name is still alive (``y = nl.exp(x)`` in a loop) would count twice: the old
    # one dies only when the name is rebound, after the call.  So a new peak is held as a
    # candidate with its "suspects": older live tiles from the same allocation site as a newer
    # live one.  When the candidate is settled (at the next instruction, or when the kernel
    # returns), a suspect that died while the newest tile of its site was still alive was an old
    # binding and is taken out; one still alive, or outliving the newest (the elements of a list
    # of tiles die newest-first with the list), was really live and stays counted.

    def sample_memory(self) -> None:
        """Called at every instruction: update peaks, enforce capacity (reference 3.3)."""
        if self._cand_sbuf is not None or self._cand_psum is not None:
            self.settle_memory()
        if self.sbuf_now > self.peak_sbuf:
            self._cand_sbuf = self._candidate(self.live_sbuf, self.sbuf_now)
        if self.psum_bytes_now > self.peak_psum_bytes:
            self.peak_psum_bytes = self.psum_bytes_now
        if self.psum_banks_now > self.peak_psum_banks:
            self._cand_psum = self._candidate(self.live_psum, self.psum_banks_now)
        self.mem_dirty = self._cand_sbuf is not None or self._cand_psum is not None

    def _candidate(self, live: dict, now: int):
        newest: dict = {}
        suspects: list = []
        for sid, ent in reversed(live.items()):
            site = ent[1]
            if site in newest:
                suspects.append((sid, ent[0], newest[site]))
                self._watch.add(sid)
                self._watch.add(newest[site])
            else:
                newest[site] = sid
        site = next(reversed(live.values()))[1] if live else ("<unknown>", 0)
        return (now, suspects, site)

    def _note_death(self, sid: int) -> None:
        self._death_seq += 1
        self._died[sid] = self._death_seq

    def _settled(self, cand, live: dict) -> int:
        now = cand[0]
        never = float("inf")
        for sid, amount, newest in cand[1]:
            if sid in live:
                continue
            t_old = self._died.get(sid, 0)
            t_new = never if newest in live else self._died.get(newest, 0)
            if t_old < t_new:
                now -= amount
        return now

    def settle_memory(self) -> None:
        c, self._cand_sbuf = self._cand_sbuf, None
        if c is not None:
            now = self._settled(c, self.live_sbuf)
            if now > self.peak_sbuf:
                self.peak_sbuf = now
                if self.check_capacity and now > self.target.sbuf_bytes:
                    raise _at(
                        c[2],
                        "C2N3017",
                        size=now,
                        limit=self.target.sbuf_bytes,
                        target=self.target.name,
                    )
        c, self._cand_psum = self._cand_psum, None
        if c is not None:
            now = self._settled(c, self.live_psum)
            if now > self.peak_psum_banks:
                self.peak_psum_banks = now
                if self.check_capacity and now > PSUM_BANKS:
                    raise _at(c[2], "C2N3018", banks=now)
        if self._cand_sbuf is None and self._cand_psum is None:
            self._watch.clear()
            self._died.clear()


def _at(site: tuple[str, int], code: str, **fmt: object) -> DiagnosticError:
    from cuda2nki.diagnostics import SourceLoc

    return DiagnosticError(make(code, SourceLoc(site[0], site[1], 1), **fmt))


_STACK: list[SimState] = [SimState()]


def current() -> SimState:
    return _STACK[-1]


def push(state: SimState) -> None:
    _STACK.append(state)


def pop() -> SimState:
    if len(_STACK) > 1:
        return _STACK.pop()
    return _STACK[-1]
