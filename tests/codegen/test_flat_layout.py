"""1-D maps are laid out over the 128 partitions: a vector shorter than 128 x 512 elements gets
rows of ceil(n / 128) elements (an engine instruction costs the same on 1 or 128 partitions)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki import api
from cuda2nki.nkisim import load_kernel, simulate_kernel

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


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("count", [5000, 3000, 129, 127, 1, 128 * 512 + 77, 3 * 128 * 512])
def test_flat_maps_fill_the_partitions(tmp_path: Path, target: str, count: int) -> None:
    cu, toml = tmp_path / "axpb.cu", tmp_path / "axpb.toml"
    cu.write_text(SOURCE)
    toml.write_text(BINDING)
    res = api.port(cu, binding=toml, target=target)
    assert res.source is not None and res.idiom != "literal", res.diagnostics
    port = tmp_path / "port.py"
    port.write_text(res.source)
    src = np.linspace(-3, 3, count, dtype=np.float32)
    sim = simulate_kernel(load_kernel(str(port), "axpb"), {"src": src})
    np.testing.assert_array_equal(sim.outputs, np.float32(1.5) * src + np.float32(-0.25))
    engine = [r for r in sim.trace if r.engine != "dma" and r.op not in ("memset", "iota")]
    widest = max(r.partitions for r in engine)
    width = min(512, -(-count // 128))  # ceil(count / 128) elements per partition row
    assert widest == min(128, count // width)
    assert widest >= min(128, count) // 2  # the bulk of the vector runs on most partitions
    # full [128, 512] tiles, then at most one row block and one tail row
    per_op = len(engine) / 2
    assert per_op <= count // (128 * 512) + 2
