"""Literal ports read the loads of a counted loop that walks a row in runs: one DMA for many
iterations instead of one per iteration (``for (k = 0; k < K; k++) s += a[row * K + k]``, a
naive matmul's rows and columns, a transpose's strided rows).  Reads of data the loop writes
stay per iteration.  Numbers match the SIMT interpreter on ragged sizes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.port.test_literal import _kernel, _matches

_MM = (
    'a = { shape = ["m", "k"], dtype = "float32", role = "in" }\n'
    'b = { shape = ["k", "n"], dtype = "float32", role = "in" }\n'
    'c = { shape = ["m", "n"], dtype = "float32", role = "out" }\n'
    "m = 40\nk = 70\nn = 24"
)

#: naive GEMMs: each (row, col) thread walks a row of 'a' and a column of 'b'
MATMUL = {
    "row_col_lt": """
__global__ void mm(const float* a, const float* b, float* c, int m, int k, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m && col < n) {
        float s = 0.0f;
        for (int i = 0; i < k; i++) s += a[row * k + i] * b[i * n + col];
        c[row * n + col] = s;
    }
}
""",
    "pre_increment_le_bound": """
__global__ void mm(const float* a, const float* b, float* c, int m, int k, int n) {
    int x = threadIdx.x + blockDim.x * blockIdx.x;
    int y = threadIdx.y + blockDim.y * blockIdx.y;
    if (y >= m || x >= n) return;
    float acc = 0.0f;
    for (int t = 0; t <= k - 1; ++t) acc += b[t * n + x] * a[y * k + t];
    c[y * n + x] = acc;
}
""",
}

#: a loop stepping by a block's height: each iteration a strided row band
TRANSPOSE = """
#define T 32
#define R 8
__global__ void tr(float* out, const float* in) {
    int x = blockIdx.x * T + threadIdx.x;
    int y = blockIdx.y * T + threadIdx.y;
    int w = gridDim.x * T;
    for (int j = 0; j < T; j += R) out[x * w + (y + j)] = in[(y + j) * w + x];
}
"""


def _dma_loads(port_src: str, inputs: dict) -> int:
    """DMAs that read the inputs when the port runs on ``inputs``."""
    import tempfile

    from cuda2nki import api
    from cuda2nki.fidelity.tracefind import summarise

    with tempfile.TemporaryDirectory() as d:
        port = Path(d) / "port.py"
        port.write_text(port_src)
        sim = api.simulate(port, inputs)
    loads = summarise(sim.trace).loads_by_source
    return sum(len(v) for key, v in loads.items() if key[0] in inputs)  # loads of the inputs


@pytest.mark.parametrize("name", sorted(MATMUL))
def test_a_naive_matmul_reads_rows_and_columns_in_runs(tmp_path: Path, name: str) -> None:
    from cuda2nki import api

    cu = _kernel(tmp_path, MATMUL[name], "mm", '"ceil_div(n, 16)", "ceil_div(m, 16)"', "16, 16",
                 _MM, ["m = 17\nk = 3\nn = 5", "m = 33\nk = 130\nn = 16"])  # fmt: skip
    _matches(cu, tmp_path)
    src = api.port(cu, lowering="literal").source
    assert src is not None and src.count("_c2n_run(") == 2
    rng = np.random.default_rng(0)
    a = rng.standard_normal((32, 64)).astype(np.float32)
    b = rng.standard_normal((64, 32)).astype(np.float32)
    # 4 blocks of 16 x 16 threads, k = 64: 2 runs per block instead of 2 x 64 loads
    assert _dma_loads(src, {"a": a, "b": b}) == 8


def test_a_strided_row_band_loop_reads_one_run(tmp_path: Path) -> None:
    from cuda2nki import api

    params = (
        'out = { shape = ["h", "w"], dtype = "float32", role = "out" }\n'
        'in = { shape = ["h", "w"], dtype = "float32", role = "in" }\n'
        "h = 64\nw = 64"
    )
    cu = _kernel(tmp_path, TRANSPOSE, "tr", '"w / 32", "h / 32"', "32, 8", params,
                 ["h = 32\nw = 32"])  # fmt: skip
    _matches(cu, tmp_path)
    src = api.port(cu, lowering="literal").source
    assert src is not None and "_c2n_run(in_" in src
    x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    assert _dma_loads(src, {"in_": x}) == 4  # one run of 4 bands per block


def test_a_loop_that_writes_what_it_reads_keeps_its_loads(tmp_path: Path) -> None:
    from cuda2nki import api

    src = """
__global__ void k(float* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        for (int j = 1; j < 6; j++) a[i * 6 + j] = a[i * 6 + j - 1] * 0.5f + a[i * 6 + j];
    }
}
"""
    params = 'a = { shape = ["n", 6], dtype = "float32", role = "inout" }\nn = 50'
    cu = _kernel(tmp_path, src, "k", '"ceil_div(n, 32)"', "32", params, ["n = 33"])
    _matches(cu, tmp_path)
    port = api.port(cu, lowering="literal").source
    assert port is not None and "_c2n_run(" not in port
