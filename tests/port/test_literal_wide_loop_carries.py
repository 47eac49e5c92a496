"""64-bit per-thread values (limb pairs) that a loop with a data-dependent trip count updates
are carried through the runtime loop limb by limb: the literal port runs (it used to raise in
the simulator, a pair having no dtype) and matches the SIMT interpreter bit for bit."""

from __future__ import annotations

import pytest

from tests.port.test_literal import _kernel
from tests.port.test_literal_runtime_loops import runs_on_device

_SHAPES = ["n = 1", "n = 130"]

#: name -> (source, parameters of the binding)
KERNELS = {
    # a lower bound found by halving an interval of size_t bounds over a table read from memory
    "halving_search_size_t": (
        """
__global__ void find(const float* table, const float* keys, size_t* slot,
                     const size_t n, const size_t m) {
    size_t q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= n) return;
    float key = keys[q];
    size_t lo = 0;
    size_t hi = m;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (key < table[mid]) hi = mid; else lo = mid;
    }
    slot[q] = lo;
}
""",
        'table = { shape = ["m"], dtype = "float32", role = "in" }\n'
        'keys = { shape = ["n"], dtype = "float32", role = "in" }\n'
        'slot = { shape = ["n"], dtype = "uint64", role = "out" }\n'
        "n = 200\nm = 97",
    ),
    # a signed 64-bit counter and a float updated until a condition on the float fails
    "long_long_counter": (
        """
__global__ void count(const float* x, long long* steps, float* rest, int n) {
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    if (t < n) {
        long long c = -5;
        float v = x[t];
        while (v > 1.0f) {
            v = v * 0.5f;
            c += 3;
        }
        steps[t] = c;
        rest[t] = v;
    }
}
""",
        'x = { shape = ["n"], dtype = "float32", role = "in", range = [0.5, 300.0] }\n'
        'steps = { shape = ["n"], dtype = "int64", role = "out" }\n'
        'rest = { shape = ["n"], dtype = "float32", role = "out" }\nn = 200',
    ),
    # an unsigned 64-bit state stepped in a grid-stride do-while until it falls below a bound
    "u64_state_do_while_grid_stride": (
        """
__global__ void shrink(const unsigned long long* seed, unsigned long long* out,
                       int* rounds, int n) {
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < n;
         e += blockDim.x * gridDim.x) {
        unsigned long long v = seed[e];
        int r = 0;
        do {
            v = v / 3ull + 7ull;
            r++;
        } while (v > 1000ull);
        out[e] = v;
        rounds[e] = r;
    }
}
""",
        'seed = { shape = ["n"], dtype = "uint64", role = "in", range = [0, 18446744073709551615] }\n'
        'out = { shape = ["n"], dtype = "uint64", role = "out" }\n'
        'rounds = { shape = ["n"], dtype = "int32", role = "out" }\nn = 200',
    ),
}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_wide_locals_are_carried_through_runtime_loops(tmp_path, name):
    src, params = KERNELS[name]
    kernel = src.split("__global__ void ", 1)[1].split("(", 1)[0]
    cu = _kernel(tmp_path, src, kernel, '"ceil_div(n, 64)"', "64", params, _SHAPES)
    port = runs_on_device(cu, tmp_path)
    assert "_c2n_carry(" in port
