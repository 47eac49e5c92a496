"""A device function that passes its reference parameter on to another device function
(``float twice(float& s) { float a = step(s); ... }``; a random-number state threaded through
helpers) is inlined with the reference aliasing the caller's local all the way down: the
literal port matches the interpreter exactly."""

from __future__ import annotations

import pytest

from tests.port.acceptance import grid_binding, tensor_param
from tests.port.literal_acceptance import run_literal_exactly

_BIND = grid_binding(
    ["ceil_div(n, 128)"],
    {"x": tensor_param(["n"], "in"), "y": tensor_param(["n"], "out"), "n": 1000},
    [{"n": 77}, {"n": 300}],
    block=128,
)

KERNELS = {
    "float-state-stepped-twice": (
        "__device__ float step(float& s) { s = s * 1.5f + 1.0f; return s; }\n"
        "__device__ float twice(float& s) { float a = step(s); float b = step(s);"
        " return a + b; }\n"
        "__global__ void k(const float* x, float* y, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i >= n) return;\n"
        "  float st = x[i];\n  float r = twice(st);\n  y[i] = r + st;\n}\n"
    ),
    "unsigned-generator-state": (
        "__device__ unsigned next_word(unsigned& state) {\n"
        "  state = state * 1664525u + 1013904223u;\n  return state;\n}\n"
        "__device__ float unit(unsigned& state) {\n"
        "  unsigned w = next_word(state);\n  return (float)(w >> 8) * (1.0f / 16777216.0f);\n}\n"
        "__global__ void k(const float* x, float* y, int n) {\n"
        "  for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n;"
        " i += blockDim.x * gridDim.x) {\n"
        "    unsigned state = 12345u ^ (unsigned)i;\n"
        "    float a = unit(state);\n    float b = unit(state);\n"
        "    y[i] = x[i] * a + b;\n  }\n}\n"
    ),
    "void-helpers-counting-through-two-references": (
        "__device__ void bump(int& c, float v) { if (v > 0.0f) c += 1; }\n"
        "__device__ void tally(int& pos, int& neg, float v) { bump(pos, v); bump(neg, -v); }\n"
        "__global__ void k(const float* x, float* y, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) {\n"
        "    int up = 0, down = 0;\n"
        "    tally(up, down, x[i]);\n    tally(up, down, x[(i + 1) % n]);\n"
        "    y[i] = (float)(up * 10 + down);\n  }\n}\n"
    ),
}


@pytest.mark.parametrize("case", sorted(KERNELS))
def test_a_reference_passed_on_ports_exactly(case, tmp_path) -> None:
    cu = tmp_path / "k.cu"
    cu.write_text(KERNELS[case])
    run, points = run_literal_exactly(cu, _BIND, "nki", tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches
