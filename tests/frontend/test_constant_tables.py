"""A ``__constant__`` array the host fills with ``cudaMemcpyToSymbol`` is an input of the kernels
that read it: it becomes their trailing ``const T*`` parameter (launch sites pass the symbol),
so inference binds it and a port takes it as a tensor.  Tables a device function reads, that
device code writes, or that the host never writes stay globals."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference

#: (source, kernel, table, element type, inferred shape)
MOVED = {
    "float-taps-memcpy-to-symbol": (
        "#define NT 5\n"
        "__constant__ float taps[NT];\n"
        "__global__ void fir(const float* x, float* y, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n - NT + 1) {\n"
        "    float s = 0.0f;\n"
        "    for (int t = 0; t < NT; ++t) s += taps[t] * x[i + t];\n"
        "    y[i] = s;\n  }\n}\n"
        "int main() {\n  float h[NT] = {1, 2, 3, 2, 1};\n  int n = 3000;\n"
        "  float *x, *y;\n  cudaMalloc(&x, n * sizeof(float));\n"
        "  cudaMalloc(&y, (n - NT + 1) * sizeof(float));\n"
        "  cudaMemcpyToSymbol(taps, h, sizeof(h));\n"
        "  fir<<<(n + 127) / 128, 128>>>(x, y, n);\n  return 0;\n}\n",
        "fir",
        "taps",
        "float32",
        [5],
    ),
    "static-int-lut-async": (
        "static __constant__ int lut[16];\n"
        "__global__ void remap(const unsigned char* in, int* out, int count) {\n"
        "  for (int k = threadIdx.x + blockIdx.x * blockDim.x; k < count;"
        " k += blockDim.x * gridDim.x)\n"
        "    out[k] = lut[in[k] & 15];\n}\n"
        "int main() {\n  int host_lut[16];\n  int count = 1000;\n"
        "  unsigned char* in; int* out;\n  cudaMalloc(&in, count);\n"
        "  cudaMalloc(&out, count * sizeof(int));\n"
        "  cudaMemcpyToSymbolAsync(lut, host_lut, 16 * sizeof(int), 0,"
        " cudaMemcpyHostToDevice, 0);\n"
        "  remap<<<8, 64>>>(in, out, count);\n  return 0;\n}\n",
        "remap",
        "lut",
        "int32",
        [16],
    ),
    "weights-2d-flat": (
        "const int W = 3;\n"
        "__constant__ double wts[W * W];\n"
        "__global__ void blur(const double* img, double* res, int h, int w) {\n"
        "  int c = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  int r = blockIdx.y * blockDim.y + threadIdx.y;\n"
        "  if (r < h - 2 && c < w - 2) {\n"
        "    double acc = 0.0;\n"
        "    for (int a = 0; a < W; a++)\n"
        "      for (int b = 0; b < W; b++) acc += wts[a * W + b] * img[(r + a) * w + c + b];\n"
        "    res[r * w + c] = acc;\n  }\n}\n"
        "int main() {\n  double hw[9];\n  int h = 40, w = 50;\n  double *img, *res;\n"
        "  cudaMalloc(&img, h * w * sizeof(double));\n"
        "  cudaMalloc(&res, h * w * sizeof(double));\n"
        "  cudaMemcpyToSymbol(wts, hw, 9 * sizeof(double));\n"
        "  dim3 blk(16, 16);\n  dim3 grd((w + 15) / 16, (h + 15) / 16);\n"
        "  blur<<<grd, blk>>>(img, res, h, w);\n  return 0;\n}\n",
        "blur",
        "wts",
        "float64",
        [3, 3],
    ),
}


@pytest.mark.parametrize("case", sorted(MOVED))
def test_a_host_filled_table_is_an_input_parameter(case: str) -> None:
    src, kernel, table, dtype, shape = MOVED[case]
    tu = parse_source(src, "t.cu")
    fn = tu.function(kernel)
    assert fn is not None
    last = fn.params[-1]
    assert last.name == table and isinstance(last.ty, A.PointerType)
    assert table not in {g.name for g in tu.globals}
    assert len(tu.launch_sites[0].args) == len(fn.params)
    b, notes = binding_from_inference(tu, kernel)
    assert b is not None, [d.message for d in notes]
    spec = b.tensor(table)
    assert (spec.dtype, spec.role, list(spec.shape)) == (dtype, "in", shape)


#: tables that stay globals
KEPT = {
    "read-by-a-device-function": (
        "__constant__ float k[4];\n"
        "__device__ float weight(int j) { return k[j & 3]; }\n"
        "__global__ void g(float* o, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) o[i] = weight(i);\n}\n"
        "int main() { float h[4]; cudaMemcpyToSymbol(k, h, sizeof(h)); return 0; }\n",
        "k",
    ),
    "never-written-by-the-host": (
        "__constant__ float k[4];\n"
        "__global__ void g(float* o, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) o[i] = k[i & 3];\n}\n",
        "k",
    ),
}


@pytest.mark.parametrize("case", sorted(KEPT))
def test_other_constant_tables_stay_globals(case: str) -> None:
    src, table = KEPT[case]
    tu = parse_source(src, "t.cu")
    assert table in {g.name for g in tu.globals}
    assert [p.name for p in tu.function("g").params] == ["o", "n"]
