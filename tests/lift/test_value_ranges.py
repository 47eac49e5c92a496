"""Integer inputs used as indices get a value range from the array they index, so check's
generated inputs keep the CUDA kernel in bounds (``out[idx[i]]``, ``atomicAdd(&hist[b], 1)``)."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.binding import binding_from_dict, generate_inputs
from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding

#: (kernel, host allocations + launch, tensor, expected range)
CASES = {
    "gather": (
        "__global__ void g(float* out, const float* x, const int* idx, int n, int m) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) out[i] = x[idx[i]];\n}\n",
        "cudaMalloc(&x, m * sizeof(float));\n  g<<<(n + 127) / 128, 128>>>(out, x, idx, n, m);",
        "idx",
        [0, "m"],
    ),
    "histogram-local": (
        "#define NBINS 12\n"
        "__global__ void h(const int* data, unsigned int* bins, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) { int b = data[i]; atomicAdd(&bins[b], 1u); }\n}\n",
        "cudaMalloc(&bins, NBINS * sizeof(unsigned int));\n  h<<<(n + 255) / 256, 256>>>(data, bins, n);",
        "data",
        [0, 12],
    ),
    "shared-bins-cast": (
        "__global__ void s(const unsigned char* v, int* out, int n) {\n"
        "  __shared__ int local[32];\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (threadIdx.x < 32) local[threadIdx.x] = 0;\n"
        "  __syncthreads();\n"
        "  if (i < n) atomicAdd(&local[(int)v[i]], 1);\n"
        "  __syncthreads();\n"
        "  if (threadIdx.x < 32) atomicAdd(&out[threadIdx.x], local[threadIdx.x]);\n}\n",
        "s<<<(n + 63) / 64, 64>>>(v, out, n);",
        "v",
        [0, 32],
    ),
    "letters-binned-by-a-constexpr-divisor": (
        "constexpr int NB = 7;\nconstexpr int PER = (26 + NB - 1) / NB;\n"
        "__global__ void lb(const unsigned char* v, int* bins, int n) {\n"
        "  int pos;\n"
        "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;"
        " i += gridDim.x * blockDim.x) {\n"
        "    pos = v[i] - 'a';\n    atomicAdd(&bins[pos / PER], 1);\n  }\n}\n",
        "cudaMalloc(&bins, NB * sizeof(int));\n  lb<<<n / 64, 64>>>(v, bins, n);",
        "v",
        [97, 125],
    ),
    "shifted-down-then-offset": (
        "#define SLOTS 9\n"
        "__global__ void sd(const int* data, unsigned int* bins, int n) {\n"
        "  int i = threadIdx.x + blockIdx.x * blockDim.x;\n"
        "  if (i >= n) return;\n"
        "  atomicAdd(&bins[(data[i] >> 3) + 1], 1u);\n}\n",
        "cudaMalloc(&bins, SLOTS * sizeof(unsigned int));\n  sd<<<(n + 31) / 32, 32>>>(data, bins, n);",
        "data",
        [0, 64],
    ),
    "divided-symbolic-extent": (
        "__global__ void ds(float* out, const float* x, const int* idx, int n, int m) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) { int q = (int)(idx[i] + 2) / 5; out[i] = x[q]; }\n}\n",
        "cudaMalloc(&x, m * sizeof(float));\n  ds<<<(n + 127) / 128, 128>>>(out, x, idx, n, m);",
        "idx",
        [0, "((m) * 5) - 2"],
    ),
    "shifted-pointer-arith": (
        "__global__ void p(float* out, const float* table, const int* ids, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) out[i] = table[*(ids + i) - 1];\n}\n",
        "cudaMalloc(&table, 50 * sizeof(float));\n  p<<<(n + 127) / 128, 128>>>(out, table, ids, n);",
        "ids",
        [1, 51],
    ),
}


def _infer(kernel: str, launch: str, name: str) -> tuple[dict, list]:
    host = (
        "int main() {\n  int n = 700, m = 41;\n"
        "  float *out, *x, *table; int *idx, *data, *ids; unsigned int *bins;\n"
        "  unsigned char *v;\n"
        f"  {launch}\n  return 0;\n}}\n"
    )
    src = kernel + host
    tu = parse_source(src, "v.cu")
    kname = tu.kernels[0].name
    partial, diags = infer_binding(tu, kname)
    return partial, diags


@pytest.mark.parametrize("case", sorted(CASES))
def test_index_data_gets_the_indexed_extent_as_its_range(case: str) -> None:
    kernel, launch, tensor, want = CASES[case]
    partial, diags = _infer(kernel, launch, tensor)
    assert partial["params"][tensor].get("range") == want, partial["params"][tensor]
    assert any(f"'{tensor}' values in" in d.message for d in diags)


def test_generated_inputs_stay_inside_the_range() -> None:
    kernel, launch, tensor, _ = CASES["gather"]
    partial, _ = _infer(kernel, launch, tensor)
    resolved = binding_from_dict(partial).resolve()
    for seed in range(3):
        vals = generate_inputs(resolved, seed)[tensor]
        assert vals.min() >= 0 and vals.max() < resolved.scalars["m"]
        assert np.unique(vals).size > 1


@pytest.mark.parametrize(
    "use",
    [
        "x[idx[i] % m]",  # reduced first: in bounds for any value
        "x[idx[i] & 15]",
        "x[i] * idx[i]",  # a value, not an index
    ],
)
def test_reduced_or_value_uses_need_no_range(use: str) -> None:
    kernel = (
        "__global__ void g(float* out, const float* x, const int* idx, int n, int m) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"  if (i < n) out[i] = {use};\n}}\n"
    )
    launch = "cudaMalloc(&x, n * sizeof(float));\n  g<<<(n + 127) / 128, 128>>>(out, x, idx, n, m);"
    partial, _ = _infer(kernel, launch, "idx")
    assert "range" not in partial["params"]["idx"]


GRID_STRIDE_HISTO = """
#define SIZE (64 * 1024)
__global__ void histo(unsigned char* buffer, long size, unsigned int* counts) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    int stride = blockDim.x * gridDim.x;
    while (i < size) {
        BODY
        i += stride;
    }
}
int main() {
    unsigned char* d_buf; unsigned int* d_counts;
    cudaMalloc((void**)&d_buf, SIZE);
    cudaMalloc((void**)&d_counts, 256 * sizeof(unsigned int));
    histo<<<8, 256>>>(d_buf, SIZE, d_counts);
    return 0;
}
"""


@pytest.mark.parametrize(
    "body",
    [
        "atomicAdd(&counts[buffer[i]], 1);",
        "atomicAdd(counts + buffer[i], 1u);",
        "unsigned int b = buffer[i]; atomicAdd(&counts[b], 1);",
    ],
)
def test_data_read_only_inside_an_atomic_index_is_an_input(body: str) -> None:
    tu = parse_source(GRID_STRIDE_HISTO.replace("BODY", body), "h.cu")
    partial, _ = infer_binding(tu, "histo")
    buf = partial["params"]["buffer"]
    assert buf["role"] == "in"
    assert buf["shape"] == ["size"]  # the constant allocation is the size the kernel compares
    assert buf.get("range") == [0, 256] or "+" in body  # `counts + buffer[i]` is no index
    assert partial["params"]["size"] < 64 * 1024  # reduced: check chooses its own sizes


def test_a_pointer_written_through_an_atomic_is_not_read_only() -> None:
    from cuda2nki.lift.readonly import only_read

    src = GRID_STRIDE_HISTO.replace("BODY", "atomicAdd(&counts[buffer[i]], 1);")
    fn = parse_source(src, "h.cu").kernels[0]
    assert only_read(fn, "buffer")
    assert not only_read(fn, "counts")


#: a row pointer into a parameter (``row = p + b * T * V + t * V``) indexed by data: the values
#: stay inside one row, whatever the offset's spelling
ROW_ALIASES = {
    "two-terms": ("const float* row = x + b * T * V + t * V;", "row[idx[i]]", "V"),
    "one-term": ("const float* row = x + i * V;", "row[idx[i]]", "V"),
    "base-last-cast": ("const float* row = (const float*)(i * V + x);", "row[idx[i]]", "V"),
    "wide-rows": ("const float* row = x + i * T * V;", "row[idx[i] + 1]", "T * V"),
}


@pytest.mark.parametrize("case", sorted(ROW_ALIASES))
def test_index_into_a_row_pointer_gets_the_row_length(case: str) -> None:
    decl, use, row = ROW_ALIASES[case]
    kernel = (
        "__global__ void g(float* out, const float* x, const int* idx, int B, int T, int V) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < B * T) {\n    int b = i / T; int t = i % T;\n"
        f"    {decl}\n    out[i] = {use};\n  }}\n}}\n"
    )
    host = (
        "int main() {\n  int B = 2, T = 64, V = 50; float *out, *x; int *idx;\n"
        "  cudaMalloc(&x, B * T * V * sizeof(float));\n"
        "  g<<<(B * T + 127) / 128, 128>>>(out, x, idx, B, T, V);\n  return 0;\n}\n"
    )
    partial, diags = infer_binding(parse_source(kernel + host, "r.cu"), "g")
    got = partial["params"]["idx"].get("range")
    assert got is not None and got[1] in (row, f"({row}) - 1"), got
    assert any("'idx' values in" in d.message and "'row'" in d.message for d in diags)


def test_a_row_pointer_without_a_size_factor_gets_no_row_range() -> None:
    kernel = (
        "__global__ void g(float* out, const float* x, const int* idx, int n, int k) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) { const float* p = x + i; out[i] = p[idx[i]]; }\n}\n"
    )
    host = (
        "int main() {\n  int n = 100, k = 3; float *out, *x; int *idx;\n"
        "  cudaMalloc(&x, n * sizeof(float));\n"
        "  g<<<(n + 127) / 128, 128>>>(out, x, idx, n, k);\n  return 0;\n}\n"
    )
    partial, _ = infer_binding(parse_source(kernel + host, "r.cu"), "g")
    assert partial["params"]["idx"].get("range") in (None, [0, "n"])
