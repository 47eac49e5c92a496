"""A file-scope ``__shared__`` array filled or read by device functions is the same per-block
array inside every inlined callee, so the recognisers see the staging through the callee and
claim the kernel (before, the callee saw no such name and the kernel was lowered thread by
thread).  Spellings: a halo ribbon loaded by a helper (1-D stencil), a padded tile written by a
helper and read transposed by the kernel, and a staged row read back by a helper; each port's
numbers equal the interpreter's."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.fidelity.check import check
from cuda2nki.pipeline import port_file

CASES = {
    "halo-ribbon-helper": (
        "stencil",
        """
#define WIDTH 256
__shared__ float strip[WIDTH + 2];

__device__ void fill_strip(const float* in, int len, int start) {
    int k = threadIdx.x;
    int g = start + k;
    strip[k + 1] = g < len ? in[g] : 0.0f;
    if (k == 0) strip[0] = start > 0 ? in[start - 1] : 0.0f;
    if (k == WIDTH - 1) strip[WIDTH + 1] = g + 1 < len ? in[g + 1] : 0.0f;
}

__global__ void blur3(const float* in, float* out, int len) {
    int start = blockIdx.x * WIDTH;
    fill_strip(in, len, start);
    __syncthreads();
    int k = threadIdx.x;
    if (start + k < len) out[start + k] = (strip[k] + strip[k + 1] + strip[k + 2]) * 0.5f;
}

void go(const float* in, float* out, int len) {
    blur3<<<(len + WIDTH - 1) / WIDTH, WIDTH>>>(in, out, len);
}
""",
    ),
    "tile-written-by-helper": (
        "transpose",
        """
#define T 16
__shared__ float pad_tile[T][T + 1];

__device__ void stage(const float* a, int rows, int cols, int r, int c) {
    pad_tile[threadIdx.y][threadIdx.x] = (r < rows && c < cols) ? a[r * cols + c] : 0.0f;
}

__global__ void flip(const float* a, float* b, int rows, int cols) {
    int c = blockIdx.x * T + threadIdx.x;
    int r = blockIdx.y * T + threadIdx.y;
    stage(a, rows, cols, r, c);
    __syncthreads();
    int oc = blockIdx.y * T + threadIdx.x;
    int orow = blockIdx.x * T + threadIdx.y;
    if (orow < cols && oc < rows) b[orow * rows + oc] = pad_tile[threadIdx.x][threadIdx.y];
}

void go(const float* a, float* b, int rows, int cols) {
    dim3 blk(T, T);
    dim3 grd((cols + T - 1) / T, (rows + T - 1) / T);
    flip<<<grd, blk>>>(a, b, rows, cols);
}
""",
    ),
    "helper-reads-stage": (
        "stencil",
        """
__shared__ float row_stage[130];

__device__ float centred(int j) { return row_stage[j] - 2.0f * row_stage[j + 1] + row_stage[j + 2]; }

__global__ void laplace_1d(const float* u, float* lap, int m) {
    int j = threadIdx.x;
    int base = blockIdx.x * 128;
    row_stage[j + 1] = base + j < m ? u[base + j] : 0.0f;
    if (j == 0) row_stage[0] = base > 0 ? u[base - 1] : 0.0f;
    if (j == 127) row_stage[129] = base + 128 < m ? u[base + 128] : 0.0f;
    __syncthreads();
    if (base + j < m) lap[base + j] = centred(j);
}

void go(const float* u, float* lap, int m) { laplace_1d<<<(m + 127) / 128, 128>>>(u, lap, m); }
""",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_recognised_through_callees(case: str, tmp_path: Path) -> None:
    idiom, src = CASES[case]
    cu = tmp_path / "k.cu"
    cu.write_text(src)
    res = port_file(cu, target="nki")
    assert res.source is not None, [d.render() for d in res.diagnostics]
    assert not res.literal and res.idiom == idiom, (res.idiom, res.literal)


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_recognised_port_checks(case: str, tmp_path: Path) -> None:
    cu = tmp_path / "k.cu"
    cu.write_text(CASES[case][1])
    res = port_file(cu, target="nki")
    assert res.source is not None
    port = tmp_path / "k_port.py"
    port.write_text(res.source)
    report = check(cu, port, seeds=1, extra_points=False, timeout=600)
    assert report.numerics_outcome == "pass", report.numerics
