"""Examples for the front end's ids (C2N1000-1499): `cuda2nki parse` on a small CUDA file."""

from __future__ import annotations

from cuda2nki.rules.examples.base import Example


def _parse(source: str, *extra: str, exit_code: int | None = None) -> Example:
    return Example(files={"k.cu": source}, argv=("parse", "k.cu", *extra), exit_code=exit_code)


def _body(body: str) -> Example:
    """A kernel ``k(float* p)`` with ``body``."""
    return _parse("__global__ void k(float* p) {\n" + body + "}\n")


TEMPLATED = """\
template <int BLOCK, typename T>
__global__ void scale(const T* in, T* out, int n) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n) out[i] = in[i] * (T)2;
}
"""

EXAMPLES = {
    "C2N1001": _body("    p[0] = ;\n"),
    "C2N1002": _parse("void broken( {\n__global__ void ok(float* p) { p[0] = 1.0f; }\nint x = ;\n"),
    "C2N1003": _parse("#if\n__global__ void k(float* p) { p[0] = 1.0f; }\n#endif\n"),
    "C2N1004": _parse('#include "missing_header.h"\n__global__ void k(float* p) { p[0] = 1; }\n'),
    "C2N1005": Example(
        files={
            "k.cu": "#include <scale.h>\n__global__ void k(float* p) { p[0] = SCALE; }\n",
            "include/scale.h": "#define SCALE 2.0f\n",
        },
        argv=("parse", "k.cu"),
    ),
    "C2N1006": Example(
        files={
            "k.cu": '#include "scale.h"\n__global__ void k(float* p) { p[0] = SCALE; }\n',
            "a/scale.h": "#define SCALE 2.0f\n",
            "b/scale.h": "#define SCALE 3.0f\n",
        },
        argv=("parse", "k.cu"),
    ),
    "C2N1007": Example(
        files={
            "k.cu": "__device__ float scale(float x);\n"
            "__global__ void k(float* p) { p[0] = scale(p[1]); }\n",
            "scale.cu": "__device__ float scale(float x) { return 2.0f * x; }\n",
        },
        argv=("parse", "k.cu"),
    ),
    "C2N1008": Example(
        files={
            "k.cuh": "__global__ void k(float* p) { p[0] = SCALE; }\n",
            "main.cu": '#define SCALE 2.0f\n#ifdef USE_GPU\n#include "k.cuh"\n#endif\n'
            "int main() { k<<<1, 1>>>(0); }\n",
        },
        argv=("parse", "k.cuh"),
    ),
    "C2N1010": _body("    auto f = [](float x) { return x; };\n    p[0] = 2.0f * f(1.0f);\n"),
    "C2N1011": _body("    int i = 0;\n    goto out;\nout:\n    p[0] = i;\n"),
    "C2N1012": _parse(
        "__device__ int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }\n"
        "__global__ void k(int* p) { p[0] = fact(p[1]); }\n"
    ),
    "C2N1013": _body('    int lane;\n    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));\n'),
    "C2N1014": _body("    void* buf = cudaGetParameterBuffer(8, 8);\n    p[0] = 1.0f;\n"),
    "C2N1015": _parse(
        "__global__ void k(float* p, cudaTextureObject_t tex) {\n"
        "    p[0] = tex2DLayered<float>(tex, 0.5f, 0.5f, 1);\n}\n"
    ),
    "C2N1016": _parse(
        "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
        "__global__ void k(float* p) {\n    p[threadIdx.x] = 1.0f;\n    cg::this_multi_grid().sync();\n}\n"
    ),
    "C2N1017": _parse(
        "#include <mma.h>\nusing namespace nvcuda;\n"
        "__global__ void k(float* p) {\n"
        "    wmma::fragment<wmma::matrix_a, 8, 8, 128, wmma::experimental::precision::b1,"
        " wmma::row_major> a;\n}\n"
    ),
    "C2N1018": _body(
        "    __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, 2> st;\n"
        "    auto pipe = cuda::make_pipeline(cg::this_thread_block(), &st);\n"
    ),
    "C2N1019": _body('    printf("%f\\n", p[0]);\n    p[0] = 1;\n'),
    "C2N1020": _body("    p[0] = SCALE * 2;\n"),
    "C2N1021": _body("    p[0] = helper(1.0f);\n"),
    "C2N1022": _body("    my_real x = 0;\n    p[0] = x;\n"),
    "C2N1023": _parse(
        TEMPLATED + "template <typename U>\nvoid run(const U* in, U* out, int n) "
        "{ scale<64, U><<<(n + 63) / 64, 64>>>(in, out, n); }\n"
    ),
    "C2N1024": _parse(TEMPLATED, "--template", "BLOCK=float", "--template", "T=float"),
    "C2N1025": _body("    struct { int a; } s;\n    s.a = 1;\n    p[0] = s.a;\n"),
    "C2N1026": _body("    int n = 4;\n    __shared__ float s[n];\n    p[0] = s[0];\n"),
    "C2N1027": _parse(
        "__global__ void k(float* p) { p[0] = 1.0f; }\n"
        "void host(float* p) {\n    other<<<1, 32>>>(p);\n}\n"
    ),
    "C2N1028": _body("    __syncthreads(1, 2);\n"),
    "C2N1029": _parse(
        "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
        "__global__ void k(float* p) {\n    auto g = cg::coalesced_threads();\n"
        "    p[g.thread_rank()] = g.shfl(1.0f, 3);\n}\n"
    ),
    "C2N1030": _body("    float x = 1.0f;\n    x.y = 2;\n"),
}

NO_EXAMPLE: dict[str, str] = {}
