"""C2N2500-2999: porting decisions of the passes and the code generator."""

from cuda2nki.diagnostics import Rule, Severity, register

E, W, N = Severity.ERROR, Severity.WARNING, Severity.NOTE

register(
    Rule(
        "C2N2500",
        W,
        "literal translation",
        "kernel '{kernel}' was ported literally (threads of a block became tile elements): {reason}",
        "No idiom recogniser claimed the kernel, so the port mirrors CUDA's thread decomposition: "
        "each block becomes one tile, each thread one element, affine loads become strided DMA "
        "views and divergent branches become selects. The result is correct but usually far from "
        "idiomatic NKI (small DMAs, poor partition use).",
        example="__global__ void k(float* y, const float* x) { ... irregular indexing ... }",
        fix="Review the port; restructure the CUDA so its idiom is visible, or rewrite the NKI by hand.",
    ),
    Rule(
        "C2N2501",
        E,
        "cannot port construct",
        "cannot port kernel '{kernel}': {construct}",
        "The kernel uses a construct the port pipeline cannot express in NKI, neither through an "
        "idiom nor through the literal lowering. No port is written rather than one that computes "
        "something else.",
        example="__global__ void k(int* p) { atomicCAS(p, 0, 1); }",
        fix="Port this kernel by hand, or simplify the named construct.",
    ),
    Rule(
        "C2N2502",
        E,
        "no binding",
        "no binding for kernel '{kernel}': {missing}",
        "A port needs the shape, dtype and role of every pointer parameter. They come from "
        "--binding, a sidecar .toml next to the source, or inference from the launch site and index "
        "expressions; here none of them said enough.",
        example='[params]\nx = { shape = ["n"], dtype = "float32", role = "in" }',
        fix="Write a sidecar <kernel>.toml (see `cuda2nki port --help`) with the missing entries.",
    ),
    Rule(
        "C2N2503",
        E,
        "unknown kernel",
        "no __global__ kernel named '{kernel}' in {file} (kernels: {known})",
        "--kernel (or the binding's `kernel`) names a kernel that the file does not define.",
        fix="Use one of the listed kernel names.",
    ),
    Rule(
        "C2N2504",
        E,
        "several kernels",
        "{file} defines several kernels ({known}); choose one with --kernel",
        "A port is written for one kernel at a time.",
        fix="Pass --kernel NAME (or set `kernel` in the binding).",
    ),
    Rule(
        "C2N2505",
        N,
        "partition axis",
        "partition axis of '{tensor}' is '{axis}' ({reason})",
        "Every on-chip tile puts one logical axis on the 128 partitions. The pass picks the parallel "
        "axis for maps and reductions and the contraction axis for matmul operands.",
        fix="Nothing to do unless the chosen layout fights a neighbouring kernel's layout.",
    ),
    Rule(
        "C2N2506",
        N,
        "transposed operand",
        "operand '{tensor}' is loaded transposed ({how}) because the contraction axis must be on partitions",
        "TensorE computes stationary.T @ moving with the contraction axis on the partitions of both "
        "operands. A row-major [M, K] left operand is therefore transposed on the way in.",
        fix="If the caller can pass the operand already transposed, change the binding and drop the transpose.",
    ),
    Rule(
        "C2N2507",
        N,
        "division by reciprocal",
        "a division is computed as a multiplication by a reciprocal",
        "nl.divide is not supported on hardware in the current API; x / y becomes x * (1 / y), "
        "which can differ from IEEE division by one ulp, and more where the reciprocal leaves "
        "the float range (a subnormal divisor: inf; see C2N4034).",
        fix="Nothing to do unless the kernel depends on correctly-rounded division.",
    ),
    Rule(
        "C2N2508",
        W,
        "row exceeds SBUF budget",
        "rows of '{tensor}' ({size} elements) exceed the per-partition budget ({budget}); the row is processed in {chunks} chunks",
        "Retired before it was ever raised: the row lowering keeps a whole row per partition and "
        "does not split long rows into chunks, so the message would describe something the port "
        "does not do. A generated port whose rows do not fit is reported when it runs, by the "
        "simulator's SBUF capacity check (C2N3017) and by `cuda2nki check` (C2N5012).",
        fix="Check SBUF use in the profile; consider a different partition axis.",
        retired=True,
    ),
    Rule(
        "C2N2509",
        N,
        "small transfers",
        "'{tensor}' moves {bytes} bytes per partition per DMA; the problem is too small for 2 KiB transfers",
        "DMA efficiency needs at least 2 KiB per partition per transfer; the shape of this problem "
        "does not allow it, which is not a defect of the port (reference §14.7).",
    ),
    Rule(
        "C2N2510",
        N,
        "fp32 accumulation",
        "'{tensor}' accumulates in fp32 ({where}) as the CUDA kernel did",
        "CUDA accumulated this reduction in float; the port keeps fp32 accumulation (PSUM for "
        "matmul, fp32 SBUF tiles otherwise) and rounds once on the store.",
    ),
    Rule(
        "C2N2515",
        W,
        "fp64 accumulation narrowed",
        "'{tensor}' accumulates in fp32 ({where}) where the CUDA kernel accumulated in fp64 "
        "(a sum over {terms} terms): NKI has no fp64 arithmetic",
        "The CUDA kernel summed this reduction in double; the port sums it in fp32, the widest "
        "type NKI computes in. Each addition then rounds at about 6e-8 relative instead of "
        "1e-16, and the error of a sum of n terms can grow to n times that (about sqrt(n) times "
        "for terms of mixed sign): within a float32 output's tolerance for short sums of terms "
        "of one sign, not for long sums or sums that cancel -- the cases a double accumulator "
        "exists for. `check` compares with the kernel's fp64 sums; if it fails, sum fp32 "
        "partials on the device and add them in double on the host.",
    ),
    Rule(
        "C2N2516",
        W,
        "float64 kernel ported in fp32",
        "kernel '{kernel}' is ported in fp32: its float64 tensors ({tensors}) are float32 in the "
        "port (NKI has no fp64); each operation rounds at {u32} relative instead of {u64}, so "
        "expect differences from the CUDA kernel's double results of about 1e-7 relative per "
        "operation, more for long sums and cancelling differences; `check` judges the port "
        "against the fp64 results with an fp32-derived bound and fails an output that keeps "
        "fewer than four digits (error over {rtol} of its magnitude)",
        "NKI computes in at most fp32 and has no 64-bit tensors, so a kernel over double buffers "
        "is ported as the same kernel with double replaced by float: the port's tensors, "
        "locals and literals are float32, and its caller converts float64 arrays to float32 "
        "on the way in (check does). Each rounding then errs by up to 2^-24 (about 6e-8) "
        "relative instead of 2^-53; a well-conditioned kernel (copies, transposes, stencils, "
        "short sums) stays within a few units of 1e-7 of the double result, a long or "
        "cancelling sum may lose several digits. `check` runs the CUDA kernel in double and "
        "accepts the port where it is within the error bound of fp32 arithmetic (C2N4001 "
        "otherwise) and keeps four significant digits of the double result (C2N4030 "
        "otherwise).",
        example="__global__ void t(const double* a, double* b, int n) { ... b[i] = a[i]; }",
        fix="Nothing to fix if fp32 accuracy is enough (check tells); otherwise keep the "
        "kernel in double on another device, or restructure it (compensated or pairwise sums, "
        "subtract a reference value before summing).",
    ),
    Rule(
        "C2N2511",
        W,
        "narrow accumulation",
        "'{tensor}' is accumulated in {dtype} in the CUDA kernel; the port's engines add in fp32 "
        "and round to {dtype} where they write",
        "The CUDA kernel accumulated in a narrow type. NKI's engines compute in fp32 (a matmul "
        "sums in fp32 PSUM; the vector engine adds in fp32 and rounds on its write), so the port "
        "keeps the kernel's narrow tiles and outputs but sums more precisely than the kernel. "
        "`check` derives its tolerance from the kernel's narrow accumulation (the error bound of "
        "a length-K sum in that type), and does not compare elements where the kernel's narrow "
        "products or partial sums may overflow (past 65504 for float16): there the kernel's "
        "infinities depend on its order of operations, while the port stays finite.",
        fix="Nothing to fix where fp32 sums are acceptable (they are the more accurate); to "
        "reproduce the kernel's narrow rounding step by step, write that loop by hand with a "
        "narrow tile written once per step.",
    ),
    Rule(
        "C2N2512",
        E,
        "pass failed",
        "pass '{name}' failed: {reason}",
        "A pass could not transform the kernel, or the IR verifier rejected its result. With "
        "the default `--lowering auto` the kernel is then ported literally: this is a note at the "
        "kernel and the C2N2300 warning names the pass.",
        fix="Report the input; try without the named pass (`-p`).",
    ),
    Rule(
        "C2N2513",
        N,
        "grid to loops",
        "CUDA launch grid {grid} x block {block} becomes loops over {tiles} inside the kernel",
        "The current NKI API has no N-D launch grid; CUDA's blocks and threads become tile loops and "
        "tile elements.  Each loop is named with its trip count for the binding's sizes; a long "
        "bound follows on a note line of its own, with the call those lines repeat most (the tile "
        "size) named F and defined on the last line.",
    ),
    Rule(
        "C2N2514",
        N,
        "scalar parameter kept",
        "scalar parameter '{name}' is a compile-time keyword argument of the port",
        "NKI kernels treat scalar arguments as compile-time constants: each new value recompiles. "
        "Sizes that follow from a tensor's shape are read from it (`N = x.shape[0]`); the other "
        "scalars (coefficients like alpha or eps, strides, sizes no tensor carries) stay "
        "parameters of the port with the binding's value as the default.",
        example="__global__ void saxpy(int n, float alpha, const float* x, float* y)",
        fix="Nothing to do unless the value changes from call to call; then pass it as a (1, 1) tensor.",
    ),
)
