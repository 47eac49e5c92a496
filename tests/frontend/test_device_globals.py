"""File-scope ``__device__`` / ``__managed__`` variables are memory of the kernels that use them:
each becomes a trailing pointer parameter of those kernels (and of the device functions that
reach it), launch sites pass the symbol, and binding inference binds it with its declared extent
and a role from the kernel's reads and writes (written: inout, the rest of it keeps its values).
Variables the rewrite could not keep faithful stay globals."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_source
from cuda2nki.frontend.visit import walk
from cuda2nki.lift.infer import binding_from_inference

#: (source, kernel, {variable: (dtype, role, shape)})
MOVED = {
    "array-read-and-written-define-size": (
        "#define LEN 3000\n"
        "__device__ float acc[LEN];\n"
        "__global__ void accumulate(const float* x, float w, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) acc[i] += w * x[i];\n}\n"
        "int main() {\n  int n = LEN;\n  float* x;\n  cudaMalloc(&x, n * sizeof(float));\n"
        "  accumulate<<<(n + 127) / 128, 128>>>(x, 0.5f, n);\n  return 0;\n}\n",
        "accumulate",
        {"acc": ("float32", "inout", ["n"])},
    ),
    "counter-by-address-and-written-array": (
        "const int CAP = 512;\n"
        "__device__ int taken;\n"
        "__device__ unsigned int marks[CAP];\n"
        "__global__ void mark(const float* v) {\n"
        "  unsigned t = threadIdx.x + blockDim.x * blockIdx.x;\n"
        "  marks[t] = v[t] > 0.0f ? 1u : 0u;\n"
        "  if (v[t] > 0.0f) atomicAdd(&taken, 1);\n}\n"
        "int main() {\n  float* v;\n  cudaMalloc(&v, CAP * sizeof(float));\n"
        "  mark<<<CAP / 64, 64>>>(v);\n  return 0;\n}\n",
        "mark",
        {"taken": ("int32", "inout", [1]), "marks": ("uint32", "inout", [512])},
    ),
    "managed-flag-and-no-parameters": (
        "#define ROWS 64\n#define COLS 32\n"
        "__managed__ int any_negative;\n"
        "__device__ float cells[ROWS * COLS];\n"
        "__global__ void clamp_cells() {\n"
        "  int c = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  int r = blockIdx.y;\n"
        "  float v = cells[r * COLS + c];\n"
        "  if (v < 0.0f) { cells[r * COLS + c] = 0.0f; any_negative = 1; }\n}\n"
        "int main() {\n  dim3 grid(1, ROWS);\n  clamp_cells<<<grid, COLS>>>();\n  return 0;\n}\n",
        "clamp_cells",
        {"any_negative": ("int32", "inout", [1]), "cells": ("float32", "inout", [64, 32])},
    ),
    "two-dimensional-array-full-subscripts": (
        "#define H 16\n#define W 48\n"
        "__device__ float plane[H][W];\n"
        "__global__ void shift_plane(float* out, float d) {\n"
        "  int x = threadIdx.x, y = blockIdx.x;\n"
        "  out[y * W + x] = plane[y][x] + d;\n}\n"
        "int main() {\n  float* o;\n  cudaMalloc(&o, H * W * sizeof(float));\n"
        "  shift_plane<<<H, W>>>(o, 1.0f);\n  return 0;\n}\n",
        "shift_plane",
        {"plane": ("float32", "in", [16, 48])},
    ),
    "read-through-a-device-function-grid-stride": (
        "#define NB 8\n"
        "__device__ float bias_tab[NB];\n"
        "__device__ float biased(float v, int k) { return v + bias_tab[k % NB]; }\n"
        "__global__ void add_bias(float* y, const float* x, int count) {\n"
        "  for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < count;"
        " k += gridDim.x * blockDim.x)\n"
        "    y[k] = biased(x[k], k);\n}\n"
        "int main() {\n  int count = 5000;\n  float *x, *y;\n"
        "  cudaMalloc(&x, count * sizeof(float));\n  cudaMalloc(&y, count * sizeof(float));\n"
        "  add_bias<<<16, 256>>>(y, x, count);\n  return 0;\n}\n",
        "add_bias",
        {"bias_tab": ("float32", "in", [8])},
    ),
}


@pytest.mark.parametrize("case", sorted(MOVED))
def test_a_device_variable_is_a_kernel_parameter(case: str) -> None:
    src, kernel, want = MOVED[case]
    tu = parse_source(src, "t.cu")
    fn = tu.function(kernel)
    assert fn is not None
    added = [p for p in fn.params if p.symbol]
    assert sorted(p.name for p in added) == sorted(want)
    assert all(isinstance(p.ty, A.PointerType) and p.persistent for p in added)
    assert not {g.name for g in tu.globals} & set(want)
    assert len(tu.launch_sites[0].args) == len(fn.params)
    b, notes = binding_from_inference(tu, kernel)
    assert b is not None, [d.message for d in notes]
    for name, (dtype, role, shape) in want.items():
        spec = b.tensor(name)
        assert (spec.dtype, spec.role, list(spec.shape)) == (dtype, role, shape), name


def test_a_device_function_takes_the_variable_too() -> None:
    src, kernel, _ = MOVED["read-through-a-device-function-grid-stride"]
    tu = parse_source(src, "t.cu")
    helper = tu.function("biased")
    assert helper is not None and helper.params[-1].name == "bias_tab"
    calls = [n for n in walk(tu.function(kernel).body) if isinstance(n, A.Call)]
    calls = [c for c in calls if c.target == "biased"]
    assert calls and all(len(c.args) == 3 for c in calls)


#: variables that stay globals, each beside one that is moved (``seen``)
KEPT = {
    "a-local-of-the-same-name": (
        "__device__ float scratch[64];\n__device__ int seen;\n"
        "__global__ void g(float* o) {\n"
        "  float scratch = o[threadIdx.x];\n  o[threadIdx.x] = scratch * 2.0f;\n"
        "  atomicAdd(&seen, 1);\n}\n"
        "__global__ void h(float* o) { o[threadIdx.x] = scratch[threadIdx.x]; }\n",
        "scratch",
    ),
    "a-row-of-a-two-dimensional-array-passed-on": (
        "__device__ float rows2[4][32];\n__device__ int seen;\n"
        "__device__ float first(const float* r) { return r[0]; }\n"
        "__global__ void g(float* o) {\n"
        "  o[threadIdx.x] = first(rows2[threadIdx.x & 3]);\n  seen = 1;\n}\n",
        "rows2",
    ),
    "an-array-of-structs": (
        "struct P { float a; int b; };\n"
        "__device__ P items[16];\n__device__ int seen;\n"
        "__global__ void g(float* o) { o[threadIdx.x] = items[threadIdx.x].a + seen; }\n",
        "items",
    ),
    "a-start-value": (
        "__device__ unsigned int ticket = 0;\n__device__ int seen;\n"
        "__global__ void g(float* o) {\n"
        "  if (atomicInc(&ticket, 1000u) == 0) o[0] = (float)seen;\n}\n",
        "ticket",
    ),
}


@pytest.mark.parametrize("case", sorted(KEPT))
def test_other_device_variables_stay_globals(case: str) -> None:
    src, name = KEPT[case]
    tu = parse_source(src, "t.cu")
    assert {g.name for g in tu.globals} & {name, "seen"} == {name}
    assert [p.name for p in tu.function("g").params if p.symbol] == ["seen"]
