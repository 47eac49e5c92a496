"""Front-end diagnostics (C2N1000-C2N1499): CUDA the front end cannot read or does not support."""

from cuda2nki.diagnostics import Rule, Severity, register

E, W, N = Severity.ERROR, Severity.WARNING, Severity.NOTE

register(
    Rule(
        "C2N1001",
        E,
        "syntax error in kernel",
        "syntax error in '{func}': {what}",
        "The parser could not read this function. Only the function containing the error is "
        "rejected; other kernels in the file are processed normally.",
        example="__global__ void k(float* a) { a[0] = ; }",
        fix="Make the function valid CUDA C++ (check `nvcc -c`); check macros expand as intended.",
    ),
    Rule(
        "C2N1002",
        W,
        "syntax error outside kernels",
        "syntax error outside any kernel ({what}); that code is ignored",
        "Host code or declarations around the kernels could not be parsed. Kernels are judged by "
        "their own text, so they are unaffected, but launch sites in the broken region are lost.",
        example="int main() { std::vector<int> v{; }",
        fix="Usually harmless; fix the code if a launch site there should be seen.",
    ),
    Rule(
        "C2N1003",
        E,
        "preprocessor error",
        "preprocessor: {reason}",
        "The preprocessing step (#if/#define/#include handling) failed or hit an #error.",
        example='#error "unsupported architecture"',
        fix="Pass the needed -D definitions.",
    ),
    Rule(
        "C2N1004",
        W,
        "include file not found",
        "cannot find include file '{path}'; ignored",
        "An #include (quoted, or in angle brackets when it is not a system, CUDA toolkit or "
        "external library header) was found neither in the file's directory, the -I "
        "directories and the compilation database, nor by name anywhere in the enclosing "
        "repository (or, outside one, the tree being migrated). The code after it is read "
        "without the header, so its macros and functions are unknown (C2N1021). System "
        "headers (<stdio.h>, <cuda_runtime.h>, <thrust/...>...) are skipped silently.",
        example='#include "common.cuh"',
        fix="Pass -I DIR with the directory holding the header.",
    ),
    Rule(
        "C2N1005",
        N,
        "include found in the tree",
        "'{path}' is not on the include path; using {found}",
        "The header was not in the file's directory or the -I directories, so it was looked up "
        "by the path it spells (as a path suffix) among the files of the enclosing repository "
        "(or, outside one, the tree being migrated), as a Makefile's -I options would find it. "
        "The nearest match is used: fewest folders up from the including file, then fewest "
        "down.",
        example="#include <polybench.h>  // in ../utilities/",
        fix="Nothing to do; pass -I DIR to choose the header explicitly.",
    ),
    Rule(
        "C2N1006",
        W,
        "ambiguous include",
        "'{path}' matches several different headers equally near; using {found}, not {others}",
        "Header discovery (C2N1005) found more than one file of that name at the same distance "
        "from the including file, with different contents. The first in path order is used.",
        example='#include "config.h"  // in a/ and in b/',
        fix="Pass -I DIR with the directory holding the intended header.",
    ),
    Rule(
        "C2N1007",
        N,
        "device function from another file",
        "'{name}' is declared in {file} and defined here; this definition is used",
        "A device function that the file declares and calls but does not define was found "
        "defined (not as a kernel) in another source file of its directory, or under `migrate` "
        "in the nearest folder of the migrated tree that has one (a file with its own `main` "
        "is another program's and is skipped), as separate "
        "compilation (`nvcc -rdc`) would link it. Its definition, the functions it calls from "
        "its own file, and the macros and file-scope constants it uses are read with the file.",
        example="__device__ float scale(float);  // defined in scale.cu next to it",
        fix="Nothing to do; #include the defining file to choose another definition.",
    ),
    Rule(
        "C2N1008",
        N,
        "read in a configuration of its includer",
        "read as {includer} includes it when built with {macros} (the condition at {where})",
        "The file's code needs definitions (macros, types, device functions) from a file that "
        "includes it, directly or through other headers, but that file includes it only in one "
        "configuration of its build: the #include is in a conditional group such as "
        "`#ifdef USE_GPU` or `#if defined(WITH_CUDA) && LEVEL >= 2`. The including file was "
        "read with the macros that make each group on the way active (as the build that "
        "compiles these kernels defines them), and the kernels as it sees them are used.",
        example='#ifdef USE_GPU\n#include "gpu_kernels.cuh"\n#endif',
        fix="Nothing to do; pass -D for another configuration.",
    ),
    Rule(
        "C2N1010",
        E,
        "unsupported construct",
        "unsupported construct in device code: {what}",
        "The kernel uses a C++ construct the front end cannot lower to the CUDA AST (e.g. lambdas "
        "used other than called as a statement, initialiser or right-hand side, exceptions, "
        "new/delete, range-for, labels, structured bindings).",
        example="out[i] = 2 * f(x[i]);  // f a lambda",
        fix="Rewrite the code with plain C constructs.",
    ),
    Rule(
        "C2N1011",
        E,
        "goto",
        "goto is not supported",
        "Unstructured control flow cannot be executed in lockstep or lifted.",
        example="if (i >= n) goto done;",
        fix="Use structured control flow (if/break/return).",
    ),
    Rule(
        "C2N1012",
        E,
        "recursion",
        "recursive call: {cycle}",
        "A device function calls itself, directly or through other device functions.",
        example="__device__ int f(int n) { return n ? f(n - 1) : 0; }",
        fix="Rewrite the recursion as a loop.",
    ),
    Rule(
        "C2N1013",
        E,
        "inline assembly",
        "inline PTX assembly is not supported",
        "`asm(...)` statements cannot be interpreted or ported.",
        example='asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));',
        fix="Use the equivalent CUDA intrinsic (e.g. threadIdx.x % 32 for the lane id).",
    ),
    Rule(
        "C2N1014",
        E,
        "low-level device launch API",
        "kernel launch from device code ('{kernel}') is not supported",
        "Device-side launches written as `child<<<grid, block>>>(args)` are read (the interpreter "
        "runs the child grids); the low-level device API behind them (cudaGetParameterBuffer, "
        "cudaLaunchDevice) and cooperative launches from device code are not.",
        example="void* buf = cudaGetParameterBuffer(8, 8);",
        fix="Write the launch as child<<<grid, block>>>(args).",
    ),
    Rule(
        "C2N1015",
        E,
        "texture or surface",
        "texture/surface memory is not supported: {what}",
        "A texture object parameter (cudaTextureObject_t) or a file-scope texture<T, dim> "
        "reference that a kernel reads with tex1Dfetch/tex1D/tex2D/tex3D of a scalar or vector "
        "type (float4, uchar4, short2...: lane by lane) is an input array read through the mode "
        "the host sets (point or linear filtering, normalised coordinates, "
        "clamp/border/wrap/mirror addressing, cudaReadModeNormalizedFloat of 8/16-bit integer "
        "texels, whose type an object takes from the host's one cudaCreateChannelDesc). A "
        "surface object parameter (cudaSurfaceObject_t) read and written with "
        "surf1D/2Dread/write at byte x-coordinates (boundary modes clamp, zero, trap) is an "
        "array of the kernel. Not supported: layered, cubemap, 3-D surfaces, gather, LOD and "
        "gradient fetches, 64-bit texels, linear filtering of integers read as elements, a "
        "texture object copied into a variable or used as a value (passing a texture to device "
        "functions is supported, a surface not).",
        example="float v = tex2DLayered<float>(tex, x, y, layer);",
        fix="Read each layer through its own texture, or read from a plain global pointer.",
    ),
    Rule(
        "C2N1016",
        E,
        "multi-device grid synchronisation",
        "grid-wide synchronisation / cooperative launch is not supported: {what}",
        "Multi-device grid groups (cg::this_multi_grid(), multi_grid_group) span several GPUs and "
        "are not supported.  Single-device grid groups are: grid.sync() of a cooperative launch "
        "runs the whole grid in lockstep in the interpreter.",
        example="cg::this_multi_grid().sync();",
        fix="Use one device's grid (cg::this_grid()), or split the work per device.",
    ),
    Rule(
        "C2N1017",
        E,
        "tensor-core intrinsics",
        "tensor-core operation is not supported: {what}",
        "wmma fragments of the standard shapes and element types (half, bf16, tf32, double, 8-bit "
        "integers) and fill/load/store/mma_sync on them are supported; sub-byte fragments, "
        "bmma_sync, raw mma PTX intrinsics and ill-formed fragment uses are not.",
        example="wmma::bmma_sync(c, a, b, c);",
        fix="Use a supported fragment type, or write the matrix product with plain loops.",
    ),
    Rule(
        "C2N1018",
        E,
        "asynchronous copy",
        "asynchronous copy is not supported: {what}",
        "A copy (cuda::memcpy_async with a thread-scope pipeline or a block barrier, "
        "__pipeline_memcpy_async, cg::memcpy_async by a group) is run as a plain copy that "
        "completes at once, its waits as no-ops or group barriers. A pipeline shared by a "
        "group (cuda::pipeline_shared_state, cuda::make_pipeline(group, ...)), whose consumers "
        "wait for other threads' copies, and the cp.async wrappers are refused.",
        example="auto pipe = cuda::make_pipeline(block, &shared_state, role);",
        fix="Let each thread copy its own part (cuda::memcpy_async into a thread-scope "
        "pipeline) or use plain loads into shared memory and __syncthreads().",
    ),
    Rule(
        "C2N1019",
        N,
        "printf ignored",
        "printf in device code is ignored",
        "Device-side printf has no effect on outputs; the call is dropped.",
        example='printf("%d\\n", i);',
        fix="Nothing to do.",
    ),
    Rule(
        "C2N1020",
        E,
        "unknown identifier",
        "use of undeclared identifier '{name}'",
        "The name is neither a local, a parameter, a file-scope constant nor a known CUDA builtin. "
        "It may come from a header the front end did not see or a macro that was not defined.",
        example="a[i] = SCALE * b[i];  // SCALE never defined",
        fix="Pass -D NAME=VALUE or -I DIR for the header that defines it.",
    ),
    Rule(
        "C2N1021",
        E,
        "unknown function",
        "call to unknown function '{name}'",
        "The callee is not a __device__ function in this file nor a CUDA intrinsic or math "
        "function known to the front end.",
        example="y[i] = my_helper(x[i]);  // defined in another file",
        fix="Make the function visible (same file or an #include'd header).",
    ),
    Rule(
        "C2N1022",
        E,
        "unknown type",
        "unknown type '{name}'",
        "The type is not a CUDA scalar or vector type, a typedef in this file, or a template "
        "parameter.",
        example="my_real x = 0;",
        fix="Declare the typedef, or pass -I for its header.",
    ),
    Rule(
        "C2N1023",
        N,
        "template not instantiated",
        "template kernel '{name}' is not instantiated "
        "(no launch site or --template value for {params})",
        "A template kernel can only be executed or ported once its template arguments are known. "
        "A kernel that nothing names at all is instantiated with assumed arguments instead "
        "(a C2N2100 note says which); this one is launched where its arguments are not known "
        "(a host template's own parameters), or a --template value did not fit.",
        example="template <int B> __global__ void k(float* p) { p[0] = B; }\n"
        "template <int B> void run(float* p) { k<B><<<1, 1>>>(p); }",
        fix="Add a launch site k<256><<<...>>>(...) or pass --template BLOCK=256.",
    ),
    Rule(
        "C2N1024",
        E,
        "bad template arguments",
        "cannot instantiate '{name}': {reason}",
        "The template arguments from a launch site or --template do not fit the template "
        "parameters.",
        example="k<float><<<1, 1>>>(p);  // k takes <int BLOCK>",
        fix="Give one value per template parameter: an integer constant or a type.",
    ),
    Rule(
        "C2N1025",
        E,
        "unsupported type",
        "unsupported type in device code: {what}",
        "A struct, class or union is used in a way the front end cannot lower: a struct value "
        "other than a variable, a base class with data members, virtual or static member "
        "functions, a constructor that would have to run, a union initialised by a list.",
        example="__global__ void k(Params p);",
        fix="Pass the fields as separate scalar or pointer parameters.",
    ),
    Rule(
        "C2N1026",
        E,
        "non-constant array size",
        "array size of '{name}' is not a compile-time constant",
        "Local and __shared__ arrays need sizes known at compile time.",
        example="__shared__ float s[n];",
        fix="Use a constant, a template parameter or `extern __shared__` with a launch-time size.",
    ),
    Rule(
        "C2N1027",
        W,
        "launch of unknown kernel",
        "launch site of '{name}', which is not a kernel in this file",
        "The host code launches a kernel the front end did not find.",
        example="other_kernel<<<g, b>>>(p);",
        fix="Check the kernel's definition parses.",
    ),
    Rule(
        "C2N1028",
        E,
        "bad call",
        "call to '{name}' with {got} argument(s); expected {expected}",
        "A device function or intrinsic is called with the wrong number of arguments.",
        example="__syncthreads(1);",
        fix="Fix the call.",
    ),
    Rule(
        "C2N1029",
        E,
        "unsupported cooperative-groups operation",
        "unsupported cooperative-groups operation: {what}",
        "Only thread blocks, tiled partitions of <= 32 threads and their "
        "sync/shuffle/vote/rank/reduce operations are supported.",
        example="auto g = cg::coalesced_threads();",
        fix="Use __syncthreads and __shfl_*_sync.",
    ),
    Rule(
        "C2N1030",
        E,
        "invalid expression",
        "invalid expression: {what}",
        "The expression is well-formed C++ but makes no sense for a kernel (e.g. member access on a "
        "scalar, subscript of a non-pointer, an assignment to a non-lvalue).",
        example="float x; x.y = 1;",
        fix="Fix the expression.",
    ),
)
