"""Stores through pointers moved by index arithmetic that is not affine in the thread (a row
``b = idx / T`` of a warp-per-row kernel): the addresses depend on indices only, so the literal
lowering stores at a trace-time snapshot of them (:mod:`cuda2nki.lift.literal.knownaddr`)
rather than thread by thread as a scatter."""

from __future__ import annotations

import pytest

from cuda2nki.binding import load_binding
from cuda2nki.pipeline import port_file
from tests.port.test_literal import _kernel, _matches

_PARAMS = (
    'out = { shape = [3, "T", "C"], dtype = "float32", role = "out" }\n'
    'inp = { shape = [3, "T", "C"], dtype = "float32", role = "in" }\n'
    's = { shape = [3], dtype = "float32", role = "in" }\n'
    "T = 5\nC = 40"
)

KERNELS = {
    # one warp per (b, t) row, lanes striding the row
    "warp_per_row_subscript": """
__global__ void rowk(float* out, const float* inp, const float* s, int T, int C) {
    int idx = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    int b = idx / T;
    int t = idx % T;
    if (b >= 3) return;
    const float* in_bt = inp + b * T * C + t * C;
    float* out_bt = out + b * T * C + t * C;
    for (int i = lane; i < C; i += 32) {
        out_bt[i] = in_bt[i] * s[b];
    }
}
""",
    # one thread per element, its row and column by division; a dereferenced pointer
    "thread_per_element_deref": """
__global__ void rowk(float* out, const float* inp, const float* s, int T, int C) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int row = g / C, col = g - row * C;
    if (row >= 3 * T) return;
    float* dst = out + row * C + col;
    *dst = inp[g] + s[row / T];
}
""",
    # read-modify-write through the moved pointer, twice, under a per-thread guard
    "compound_update_under_a_guard": """
__global__ void rowk(float* out, const float* inp, const float* s, int T, int C) {
    int r = (blockIdx.x * blockDim.x + threadIdx.x) / 8;
    int part = threadIdx.x % 8;
    if (r < 3 * T) {
        float* o = out + (r / T) * T * C + (r % T) * C;
        for (int j = part; j < C; j += 8) {
            o[j] = inp[r * C + j];
            if (inp[r * C + j] > 0.5f) o[j] += s[r / T];
        }
    }
}
""",
}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_index_address_stores_port(tmp_path, name):
    grid = '"ceil_div(3 * T * C, 128)"' if "deref" in name else '"ceil_div(3 * T * 8, 128)"'
    if "warp" in name:
        grid = '"ceil_div(3 * T, 4)"'
    cu = _kernel(tmp_path, KERNELS[name], "rowk", grid, "128", _PARAMS,
                 ["T = 1\nC = 3", "T = 7\nC = 33"])  # fmt: skip
    _matches(cu, tmp_path)
    res = port_file(cu, binding=load_binding(cu.with_suffix(".toml")), lowering="literal")
    assert "_c2n_store_at(out, _ka" in res.source  # a trace-time store, no scatter
    assert "_c2n_scatter(out" not in res.source
