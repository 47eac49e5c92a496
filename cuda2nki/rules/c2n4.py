"""Numerical fidelity of a port (C2N4xxx): raised by ``cuda2nki check`` / ``review``."""

from cuda2nki.diagnostics import Rule, Severity, register

E, W, N = Severity.ERROR, Severity.WARNING, Severity.NOTE

_CHECK = "cuda2nki check kernel.cu port.py"

register(
    Rule(
        "C2N4001",
        E,
        "output differs from the CUDA kernel",
        "output '{output}' differs from the CUDA kernel ({shape}): {evidence}",
        "Beyond the tolerance derived from the kernel, the port's output differs from what the CUDA kernel "
        "computes, and no more specific pattern (tail, transpose, shift, scale) explains it. When the "
        "port reduces an input along the other axis than the CUDA kernel does, the evidence says so.",
        example=f"{_CHECK}  # port computes x*x where CUDA computes x+x",
        fix="Localise with the mismatch regions and tiles in the report, then compare the port's loop for those tiles with the CUDA code.",
    ),
    Rule(
        "C2N4002",
        W,
        "precision loss",
        "output '{output}' loses precision ({shape}): {evidence}",
        "The error exceeds the bound for the CUDA kernel's precision but fits the bound of a narrower input "
        "or accumulation dtype: typically bf16 accumulation (PSUM tile or reduction in bf16) or inputs cast to bf16.",
        example="acc = nl.zeros((128, 512), dtype=nl.bfloat16, buffer=nl.psum)",
        fix="Accumulate in fp32 (PSUM tiles are fp32), and keep matmul inputs as wide as CUDA's.",
    ),
    Rule(
        "C2N4003",
        E,
        "output region never written",
        "output '{output}' has regions the port never writes ({shape}): {evidence}",
        "Output tensors start as NaN canaries; after the port ran, some elements still hold them.",
        example="for i in range(N // 128): ...  # the last N % 128 rows are never stored",
        fix="Store every tile of the output, including the ragged tail.",
    ),
    Rule(
        "C2N4004",
        E,
        "tail handled wrongly",
        "output '{output}' is wrong only in the ragged tail ({shape}): {evidence}",
        "Full tiles match the CUDA kernel; the remainder past the last full tile of 128 partitions (or 512 free "
        "elements) does not. The CUDA kernel's `if (i < n)` guard has no counterpart in the port.",
        example="nl.store(out[i*128:(i+1)*128], t)  # no min(), no mask",
        fix="Bound the last tile: `rows = min(128, N - i*128)` (current API) or `mask=(i*128 + ip < N)` (legacy).",
    ),
    Rule(
        "C2N4005",
        E,
        "output transposed",
        "output '{output}' is the transpose of the CUDA result: {evidence}",
        "The port's output equals the CUDA output transposed: an operand or the result is in the wrong layout.",
        example="nl.matmul(a, b, transpose_x=False)  # where a was already [K, M]",
        fix="Check which operand is stationary (transposed) in nc_matmul and how the result is stored.",
    ),
    Rule(
        "C2N4006",
        E,
        "output shifted",
        "output '{output}' is the CUDA result shifted: {evidence}",
        "The port writes the right values to the wrong place: an off-by-one or a tile offset error.",
        example="nl.store(out[i*128+1:(i+1)*128+1], t)",
        fix="Check the start index of every load and store against the CUDA index expression.",
    ),
    Rule(
        "C2N4007",
        E,
        "output scaled",
        "output '{output}' is the CUDA result times a constant: {evidence}",
        "The port's output is proportional to the reference: a missing or doubled scale factor (alpha, 1/N, 1/sqrt(d)).",
        example="scores = nl.matmul(q, k)  # CUDA multiplies by scale",
        fix="Apply the same scalar factors as the CUDA kernel (activation scale= is a convenient place).",
    ),
    Rule(
        "C2N4008",
        E,
        "some tiles wrong",
        "output '{output}' is wrong in some tiles ({shape}): {evidence}",
        "Mismatches are confined to some (partition, free) tiles: a loop bound, tile offset or buffer reuse error in those iterations.",
        example="for i in range(1, ntiles): ...  # first tile skipped",
        fix="Inspect the iterations that produce the listed tiles.",
    ),
    Rule(
        "C2N4009",
        E,
        "non-finite output",
        "output '{output}' has non-finite values where the CUDA kernel has none: {evidence}",
        "The port produces NaN or Inf where the reference is finite: overflow in a narrow dtype, log/divide of zero, "
        "or reading uninitialised memory.",
        example="e = nl.exp(x)  # without subtracting the row max first",
        fix="Follow the CUDA kernel's numerically stable formulation (e.g. subtract the max before exp).",
    ),
    Rule(
        "C2N4010",
        E,
        "output shape mismatch",
        "output '{output}': {evidence}",
        "The port returns an array of a different size than the CUDA buffer it corresponds to.",
        fix="Return outputs shaped as the binding declares, or bind them explicitly with --bind.",
    ),
    Rule(
        "C2N4011",
        E,
        "non-deterministic port",
        "output '{output}' differs between two runs on the same inputs ({count} elements)",
        "Running the port twice on identical inputs gave different results: it reads uninitialised memory or depends on state.",
        fix="Initialise every tile before reading it (nl.zeros / memset) and do not keep state between calls.",
    ),
    Rule(
        "C2N4012",
        W,
        "vacuous tolerance",
        "the tolerance for '{output}' also accepts {probes}: the check cannot tell right from wrong",
        "A meaningful tolerance must reject zeros, the negated reference and a shuffled reference. This one does not, "
        "usually because the output is all zeros or the bound is dominated by huge magnitudes.",
        fix="Check with other inputs (--seeds, --set) or give the kernel inputs that produce a non-trivial output.",
    ),
    Rule(
        "C2N4013",
        N,
        "default tolerance used",
        "no error bound could be derived for '{output}' ({reason}); using the default for {dtype}: rtol={rtol:g}, atol={atol:g}",
        "cuda2nki derives a componentwise error bound from the kernel's intent IR. When the kernel is not lifted to IR, it falls "
        "back to per-dtype defaults (those of torch.testing.assert_close, widened by the reduction length when known); for "
        "float32/float64 outputs the default is further widened by the CUDA kernel's own rounding error, measured by running "
        "it again in float64 on the same inputs (tolerance source 'fp64-run').",
        fix="Nothing to fix; the check is weaker than with a derived bound. For a sharper check, make the kernel "
        "recognisable to the lifter (see docs/idioms.md for the idioms it recognises).",
    ),
    Rule(
        "C2N4014",
        E,
        "port failed",
        "the port failed on shape {point}: {reason}",
        "The port raised an exception or violated an NKI constraint in the simulator when run on these inputs.",
        fix="See the message; constraint violations carry their own C2N3xxx id and line.",
    ),
    Rule(
        "C2N4015",
        E,
        "port timed out",
        "the port did not finish within {seconds:g} s on shape {point}",
        "The port was stopped after the time limit: an endless loop, or far too much work for the shape.",
        fix="Check loop bounds; raise --timeout if the shape is simply large.",
    ),
    Rule(
        "C2N4016",
        E,
        "port exhausted memory",
        "the port exceeded the memory limit on shape {point}: {reason}",
        "The port allocated more host memory than allowed while being simulated.",
        fix="Check allocation sizes; raise --memory if legitimate.",
    ),
    Rule(
        "C2N4017",
        E,
        "port calls out to the system",
        "the port tried to {what}",
        "A kernel under review must not start processes, open network connections or write outside its sandbox. "
        "The attempt was refused and is reported.",
        fix="Remove the call: an NKI kernel has no business doing it.",
    ),
    Rule(
        "C2N4018",
        E,
        "port crashed",
        "the port's process died on shape {point}: {reason}",
        "The interpreter running the port died (signal or hard exit).",
        fix="Run the port alone with `cuda2nki simulate` to investigate.",
    ),
    Rule(
        "C2N4019",
        E,
        "cannot bind CUDA and port parameters",
        "{reason}",
        "Each CUDA pointer parameter must correspond to a port parameter (inputs, inout) or a returned output "
        "(outputs, inout): matched by name (a Python keyword gets a trailing underscore), then by position and shape.",
        example="cuda2nki check k.cu port.py --bind out=result",
        fix="Rename the port's parameters after the CUDA ones, or pass --bind cuda_name=port_name.",
    ),
    Rule(
        "C2N4020",
        E,
        "no kernel in port",
        "{reason}",
        "The port file has no function decorated with @nki.jit (or the named one is missing).",
        fix="Name the kernel with --port-kernel, or decorate it with @nki.jit.",
    ),
    Rule(
        "C2N4021",
        E,
        "output dtype mismatch",
        "output '{output}' is {got}, the CUDA buffer is {expected}",
        "The port returns an output in another dtype than the CUDA buffer it stands for (the "
        "binding's dtype). A caller gets different values and a different memory layout. When both "
        "are floating point the values are still compared (a narrower dtype then usually shows as "
        "precision loss, C2N4002); an integer or boolean output for a floating-point buffer, or the "
        "other way round, is not compared at all.",
        example="out = nl.ndarray((N,), dtype=nl.bfloat16, buffer=nl.shared_hbm)  # CUDA: float*",
        fix="Allocate the output with the CUDA buffer's dtype (e.g. dtype=a.dtype), converting "
        "once on the store if the port computes in another one.",
    ),
    Rule(
        "C2N4022",
        E,
        "output not produced by NKI instructions",
        "output '{output}' was not written by any NKI instruction of the port ({evidence})",
        "Every element of a port's outputs must come from a traced NKI instruction: a store or DMA "
        "into an HBM tensor the kernel allocated (or was given). An array the port computes on the "
        "host with NumPy and returns, or a kernel that issues no NKI instruction at all, says "
        "nothing about how the kernel runs on Trainium, whatever its values.",
        example="return np.asarray(a) + np.asarray(b)  # host NumPy, not the vector engine",
        fix="Allocate the output in HBM (nl.ndarray(..., buffer=nl.shared_hbm)), compute on tiles "
        "and store into it with nl.store / nisa.dma_copy.",
    ),
    Rule(
        "C2N4023",
        E,
        "nothing was compared",
        "no test point could be run for '{kernel}': {reason}",
        "A check that compares nothing proves nothing: every shape the binding and the generated "
        "edge cases give was unusable (a negative or zero extent, a launch that divides by zero, "
        "a CUDA kernel that cannot run at any of them).",
        fix="Give the binding sizes the kernel can run at ([[check.shapes]] in the sidecar, or "
        "--set NAME=VALUE).",
    ),
    Rule(
        "C2N4024",
        E,
        "sandbox unavailable",
        "cannot run the port in isolation: {reason}",
        "A port under review is run only inside an operating-system sandbox: a fresh interpreter in "
        "its own user, PID, network, IPC and mount namespaces (bubblewrap), an unprivileged uid, "
        "a seccomp filter and resource limits. When a layer is missing on this host the port is not "
        "run at all, unless --trust says it is your own code.",
        fix="Install what the message names (bubblewrap, libseccomp; allow user namespaces), or "
        "pass --trust for a port you wrote yourself.",
    ),
    Rule(
        "C2N4025",
        E,
        "port reaches outside the NKI model",
        "the port {what}",
        "An NKI kernel computes with nki.language / nki.isa on tensors. A port that inspects the "
        "interpreter's frames, the garbage collector's objects, the simulator's internals or "
        "native code is trying to influence its own review, not to run on Trainium.",
        example="ref = sys._getframe(2).f_locals['ref']",
        fix="Remove it.",
    ),
    Rule(
        "C2N4026",
        N,
        "port code no test point ran",
        "no test point executed the port's instructions at line(s) {lines} ({points} point(s) run)",
        "The check compares the port with the CUDA kernel only on the paths its test points take. "
        "A branch for large sizes, a remainder path or a special case that issues NKI instructions "
        "but ran at none of them is unverified: its outputs were never compared. Sizes on both "
        "sides of each threshold the port tests against a size parameter are added to the test "
        "points; a branch that depends on anything else can stay unreached.",
        example="if N > 1 << 40:\n    nisa.tensor_tensor(dst=c_t, data1=a_t, data2=a_t, op=nl.add)",
        fix="Add a [[check.shapes]] point (or --set NAME=VALUE) whose sizes take that path, or "
        "remove the dead path.",
    ),
    Rule(
        "C2N4027",
        N,
        "generated test points skipped: the port is too slow for them",
        "generated test point(s) {points} not run: at the pace of the points run so far one run "
        "of the port would issue about {instructions} engine instructions there, over the "
        "check's {limit}",
        "Beyond the binding's points the check generates larger ones (two full tiles and a tail "
        "on every tiled axis, sizes across the port's thresholds), from the smallest up. A port "
        "that runs far slower than a tiled one (a literal, thread-by-thread port simulates every "
        "CUDA block) would take minutes at the largest; those points are skipped, so the paths "
        "only they take are unverified.",
        example="cuda2nki port --lowering literal kernel.cu -o lit.py && "
        + _CHECK.replace("port.py", "lit.py"),
        fix="Check the larger sizes on purpose with --set NAME=VALUE (each point the binding or "
        "--set gives always runs), or make the port faster.",
    ),
    Rule(
        "C2N4028",
        N,
        "test sizes kept in the kernel's steps",
        "the generated test points keep {sizes}: the kernel is only run at such sizes",
        "A host that rounds its grid down to whole blocks (`dim3 grid(cols / 16, rows / 16)`), "
        "or launches a kernel with no bound guard at a size that is a whole number of blocks, "
        "runs the kernel at multiples of the block only; at other sizes the CUDA kernel itself "
        "leaves a tail or reads out of bounds.  The binding's [check.multiples] (inferred from "
        "the launch, or written by hand) says so, and the check rounds every size it generates "
        "up to its step: ragged tails against the 128-partition tile are still tested (144 "
        "rather than 129), ragged tails against the CUDA block are not.",
        example="cuda2nki bind kernel.cu  # writes [kernels.K.check.multiples]",
        fix="Nothing to do when the host indeed uses such sizes only; otherwise remove the entry "
        "from [check.multiples] (and guard the kernel).",
    ),
    Rule(
        "C2N4029",
        N,
        "test point run once: the port is too slow for more runs there",
        "the port ran once, not {left} more time(s) (the other seeds and the determinism "
        "re-run), at test point(s) {points}: each first run issued more engine instructions "
        "than the check's {limit} for one run",
        "At each of the binding's points the check runs the port once per seed (inputs drawn "
        "from different distributions) and re-runs the first seed to see that the port is "
        "deterministic. A port that issues thousands of instructions in one run (a literal, "
        "thread-by-thread port simulates every CUDA block) takes seconds per run; at such a point "
        "only the first seed is compared, so a defect that only other inputs reveal, or "
        "nondeterminism, can go unseen there.",
        example="cuda2nki port --lowering literal kernel.cu -o lit.py && "
        + _CHECK.replace("port.py", "lit.py"),
        fix="Check a smaller point with --set NAME=VALUE (a point under the limit runs every "
        "seed), or make the port faster.",
    ),
    Rule(
        "C2N4030",
        E,
        "fp32 is not enough for this float64 kernel",
        "output '{output}' of a float64 kernel computed in fp32 keeps fewer than four digits: "
        "{short} of {total} elements differ from the CUDA kernel's double result by more than "
        "{rtol} of the output's magnitude (worst {worst:.3g} relative, where the double result "
        "is {value:.6g}){within}",
        "NKI has no fp64, so a float64 kernel is ported in fp32 (C2N2516). Where the kernel is "
        "ill-conditioned -- a difference of nearly equal values, a long sum that cancels -- the "
        "rounding of fp32 arithmetic alone moves the result by more than a double-precision "
        "user can accept, however faithful the port. The check compares every element with the "
        "double result and requires four significant digits (relative to the larger of the "
        "element's magnitude and the output's median non-zero magnitude); when the port is "
        "also within the fp32 error bound, the loss is fp32's, not a defect of the port.",
        example="__global__ void k(const double* a, double* y, int n) "
        "{ int i = ...; y[i] = (a[i] + 1e8) - 1e8; }",
        fix="Keep this kernel in double on another device, or restructure it so fp32 suffices "
        "(subtract a reference value before the large terms are formed, compensated or pairwise "
        "sums).",
    ),
    Rule(
        "C2N4031",
        N,
        "an assertion fails on the generated inputs",
        "the CUDA kernel's assert fails on the generated inputs (in kernel {where}): on a GPU that "
        "launch aborts; {port} has no assertions, so it was compared with the kernel compiled "
        "with NDEBUG (its assertions removed)",
        "A device `assert` on the data (`assert(A[0] == 0.f)`) tests what the host happened to "
        "hold, and random inputs break it. A port has no assertions (NKI has none), so its numbers "
        "are those of the kernel built with -DNDEBUG: the check compares with that build rather "
        "than stop with C2N1513. `__trap()` is not compiled out and still stops the check.",
        example="__global__ void k(const float* a, float* y) "
        "{ int i = threadIdx.x; assert(a[0] == 0.f); y[i] = 2.f * a[i]; }",
        fix="If the assertion states a precondition of the kernel, give the binding a range or "
        "distribution the assertion accepts.",
    ),
    Rule(
        "C2N4032",
        N,
        "checked at smaller values of the file's size macros",
        "the port was checked as made with {defines} (the file's size macros, smaller): the "
        "source's sizes ({was}) are too large to simulate",
        "A kernel sized by object-like macros (`#define N 4096`, `NI` in a header, a "
        "`#ifndef N` default) is a kernel of fixed sizes once preprocessed: its port holds them "
        "as numbers, and a check at those sizes runs out of time or memory. `migrate --check` "
        "finds the macros that are sizes by their uses (allocation sizes, bounds compared "
        "against, strides and extents in brackets; not a launch's block shape, a `__shared__` "
        "extent or a constant), preprocesses the file again with smaller, distinct, ragged "
        "values (past one 128-partition tile where the data allows), ports it again and checks "
        "that port; the port written keeps the source's sizes. Where the host truncates its grid "
        "(`M / 256`, `(size_t)(ceil((float)M) / 256.0f)`), so that a ragged value would leave "
        "elements unlaunched or the grid empty, the value is raised to the next multiple of the "
        "grid's step. A macro given with -D keeps the value given. `cuda2nki check` does the same "
        "for a binding it infers: the port under review runs on tensors of the smaller shapes "
        "(a port that holds the source's sizes as numbers is checked at them).",
        example="cuda2nki migrate src/ -o ported/ --check",
        fix="Nothing to do; to check other sizes, give them with -D NAME=VALUE.",
    ),
    Rule(
        "C2N4033",
        W,
        "the CUDA result depends on the order of its blocks",
        "output '{output}' of the CUDA kernel depends on the order its blocks run: {evidence}",
        "CUDA runs a grid's blocks in no promised order, and `__syncthreads()` orders the threads "
        "of one block only. A kernel whose blocks read what other blocks of the same launch write "
        "(one thread sums a buffer that every block rescales, every block reads a value one "
        "block stores) computes whatever the schedule gives. When a port differs from the CUDA "
        "result computed with all blocks running together, the check runs the kernel again with "
        "its blocks one at a time in CUDA's order; where the two runs differ, the output is "
        "order-dependent. A port equal to either schedule is judged by that one (its numbers "
        "pass), and this warning says the CUDA kernel itself races; a port equal to neither "
        "still fails, with this warning as the likely cause.",
        example="__global__ void k(float* w, float* total, int n) { int i = ...; "
        "if (i < n) w[i] /= total[0]; if (i == 0) { float s = 0; for (int j = 0; j < n; ++j) "
        "s += w[j]; total[1] = s; } }",
        fix="In the CUDA code, split the kernel at the point where blocks need each other's "
        "results (one launch per phase), or use a cooperative launch with a grid-wide sync; the "
        "port then has one right answer.",
    ),
    Rule(
        "C2N4034",
        W,
        "division by a reciprocal out of range",
        "output '{output}': {evidence}",
        "NKI has no division the hardware runs (`nl.divide` is documented as unsupported on the "
        "device, and no ALU op divides), so a port computes x / y as x * (1 / y) (C2N2507). For "
        "a divisor below 2^-128 in magnitude (a subnormal) the reciprocal overflows to infinity: "
        "the port gives inf, or NaN for x = 0, where CUDA's IEEE quotient is finite; for a "
        "divisor above 2^126 the reciprocal is subnormal and the quotient keeps few digits. When "
        "a port that takes reciprocals differs from the CUDA kernel, the check runs the kernel "
        "again with each floating division computed that way. A port equal to that run is as "
        "faithful as the hardware allows: its numbers pass, and this warning names each division "
        "(its line) and the divisors out of the reciprocal's range. A port equal to neither run "
        "still fails, with this warning as a possible cause.",
        example="__global__ void k(float* x, const float* d, int n) { int i = ...; "
        "if (i < n) x[i] = x[i] / d[i]; }  // d[i] = 1e-40f",
        fix="Nothing to do when the divisors of real data are normal floats; otherwise scale "
        "numerator and divisor into the normal range before dividing (in the CUDA code and the "
        "port alike), or guard the division.",
    ),
    Rule(
        "C2N4035",
        W,
        "the CUDA result reads memory no thread wrote",
        "output '{output}' of the CUDA kernel: {evidence}",
        "A kernel that reads shared memory or a local array no thread of the launch wrote (a "
        "tree reduction guarded by `if (tid >= n) return;` still adds `smem[tid + 512]` for a "
        "block with fewer live threads) computes, on a GPU, from whatever that memory held. The "
        "SIMT interpreter fills never-written memory with a poison pattern so such reads show; "
        "when a port differs from the CUDA result, the check runs the kernel again with that "
        "memory reading as zeros, and the elements that change are undefined: they are left out "
        "of the comparison. A port equal to the kernel on the other elements passes its "
        "numbers with this warning; one that is not still fails, with the warning.",
        example="__global__ void k(int* in, int* out, unsigned n) { __shared__ int s[256]; "
        "unsigned t = threadIdx.x; if (t >= n) return; s[t] = in[t]; __syncthreads(); "
        "if (t < 128) s[t] += s[t + 128]; ... }",
        fix="In the CUDA code, give every shared element a value before it is read (zero the "
        "lanes past the data instead of returning early), or launch only sizes that fill every "
        "block.",
    ),
)
