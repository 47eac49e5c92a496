"""Performance and idiom findings on an NKI port (C2N5xxx): raised by ``cuda2nki check`` / ``review``.

Every finding carries the measured figure behind it.  Per NKI.md §14.7 a finding about DMA size,
partition use or engine choice accounts for the problem size: a small problem is not a defect.
"""

from cuda2nki.diagnostics import Rule, Severity, register

E, W, N = Severity.ERROR, Severity.WARNING, Severity.NOTE

register(
    Rule(
        "C2N5001",
        W,
        "literal thread translation",
        "literal per-thread translation: {evidence}",
        "The port mirrors CUDA's threads instead of using Trainium's tiles: instructions touch a handful of partitions "
        "or elements at a time, and data moves one element (or one row) per DMA. Each instruction and DMA has a fixed "
        "cost of tens of cycles to microseconds, so the port is orders of magnitude slower than a tiled one.",
        example="for i in range(N):\n    t = nl.load(x[i:i+1, 0:1])  # one element per DMA",
        fix="Map 128 rows to the partitions and the rest to the free dimension; move whole tiles per DMA.",
    ),
    Rule(
        "C2N5002",
        W,
        "matmul on the vector engine",
        "contraction computed without the tensor engine: {evidence}",
        "The CUDA kernel is a contraction, but the port multiplies and sums on the vector/scalar engines. "
        "The tensor engine does 128x128 multiply-accumulates per cycle into PSUM.",
        example="prod = nl.multiply(a_row, b_col); acc = nl.sum(prod, axis=1)",
        fix="Use nisa.nc_matmul / nl.matmul with K on the partitions, accumulating in a PSUM tile.",
    ),
    Rule(
        "C2N5003",
        W,
        "no tail handling",
        "tile loop at line {line} covers {what} // {tile} tiles with no remainder handling",
        "A loop over full tiles of a dimension that the CUDA kernel guards (`if (i < n)`) leaves the last partial tile "
        "out: for sizes that are not multiples of the tile, those elements are never computed.",
        example="for i in range(N // 128): ...",
        fix="Loop over ceil_div(N, 128) tiles and bound the last one with min() (or mask= in legacy).",
    ),
    Rule(
        "C2N5004",
        W,
        "narrow accumulation",
        "{evidence}",
        "The port accumulates in a narrower dtype than the CUDA kernel does (CUDA accumulates in fp32 registers). "
        "PSUM accumulates in fp32; a bf16 accumulator loses about 3 decimal digits per partial sum.",
        example="acc = nl.zeros((128, 512), dtype=nl.bfloat16, buffer=nl.psum)",
        fix="Keep accumulators (PSUM tiles, reduction outputs) in fp32.",
    ),
    Rule(
        "C2N5005",
        W,
        "narrowed inputs",
        "{evidence}",
        "The port casts operands to a narrower dtype than the CUDA kernel computes with before the math.",
        example="a16 = nl.copy(a, dtype=nl.bfloat16); nl.matmul(a16, b16)",
        fix="Compute in the CUDA kernel's precision, or document the precision change and loosen the check deliberately.",
    ),
    Rule(
        "C2N5006",
        W,
        "redundant reloads",
        "{evidence}",
        "The same HBM data is loaded again and again inside a loop where it does not change: each reload costs a DMA.",
        example="for k in range(K // 128):\n    for j in range(n):\n        a = nl.load(a_hbm[...k...])  # independent of j",
        fix="Hoist the load out of the loop that does not change it.",
    ),
    Rule(
        "C2N5007",
        W,
        "small DMAs",
        "{evidence}",
        "DMA transfers move few bytes per partition; below 512 B each transfer is dominated by its fixed cost "
        "(~2 µs), and at least 2 KiB per partition is recommended where the problem size allows. "
        "The bytes follow the problem's size: at sizes the check chose in place of the source's "
        "(C2N4032) the finding is a note, not a failure.",
        example="nl.load(x[i*128:(i+1)*128, j:j+1])  # 4 bytes per partition",
        fix="Load larger free-dimension chunks per DMA (≥ 512 fp32 elements per partition).",
    ),
    Rule(
        "C2N5008",
        W,
        "low partition utilisation",
        "{evidence}",
        "Engine instructions use far fewer than the 128 partitions although the problem has enough rows: "
        "every engine instruction processes all 128 lanes at the same cost. The rows counted are the "
        "kernel's independent rows of work where the lifted kernel says so: a block-wise scan or "
        "reduction has one row per block (a 4,096-element scan in 256-element blocks has 16), plus "
        "one per further 512 elements of a long block. The partitions a dimension fills follow "
        "the problem's size: at sizes the check chose in place of the source's (C2N4032) the "
        "finding is a note, not a failure.",
        example="t = nl.load(x[0:1, :])  # one partition per instruction",
        fix="Put 128 rows (or the parallel axis) on the partition dimension.",
    ),
    Rule(
        "C2N5009",
        W,
        "avoidable transpose",
        "avoidable transpose: {evidence}",
        "A transpose that does no useful work: the same data transposed again on every iteration of "
        "a loop it does not depend on; a tile transposed and then transposed back (explicitly, "
        "or by the legacy nl.matmul without transpose_x=True, which transposes x itself) with only "
        "elementwise work in between; or a matmul result turned around, which swapping the "
        "stationary and moving operands gives directly ((X.T @ Y).T = Y.T @ X). Each transpose "
        "is a tensor-engine instruction plus a PSUM "
        "round trip. Transposing a block once to put the contraction axis on the partitions, as "
        "matmul needs, is the idiom and is not reported. The figure is how often the trace ran it.",
        example="for m in ...:\n    for n in ...:\n        for k in ...:\n"
        "            nisa.nc_transpose(dst=a_t, data=a_blk)  # a_blk depends on m and k, not n",
        fix="Transpose once outside the loop that does not change the input and keep the result in "
        "SBUF; drop transpose pairs; pass the [K, M] tile with nl.matmul(transpose_x=True); swap "
        "stationary and moving instead of transposing a matmul result.",
    ),
    Rule(
        "C2N5010",
        W,
        "Python loops over elements",
        "{evidence}",
        "Nested Python loops iterate over individual element indices: the loop body becomes thousands of tiny "
        "instructions when the kernel is traced.",
        example="for i in range(128):\n    for j in range(512):\n        ...",
        fix="Express the computation on whole tiles.",
    ),
    Rule(
        "C2N5011",
        W,
        "warp-sized logic",
        "warp-sized logic: {evidence}",
        "The port reproduces CUDA's warp structure, which has no meaning on Trainium's "
        "128-partition engines: a loop that halves an offset and combines the two halves of a "
        "slice (a warp shuffle or shared-memory tree emulated step by step), a loop that walks "
        "32 lanes at a time, or tiles 32 partitions tall although the problem has 128 rows or "
        "more. Every step is a full engine instruction with its fixed cost; the figure is what "
        "the trace ran at those lines.",
        example="for off in (16, 8, 4, 2, 1):\n"
        "    nisa.tensor_tensor(dst=v[:, 0:off], data1=v[:, 0:off], data2=v[:, off:2 * off], op=nl.maximum)",
        fix="Reduce along the free axis with one nisa.tensor_reduce per tile; use 128-partition "
        "tiles and whole-row free-axis chunks.",
    ),
    Rule(
        "C2N5012",
        W,
        "over the on-chip budget",
        "{evidence}",
        "The port's peak SBUF or PSUM use is above what the target has: the compiler would spill or fail.",
        fix="Allocate tiles inside the loops that use them, and reduce tile sizes.",
    ),
    Rule(
        "C2N5014",
        W,
        "bytes moved beyond what is needed",
        "{evidence}",
        "The port's DMAs move many times the bytes the computation needs. What it needs is "
        "measured on the CUDA kernel's own run: the distinct input bytes it reads and the output "
        "bytes it writes. A gather that loads whole rows to use one element of each, or a tile "
        "loaded far wider than the part used, pays DMA bandwidth for data it throws away. "
        "Reported at the DMA line moving the most bytes, with the ratio; the reuse a tiled "
        "contraction legitimately has (each operand tile loaded once per output tile) is allowed "
        "for, and a few KiB of excess on a small problem are not a defect.",
        example="rows = nl.load(probs[i0:i0 + 128, :])  # the whole row, for one element of it",
        fix="Load only the elements used: an indirect DMA with a per-partition offset "
        "(vector_offset=) for a gather, or a tile bounded to the part the computation reads.",
    ),
    Rule(
        "C2N5013",
        N,
        "suppressed finding",
        "{count} finding(s) suppressed by inline or command-line suppressions",
        "Findings matched `# cuda2nki: ignore[ID] reason` comments or --ignore options and are "
        "not reported; a note per inline suppression names the id, the comment's line and its "
        "reason.  No inline comment suppresses a numerics finding (C2N4xxx).",
        fix="Nothing to fix.",
    ),
)
