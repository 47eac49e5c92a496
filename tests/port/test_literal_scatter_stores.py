"""Plain stores at addresses read from data in the literal lowering: every thread writes its
element in thread order (``_c2n_scatter``), so where several active threads store to one element
the last of them leaves its value -- the outcome the SIMT interpreter's lockstep order gives,
one of those CUDA allows.  Ports match on both targets, also with many duplicate targets, and a
port that lets the first writer win instead is reported as a mismatch."""

from __future__ import annotations

import pytest

from tests.port.acceptance import run_against_simt
from tests.port.test_literal import _kernel, _matches

KERNELS = {
    # stream compaction: a scanned position per kept element (duplicates where the scan repeats)
    "compaction_by_scanned_position": (
        """
__global__ void pack(float* out, const float* in, const float* keep, const float* pos, int n) {
    int idx = blockDim.x * blockIdx.x + threadIdx.x;
    if (idx >= n) return;
    if (keep[idx] != 0.f) {
        int address = pos[idx] - 1;
        out[address] = in[idx];
    }
}
""",
        'out = { shape = ["n"], dtype = "float32", role = "out" }\n'
        'in = { shape = ["n"], dtype = "float32", role = "in" }\n'
        'keep = { shape = ["n"], dtype = "float32", role = "in", range = [0, 2], integer = true }\n'
        'pos = { shape = ["n"], dtype = "float32", role = "in", range = [1, 4], integer = true }\n'
        "n = 100",
    ),
    # an int permutation-like index, a pointer moved by it, an int payload
    "int_payload_through_a_moved_pointer": (
        """
__global__ void place(int* dst, const int* perm, const int* val, int n) {
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    if (t < n) {
        int* slot = dst + perm[t] % n;
        *slot = val[t] * 3 - t;
    }
}
""",
        'dst = { shape = ["n"], dtype = "int32", role = "out" }\n'
        'perm = { shape = ["n"], dtype = "int32", role = "in", range = [0, 5] }\n'
        'val = { shape = ["n"], dtype = "int32", role = "in", range = [-50, 50] }\n'
        "n = 90",
    ),
    # block memory written at slots read from data, then read back at the thread's own slot
    "shared_slots_from_data": (
        """
__global__ void slots(float* y, const float* x, int n) {
    __shared__ float s[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = -1.0f;
    __syncthreads();
    if (i < n) s[(int)x[i] & 63] = x[i];
    __syncthreads();
    if (i < n) y[i] = s[threadIdx.x];
}
""",
        'y = { shape = ["n"], dtype = "float32", role = "out" }\n'
        'x = { shape = ["n"], dtype = "float32", role = "in", range = [0, 70] }\n'
        "n = 100",
    ),
    # a 2-D block writing rows chosen by data; an inout buffer keeps the untouched elements
    "rows_chosen_by_data_in_a_2d_block": (
        """
__global__ void route(float* table, const int* which, const float* x, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) table[which[r] * cols + c] = x[r * cols + c] + 1.0f;
}
""",
        'table = { shape = ["rows", "cols"], dtype = "float32", role = "inout" }\n'
        'which = { shape = ["rows"], dtype = "int32", role = "in", range = [0, 3] }\n'
        'x = { shape = ["rows", "cols"], dtype = "float32", role = "in" }\n'
        "rows = 9\ncols = 20",
    ),
}


def _cu(tmp_path, name):
    src, params = KERNELS[name]
    kernel = src.split("void ")[1].split("(")[0]
    if "2d" in name:
        return _kernel(tmp_path, src, kernel, '"ceil_div(cols, 16)", "ceil_div(rows, 4)"',
                       "16, 4", params, ["rows = 4\ncols = 5", "rows = 7\ncols = 17"])  # fmt: skip
    return _kernel(tmp_path, src, kernel, '"ceil_div(n, 64)"', "64", params, ["n = 3", "n = 65"])


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_scatter_stores_match(tmp_path, name):
    _matches(_cu(tmp_path, name), tmp_path)


def test_a_legacy_port_where_the_first_writer_wins_fails(tmp_path):
    """The thread-by-thread scatter (legacy target; the current one finds the last writer on
    chip, see tests/port/test_literal_peer_slots.py) run backwards is reported."""
    target = "legacy"
    from cuda2nki.binding import load_binding
    from cuda2nki.pipeline import port_file

    cu = _cu(tmp_path, "compaction_by_scanned_position")
    binding = load_binding(cu.with_suffix(".toml"))
    res = port_file(cu, binding=binding, lowering="literal", target=target)
    assert res.source is not None and "_c2n_scatter(" in res.source
    flawed = res.source.replace("    for row in range(_P):\n        for col in range(_F):\n"
                                "            one = addr[",
                                "    for row in reversed(range(_P)):\n"
                                "        for col in reversed(range(_F)):\n"
                                "            one = addr[")  # fmt: skip
    assert flawed != res.source
    port = tmp_path / f"flawed_{target}.py"
    port.write_text(flawed)
    run = run_against_simt(res, binding, port, points=binding.test_points()[:3],
                           rtol=1e-5, atol=1e-5, cost="overlapped_ns")  # fmt: skip
    assert run.mismatches
