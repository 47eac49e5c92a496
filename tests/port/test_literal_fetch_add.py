"""``atomicAdd``/``atomicSub`` whose old value is used (slot counters, queue pushes, stream
compaction) in the literal lowering: each thread's old value is the counter plus the exclusive
prefix sum of the increments of the threads serialised before it, in the SIMT interpreter's
order (:mod:`cuda2nki.lift.literal.fetchadd`), so the ports match the interpreter on both
targets; other atomics whose old value is used go thread by thread (:mod:`.serialatomic`)."""

from __future__ import annotations

import pytest

from tests.port.test_literal import ROOT, _kernel, _matches

_PARAMS = (
    'out = {{ shape = ["n"], dtype = "float32", role = "out" }}\n'
    'count = {{ shape = [4], dtype = "{ct}", role = "{role}"{init} }}\n'
    'x = {{ shape = ["n"], dtype = "float32", role = "in" }}\n'
    "n = 300\nlimit = 0.25"
)

KERNELS = {
    # the classic filter: one slot per kept element, an element of a pointer parameter
    "filter_first_element": """
__global__ void keep(float* out, int* count, const float* x, int n, float limit) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > limit) {
        int pos = atomicAdd(&count[0], 1);
        out[pos] = x[i];
    }
}
""",
    # the pointer itself, in a grid-stride loop; the slot used inline as an index
    "grid_stride_pointer": """
__global__ void keep(float* out, int* count, const float* x, int n, float limit) {
    for (int k = threadIdx.x + blockIdx.x * blockDim.x; k < n; k += gridDim.x * blockDim.x) {
        float v = x[k];
        if (v > limit) out[atomicAdd(count, 1)] = v * 2.0f;
    }
}
""",
    # per-thread increments: a base offset reserved for each thread's items
    "per_thread_increments": """
__global__ void keep(float* out, int* count, const float* x, int n, float limit) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    int want = x[t] > limit ? 2 : (x[t] > 0.0f ? 1 : 0);
    int base = atomicAdd(count + 1, want);
    if (want > 0) out[base % n] = x[t];
    if (want > 1) out[(base + 1) % n] = -x[t];
}
""",
    # a counter in shared memory per block, then one global reservation per block
    "shared_counter_then_global_base": """
__global__ void keep(float* out, int* count, const float* x, int n, float limit) {
    __shared__ int s_count;
    __shared__ int s_base;
    __shared__ float s_items[64];
    int i = blockIdx.x * 64 + threadIdx.x;
    if (threadIdx.x == 0) s_count = 0;
    __syncthreads();
    float v = i < n ? x[i] : 0.0f;
    if (v > limit) {
        int k = atomicAdd(&s_count, 1);
        s_items[k] = v;
    }
    __syncthreads();
    if (threadIdx.x == 0) s_base = atomicAdd(&count[2], s_count);
    __syncthreads();
    if (threadIdx.x < s_count) out[s_base + threadIdx.x] = s_items[threadIdx.x];
}
""",
    # a shared counter with per-thread increments and atomicSub, results to the counter array
    "shared_sum_and_sub": """
__global__ void keep(float* out, int* count, const float* x, int n, float limit) {
    __shared__ int s_total;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0) s_total = 1000;
    __syncthreads();
    int q = i < n ? (int)(x[i] * 8.0f) : 0;
    int before = atomicAdd(&s_total, q);
    int left = atomicSub(&s_total, 1);
    if (i < n) out[i] = (float)(before - 3 * left);
    __syncthreads();
    if (threadIdx.x == 0) count[3] += s_total;
}
""",
    # counters chosen by thread index (a few threads per counter, known when traced), with
    # the scoped spellings of the atomics
    "index_chosen_counters": """
__global__ void keep(float* out, int* count, const float* x, int n, float limit) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > -limit) {
        int s = atomicAdd_block(&count[threadIdx.x % 4], 1 + (threadIdx.x & 1));
        atomicSub_system(&count[(threadIdx.x + 1) % 4], 1);
        out[i] = (float)s;
    }
}
""",
}

_ZERO_START = {"filter_first_element", "grid_stride_pointer", "shared_counter_then_global_base"}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_old_value_of_a_running_total_ports(tmp_path, name):
    # counters that index the output start at zero; the others hold data
    init = ("out", "") if name in _ZERO_START else ("inout", ", range = [-50, 50]")
    params = _PARAMS.format(ct="int32", role=init[0], init=init[1])
    cu = _kernel(tmp_path, KERNELS[name], "keep", '"ceil_div(n, 64)"', "64", params,
                 ["n = 1", "n = 130"])  # fmt: skip
    _matches(cu, tmp_path)


def test_grid_stride_loop_over_a_small_grid_keeps_the_interpreters_order(tmp_path):
    """Each thread passes the atomic several times: blocks run one after another, so block 0's
    iterations take the first slots (the interpreter runs these kernels block by block)."""
    params = _PARAMS.format(ct="int32", role="out", init="")
    cu = _kernel(tmp_path, KERNELS["grid_stride_pointer"], "keep", '"2"', "32", params,
                 ["n = 1", "n = 257"])  # fmt: skip
    _matches(cu, tmp_path)


def test_two_dimensional_block_and_unsigned_counter(tmp_path):
    src = """
__global__ void keep(float* out, unsigned int* count, const float* x, int n, float limit) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int i = row * 16 + col;
    if (col < 16 && i < n) {
        unsigned int got = atomicAdd(&count[1], x[i] > limit ? 3u : 0u);
        unsigned int back = atomicSub(count + 3, 1u);
        out[i] = (float)(got % 1000u) + 0.5f * (float)(back % 7u);
    }
}
"""
    params = _PARAMS.format(ct="uint32", role="inout", init="")
    cu = _kernel(tmp_path, src, "keep", '1, "ceil_div(n, 64)"', "16, 4", params,
                 ["n = 1", "n = 130"])  # fmt: skip
    _matches(cu, tmp_path)


_HIST = """
#define CAP 8
__global__ void binned(const int* key, int* fill, int* items, int n, int nbins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int b = key[i] % nbins;
        int slot = atomicAdd(&fill[b], 1);
        if (slot < CAP) items[b * CAP + slot] = i;
    }
}
"""


def test_slots_in_counters_chosen_by_data(tmp_path):
    params = (
        'key = { shape = ["n"], dtype = "int32", role = "in", range = [0, 40] }\n'
        'fill = { shape = ["nbins"], dtype = "int32", role = "out" }\n'
        'items = { shape = ["nbins * 8"], dtype = "int32", role = "out" }\n'
        "n = 200\nnbins = 5"
    )
    cu = _kernel(tmp_path, _HIST, "binned", '"ceil_div(n, 32)"', "32", params,
                 ["n = 1", "n = 45"])  # fmt: skip
    _matches(cu, tmp_path)


@pytest.mark.parametrize(
    "call",
    [
        "int m = atomicMax(&count[0], 5); out[i] = (float)m;",
        "int c = atomicCAS(count, 0, 1); out[i] = (float)c;",
        "int e = atomicExch(&count[1], i); out[i] = (float)e;",
        "float s = atomicAdd(&out[0], x[i]); if (i > 0) out[i] = s;",
    ],
)
def test_other_atomics_whose_old_value_is_used_port_thread_by_thread(tmp_path, call):
    src = (
        "__global__ void keep(float* out, int* count, const float* x, int n, float limit) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"    if (i < n) {{ {call} }}\n}}\n"
    )
    params = _PARAMS.format(ct="int32", role="out", init="").replace("n = 300", "n = 100")
    cu = _kernel(tmp_path, src, "keep", '"ceil_div(n, 64)"', "64", params, ["n = 40"])
    _matches(cu, tmp_path)


@pytest.mark.parametrize("rel", ["misc/compact_above", "misc/bucket_slots"])
def test_corpus_compaction_and_bucketing_match_on_both_targets(tmp_path, rel):
    _matches(ROOT / "corpus" / f"{rel}.cu", tmp_path)


def test_a_device_variable_counter_in_a_two_dimensional_grid(tmp_path):
    """A file-scope ``__device__`` counter (a tensor of the port) taken by address, threads of
    a 2-D grid, the slot used through a local pointer."""
    src = """
__device__ unsigned int g_taken;
__global__ void keep(float* out, const float* x, int n, float limit) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y;
    int i = row * 32 + col;
    if (col < 32 && i < n && x[i] < limit) {
        unsigned int at = atomicAdd(&g_taken, 1u);
        float* dst = out + at;
        *dst = x[i] + (float)row;
    }
}
"""
    params = (
        'out = { shape = ["n"], dtype = "float32", role = "out" }\n'
        'g_taken = { shape = [1], dtype = "uint32", role = "inout", range = [0, 1] }\n'
        'x = { shape = ["n"], dtype = "float32", role = "in" }\n'
        "n = 200\nlimit = 0.25"
    )
    cu = _kernel(tmp_path, src, "keep", '2, "ceil_div(n, 32)"', "16", params,
                 ["n = 1", "n = 97"])  # fmt: skip
    _matches(cu, tmp_path)


def test_a_counter_per_thread_under_a_bound_guard(tmp_path):
    """Every thread at its own element (one read-modify-write), the last block's inactive
    threads pointing past the end of the counters."""
    src = """
__global__ void keep(float* out, int* count, const float* x, int n, float limit) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int before = atomicSub(&count[i], (int)(x[i] * 4.0f));
        out[i] = (float)before;
    }
}
"""
    params = (
        'out = { shape = ["n"], dtype = "float32", role = "out" }\n'
        'count = { shape = ["n"], dtype = "int32", role = "inout", range = [-9, 9] }\n'
        'x = { shape = ["n"], dtype = "float32", role = "in" }\n'
        "n = 200\nlimit = 0.25"
    )
    cu = _kernel(tmp_path, src, "keep", '"ceil_div(n, 64)"', "64", params, ["n = 1", "n = 97"])
    _matches(cu, tmp_path)
