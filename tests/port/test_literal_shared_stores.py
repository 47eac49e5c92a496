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


_WRAP = (
    'a = { shape = ["n"], dtype = "int32", role = "in" }\n'
    'b = { shape = ["n"], dtype = "int32", role = "in" }\n'
    'c = { shape = ["n"], dtype = "int32", role = "out" }\n'
    "n = 512"
)

#: neighbours that wrap around a window: the addresses of a block are affine except where
#: they wrap, so they are read as a few strided views (bands of partition rows)
WRAPPED = {
    "modulo_window": """
__global__ void k(const int* a, const int* b, int* c, int n) {
    int idx = threadIdx.x + blockIdx.x * blockDim.x;
    if (idx < n) {
        int i1 = (idx + 1) % 256;
        int i2 = (idx + 2) % 256;
        float as = (a[idx] + a[i1] + a[i2]) / 3.0f;
        float bs = (b[idx] + b[i1] + b[i2]) / 3.0f;
        c[idx] = (as + bs) / 2;
    }
}
""",
    "mask_window_in_block": """
__global__ void k(const int* a, const int* b, int* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int base = blockIdx.x * blockDim.x;
    c[i] = a[base + ((threadIdx.x + 3) & 127)] - b[base + ((threadIdx.x + 125) & 127)];
}
""",
}


@pytest.mark.parametrize("name", sorted(WRAPPED))
def test_wrapped_neighbour_reads(tmp_path: Path, name: str) -> None:
    cu = _kernel(tmp_path, WRAPPED[name], "k", '"ceil_div(n, 128)"', "128", _WRAP,
                 ["n = 256", "n = 384"])  # fmt: skip
    _matches(cu, tmp_path)


def test_wrapped_reads_are_a_few_views_per_block(tmp_path: Path) -> None:
    from cuda2nki import api

    cu = _kernel(tmp_path, WRAPPED["modulo_window"], "k", '"ceil_div(n, 128)"', "128", _WRAP)
    res = api.port(cu, lowering="literal")
    port = tmp_path / "port.py"
    port.write_text(res.source)
    rng = np.random.default_rng(3)
    a, b = (rng.integers(-500, 500, 512).astype(np.int32) for _ in range(2))
    sim = api.simulate(port, {"a": a, "b": b})
    out = np.asarray(sim.outputs if not isinstance(sim.outputs, (list, tuple)) else sim.outputs[0])
    idx = np.arange(512)
    sa = (a + a[(idx + 1) % 256] + a[(idx + 2) % 256]).astype(np.float32) / np.float32(3)
    sb = (b + b[(idx + 1) % 256] + b[(idx + 2) % 256]).astype(np.float32) / np.float32(3)
    assert np.array_equal(out.reshape(-1), np.trunc((sa + sb) / np.float32(2)).astype(np.int32))
    dmas = sum(1 for i in sim.trace if "dma" in i.op or i.engine in ("dma", "sync"))
    # four gathers of 128 threads per block: a few strided views each, not one per row
    assert dmas < 100, dmas
