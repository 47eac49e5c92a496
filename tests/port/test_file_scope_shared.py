"""File-scope ``__shared__`` variables are per-block shared memory of every kernel using them,
directly or through device functions: such kernels port from their inferred binding and our own
``check`` finds the port's numbers equal to the interpreter's, on both targets.  Spellings: 1-D
and padded 2-D arrays in a 2-D block, an array written and read by device functions, and a
file-scope ``extern __shared__`` array sized at the launch."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.fidelity.check import check
from cuda2nki.pipeline import port_file

CASES = {
    "two-arrays-2d-block": """
#define SIDE 8
__shared__ float stageA[SIDE * SIDE];
__shared__ float stageB[SIDE][SIDE + 1];

__global__ void mirror_sum(const float* src, float* dst, int width, int height, float k) {
    int cx = blockIdx.x * SIDE + threadIdx.x;
    int cy = blockIdx.y * SIDE + threadIdx.y;
    float v = 0.0f;
    if (cx < width && cy < height) v = src[cy * width + cx];
    stageA[threadIdx.y * SIDE + threadIdx.x] = v * k;
    __syncthreads();
    stageB[threadIdx.x][threadIdx.y] =
        stageA[threadIdx.y * SIDE + threadIdx.x] + stageA[threadIdx.x * SIDE + threadIdx.y];
    __syncthreads();
    if (cx < width && cy < height) dst[cy * width + cx] = stageB[threadIdx.y][threadIdx.x];
}

void run(const float* a, float* b, int w, int h) {
    dim3 block(SIDE, SIDE);
    dim3 grid((w + SIDE - 1) / SIDE, (h + SIDE - 1) / SIDE);
    mirror_sum<<<grid, block>>>(a, b, w, h, 0.5f);
}
""",
    "device-functions-share-it": """
__shared__ float window_buf[256];

__device__ float window_sum(int t, int radius) {
    float acc = 0.0f;
    for (int d = -radius; d <= radius; ++d) {
        int j = t + d;
        if (j >= 0 && j < blockDim.x) acc += window_buf[j];
    }
    return acc;
}

__device__ void put_value(int t, float v) { window_buf[t] = v; }

__global__ void local_box(const float* __restrict__ x, float* __restrict__ y, int count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    put_value(threadIdx.x, i < count ? x[i] : 0.0f);
    __syncthreads();
    if (i < count) y[i] = window_sum(threadIdx.x, 2);
}

int main() {
    int count = 5000;
    float *x, *y;
    cudaMalloc(&x, count * sizeof(float));
    cudaMalloc(&y, count * sizeof(float));
    local_box<<<(count + 255) / 256, 256>>>(x, y, count);
    return 0;
}
""",
    "extern-sized-at-launch": """
extern __shared__ int scratch_words[];

__global__ void reverse_in_block(const int* in_vals, int* out_vals, int total) {
    int base = blockIdx.x * blockDim.x;
    int t = threadIdx.x;
    scratch_words[t] = base + t < total ? in_vals[base + t] : -1;
    __syncthreads();
    int r = blockDim.x - 1 - t;
    if (base + t < total) out_vals[base + t] = scratch_words[r] * 3;
}

void launch(const int* a, int* b, int total) {
    const int threads = 128;
    reverse_in_block<<<(total + threads - 1) / threads, threads, threads * sizeof(int)>>>(
        a, b, total);
}
""",
}


@pytest.mark.slow
@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_file_scope_shared_ports_and_checks(case: str, target: str, tmp_path: Path) -> None:
    cu = tmp_path / "fs.cu"
    cu.write_text(CASES[case])
    res = port_file(cu, target=target)
    assert res.source is not None, [d.render() for d in res.diagnostics]
    port = tmp_path / "fs_port.py"
    port.write_text(res.source)
    report = check(cu, port, seeds=1, extra_points=False, timeout=600)  # a loaded machine
    assert report.numerics_outcome == "pass", report.numerics
