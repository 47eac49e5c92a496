"""Stores in which every active thread of a block writes one element (a uniform address), under
a condition known at trace time: the last active thread wins, as in CUDA's (and the SIMT
interpreter's) thread order, and the port writes that thread's value alone instead of one
masked read-modify-write per thread.  Row-per-block softmax loops and per-block result stores
of public trees are of this form; their ports used to run for minutes on small shapes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.port.test_literal import _kernel, _matches

_ROWS = (
    'x = { shape = ["rows", "cols"], dtype = "float32", role = "in" }\n'
    'y = { shape = ["rows", "cols"], dtype = "float32", role = "out" }\n'
    "rows = 3\ncols = 40"
)

#: each block walks a whole row and every active thread stores each element of it
SOFTMAX = {
    "guard_both_axes": """
__global__ void k(const float* x, float* y, int rows, int cols) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int bid = blockIdx.y;
    if (tid < cols && bid < rows) {
        int offset = bid * cols;
        float m = x[offset];
        for (int i = 1; i < cols; i++) m = fmaxf(m, x[offset + i]);
        float s = 0.0f;
        for (int i = 0; i < cols; i++) s += expf(x[offset + i] - m);
        for (int i = 0; i < cols; i++) y[offset + i] = expf(x[offset + i] - m) / s;
    }
}
""",
    "early_return_and_row_pointer": """
__global__ void k(const float* x, float* y, int rows, int cols) {
    int lane = threadIdx.x + blockDim.x * blockIdx.x;
    if (lane >= cols) return;
    const float* in = x + blockIdx.y * cols;
    float top = in[0];
    for (int j = 1; j < cols; ++j) top = in[j] > top ? in[j] : top;
    float total = 0.0f;
    for (int j = 0; j < cols; ++j) total += __expf(in[j] - top);
    for (int j = cols - 1; j >= 0; --j) y[blockIdx.y * cols + j] = __expf(in[j] - top) / total;
}
""",
}

_BLOCKS = (
    'x = { shape = ["n"], dtype = "float32", role = "in" }\n'
    'y = { shape = [4], dtype = "float32", role = "out" }\n'
    "n = 70"
)

#: one element per block, written by the threads a condition on thread indices keeps
PER_BLOCK = {
    "first_threads": """
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && threadIdx.x < 5) y[blockIdx.x] = x[i];
}
""",
    "else_branch": """
__global__ void k(const float* x, float* y, int n) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (threadIdx.x >= 7 || i >= n) {
    } else {
        y[blockIdx.x] = 2.0f * x[i];
    }
}
""",
    "nested_odd_threads": """
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        if (threadIdx.x % 3 == 1) y[blockIdx.x] = x[i] + 1.0f;
    }
}
""",
}


@pytest.mark.parametrize("name", sorted(SOFTMAX))
def test_row_per_block_softmax(tmp_path: Path, name: str) -> None:
    cu = _kernel(tmp_path, SOFTMAX[name], "k", '"ceil_div(cols, 32)", "rows"', "32", _ROWS,
                 ["rows = 1\ncols = 33", "rows = 2\ncols = 5"])  # fmt: skip
    _matches(cu, tmp_path)


@pytest.mark.parametrize("name", sorted(PER_BLOCK))
def test_per_block_element_written_by_the_last_active_thread(tmp_path: Path, name: str) -> None:
    # four blocks of 32 threads over n elements: the last blocks may have no active thread
    cu = _kernel(tmp_path, PER_BLOCK[name], "k", "4", "32", _BLOCKS, ["n = 33", "n = 1"])
    _matches(cu, tmp_path)


def test_a_shared_store_writes_one_element_not_one_per_thread(tmp_path: Path) -> None:
    from cuda2nki import api

    cu = _kernel(tmp_path, PER_BLOCK["first_threads"], "k", "4", "32", _BLOCKS)
    res = api.port(cu, lowering="literal")
    port = tmp_path / "port.py"
    port.write_text(res.source)
    x = np.arange(70, dtype=np.float32)
    sim = api.simulate(port, {"x": x})
    out = np.asarray(sim.outputs if not isinstance(sim.outputs, (list, tuple)) else sim.outputs[0])
    assert out.reshape(-1).tolist() == [4.0, 36.0, 68.0, 0.0]
    # a handful of instructions per block (the store of one element), not one masked
    # read-modify-write for each of the block's threads
    assert len(sim.trace) < 120, len(sim.trace)
