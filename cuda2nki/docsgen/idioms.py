"""``docs/idioms.md``: the idioms the port pipeline recognises and the NKI it lowers them to.

The lifter (CUDA -> intent IR) tags every statement with the :class:`~cuda2nki.ir.ops.Idiom` of
the recogniser that produced it.  For each idiom this module takes a representative intent
kernel (in the IR's text form), runs the port pipeline on it
(:func:`cuda2nki.pipeline.port_intent`) and records what the code did: the layout
``choose-layout`` picked, the NKI calls in the generated kernel and the notes it attached -- or
the refusal.  The table is therefore what the passes do today, not what they are meant to do.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from cuda2nki.docsgen.cuda_subset import cell

ROOT = Path(__file__).resolve().parents[2]

#: idiom, what it means, a representative intent kernel
SAMPLES: list[tuple[str, str, str]] = [
    (
        "map",
        "elementwise function of the inputs at the same index (broadcasts allowed)",
        "kernel bias_relu(x: in float32[R, C], b: in float32[C], y: out float32[R, C], R: int32, "
        "C: int32) {\n  map: y[i, j] = max(x[i, j] + b[j], 0.0) for i < R, j < C;\n}",
    ),
    (
        "map",
        "32-bit integer arithmetic with C's wraparound (hashes, integer division)",
        "kernel bucket(x: in uint32[N], y: out uint32[N], N: int32) {\n"
        "  map: y[i] = (x[i] * 2654435761:uint32) % 1000:uint32 for i < N;\n}",
    ),
    (
        "map",
        "an element's loop with a data-dependent exit that a counter bounds (Newton iteration)",
        "kernel halve(x: in float32[N], y: out float32[N], N: int32) {\n"
        "  map: y[i] = iterate(k: int32 = 0 -> carry(k, int32) + 1, r: float32 = x[i] -> "
        "0.5 * carry(r, float32); abs(carry(r, float32)) > 1.0 && carry(k, int32) + 1 < 16; "
        "16; r) for i < N;\n}",
    ),
    (
        "map",
        "a choice on scalar parameters alone (a flag, a switch on a mode): one Python branch, "
        "decided when the kernel is traced",
        "kernel act(x: in float32[N], y: out float32[N], N: int32, mode: int32) {\n"
        "  map: y[i] = select(index(mode) == index(1), tanh(x[i]), max(x[i], 0.0)) for i < N;\n}",
    ),
    (
        "reduce",
        "row reduction: one result per row",
        "kernel rowsum(x: in float32[R, C], y: out float32[R], R: int32, C: int32) {\n"
        "  reduce: y[i] = reduce(add, j < C: x[i, j]) for i < R;\n}",
    ),
    (
        "reduce",
        "per-block partials of a grid-stride loop: the trips are a loop accumulating row tiles",
        "kernel partials(x: in float32[n], p: out float32[8], n: int32) {\n"
        "  reduce: p[i] = reduce(add, j < 128: reduce(add, k < 1 + (n - 1) // 1024: "
        "x[1024 * k + 128 * i + j]; where index(1024 * k + 128 * i + j) < index(n))) "
        "for i < 8;\n}",
    ),
    (
        "reduce",
        "column reduction: one result per column",
        "kernel colmax(x: in float32[R, C], y: out float32[C], R: int32, C: int32) {\n"
        "  reduce: y[j] = reduce(max, i < R: x[i, j]) for j < C;\n}",
    ),
    (
        "contract",
        "matrix product (sum over a shared axis of two matrices)",
        "kernel matmul(A: in bfloat16[M, K], B: in bfloat16[K, N], C: out float32[M, N], "
        "M: int32, N: int32, K: int32) {\n  contract: C[i, j] = reduce(add, k < K: "
        "cast(A[i, k], float32) * cast(B[k, j], float32); acc float32) for i < M, j < N;\n}",
    ),
    (
        "contract",
        "matrix-vector product",
        "kernel gemv(A: in float32[M, K], x: in float32[K], y: out float32[M], M: int32, "
        "K: int32) {\n  contract: y[i] = reduce(add, k < K: A[i, k] * x[k]; acc float32) "
        "for i < M;\n}",
    ),
    (
        "transpose",
        "output indexed by the swapped input indices",
        "kernel transpose(A: in float32[M, N], B: out float32[N, M], M: int32, N: int32) {\n"
        "  transpose: B[j, i] = A[i, j] for i < M, j < N;\n}",
    ),
    (
        "softmax",
        "row max, exp of the shifted row, row sum, division",
        "kernel softmax(x: in float32[R, C], y: out float32[R, C], R: int32, C: int32) {\n"
        "  temp m: float32[R];\n  temp e: float32[R, C];\n  temp s: float32[R];\n"
        "  softmax: m[i] = reduce(max, j < C: x[i, j]) for i < R;\n"
        "  softmax: e[i, j] = exp(x[i, j] - m[i]) for i < R, j < C;\n"
        "  softmax: s[i] = reduce(add, j < C: e[i, j]) for i < R;\n"
        "  softmax: y[i, j] = e[i, j] / s[i] for i < R, j < C;\n}",
    ),
    (
        "norm",
        "row statistics (mean, mean square) applied back to the row",
        "kernel rmsnorm(x: in float32[R, C], w: in float32[C], y: out float32[R, C], R: int32, "
        "C: int32) {\n  temp ss: float32[R];\n"
        "  norm: ss[i] = reduce(add, j < C: x[i, j] * x[i, j]) for i < R;\n"
        "  norm: y[i, j] = x[i, j] * rsqrt(ss[i] / cast(index(C), float32) + 1e-06) * w[j] "
        "for i < R, j < C;\n}",
    ),
    (
        "scan",
        "prefix combination along a row",
        "kernel cumsum(x: in float32[R, C], y: out float32[R, C], R: int32, C: int32) {\n"
        "  scan: y[i, j] = scan(add, j: x[i, j]) for i < R, scan j < C;\n}",
    ),
    (
        "gather",
        "rows chosen by an index tensor",
        "kernel embed(table: in float32[V, D], idx: in int32[N], out: out float32[N, D], "
        "V: int32, D: int32, N: int32) {\n"
        "  gather: out[n, d] = table[$(idx[n]), d] for n < N, d < D;\n}",
    ),
    (
        "gather",
        "one element per row at a data-dependent column (an indirect DMA on the tensor read as a "
        "column of its elements, reshape((size, 1)).vector_select)",
        "kernel nll(p: in float32[N, V], t: in int32[N], loss: out float32[N], "
        "N: int32, V: int32) {\n"
        "  gather: loss[i] = neg(log(p[i, $(t[i])])) for i < N;\n}",
    ),
    (
        "stencil",
        "fixed neighbourhood of the same index",
        "kernel smooth(x: in float32[N], y: out float32[N], N: int32) {\n"
        "  stencil: y[i] = x[i - 1] - 2.0 * x[i] + x[i + 1] for i < N "
        "where index(i) >= 1 && index(i) < N - 1;\n}",
    ),
    (
        "scatter",
        "accumulating writes at data-dependent indices (histograms, scatter-add)",
        "kernel histogram(x: in int32[N], hist: out int32[B], N: int32, B: int32) {\n"
        "  scatter: hist[$(x[i])] add= 1 for i < N where x[i] >= 0 && x[i] < index(B);\n}",
    ),
    (
        "literal",
        "no recogniser claimed the statement: thread-by-thread translation",
        "kernel odd(x: in float32[N], y: out float32[N], N: int32) {\n"
        "  literal: y[i] = x[i] * 2.0 for i < N;\n}",
    ),
]

_CALL = re.compile(r"\b(nisa|nl)\.([a-z_][a-z0-9_]*)\(")
_SKIP = {"ndarray", "zeros", "affine_range", "sequential_range", "static_range", "arange", "mgrid"}


@dataclass(frozen=True)
class Row:
    idiom: str
    meaning: str
    layout: str
    nki: str
    notes: str


def lower(text: str) -> tuple[str, str, str]:
    """(layouts, NKI calls, notes) for one intent kernel, or the refusal in the second cell."""
    from cuda2nki.diagnostics import DiagnosticError
    from cuda2nki.ir.nodes import Compute
    from cuda2nki.ir.parser import parse
    from cuda2nki.passes.choose_layout import classify
    from cuda2nki.pipeline import port_intent

    kernel = parse(text, "idiom.ir")
    layouts = []
    for c in kernel.body:
        if isinstance(c, Compute):
            layout, extra = classify(c, kernel)
            layouts.append(layout + (f" ({extra['why']})" if "why" in extra else ""))
    try:
        _, source, diags = port_intent(kernel)
    except DiagnosticError as exc:
        d = exc.diagnostic
        return ", ".join(dict.fromkeys(layouts)), f"refused: {d.message} [{d.code}]", ""
    calls = dict.fromkeys(f"{m}.{f}" for m, f in _CALL.findall(source) if f not in _SKIP)
    notes = dict.fromkeys(d.code for d in diags)
    return ", ".join(dict.fromkeys(layouts)), ", ".join(f"`{c}`" for c in calls), ", ".join(notes)


#: the sorting-network section (recognised from the kernel's behaviour, not lifted to IR)
SORTING_NETWORKS = [
    "## Sorting networks (idiom `sort`)",
    "",
    "A kernel that sorts each block's segment in shared memory through a compare-exchange "
    "network (Batcher's bitonic sort, the bitonic sort with flipped merges, Batcher's odd-even "
    "merge sort; ascending or descending; keys alone or with values riding along; the segment "
    "sorted whole or as equal chunks side by side; even- and odd-numbered blocks running "
    "different networks, as the block sorts of a global bitonic sort do) is recognised by "
    "running it in the SIMT "
    "interpreter on probe segments (random keys, 0/1 keys, keys with ties, and for float keys "
    "signed zeros, infinities and NaN, with unique values) at the binding's sizes, a ragged "
    "size, and each size scalar doubled and at 1, and keeping the one network that reproduces "
    "every output bit (`cuda2nki/lift/sortnet_match.py`).  A kernel no network reproduces, or "
    "one whose network changes with a size, stays literal.  The port "
    "(`cuda2nki/codegen/sortnet.py`) holds a segment per partition (several short ones, up to "
    "512 B, when there are more segments than partitions; even and odd segments in separate "
    "passes where their networks differ), its keys along the free dimension, 128 partitions per "
    "tile, loaded and stored with one DMA per array; each stage is, "
    "per box of comparators (up to two per stage for these families), one `nisa.tensor_tensor` "
    "comparison of the low and high ends (strided `.ap` views) into a swap mask and three copies "
    "per array (`nisa.tensor_copy`, two `nisa.tensor_copy_predicated`).  `check` counts one row "
    "of work per segment.  Only the `nki` target has this form (`legacy` keeps the literal port).",
    "",
    "Ruling on float keys: a comparator swaps exactly when the CUDA comparison does.  `a > b`, "
    "`a < b`, `a >= b`, `a <= b` are IEEE comparisons, false whenever a NaN is involved, so a "
    "NaN is never moved by them; a negated spelling (`!(a <= b)`, `(a > b) == dir` with `dir` "
    "false) is true for a NaN and moves it, and the port negates the same comparison "
    "(`reverse_pred`).  `-0.0` and `+0.0` compare equal, so a strict comparison leaves them in "
    "place and a non-strict one swaps them.  Keys and values move as bit patterns, so NaN "
    "payloads and the sign of zero arrive as the CUDA kernel leaves them, and ties in key-value "
    "sorts end in the order the CUDA network gives them.",
]


def rows() -> list[Row]:
    return [Row(i, m, *lower(t)) for i, m, t in SAMPLES]


def corpus_idioms() -> dict[str, list[str]]:
    """The corpus kernels per ``idiom`` key of their bindings."""
    out: dict[str, list[str]] = defaultdict(list)
    for toml in sorted((ROOT / "corpus").glob("*/*.toml")):
        m = re.search(r'^idiom\s*=\s*"([^"]+)"', toml.read_text(), re.M)
        if m:
            out[m.group(1)].append(f"{toml.parent.name}/{toml.stem}")
    return dict(sorted(out.items()))


def markdown() -> str:
    from cuda2nki.pipeline import port_intent  # noqa: F401  (fail early if absent)

    try:
        from cuda2nki.lift import lift_kernel  # noqa: F401

        lifter = "The lifter recognises these idioms in CUDA source (`cuda2nki port`)."
    except ImportError:
        lifter = (
            "The lifter's entry point is not wired into `cuda2nki port` yet, so the table shows "
            "what the pass pipeline does with an intent kernel of each idiom; `cuda2nki port "
            "--emit intent` will print the intent the lifter finds in a CUDA kernel."
        )
    out = [
        "# Recognised idioms and their NKI lowering",
        "",
        "Porting lifts a CUDA kernel to intent statements tagged with an idiom, then the pass "
        "pipeline picks a tile layout for each statement (`choose-layout`) and lowers it to NKI "
        "instructions.  " + lifter + "  Each row below is produced by running the pipeline on "
        "a small representative intent kernel (listed in `cuda2nki/docsgen/idioms.py`) when "
        "the documentation is generated.",
        "",
        "| idiom | meaning | layout | NKI lowering (current API) | notes |",
        "|---|---|---|---|---|",
    ]
    for r in rows():
        out.append(
            f"| {r.idiom} | {cell(r.meaning)} | {cell(r.layout)} | {cell(r.nki)} | {r.notes} |"
        )
    out += [
        "",
        "Layouts: `rows` (partition = the first parallel axis, 128 rows per tile; free = the "
        "row; a reduction rolled into a loop over steps loads its per-step operands ahead of "
        "the loop: the row block in one DMA, a row the same on every partition once onto one "
        "partition, broadcast each step by a ones-row matmul), `matmul` (contraction axis on "
        "partitions, TensorE accumulating in PSUM), "
        "`colreduce` (reduced axis on partitions; a sum is a ones-vector matmul, and with "
        "fewer rows than partitions `128 // R` column blocks are stacked on them and summed by "
        "one matmul against a block indicator; rows that merge several bound dims, "
        "`dout[r * OC + o]` with `r < B * T` into `[B, T, OC]`, are read as blocks of the "
        "merged view), `transpose` (128x128 blocks through the "
        "tensor engine; a neighbour that moves along with the columns merges into them), "
        "`scatter` (elements in resident `[rows, F]` chunks, each column an element tile on the "
        "partitions; a one-hot of the keys against an iota of the target's rows -- along the "
        "free axis for a 1-D target, up to 128 rows on the partitions for a table -- "
        "contracted with the values on TensorE into PSUM; counts exact below 2^24), "
        "`unsupported` (the reason is given; the statement is refused).",
        "",
        *SORTING_NETWORKS,
        "",
        "## Corpus kernels by idiom",
        "",
        "| idiom (binding) | kernels |",
        "|---|---|",
    ]
    for idiom, names in corpus_idioms().items():
        out.append(f"| {idiom} | {', '.join(f'`{n}`' for n in names)} |")
    return "\n".join(out) + "\n"
