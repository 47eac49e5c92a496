"""Static cost model over an instruction trace (reference NKI.md section 10).

Per instruction, engine cycles follow the documented formulas of section 10.2 (``N`` = elements per
partition of the main input, ``MIN_II`` = 64); cycles become time with the target's engine clock.
DMA time per transfer is ``fixed + bytes / bandwidth`` with bandwidth = (engines used) x per-engine
bandwidth, engines used = ``min(ceil(partitions / 8), 16)`` (section 10.3).  Choices where the
reference gives a range or nothing:

* DMA fixed cost: 600 ns per transfer (the HWDGE per-instruction figure); DMAs are summed as one
  serial queue (a conservative bound; real queues overlap).
* GpSimd instructions without a formula (partition reduce, gathers): ``150 + N`` cycles.
* No dependency or pipelining model: "overlapped" time is the busiest engine (perfect overlap),
  "serialised" time the sum over engines (no overlap).  The truth lies between.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field

from cuda2nki.nkisim import state as st

MIN_II = 64
DMA_FIXED_NS = 600.0
ENGINES = ("tensor", "vector", "scalar", "gpsimd", "dma")


def _mm_cycles(extra: tuple) -> float:
    ns, nm, fp32 = extra[0], extra[1], extra[2]
    double_row = len(extra) > 4 and extra[4]
    c = max(min(64, ns), nm)
    if fp32:
        c *= 4
    if double_row:
        c /= 2
    return float(c)


def instr_cycles(ins: st.Instr) -> float:
    """Engine cycles of one traced instruction."""
    op, n, ex = ins.op, max(ins.free, 0), ins.extra
    if ins.engine == "dma":
        return 0.0
    if op == "nc_matmul":
        return _mm_cycles(ex) if ex else float(max(min(64, n), n))
    if op == "nc_transpose":
        if ins.engine == "tensor":
            p, f = (ex[0], ex[1]) if len(ex) >= 2 else (ins.partitions, n)
            return float(max(p, min(64, f)))
        return float(max(MIN_II, n))
    if op == "tensor_tensor":
        name = ex[0] if ex else ""
        fast = (len(ex) > 2 and ex[2]) or (
            len(ex) > 1 and ex[1] and name in ("add", "multiply", "subtract")
        )
        return float(max(MIN_II, n if fast else 2 * n))
    if op in (
        "tensor_scalar",
        "tensor_copy",
        "dropout",
        "bn_stats",
        "nc_stream_shuffle",
        "range_select",
        "exponential",
        "rng",
        "rand2",
        "select_reduce",
    ):
        return float(max(MIN_II, n))
    if op == "activation":
        extra_reduce = MIN_II if (len(ex) > 1 and ex[1]) else 0
        return float(max(MIN_II, n) + extra_reduce)
    if op in ("activation_reduce", "tensor_scalar_reduce"):
        return float(max(MIN_II, n) + MIN_II)
    if op == "tensor_reduce":
        bf16 = (
            len(ex) > 2
            and ex[1] == "bfloat16"
            and ex[2] == "bfloat16"
            and ex[0] in ("add", "sum", "maximum", "max")
        )
        return float(max(MIN_II, n / 2 if bf16 else n))
    if op == "scalar_tensor_tensor":
        fast = (
            len(ex) > 2
            and ex[2] == "bfloat16"
            and ex[0] == "subtract"
            and ex[1] == "multiply"
            and n % 2 == 0
        )
        return float(max(MIN_II, n if fast else 2 * n))
    if op == "tensor_tensor_scan":
        return float(max(MIN_II, 2 * n))
    if op == "bn_aggr":
        return float(max(MIN_II, 13 * n / 3))
    if op == "reciprocal":
        return float(max(MIN_II, 8 * n))
    if op == "memset":
        return float(max(MIN_II, n))
    if op == "tensor_copy_predicated":
        return float(max(MIN_II, 2 * n))
    if op in ("iota", "affine_select", "nc_n_gather", "tensor_partition_reduce"):
        return float(150 + n)
    if op == "local_gather":
        return float(150 + (ex[0] if ex else n) / 8)
    if op in ("max8", "nc_find_index8", "nc_match_replace8", "tensor_scalar_cumulative"):
        return float(max(MIN_II, n))
    return float(max(MIN_II, n))


def dma_time_ns(ins: st.Instr, target: st.Target) -> float:
    parts = max(int(ins.partitions or 1), 1)
    engines = min(-(-parts // 8), 16)
    bw = engines * target.dma_bytes_per_ns_per_engine
    return DMA_FIXED_NS + ins.dma_bytes / bw


def _clock(engine: str, t: st.Target) -> float:
    return {
        "tensor": t.pe_ghz,
        "vector": t.vector_ghz,
        "scalar": t.scalar_ghz,
        "gpsimd": t.gpsimd_ghz,
    }.get(engine, t.vector_ghz)


@dataclass
class Profile:
    target: str
    instructions: dict[str, int] = field(default_factory=dict)
    cycles: dict[str, float] = field(default_factory=dict)
    time_ns: dict[str, float] = field(default_factory=dict)
    dma_count: int = 0
    dma_bytes: int = 0
    dma_avg_bytes_per_partition: float = 0.0
    overlapped_ns: float = 0.0
    serialised_ns: float = 0.0
    bottleneck: str = ""
    peak_sbuf_bytes_per_partition: int = 0
    peak_psum_bytes_per_partition: int = 0
    peak_psum_banks: int = 0
    pe_fill: float = 0.0
    partition_utilisation: float = 0.0
    matmul_flops: int = 0
    per_line: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "target": self.target,
            "instructions": dict(self.instructions),
            "cycles": {k: round(v, 1) for k, v in self.cycles.items()},
            "time_ns": {k: round(v, 1) for k, v in self.time_ns.items()},
            "dma": {
                "count": self.dma_count,
                "bytes": self.dma_bytes,
                "avg_bytes_per_partition": round(self.dma_avg_bytes_per_partition, 2),
            },
            "overlapped_ns": round(self.overlapped_ns, 1),
            "serialised_ns": round(self.serialised_ns, 1),
            "bottleneck": self.bottleneck,
            "peak_sbuf_bytes_per_partition": self.peak_sbuf_bytes_per_partition,
            "peak_psum_bytes_per_partition": self.peak_psum_bytes_per_partition,
            "peak_psum_banks": self.peak_psum_banks,
            "pe_fill": round(self.pe_fill, 4),
            "partition_utilisation": round(self.partition_utilisation, 4),
            "matmul_flops": self.matmul_flops,
            "per_line": self.per_line,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def to_text(self) -> str:
        lines = [f"profile (target {self.target}, cost model of NKI.md section 10)"]
        lines.append(f"  {'engine':<8} {'instr':>8} {'cycles':>14} {'time us':>12}")
        for e in ENGINES:
            if e in self.instructions:
                lines.append(
                    f"  {e:<8} {self.instructions[e]:>8} {self.cycles.get(e, 0):>14.0f} "
                    f"{self.time_ns.get(e, 0) / 1000:>12.3f}"
                )
        lines.append(
            f"  DMA: {self.dma_count} transfers, {self.dma_bytes} bytes, "
            f"{self.dma_avg_bytes_per_partition:.1f} bytes per partition row on average"
        )
        lines.append(
            f"  estimated time: {self.overlapped_ns / 1000:.3f} us overlapped (max over engines), "
            f"{self.serialised_ns / 1000:.3f} us serialised (sum); bottleneck: {self.bottleneck}"
        )
        lines.append(
            f"  peak SBUF {self.peak_sbuf_bytes_per_partition} B/partition, peak PSUM "
            f"{self.peak_psum_bytes_per_partition} B/partition ({self.peak_psum_banks} banks)"
        )
        if self.per_line:
            lines.append("  costliest lines:")
            for d in self.per_line[:5]:
                lines.append(
                    f"    {d['file']}:{d['line']}: {d['count']} x {d['engine']} {d['op']}, "
                    f"{d['time_ns'] / 1000:.3f} us"
                )
        lines.append(
            f"  PE-array fill {self.pe_fill:.1%}, partition utilisation "
            f"{self.partition_utilisation:.1%}, matmul flops {self.matmul_flops}"
        )
        return "\n".join(lines)


def build_profile(trace: list[st.Instr], state: st.SimState | None = None) -> Profile:
    target = state.target if state is not None else st.TARGETS["trn2"]
    if state is not None:  # on-chip peaks by liveness over the trace
        state.settle_memory()
    counts: dict[str, int] = defaultdict(int)
    cycles: dict[str, float] = defaultdict(float)
    times: dict[str, float] = defaultdict(float)
    dma_n = dma_b = dma_rows = 0
    pe_w = pe_sum = 0.0
    comp_n = comp_p = 0
    flops = 0
    lines: dict[tuple[str, int], list] = {}
    for ins in trace:
        e = ins.engine
        counts[e] += 1
        if e == "dma":
            t = dma_time_ns(ins, target)
            times["dma"] += t
            dma_n += 1
            dma_b += ins.dma_bytes
            dma_rows += max(int(ins.partitions or 1), 1)
            c = 0.0
        else:
            c = instr_cycles(ins)
            cycles[e] += c
            t = c / _clock(e, target)
            times[e] += t
            comp_n += 1
            comp_p += ins.partitions
            if ins.op == "nc_matmul" and ins.extra:
                k, m, n = ins.extra[3], ins.extra[0], ins.extra[1]
                fill = (k / 128) * (min(m, 128) / 128)
                pe_sum += fill * c
                pe_w += c
                flops += 2 * k * m * n
        ent = lines.get((ins.file, ins.line))
        if ent is None:
            lines[(ins.file, ins.line)] = [e, ins.op, 1, t]
        else:
            ent[2] += 1
            ent[3] += t
    total = {k: v for k, v in times.items()}
    bottleneck = max(total, key=lambda k: total[k]) if total else ""
    per_line = sorted(
        (
            {
                "file": f,
                "line": ln,
                "engine": v[0],
                "op": v[1],
                "count": v[2],
                "time_ns": round(v[3], 1),
            }
            for (f, ln), v in lines.items()
        ),
        key=lambda d: -d["time_ns"],
    )[:20]
    return Profile(
        target=target.name,
        instructions=dict(counts),
        cycles=dict(cycles),
        time_ns=dict(times),
        dma_count=dma_n,
        dma_bytes=dma_b,
        dma_avg_bytes_per_partition=dma_b / dma_rows if dma_rows else 0.0,
        overlapped_ns=max(total.values()) if total else 0.0,
        serialised_ns=sum(total.values()),
        bottleneck=bottleneck,
        peak_sbuf_bytes_per_partition=state.peak_sbuf if state is not None else 0,
        peak_psum_bytes_per_partition=state.peak_psum_bytes if state is not None else 0,
        peak_psum_banks=state.peak_psum_banks if state is not None else 0,
        pe_fill=pe_sum / pe_w if pe_w else 0.0,
        partition_utilisation=comp_p / (128 * comp_n) if comp_n else 0.0,
        matmul_flops=flops,
        per_line=per_line,
    )
