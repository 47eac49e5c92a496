"""The order in which the interpreter serialises atomics whose old value is used: blocks one
after another in launch order, inside a block each execution's active threads by linear id."""

from __future__ import annotations

import numpy as np
import pytest
from simt_helpers import tu_of

from cuda2nki.frontend import parse_source
from cuda2nki.simt import run_kernel_full
from cuda2nki.simt.atomicorder import uses_running_atomic


def run(code: str, *, grid, block, chunk_threads, **args):
    res = run_kernel_full(
        tu_of(code), None, grid=grid, block=block, args=args, chunk_threads=chunk_threads
    )
    return res.outputs


_GRID_STRIDE = """
__global__ void keep_big(const float* src, float* dst, int* count, int n, float limit) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        float v = src[i];
        if (v > limit) {
            int slot = atomicAdd(COUNTER, 1);
            dst[slot] = v;
        }
    }
}"""


def _block_sequential(src: np.ndarray, limit: float, grid: int, block: int) -> np.ndarray:
    """What a schedule that runs each block to completion, threads in id order, keeps."""
    out = []
    n = len(src)
    for b in range(grid):
        for start in range(b * block, n, grid * block):
            out.extend(v for v in src[start : start + block] if v > limit)
    return np.asarray(out, np.float32)


def test_one_site_outside_loops_gives_block_then_thread_order_in_any_chunking() -> None:
    kernel = """
    __global__ void k(int* c, int* slot, const int* keep) {
        int g = blockIdx.x * blockDim.x + threadIdx.x;
        if (keep[g]) slot[g] = atomicAdd(&c[0], 1 + (g & 3));
    }"""
    grid, block = 8, 32
    n = grid * block
    keep = np.random.default_rng(9).integers(0, 2, n).astype(np.int32)
    step = np.where(keep == 1, 1 + (np.arange(n) & 3), 0)
    want = np.where(keep == 1, np.cumsum(step) - step, -1)
    for chunk in (None, 32, 96):
        res = run(
            kernel,
            grid=(grid,),
            block=(block,),
            c=np.zeros(1, np.int32),
            slot=np.full(n, -1, np.int32),
            keep=keep,
            chunk_threads=chunk,
        )
        np.testing.assert_array_equal(res["slot"], want)
        assert res["c"][0] == step.sum()


@pytest.mark.parametrize("counter", ["&count[0]", "count"])
@pytest.mark.parametrize("chunk", [None, 64])
def test_grid_stride_compaction_runs_blocks_one_after_another(counter: str, chunk) -> None:
    src = np.random.default_rng(3).standard_normal(1000).astype(np.float32)
    grid, block = 3, 32
    res = run(
        _GRID_STRIDE.replace("COUNTER", counter),
        grid=(grid,),
        block=(block,),
        src=src,
        dst=np.zeros(1000, np.float32),
        count=np.zeros(1, np.int32),
        n=1000,
        limit=np.float32(0.5),
        chunk_threads=chunk,
    )
    want = _block_sequential(src, 0.5, grid, block)
    assert res["count"][0] == len(want)
    np.testing.assert_array_equal(res["dst"][: len(want)], want)


def test_two_sites_in_one_block_follow_program_order_then_thread_id() -> None:
    kernel = """
    __global__ void k(int* c, int* first, int* second, const int* step) {
        int t = threadIdx.y * blockDim.x + threadIdx.x;
        int g = blockIdx.x * blockDim.x * blockDim.y + t;
        first[g] = atomicAdd(c, step[g]);
        if (t % 3 == 0) second[g] = atomicSub(&c[0], 1);
    }"""
    grid, bx, by = 4, 8, 4
    n = grid * bx * by
    step = np.random.default_rng(5).integers(0, 9, n).astype(np.int32)
    res = run(
        kernel,
        grid=(grid,),
        block=(bx, by),
        c=np.array([7], np.int32),
        first=np.zeros(n, np.int32),
        second=np.full(n, -1, np.int32),
        step=step,
        chunk_threads=4096,
    )
    c = 7
    first = np.zeros(n, np.int32)
    second = np.full(n, -1, np.int32)
    for b in range(grid):
        ids = range(b * bx * by, (b + 1) * bx * by)
        for g in ids:
            first[g], c = c, c + step[g]
        for g in ids:
            if (g - b * bx * by) % 3 == 0:
                second[g], c = c, c - 1
    np.testing.assert_array_equal(res["first"], first)
    np.testing.assert_array_equal(res["second"], second)
    assert res["c"][0] == c


@pytest.mark.parametrize(
    ("body", "used"),
    [
        ("for (int k = 0; k < 3; k++) out[i + k] = atomicAdd(c, 1);", True),
        ("int s = atomicSub(&c[1], i); out[s] = 1; while (s > 4) s = atomicAdd(c, -1);", True),
        ("out[atomicAdd_block(c, 2)] = i; out[i] = atomicAdd(&c[1], 1);", True),
        ("int k = 0; do { out[atomicAdd(c, 1)] = k; } while (++k < 2);", True),
        ("out[i] = atomicAdd(c, 1);", False),  # once per thread: every chunking agrees
        ("atomicAdd(c, 1); atomicAdd(c, 2);", False),
        ("out[i] = atomicAdd(c, 1); atomicSub(&c[1], 1);", True),  # another atomic beside it
        ("for (int k = 0; k < 3; k++) (void)atomicAdd(c, i);", False),
        # old values of other atomics, at two sites: each block's serialised order matters
        ("out[i] = atomicMax(c, i); out[i] += atomicMin(c, 1);", True),
        ("out[i] = atomicExch(c, i);", False),  # once per thread
        ("for (int k = 0; k < 2; k++) atomicCAS(c, k, i);", True),  # unused, order-dependent
        ("for (int k = 0; k < 2; k++) atomicMax(c, i);", False),  # unused, any order agrees
    ],
)
def test_which_kernels_run_one_block_at_a_time(body: str, used: bool) -> None:
    src = f"__global__ void k(int* c, int* out) {{ int i = threadIdx.x; {body} }}"
    tu = parse_source(src, "k.cu")
    assert uses_running_atomic(tu, tu.function("k")) is used


def test_a_device_function_returning_the_old_value_counts() -> None:
    src = """
    __device__ int push(int* q) { return atomicAdd(q, 1); }
    __global__ void k(int* q, int* out) { out[push(q)] = threadIdx.x; }"""
    tu = parse_source(src, "k.cu")
    assert uses_running_atomic(tu, tu.function("k"))
