"""1-D maps are laid out over the 128 partitions: a vector shorter than 128 x 512 elements gets
rows of ceil(n / 128) elements (an engine instruction costs the same on 1 or 128 partitions)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.nkisim import load_kernel, simulate_kernel
from tests.port.acceptance import port_source

SOURCE = """
__global__ void axpb(const float* src, float* dst, float a, float b, int count) {
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < count; k += blockDim.x * gridDim.x)
        dst[k] = a * src[k] + b;
}
"""

BINDING = """
kernel = "axpb"
[launch]
grid = [40]
block = [256]
[params]
src = { shape = ["count"], dtype = "float32", role = "in" }
dst = { shape = ["count"], dtype = "float32", role = "out" }
a = 1.5
b = -0.25
count = 5000
"""


def _port_and_run(tmp_path: Path, name: str, src: str, binding: str, inputs: dict, **kw):
    """Port kernel ``name`` (its binding given) and simulate the port on ``inputs``."""
    done = port_source(tmp_path, name, src, binding, **kw)
    return done.res, simulate_kernel(load_kernel(str(done.port), name), inputs)


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("count", [5000, 3000, 129, 127, 1, 128 * 512 + 77, 3 * 128 * 512])
def test_flat_maps_fill_the_partitions(tmp_path: Path, target: str, count: int) -> None:
    src = np.linspace(-3, 3, count, dtype=np.float32)
    res, sim = _port_and_run(tmp_path, "axpb", SOURCE, BINDING, {"src": src}, target=target)
    assert res.idiom != "literal", res.diagnostics
    np.testing.assert_array_equal(sim.outputs, np.float32(1.5) * src + np.float32(-0.25))
    engine = [r for r in sim.trace if r.engine != "dma" and r.op not in ("memset", "iota")]
    widest = max(r.partitions for r in engine)
    width = min(512, -(-count // 128))  # ceil(count / 128) elements per partition row
    assert widest == min(128, count // width)
    assert widest >= min(128, count) // 2  # the bulk of the vector runs on most partitions
    # full [128, 512] tiles, then at most one row block and one tail row
    per_op = len(engine) / 2
    assert per_op <= count // (128 * 512) + 2


DOT = """
__global__ void dot(const float* u, const float* w, float* total, int count) {
    __shared__ float part[256];
    float s = 0.0f;
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < count; k += blockDim.x * gridDim.x)
        s += u[k] * w[k];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h /= 2) {
        if (threadIdx.x < h) part[threadIdx.x] += part[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(total, part[0]);
}
"""

DOT_BINDING = """
kernel = "dot"
[launch]
grid = [8]
block = [256]
[params]
u = { shape = ["count"], dtype = "float32", role = "in" }
w = { shape = ["count"], dtype = "float32", role = "in" }
total = { shape = [1], dtype = "float32", role = "inout" }  # atomicAdd adds to it
count = 4096
"""


@pytest.mark.parametrize("count", [4096, 3000, 100])
def test_whole_vector_reductions_fill_the_partitions(tmp_path: Path, count: int) -> None:
    u = np.linspace(-1, 1, count, dtype=np.float32)
    w = np.cos(np.arange(count, dtype=np.float32))
    total = np.array([0.5], np.float32)
    res, sim = _port_and_run(tmp_path, "dot", DOT, DOT_BINDING, {"u": u, "w": w, "total": total})
    assert res.idiom == "reduce", res.diagnostics
    got = np.asarray(sim.outputs).reshape(-1)[0]
    np.testing.assert_allclose(got, 0.5 + u.astype(np.float64) @ w, rtol=1e-5, atol=1e-5)
    mults = [r for r in sim.trace if r.op == "tensor_tensor"]
    assert max(r.partitions for r in mults) == min(128, count // -(-count // 128))


MEAN_SQ = """
__global__ void mean_sq(const float* xs, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(out, xs[i] * xs[i] / (float)n);
}
"""
MEAN_SQ_BINDING = """
kernel = "mean_sq"
[launch]
grid = ["ceil_div(n, 256)"]
block = [256]
[params]
xs = { shape = ["n"], dtype = "float32", role = "in" }
out = { shape = [1], dtype = "float32", role = "inout" }
n = 8000
"""
SCALE_BY_N = """
__global__ void scale_by_n(const float* xs, float* ys, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) ys[i] = xs[i] / (float)n;
}
"""
SCALE_BY_N_BINDING = """
kernel = "scale_by_n"
[launch]
grid = ["ceil_div(n, 128)"]
block = [128]
[params]
xs = { shape = ["n"], dtype = "float32", role = "in" }
ys = { shape = ["n"], dtype = "float32", role = "out" }
n = 8000
"""


@pytest.mark.parametrize(
    ("name", "src", "binding"),
    [("mean_sq", MEAN_SQ, MEAN_SQ_BINDING), ("scale_by_n", SCALE_BY_N, SCALE_BY_N_BINDING)],
)
def test_a_scalar_size_used_as_a_value_still_spreads_the_vector(tmp_path, name, src, binding):
    """``(float)n`` is an index value of a parameter, not of the element's position: the flat
    layouts still spread the vector over the partitions."""
    xs = np.linspace(-2, 2, 8000, dtype=np.float32)
    inputs = {"xs": xs, "out": np.zeros(1, np.float32)} if name == "mean_sq" else {"xs": xs}
    res, sim = _port_and_run(tmp_path, name, src, binding, inputs)
    assert res.idiom != "literal", res.diagnostics
    got = np.asarray(sim.outputs, np.float64).reshape(-1)
    want = (xs.astype(np.float64) ** 2).sum() / 8000 if name == "mean_sq" else xs / np.float32(8000)
    np.testing.assert_allclose(got, np.atleast_1d(want), rtol=1e-5, atol=1e-6)
    engine = [r for r in sim.trace if r.engine != "dma" and r.op not in ("memset", "iota")]
    assert max(r.partitions for r in engine) >= 100
