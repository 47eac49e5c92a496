"""Examples for the SIMT interpreter's ids (C2N1500-1999): `cuda2nki run` on a small kernel."""

from __future__ import annotations

from cuda2nki.rules.examples.base import Example


def _binding(params: str, block: str = "[32]", kernel: str = "k") -> str:
    return f'kernel = "{kernel}"\n[launch]\ngrid = [1]\nblock = {block}\n[params]\n{params}'


def _f32(name: str, role: str, n: int = 32, dtype: str = "float32") -> str:
    return f'{name} = {{ shape = [{n}], dtype = "{dtype}", role = "{role}" }}\n'


XY = _f32("x", "in") + _f32("y", "out")


def _run(source: str, binding: str, *extra: str, exit_code: int | None = 2) -> Example:
    return Example(
        files={"k.cu": source, "k.toml": binding},
        argv=("run", "k.cu", "--out", "out.npz", *extra),
        exit_code=exit_code,
    )


def _xy(body: str, *extra: str, exit_code: int | None = 2, block: str = "[32]") -> Example:
    src = "__global__ void k(const float* x, float* y) {\n    int t = threadIdx.x;\n" + body + "}\n"
    return _run(src, _binding(XY, block), *extra, exit_code=exit_code)


EXAMPLES = {
    "C2N1500": _xy("    y[t] = x[t + 1];\n"),
    "C2N1501": _xy(
        "    if (t < 4) {\n        float4 v = reinterpret_cast<const float4*>(x + 1)[t];\n"
        "        y[t] = v.x;\n    }\n"
    ),
    "C2N1502": _xy(
        "    int i = 0;\n    while (x[0] == x[0]) { i++; }\n    y[t] = i;\n", "--max-steps", "1000"
    ),
    "C2N1503": _run(
        "__global__ void k(int* y) {\n    int d = (int)threadIdx.x - 2;\n    y[threadIdx.x] = 100 / d;\n}\n",
        _binding(_f32("y", "out", dtype="int32")),
    ),
    "C2N1504": _xy(
        "    if (t < 8) {\n        __syncthreads();\n        y[t] = x[t];\n    }\n", exit_code=1
    ),
    "C2N1505": _xy("    y[t] = j0f(x[t]);\n"),
    "C2N1506": _run(
        "template <int B>\n__global__ void k(const float* x, float* y) {\n"
        "    y[threadIdx.x] = B * x[threadIdx.x];\n}\n"
        "template <int B>\nvoid go(const float* x, float* y) { k<B><<<1, 32>>>(x, y); }\n",
        _binding(XY),
    ),
    "C2N1507": _xy("    y[t] = x[t];\n", block="[2048]"),
    "C2N1508": _run(
        "__global__ void k(const int* x, float* y) {\n    y[threadIdx.x] = x[threadIdx.x];\n}\n",
        _binding(XY),
    ),
    "C2N1509": _xy("    float* q = nullptr;\n    q[t] = x[t];\n    y[t] = 0.0f;\n"),
    "C2N1510": _run(
        "__global__ void k(const float* a, const float* b, float* y) {\n"
        "    const float* src = threadIdx.x < 16 ? a : b;\n"
        "    y[threadIdx.x] = src[threadIdx.x];\n}\n",
        _binding(_f32("a", "in") + _f32("b", "in") + _f32("y", "out")),
    ),
    "C2N1511": _run(
        "__constant__ float taps[32];\n__global__ void k(const float* x, float* y) {\n"
        "    taps[threadIdx.x] = x[threadIdx.x];\n    y[threadIdx.x] = taps[0];\n}\n",
        _binding(XY),
    ),
    "C2N1512": _run(
        "__global__ void k(const float* x, float* y) {\n    int t = threadIdx.x;\n"
        "    y[t] = __shfl_down_sync(0xffffffff, x[t], 8);\n}\n",
        _binding(_f32("x", "in", 40) + _f32("y", "out", 40), "[40]"),
        exit_code=1,
    ),
    "C2N1513": _xy("    assert(x[t] > 100.0f);\n    y[t] = x[t];\n"),
    "C2N1521": _run(
        "namespace cg = cooperative_groups;\n__global__ void k(const float* x, float* y) {\n"
        "    int t = threadIdx.x;\n    y[t] = x[t];\n    if (t < 8) cg::this_grid().sync();\n}\n",
        _binding(XY),
        exit_code=1,
    ),
    "C2N1522": _xy("    float* p;\n    cudaMalloc((void**)&p, 64);\n    y[t] = x[t];\n"),
}

NO_EXAMPLE: dict[str, str] = {}
