"""C2N1500-1999: SIMT reference interpreter (runtime faults and unsupported execution)."""

from cuda2nki.diagnostics import Rule, Severity, register

E, W, N = Severity.ERROR, Severity.WARNING, Severity.NOTE

register(
    Rule(
        "C2N1500",
        E,
        "out-of-bounds memory access",
        "out-of-bounds {space} {access} of '{buffer}': element {index} outside [0, {limit}) "
        "in kernel '{kernel}', block ({bx}, {by}, {bz}), thread ({tx}, {ty}, {tz})",
        "A thread read or wrote outside the buffer it addresses.  On a GPU this is undefined "
        "behaviour (a fault, or silent corruption of a neighbouring allocation); the reference "
        "interpreter stops at the first such access and names the first offending thread.",
        example="__global__ void k(float* x, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  x[i] = 0.f;  // no `if (i < n)` guard\n}",
        fix="Guard the access (`if (i < n)`), or fix the binding's shape / launch grid.",
    ),
    Rule(
        "C2N1501",
        E,
        "misaligned memory access",
        "misaligned {access} of {size}-byte {what} from '{buffer}' at byte offset {offset} in "
        "kernel '{kernel}', block ({bx}, {by}, {bz}), thread ({tx}, {ty}, {tz})",
        "CUDA requires every access to be aligned to its size (a `float4` load to 16 bytes).  "
        "Vectorised loads through `reinterpret_cast<float4*>` of an offset that is not a multiple of 4 "
        "floats fault on the GPU.",
        example="reinterpret_cast<float4*>(x + 1)[0]",
        fix="Only vectorise aligned offsets; handle the unaligned head/tail with scalar accesses.",
    ),
    Rule(
        "C2N1502",
        E,
        "step budget exhausted",
        "kernel '{kernel}' did not finish within {steps} steps (loop at this line still running); "
        "likely an infinite loop",
        "The interpreter counts loop iterations and calls; when the budget is exhausted it stops so "
        "that a kernel that never terminates (a loop whose condition never becomes false for some "
        "thread, a spin lock that cannot be acquired in lockstep) ends in a diagnostic.",
        example="for (int i = tid; i < n; i += 0) { ... }",
        fix="Fix the loop, or raise the budget (`max_steps`) for a legitimately long kernel.",
    ),
    Rule(
        "C2N1503",
        E,
        "integer division by zero",
        "integer {op} by zero in kernel '{kernel}', block ({bx}, {by}, {bz}), thread ({tx}, {ty}, {tz})",
        "Integer division or remainder by zero is undefined behaviour in CUDA C++ (the GPU returns "
        "an unspecified value).",
        example="int q = a / b;  // b == 0 for some thread",
        fix="Guard the divisor.",
    ),
    Rule(
        "C2N1504",
        W,
        "__syncthreads reached by part of a block",
        "__syncthreads() reached by {active} of {live} live threads of block ({bx}, {by}, {bz}) in "
        "kernel '{kernel}'",
        "A barrier inside divergent control flow is undefined behaviour unless every non-exited "
        "thread of the block reaches the same barrier; the kernel may hang or race on a GPU.  The "
        "interpreter runs on (its lockstep execution treats the barrier as reached).",
        example="if (threadIdx.x < 32) { __syncthreads(); }",
        fix="Move the barrier out of the divergent branch.",
    ),
    Rule(
        "C2N1505",
        E,
        "construct not supported by the interpreter",
        "the SIMT interpreter cannot execute {what}",
        "The front end accepted this construct but the reference interpreter has no executable "
        "meaning for it (yet).",
        example='asm volatile("...");',
        fix="Rewrite the construct with supported CUDA, or report it.",
    ),
    Rule(
        "C2N1506",
        E,
        "kernel not found",
        "no executable kernel '{kernel}' in {file}{hint}",
        "The kernel to run is not a `__global__` function of the translation unit, was refused by "
        "the front end, or is a template that was never instantiated.",
        example="cuda2nki run k.cu --binding k.toml --kernel does_not_exist",
        fix="Name one of the kernels listed by `cuda2nki parse`, or instantiate the template "
        "(launch site or `--template`).",
    ),
    Rule(
        "C2N1507",
        E,
        "invalid launch configuration",
        "invalid launch of '{kernel}': {reason}",
        "The grid/block/shared-memory configuration is not one a CUDA device accepts "
        "(at most 1024 threads per block, block.z <= 64, shared memory within the device limit).",
        example="grid = [0]",
        fix="Fix the binding's [launch] table.",
    ),
    Rule(
        "C2N1508",
        E,
        "invalid kernel argument",
        "invalid argument for parameter '{param}' of '{kernel}': {reason}",
        "Every kernel parameter needs a value: a NumPy array for a pointer, a number for a scalar.",
        example="run_kernel(tu, 'k', grid=(1,), block=(32,), args={})  # 'x' missing",
        fix="Pass every parameter (the binding lists them).",
    ),
    Rule(
        "C2N1509",
        E,
        "null pointer dereference",
        "dereference of a null pointer in kernel '{kernel}', block ({bx}, {by}, {bz}), "
        "thread ({tx}, {ty}, {tz})",
        "A thread read or wrote through a pointer that is null.",
        example="float* p = nullptr; p[0] = 1.f;",
        fix="Initialise the pointer.",
    ),
    Rule(
        "C2N1510",
        E,
        "pointer into different buffers across threads",
        "threads of kernel '{kernel}' hold pointers into different buffers ('{a}' and '{b}') in one "
        "variable",
        "The interpreter represents a pointer variable as one buffer and a per-thread offset; a "
        "pointer that refers to different arrays in different threads (e.g. chosen by a "
        "thread-dependent ternary) cannot be represented.",
        example="float* p = (threadIdx.x & 1) ? a : b;",
        fix="Select the value instead of the pointer: `(threadIdx.x & 1) ? a[i] : b[i]`.",
    ),
    Rule(
        "C2N1511",
        E,
        "write to read-only memory",
        "write to read-only {space} '{buffer}' in kernel '{kernel}'",
        "`__constant__` memory cannot be written by a kernel.",
        example="__constant__ float c[4]; ... c[0] = 1.f;",
        fix="Use a global buffer for data the kernel writes.",
    ),
    Rule(
        "C2N1512",
        W,
        "shuffle reads an inactive or missing lane",
        "{func} in kernel '{kernel}' reads lane {src} of a warp where that lane is inactive or "
        "does not exist (block ({bx}, {by}, {bz}), thread ({tx}, {ty}, {tz})); the result is "
        "undefined on a GPU (the interpreter returns the caller's own value)",
        "A warp shuffle whose source lane did not take part in the shuffle (it exited, diverged, or "
        "lies beyond the end of a partial warp) returns an undefined value.",
        example="if (threadIdx.x < 16) v += __shfl_down_sync(0xffffffff, v, 16);",
        fix="Make every lane named in the mask execute the shuffle.",
    ),
    Rule(
        "C2N1513",
        E,
        "device assertion failed",
        "device-side assert/trap in kernel '{kernel}', block ({bx}, {by}, {bz}), thread ({tx}, {ty}, {tz})",
        "A thread executed `assert(false)` or `__trap()`; on a GPU the launch fails with an "
        "unspecified launch failure.",
        example="assert(i < n);",
        fix="Fix the condition the assertion guards.",
    ),
    Rule(
        "C2N1521",
        W,
        "grid.sync reached by part of the grid",
        "grid.sync() reached by {active} of {live} live threads of the grid in kernel '{kernel}'",
        "A grid-wide barrier must be reached by every non-exited thread of every block of a "
        "cooperative launch; otherwise the grid hangs on a GPU.  The interpreter runs on (its "
        "lockstep execution of the whole grid treats the barrier as reached).",
        example="if (blockIdx.x > 0) grid.sync();",
        fix="Move the barrier out of the divergent branch.",
    ),
    Rule(
        "C2N1522",
        E,
        "dynamic parallelism not executed",
        "{what} is not executed by the interpreter (kernel '{kernel}')",
        "The interpreter runs grids launched from device code, but not launches nested deeper "
        "than CUDA's 24 levels, child launches with their own dynamic shared memory size, or "
        "allocations on the device heap (cudaMalloc/cudaFree in device code); it stops rather than "
        "give outputs without them.",
        example="float* p; cudaMalloc((void**)&p, 64);",
        fix="Allocate on the host and pass the buffer in; launch such children from the host.",
    ),
)
