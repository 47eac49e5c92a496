"""Loads a runtime loop (``nl.while_loop``) does not change move in front of it: a per-thread
bound re-read by the loop's condition (``j < off[i + 1]``, ``v > limit[i]``) or a per-thread
factor read in its body (``* w[i]``, ``* decay[g]``) is loaded once per block, not once per
pass; a load the loop body made earlier at the same view is taken again.  A load of a tensor
the loop writes stays in it.  Numbers match the SIMT interpreter."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.port.test_literal import _kernel
from tests.port.test_literal_runtime_loops import runs_on_device

#: name -> (source, params, inputs of the counted run (n = 64: one block), {tensor: loads})
CASES = {
    "csr_bound_and_row_scale": (
        """
__global__ void k(const int* off, const float* x, const float* w, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = 0.0f;
        for (int j = off[i]; j < off[i + 1]; j++) s += x[j] * w[i];
        y[i] = s;
    }
}
""",
        'off = { shape = ["n + 1"], dtype = "int32", role = "in", range = [0, 40] }\n'
        'x = { shape = [64], dtype = "float32", role = "in" }\n'
        'w = { shape = ["n"], dtype = "float32", role = "in" }\n'
        'y = { shape = ["n"], dtype = "float32", role = "out" }\nn = 200',
        {
            "off": np.arange(0, 65 * 3, 3, dtype=np.int32) % 64,
            "x": np.ones(64, dtype=np.float32),
            "w": np.ones(64, dtype=np.float32),
        },
        {"off": 2, "w": 1},  # off[i] and off[i + 1]; w[i] once, not once per pass
    ),
    "while_above_limit": (
        """
__global__ void k(const float* start, const float* limit, const float* decay, float* out,
                  int* steps, int n) {
    int g = threadIdx.x + blockIdx.x * blockDim.x;
    if (g >= n) return;
    float v = start[g];
    int c = 0;
    while (v > limit[g]) { v = v * decay[g]; ++c; }
    out[g] = v;
    steps[g] = c;
}
""",
        'start = { shape = ["n"], dtype = "float32", role = "in", range = [1.0, 100.0] }\n'
        'limit = { shape = ["n"], dtype = "float32", role = "in", range = [0.5, 2.0] }\n'
        'decay = { shape = ["n"], dtype = "float32", role = "in", range = [0.3, 0.9] }\n'
        'out = { shape = ["n"], dtype = "float32", role = "out" }\n'
        'steps = { shape = ["n"], dtype = "int32", role = "out" }\nn = 150',
        {
            "start": np.full(64, 64.0, dtype=np.float32),
            "limit": np.ones(64, dtype=np.float32),
            "decay": np.full(64, 0.5, dtype=np.float32),
        },
        {"limit": 1, "decay": 1},
    ),
    "do_while_with_bias": (
        """
__global__ void k(const float* bias, const float* thr, float* res, int n) {
    int t = blockDim.x * blockIdx.x + threadIdx.x;
    if (t < n) {
        float r = 0.0f;
        int it = 0;
        do {
            r = r * 0.5f + bias[t];
            it++;
        } while (r < thr[t]);
        res[t] = r + (float)it;
    }
}
""",
        'bias = { shape = ["n"], dtype = "float32", role = "in", range = [0.1, 1.0] }\n'
        'thr = { shape = ["n"], dtype = "float32", role = "in", range = [0.0, 0.15] }\n'
        'res = { shape = ["n"], dtype = "float32", role = "out" }\nn = 130',
        {"bias": np.full(64, 0.25, dtype=np.float32), "thr": np.full(64, 0.45, dtype=np.float32)},
        {"bias": 1, "thr": 1},
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_runtime_loop_loads_what_it_does_not_change_once(tmp_path: Path, name: str) -> None:
    src, params, inputs, expected = CASES[name]
    cu = _kernel(tmp_path, src, "k", '"ceil_div(n, 64)"', "64", params, ["n = 64", "n = 1"])
    port = runs_on_device(cu, tmp_path)
    counts = {t: _loads_of(port, inputs, t) for t in expected}
    assert counts == expected


def _loads_of(port_src: str, inputs: dict, tensor: str) -> int:
    import tempfile

    from cuda2nki import api
    from cuda2nki.fidelity.tracefind import summarise

    with tempfile.TemporaryDirectory() as d:
        port = Path(d) / "port.py"
        port.write_text(port_src)
        sim = api.simulate(port, inputs)
    return sum(len(v) for key, v in summarise(sim.trace).loads_by_source.items()
               if key[0] == tensor)  # fmt: skip


def test_a_load_of_what_the_loop_writes_stays_in_it(tmp_path: Path) -> None:
    src = """
__global__ void k(float* a, const float* floor_, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        while (a[i] > floor_[i]) a[i] = a[i] * 0.5f;
    }
}
"""
    params = (
        'a = { shape = ["n"], dtype = "float32", role = "inout", range = [1.0, 50.0] }\n'
        'floor_ = { shape = ["n"], dtype = "float32", role = "in", range = [1.0, 2.0] }\nn = 100'
    )
    cu = _kernel(tmp_path, src, "k", '"ceil_div(n, 64)"', "64", params, ["n = 64", "n = 3"])
    port = runs_on_device(cu, tmp_path)
    inputs = {"a": np.full(64, 16.0, dtype=np.float32), "floor_": np.ones(64, dtype=np.float32)}
    assert _loads_of(port, inputs, "floor_") == 1  # 'a' is read in each pass: the numbers match
