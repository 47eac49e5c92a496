"""Findings from what the port *did* in the simulator: its instruction trace and cost profile.

The trace is summarised inside the sandbox (it can hold millions of instructions) into a small
:class:`TraceSummary`; the findings here read only that summary, and each states the figure it
rests on.  Problem size is taken into account (NKI.md §14.7): a problem too small to fill 128
partitions or 2 KiB DMAs is not faulted for it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from cuda2nki.diagnostics import Diagnostic, SourceLoc, make

COMPUTE_ENGINES = ("tensor", "vector", "scalar", "gpsimd", "act", "pool")
CONTRACTION_IDIOMS = ("contract", "matmul", "gemv", "attention")
#: fewer partitions than this carrying the work is low partition use even with wide tiles
STARVED_PARTITIONS = 8


@dataclass
class LineStats:
    engine: str
    op: str
    count: int = 0
    partitions: int = 0  # sum over instructions
    free: int = 0
    dma_bytes: int = 0
    keys: set[Any] = field(
        default_factory=set
    )  # distinct DMA source regions, when the trace names them


_LINE_FIELDS = ("engine", "op", "count", "partitions", "free", "dma_bytes", "keys")


@dataclass
class TraceSummary:
    instructions: int = 0
    per_engine: dict[str, int] = field(default_factory=dict)
    dma_count: int = 0
    dma_bytes: int = 0
    dma_partition_rows: int = 0
    matmuls: int = 0
    transposes: int = 0
    compute_partitions: int = 0
    compute_count: int = 0
    compute_elems: int = 0  # sum of partitions x free over engine instructions
    compute_width_elems: int = 0  # sum of partitions x (partitions x free): width per element
    loads_by_source: dict[Any, list[int]] = field(
        default_factory=dict
    )  # HBM region -> lines loading it
    per_line: dict[tuple[str, int], LineStats] = field(default_factory=dict)
    profile: dict[str, Any] = field(default_factory=dict)

    @property
    def avg_dma_bytes_per_partition(self) -> float:
        return self.dma_bytes / self.dma_partition_rows if self.dma_partition_rows else 0.0

    @property
    def partition_utilisation(self) -> float:
        return self.compute_partitions / (128 * self.compute_count) if self.compute_count else 1.0

    @property
    def work_partition_use(self) -> float:
        """Partitions in use, averaged over the elements processed (not the instructions): a
        ragged last tile that holds a few leftover elements on one partition barely counts."""
        if not self.compute_elems:
            return 1.0
        return self.compute_width_elems / (128 * self.compute_elems)

    def to_wire(self) -> dict[str, Any]:
        """Every field as plain values (for the sandbox's JSON channel, :mod:`.wire`)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["per_line"] = {k: vars(v).copy() for k, v in self.per_line.items()}
        return out

    @classmethod
    def from_wire(cls, d: Mapping[str, Any]) -> TraceSummary:
        """The inverse of :meth:`to_wire`; unknown or ill-typed fields are refused."""
        kw: dict[str, Any] = {}
        for f in fields(cls):
            if f.name in d:
                kw[f.name] = d[f.name]
        per_line = kw.get("per_line", {})
        if not isinstance(per_line, dict):
            raise TypeError("per_line")
        kw["per_line"] = {
            (str(k[0]), int(k[1])): LineStats(**{n: v[n] for n in _LINE_FIELDS if n in v})
            for k, v in per_line.items()
        }
        for name in ("per_engine", "loads_by_source", "profile"):
            if not isinstance(kw.get(name, {}), dict):
                raise TypeError(name)
        s = cls(**kw)
        for name in _INT_FIELDS:
            if not isinstance(getattr(s, name), int):
                raise TypeError(name)
        return s

    def to_dict(self) -> dict[str, Any]:
        return {
            "instructions": self.instructions,
            "per_engine": dict(sorted(self.per_engine.items())),
            "dma_count": self.dma_count,
            "dma_bytes": self.dma_bytes,
            "avg_dma_bytes_per_partition": round(self.avg_dma_bytes_per_partition, 2),
            "matmuls": self.matmuls,
            "partition_utilisation": round(self.partition_utilisation, 4),
            "work_partition_use": round(self.work_partition_use, 4),
            "profile": self.profile,
        }


def _is_dma(engine: str, op: str) -> bool:
    return engine in ("dma", "sync", "dge") or op.startswith(("dma", "load", "store"))


_INT_FIELDS = (
    "instructions",
    "dma_count",
    "dma_bytes",
    "dma_partition_rows",
    "matmuls",
    "transposes",
    "compute_partitions",
    "compute_count",
    "compute_elems",
    "compute_width_elems",
)


def summarise(trace: Iterable[Any], profile: Mapping[str, Any] | None = None) -> TraceSummary:
    """Fold the simulator's instruction records (engine, op, partitions, free, dma_bytes, file, line)."""
    s = TraceSummary(profile=dict(profile or {}))
    # writes so far per HBM storage: a load after a write reads new data, so it is keyed apart
    # from the loads of the same region before the write (not a reload of them).  Unnamed
    # storages (buffers the kernel allocates, keyed by a per-run id) share one count ("").
    writes: dict[Any, int] = {}
    for ins in trace:
        engine, op = str(ins.engine), str(ins.op)
        s.instructions += 1
        s.per_engine[engine] = s.per_engine.get(engine, 0) + 1
        key = (ins.file, ins.line)
        ls = s.per_line.get(key)
        if ls is None:
            ls = s.per_line[key] = LineStats(engine, op)
        ls.count += 1
        ls.partitions += int(ins.partitions or 0)
        ls.free += int(ins.free or 0)
        if _is_dma(engine, op):
            s.dma_count += 1
            s.dma_bytes += int(ins.dma_bytes or 0)
            s.dma_partition_rows += max(int(ins.partitions or 1), 1)
            ls.dma_bytes += int(ins.dma_bytes or 0)
            src = _dma_source(ins)
            if src is not None:
                era = writes.get(_storage_name(src[0])) if isinstance(src, tuple) and src else None
                if era:
                    src = (*src, era)
                ls.keys.add(src)
                s.loads_by_source.setdefault(src, []).append(int(ins.line))
            dst = _dma_item(ins, "dst")
            if dst is not None:
                writes[dst] = writes.get(dst, 0) + 1
        else:
            s.compute_count += 1
            s.compute_partitions += int(ins.partitions or 0)
            elems = int(ins.partitions or 0) * max(int(ins.free or 0), 1)
            s.compute_elems += elems
            s.compute_width_elems += int(ins.partitions or 0) * elems
            if "matmul" in op:
                s.matmuls += 1
            if "transpose" in op:
                s.transposes += 1
    return s


def port_lines(s: TraceSummary, port_path: str) -> dict[int, LineStats]:
    """The per-line statistics of the port's own file (by file name), keyed by line."""
    base = port_path.replace("\\", "/").rsplit("/", 1)[-1]
    out: dict[int, LineStats] = {}
    for (file, line), ls in s.per_line.items():
        if str(file).replace("\\", "/").rsplit("/", 1)[-1] == base:
            out[int(line)] = ls
    return out


def _dma_item(ins: Any, tag: str) -> Any:
    """The ``(tag, value)`` item of a DMA's record: ``src`` the HBM region it reads, ``dst`` the
    HBM storage it writes."""
    for item in getattr(ins, "extra", ()) or ():
        if isinstance(item, tuple) and len(item) == 2 and item[0] == tag:
            return item[1]
    return None


def _storage_name(storage: Any) -> str:
    """A DMA source's storage as its write records name it (unnamed ones, keyed by a per-run
    id in a source, are all "")."""
    return storage if isinstance(storage, str) else ""


def _dma_source(ins: Any) -> Any:
    return _dma_item(ins, "src")


@dataclass(frozen=True)
class ProblemSize:
    rows: int  # the largest first dimension among the kernel's tensors
    bytes_per_partition: int  # largest tensor's bytes / min(rows, 128)
    total_bytes: int
    idiom: str | None = None
    elements: int = 0  # elements of the largest tensor
    reuse: float = 1.0  # loads per HBM region the algorithm legitimately needs (tiled contractions)
    pe_reuse: float | None = None  # multiply-adds per input element of a contraction (intensity)
    #: where the CUDA loop nest shows a contraction the intent does not (the kernel did not lift)
    contraction: str = ""


#: many narrow engine instructions read as a per-thread translation only where they carry the
#: work: at least 1/SMALL_WORK_SHARE of the problem's elements (a row gather computes one index
#: per row on narrow columns and moves the rows themselves by DMA)
SMALL_WORK_SHARE = 8


def findings(s: TraceSummary, size: ProblemSize, port_path: str) -> list[Diagnostic]:
    out: list[Diagnostic] = []

    def at(line_key: tuple[str, int] | None) -> SourceLoc:
        if line_key is None:
            return SourceLoc(port_path, 1, 1)
        return SourceLoc(line_key[0] or port_path, line_key[1], 1)

    util = s.partition_utilisation
    dma_line = _hottest(s, dma=True)
    compute_line = _hottest(s, dma=False)
    avg = s.avg_dma_bytes_per_partition
    can_fill = size.rows >= 128
    per_instr = s.compute_elems / s.compute_count if s.compute_count else 0.0
    literal = (
        (s.dma_count >= 32 and avg <= 16 and size.total_bytes >= 16 * 1024)
        or (can_fill and util < 0.05 and s.compute_count >= 64)
        or (
            s.compute_count >= 16
            and per_instr <= 128
            and size.elements >= 128 * 16
            and s.compute_elems * SMALL_WORK_SHARE >= size.elements
        )
    )
    if literal:
        out.append(
            make(
                "C2N5001",
                at(dma_line or compute_line),
                evidence=(
                    f"{s.dma_count} DMAs averaging {avg:.0f} B per partition row; engine instructions "
                    f"process {per_instr:.0f} elements each on {util * 128:.1f} of 128 partitions on "
                    f"average ({s.instructions} instructions for {size.elements} elements)"
                ),
            )
        )
    # idle partitions matter when the tiles are not full width either (a [8, 512] tile layout of a
    # small vector is a fair choice; [32, 32] tiles of a 520-row matrix are not), or when fewer
    # than 8 partitions carry the work however wide their tiles (a [1, N] layout runs the engines
    # at 1/128 of their width: no free-axis length makes up for that)
    # and most of the work runs narrow: averaged per element, not per instruction, so that a ragged
    # last tile (126 full rows, then 62 leftover elements on one partition) does not halve it
    free_per_partition = s.compute_elems / s.compute_partitions if s.compute_partitions else 0.0
    work = s.work_partition_use
    starved = work < STARVED_PARTITIONS / 128
    if can_fill and work < 0.5 and s.compute_count and (free_per_partition < 512 or starved):
        out.append(
            make(
                "C2N5008",
                at(compute_line),
                evidence=(
                    f"engine instructions use {work * 128:.1f} of 128 partitions on average, "
                    f"weighted by the elements each processes ({work:.0%}), although the problem "
                    f"has {size.rows} rows"
                ),
            )
        )
    # small DMAs, judged against what the problem size allows (NKI.md §14.7)
    achievable = min(size.bytes_per_partition, 2048)
    if s.dma_count >= 8 and avg < 512 and avg * 4 <= achievable:
        out.append(
            make(
                "C2N5007",
                at(_narrowest(s) or dma_line),
                evidence=(
                    f"{s.dma_count} DMAs average {avg:.0f} B per partition row (< 512 B) although "
                    f"{size.bytes_per_partition} B per partition are available to move"
                ),
            )
        )
    from cuda2nki.fidelity.intensity import MIN_PE_REUSE  # (the IR: not the sandbox's import)

    bandwidth_bound = size.pe_reuse is not None and size.pe_reuse < MIN_PE_REUSE
    if (
        size.idiom in CONTRACTION_IDIOMS
        and s.matmuls == 0
        and s.compute_count
        and not bandwidth_bound
    ):
        ve = (
            s.per_engine.get("vector", 0)
            + s.per_engine.get("scalar", 0)
            + s.per_engine.get("gpsimd", 0)
        )
        out.append(
            make(
                "C2N5002",
                at(compute_line),
                evidence=(
                    f"no tensor-engine matmul among {s.compute_count} engine instructions ({ve} on vector/scalar/gpsimd)"
                    + (f"; {size.contraction}" if size.contraction else "")
                ),
            )
        )
    whole = _reloads(s, size, at)
    out.extend(whole or _loop_reloads(s, size, at))
    return out


def _narrowest(s: TraceSummary) -> tuple[str, int] | None:
    """The DMA line that pulls the average transfer furthest under 512 B per partition row:
    the most partition rows short of it (a line of 4 B stores, not the line of wide loads that
    runs as often)."""
    best, most = None, 0.0
    for key, ls in s.per_line.items():
        if _is_dma(ls.engine, ls.op):
            short = 512.0 * max(ls.partitions, ls.count) - ls.dma_bytes
            if short > most:
                best, most = key, short
    return best


def _hottest(s: TraceSummary, dma: bool) -> tuple[str, int] | None:
    best, n = None, 0
    for key, ls in s.per_line.items():
        if _is_dma(ls.engine, ls.op) == dma and ls.count > n:
            best, n = key, ls.count
    return best


def _reloads(s: TraceSummary, size: ProblemSize, at: Any) -> list[Diagnostic]:
    """The same HBM region loaded more often than the algorithm needs."""
    loads = sum(len(v) for v in s.loads_by_source.values())
    regions = len(s.loads_by_source)
    if not regions or loads < 4:
        return []
    ratio = loads / regions
    if ratio < 2 * size.reuse:
        return []
    lines = sorted({ln for v in s.loads_by_source.values() if len(v) > 1 for ln in v})
    return [
        make(
            "C2N5006",
            at((None, lines[0]) if lines else None),
            evidence=(
                f"{loads} HBM loads read only {regions} distinct regions ({ratio:.1f} loads per region, "
                f"{size.reuse:.0f} needed); reloading lines: {', '.join(map(str, lines[:6]))}"
            ),
        )
    ]


def _loop_reloads(s: TraceSummary, size: ProblemSize, at: Any) -> list[Diagnostic]:
    """One load line reading the same HBM region on several iterations of its loop: data the
    loop does not change (weights, a bias, a row reused by every column tile), loaded again
    each time.  Judged per line and region, not as a whole-kernel average, so one invariant
    load among many distinct ones still shows."""
    per: Counter[tuple[Any, int]] = Counter(
        (src, ln) for src, lines in s.loads_by_source.items() for ln in lines
    )
    need = max(size.reuse, 1.0)
    hot = [(n, ln, src) for (src, ln), n in per.items() if n >= 2 and n >= 2 * need]
    if not hot:
        return []
    n, line, src = max(hot, key=lambda h: (h[0], -h[1]))
    regions = sorted({src for _, ln, src in hot if ln == line}, key=str)
    name = src[0] if isinstance(src, tuple) and src else src
    return [
        make(
            "C2N5006",
            at((None, line)),
            evidence=(
                f"line {line} loads the same region of '{name}' {n} times ({len(regions)} "
                f"region(s) reloaded, {need:.0f} load(s) each needed): the loop around it does "
                "not change what it reads"
            ),
        )
    ]
