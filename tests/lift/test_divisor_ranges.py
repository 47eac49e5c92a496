"""Inputs that divide, and float inputs used as indices, get value ranges so that the CUDA
kernel is defined on check's generated inputs.

Integer division by zero is undefined in CUDA and stops the SIMT interpreter (C2N1503); a float
position converted to an integer index (``int a = pos[i] - 1; out[i] = in[a];``) read out of
bounds (C2N1500) when drawn from a normal distribution.  Either made ``migrate --check`` end in an
error about the reference instead of a verdict about the port."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.binding import binding_from_dict, generate_inputs
from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding

HOST = """
int main() {
    int n = 700;
    int *a, *b, *d; float *x, *pos, *y; int *out;
    cudaMalloc(&x, n * sizeof(float));
    LAUNCH
    return 0;
}
"""

#: (kernel, tensor, lowest value the divisor may take)
DIVISORS = {
    "quotient": (
        "__global__ void k(const int* a, const int* d, int* out, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) out[i] = a[i] / d[i];\n}\n",
        "d",
        1,
    ),
    "remainder-through-local": (
        "__global__ void k(const int* a, const int* d, int* out, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i >= n) return;\n"
        "  int m = d[i];\n"
        "  out[i] = a[i] % m;\n}\n",
        "d",
        1,
    ),
    "compound-shifted": (
        "__global__ void k(const int* a, const int* d, int* out, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) { int v = a[i] * 3; v /= (d[i] - 2); out[i] = v; }\n}\n",
        "d",
        3,
    ),
    "two-divisors-product": (
        "__global__ void k(const int* a, const int* b, const int* d, int* out, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) out[i] = (a[i] + 1) / b[i] * (a[i] / (int)d[i]);\n}\n",
        "d",
        1,
    ),
}


def _infer(kernel: str) -> dict:
    params = kernel.split("(", 1)[1].split(")", 1)[0]
    args = ", ".join(p.split()[-1].lstrip("*") for p in params.split(","))
    src = kernel + HOST.replace("LAUNCH", f"k<<<(n + 127) / 128, 128>>>({args});")
    tu = parse_source(src, "d.cu")
    partial, diags = infer_binding(tu, "k")
    return partial, diags


@pytest.mark.parametrize("case", sorted(DIVISORS))
def test_an_integer_divisor_is_never_zero(case: str) -> None:
    kernel, tensor, lo = DIVISORS[case]
    partial, diags = _infer(kernel)
    spec = partial["params"][tensor]
    assert spec.get("range", [None])[0] == lo, spec
    assert any("divisor" in d.message and f"'{tensor}'" in d.message for d in diags)
    resolved = binding_from_dict(partial).resolve()
    for seed in range(3):
        vals = generate_inputs(resolved, seed)[tensor]
        shift = 1 - lo
        assert (vals.astype(np.int64) + shift != 0).all()


def test_a_divisor_that_cannot_reach_zero_keeps_the_default_range() -> None:
    kernel = (
        "__global__ void k(const int* a, const int* d, int* out, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) out[i] = a[i] / (d[i] + 1);\n}\n"
    )
    partial, _ = _infer(kernel)
    assert "range" not in partial["params"]["d"]
    assert "range" not in partial["params"]["a"]  # a dividend needs nothing


def test_a_divisor_that_is_also_an_index_keeps_its_upper_end() -> None:
    kernel = (
        "__global__ void k(const float* x, const int* d, int* out, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) out[i] = (int)x[d[i]] / d[i];\n}\n"
    )
    partial, _ = _infer(kernel)
    assert partial["params"]["d"]["range"] == [1, "n"]


FLOAT_INDEX = {
    "local-shifted": (
        "__global__ void k(float* y, const float* x, const float* pos, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i >= n) return;\n"
        "  int a = pos[i] - 1;\n"
        "  y[i] = x[a];\n}\n",
        [1, "(n) + 1"],
    ),
    "cast-in-subscript": (
        "__global__ void k(float* y, const float* x, const float* pos, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) y[i] = x[(int)pos[i]];\n}\n",
        [0, "n"],
    ),
    "guarded-by-a-predicate": (
        "__global__ void k(float* y, const float* x, const float* pos, int n) {\n"
        "  int idx = threadIdx.x + blockDim.x * blockIdx.x;\n"
        "  if (idx < n && x[idx] != 0.f) {\n"
        "    int address = pos[idx];\n"
        "    y[idx] = x[address];\n  }\n}\n",
        [0, "n"],
    ),
}


@pytest.mark.parametrize("case", sorted(FLOAT_INDEX))
def test_a_float_input_used_as_an_index_stays_in_bounds(case: str) -> None:
    kernel, want = FLOAT_INDEX[case]
    partial, _ = _infer(kernel)
    got = partial["params"]["pos"].get("range")
    assert got is not None, partial["params"]["pos"]
    assert got[0] == want[0]
    resolved = binding_from_dict(partial).resolve()
    n = resolved.scalars["n"]
    shift = want[0]
    for seed in range(3):
        vals = generate_inputs(resolved, seed)["pos"]
        idx = vals.astype(np.int64) - shift
        assert idx.min() >= 0 and idx.max() < n
    assert "range" not in partial["params"]["x"]  # the values read stay normal
