"""An unguarded element-wise kernel launched over a constant, production-sized buffer (no size
parameter to shrink) is checked at a smaller constant launch: the grid is halved with every
tensor that is a whole multiple of it, until the largest fits the simulation size."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference, infer_binding

#: (source, kernel, expected grid, expected shapes)
SCALED = {
    "host-constants-and-offset": (
        "__global__ void bump(float* a, int offset) {\n"
        "  int i = offset + threadIdx.x + blockIdx.x * blockDim.x;\n"
        "  a[i] = a[i] + 1.0f;\n}\n"
        "int main() {\n"
        "  const int threads = 256, parts = 4;\n"
        "  const int n = 4 * 1024 * threads * parts;\n"
        "  float* d;\n  cudaMalloc((void**)&d, n * sizeof(float));\n"
        "  bump<<<n / threads, threads>>>(d, 0);\n  return 0;\n}\n",
        "bump",
        [64],
        {"a": [16384]},
    ),
    "dim3-two-tensors": (
        "__global__ void twice(const double* src, double* dst) {\n"
        "  unsigned k = blockDim.x * blockIdx.x + threadIdx.x;\n"
        "  dst[k] = 2.0 * src[k];\n}\n"
        "int main() {\n"
        "  int count = 1 << 22;\n"
        "  double *x, *y;\n"
        "  cudaMalloc(&x, count * sizeof(double));\n"
        "  cudaMalloc(&y, count * sizeof(double));\n"
        "  dim3 blk(128);\n  dim3 grd(count / blk.x);\n"
        "  twice<<<grd, blk>>>(x, y);\n  return 0;\n}\n",
        "twice",
        [128],
        {"src": [16384], "dst": [16384]},
    ),
    "padded-stride-buffer": (
        "__global__ void strided(int* buf, int s) {\n"
        "  int j = (blockIdx.x * blockDim.x + threadIdx.x) * s;\n"
        "  buf[j] = buf[j] + 1;\n}\n"
        "#define MB 8\n"
        "int main() {\n"
        "  int elems = MB * 1024 * 1024 / 4;\n"
        "  int* p;\n  cudaMalloc(&p, elems * 9 * sizeof(int));\n"
        "  strided<<<elems / 512, 512>>>(p, 1);\n  return 0;\n}\n",
        "strided",
        [2],
        {"buf": [9216]},
    ),
}


@pytest.mark.parametrize("case", sorted(SCALED))
def test_a_constant_launch_too_large_to_simulate_is_scaled_down(case: str) -> None:
    src, kernel, grid, shapes = SCALED[case]
    tu = parse_source(src, "k.cu")
    partial, diags = infer_binding(tu, kernel)
    assert partial["launch"]["grid"] == grid, [d.message for d in diags]
    for name, shape in shapes.items():
        assert partial["params"][name]["shape"] == shape
    assert any(d.code == "C2N2100" and "too large to simulate" in d.message for d in diags)
    b, notes = binding_from_inference(tu, kernel)
    assert b is not None, [d.message for d in notes]


#: kernels whose work depends on the constant size: nothing is scaled
KEPT = {
    "guarded-by-a-file-constant": (
        "const int N = 1 << 22;\n"
        "__global__ void g(float* a) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < N) a[i] = a[i] * 3.0f;\n}\n"
        "int main() {\n  float* d;\n  cudaMalloc(&d, N * sizeof(float));\n"
        "  g<<<N / 256, 256>>>(d);\n  return 0;\n}\n",
        "g",
    ),
    "loop-over-a-file-constant": (
        "const int M = 1 << 22;\n"
        "__global__ void l(float* a) {\n"
        "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < M;"
        " i += blockDim.x * gridDim.x) a[i] += 1.0f;\n}\n"
        "int main() {\n  float* d;\n  cudaMalloc(&d, M * sizeof(float));\n"
        "  l<<<M / 256, 256>>>(d);\n  return 0;\n}\n",
        "l",
    ),
}


@pytest.mark.parametrize("case", sorted(KEPT))
def test_a_constant_launch_the_kernel_depends_on_is_kept(case: str) -> None:
    src, kernel = KEPT[case]
    partial, diags = infer_binding(parse_source(src, "k.cu"), kernel)
    assert partial["launch"]["grid"] == [16384], [d.message for d in diags]
    assert not any("a smaller constant launch" in d.message for d in diags)
