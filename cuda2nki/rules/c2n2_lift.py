"""C2N2000-2399: lifting CUDA kernels to intent IR (``cuda2nki.lift``).

Refusals name the construct that blocked recognition; the kernel then takes the literal
(SIMT-vectorised) lowering or is refused.  Binding-inference ids say exactly what is missing.
"""

from cuda2nki.diagnostics import Rule, Severity, register

E, W, N = Severity.ERROR, Severity.WARNING, Severity.NOTE

register(
    Rule(
        "C2N2001",
        N,
        "kernel lifted",
        "'{kernel}' lifted as {idiom}",
        "A recogniser proved what the kernel computes; the intent IR is derived from the analysed "
        "index expressions and data flow, not from names.",
        example="__global__ void k(float* o, const float* a, int n) { int i = ...; "
        "if (i < n) o[i] = 2 * a[i]; }",
        fix="Nothing to do.",
    ),
    Rule(
        "C2N2010",
        W,
        "construct not liftable",
        "cannot lift '{kernel}': {what}",
        "The lifter met a construct it does not model (listed in the message). No recogniser "
        "claims the kernel; it takes the literal lowering or is refused.",
        example="y[i] = (float)__brev((unsigned)t) * x[i];",
        fix="Rewrite the construct with plain arithmetic and if/for, or accept the literal port.",
    ),
    Rule(
        "C2N2011",
        W,
        "loop-carried value not recognised",
        "cannot lift '{kernel}': the value of '{var}' carried across loop iterations is not a "
        "reduction ({why})",
        "A local updated inside a loop must have the form `acc = acc op f(i)` (op one of + * max "
        "min, also spelled with compound assignment, fmaxf, a ternary or an if) to become a "
        "reduction. Other recurrences (running values stored each iteration, last-value "
        "semantics, integer recurrences) are not lifted.",
        example="for (int k = 0; k < K; ++k) acc = acc * 0.5f + a[k];",
        fix="Express the loop as a reduction, or accept the literal port.",
    ),
    Rule(
        "C2N2012",
        W,
        "shared-memory read not resolved",
        "cannot lift '{kernel}': read of shared array '{array}' cannot be traced to the thread "
        "that wrote it ({why})",
        "Every shared-memory read is resolved to the write that produced the element, by solving "
        "the writer's thread coordinates from the index (a mixed-radix combination of threadIdx "
        "and loop variables). Non-invertible indices, reads without a __syncthreads after "
        "another thread's write, and elements written by several threads with different values "
        "block this.",
        example="s[(threadIdx.x * 7) % 32] = x[i]; __syncthreads(); y[i] = s[threadIdx.x];",
        fix="Index shared memory by threadIdx (plus loop offsets) so each element has one writer.",
    ),
    Rule(
        "C2N2013",
        W,
        "index not affine",
        "cannot lift '{kernel}': {what}",
        "Indices must be affine (or quasi-affine: / and % by a constant or parameter) in thread "
        "coordinates, loop variables and scalar parameters, and map onto the declared tensor "
        "shape.",
        example="y[i * i] = x[i];",
        fix="Use affine indices, or accept the literal port.",
    ),
    Rule(
        "C2N2015",
        W,
        "cooperative operation not recognised",
        "cannot lift '{kernel}': {what}",
        "Block- and warp-cooperative code (shared-memory trees, shuffles) is lifted by executing "
        "its fixed-trip loops for the launch block size and proving the result combines every "
        "thread's value exactly once. This failed, or the block size is unknown.",
        example="for (int s = blockDim.x / 2; s > 0; s >>= 1) ...  // without a launch block size",
        fix="Give the launch block size (binding [launch] block), or accept the literal port.",
    ),
    Rule(
        "C2N2017",
        W,
        "conflicting writes",
        "cannot lift '{kernel}': writes to '{tensor}' conflict ({why})",
        "Several threads write one element with different values (a race), or the kernel reads an "
        "element of an output it wrote earlier in a way the lifter cannot order.",
        example="out[0] = x[i];  // every thread writes out[0]",
        fix="Use an atomic or a reduction, or accept the literal port.",
    ),
    Rule(
        "C2N2018",
        W,
        "data-dependent control flow",
        "cannot lift '{kernel}': {what}",
        "Branches on data values are lifted as selects, and an atomic add, maximum or minimum "
        "under one as a reduction of the selected value or the op's identity; early returns, "
        "other atomics and shared-memory writes under data-dependent conditions are not.",
        example="if (x[i] < 0) return;",
        fix="Compute both sides and select.",
    ),
    Rule(
        "C2N2019",
        W,
        "loop not liftable",
        "cannot lift '{kernel}': {what}",
        "Loops need a single induction variable with an additive step and a `var < bound` "
        "condition whose bound does not depend on data; multiplicative/shift steps are unrolled "
        "for a known block size. A while loop whose body ends by stepping a variable of its "
        "condition is lifted as that for loop; other while loops, do-while loops (the data "
        "decide the trip count), break and continue are not lifted.",
        example="while (x[i] > 1) i /= 2;",
        fix="Rewrite as a counted for loop.",
    ),
    Rule(
        "C2N2020",
        W,
        "no global write",
        "cannot lift '{kernel}': it writes no global memory",
        "A kernel without stores to its pointer parameters has no observable effect to lift.",
        example="__global__ void k(const float* x) { float v = x[0]; }",
        fix="Check the kernel is complete.",
    ),
    Rule(
        "C2N2021",
        W,
        "launch does not cover the domain",
        "cannot lift '{kernel}': the launch covers {covered} of {needed} elements along {axis}",
        "The iteration domain derived from guards is larger than what the launch grid reaches at "
        "some test point, so the kernel leaves elements unwritten; the lifted meaning would "
        "differ.",
        example='grid = ["N / 256"] with if (i < N)',
        fix="Use ceil_div in the launch grid.",
    ),
    Rule(
        "C2N2022",
        W,
        "atomic not lifted",
        "cannot lift '{kernel}': {what}",
        "atomicAdd/Max/Min on global memory become accumulating writes, and on shared memory "
        "(at an index computed from the thread) a fold over the contributing threads. Other "
        "atomics, and atomics at an index read from data (histograms, scatter-add), are not "
        "lifted.",
        example="atomicCAS(&lock, 0, 1);",
        fix="Accept the literal port.",
    ),
    Rule(
        "C2N2023",
        W,
        "binding needed to lift",
        "cannot lift '{kernel}': {what}",
        "Lifting maps flat pointer offsets onto tensor shapes and needs the launch block size for "
        "cooperative code; the binding (sidecar .toml, inline comments, launch site or "
        "inference) did not provide it.",
        example="kernel.cu without kernel.toml and without a launch site",
        fix="Add a binding: [launch] block and a shape per pointer parameter.",
    ),
    Rule(
        "C2N2024",
        N,
        "optional input",
        "'{name}' is tested against null: the port takes it as {name}=None and traces the "
        "kernel without it when it is None",
        "A pointer input tested against null (`p != NULL`, `p == nullptr`, `if (p)`, `!p`) is an "
        "optional input. Whether it is null is the same for every thread, so the port is made "
        "twice, with the input and without it (each test decided and the dead branch dropped), "
        "and its entry picks one while it is traced.",
        example="out[i] = inp[i] + ((bias != NULL) ? bias[i % C] : 0.0f);",
        fix="Nothing to do; pass None for an absent input.",
    ),
    Rule(
        "C2N2025",
        N,
        "null test kept present",
        "'{name}' is tested against null, but the port takes it as present: {why}",
        "The port decides each null test as if the pointer were given. It cannot be left out "
        "of the port when it is an output (the port returns every output), when it is used "
        "outside its null tests, or when the kernel without it cannot be ported.",
        example="if (mean != nullptr) mean[row] = m;",
        fix="Nothing to do when the tensor is always given; otherwise guard every use.",
    ),
    # ---- binding inference
    Rule(
        "C2N2100",
        N,
        "binding inferred",
        "inferred {what} for '{kernel}' from {source}",
        "No binding was given for this item; it was inferred. Check it and put it into a "
        "kernel.toml to make it explicit.",
        example='x: shape ["n"] from the guard `if (i < n)`',
        fix="Confirm or correct it.",
    ),
    Rule(
        "C2N2101",
        W,
        "binding incomplete",
        "cannot infer {what} for '{kernel}': {why}",
        "The launch site and the kernel's index expressions/guards do not determine this part of "
        "the binding. The message says what to add.",
        example="a pointer read only at x[0]",
        fix='Write it in kernel.toml, e.g. `x = {{ shape = ["N"], dtype = "float32", '
        'role = "in" }}`.',
    ),
)

# ---- the generic literal lowering (cuda2nki.lift.literal)
register(
    Rule(
        "C2N2300",
        W,
        "literal translation",
        "'{kernel}' ported literally: {why}; threads of a block became tile elements "
        "({layout}), the grid a loop of {blocks} -- correct but not idiomatic",
        "No idiom recogniser claimed the kernel, a recognised form could not be scheduled (the "
        "warning names the first cause, e.g. a pass that failed; a note per cause follows), or "
        "the literal lowering was forced with `--lowering literal`; so it was translated thread "
        "by thread: each CUDA block is one "
        "iteration of a loop inside the kernel, its threads the elements of one tile, every "
        "load and store a strided DMA view, divergent branches both evaluated and selected. "
        "The port computes what the CUDA kernel computes, but it keeps CUDA's decomposition: "
        "expect it to be an order of magnitude slower than an idiomatic port.",
        example="switch (mode) { case 0: v = v > 0 ? v : 0; break; ... }",
        fix="Rewrite the kernel so a recogniser claims it (see the lift diagnostics above), or "
        "restructure the port by hand: larger tiles along the data, not the threads.",
    ),
    Rule(
        "C2N2301",
        E,
        "no faithful literal translation",
        "cannot port '{kernel}' literally: {construct}",
        "The literal lowering translates a kernel thread by thread only where the translation "
        "is exactly what CUDA computes. Reads at addresses that depend on data become "
        "indirect (gather) DMAs, atomicAdd/atomicSub there scatter-add DMAs, and plain "
        "stores there (scatters) write thread by thread so that the last thread in launch "
        "order wins where several store to one element (one of the outcomes CUDA allows, the "
        "one the SIMT interpreter gives); break/continue under a per-thread condition become "
        "masking flags; vector and record-struct values are split into their lanes and locals "
        "passed by reference are copied in and out. atomicAdd/atomicSub on a 32-bit integer "
        "whose old value is used (a slot counter, a stream compaction) give each thread the "
        "counter plus the prefix sum of the increments of the threads before it, in the SIMT "
        "interpreter's order (blocks one after another, threads by linear id); in that same "
        "order, the other atomics on 32-bit elements whose old value is used or whose address "
        "depends on data (max, min, bit operations, exchange, compare-and-swap, wrapping "
        "increments, float totals) update the element thread by thread. It refuses atomics on "
        "other element types there, vectors whose address is "
        "taken or that are reinterpreted across element types, structs held as bytes (mixed "
        "member types, unions, bit fields, pointer members), double precision, 3-D blocks, "
        "uniform locals, pointers and local arrays of more than 64 elements that a loop whose "
        "trip count depends on data updates (such a loop otherwise runs on the device, "
        "nl.while_loop, which the legacy API lacks), rather than emit a port that computes "
        "something else.",
        example="while (v > 1.0f) v = v * 0.5f;  // with --api legacy: no runtime loop there",
        fix="Bound the loop with a counter (`while (v > 1.0f && it < 64) { ...; ++it; }`) "
        "where the algorithm allows, port for the current API, or write this port by hand.",
    ),
    Rule(
        "C2N2302",
        E,
        "no literal form for this target",
        "cannot port '{kernel}' literally for the {target} target: literal ports exist for the "
        "nki and legacy targets",
        "The literal lowering is spelled for the current nki API (access patterns `tensor.ap`) "
        "and the legacy neuronxcc.nki API (arange index expressions with mask=); another target "
        "named through the Python API has no literal form.",
        example='port_file("k.cu", target="trn-next", lowering="literal")',
        fix="Port for `--api nki` or `--api legacy`.",
    ),
)
