"""C2N5006 (redundant reloads) counts loads of a region since the last write to its buffer: a
block that fills a scratch buffer (a CUDA ``__shared__`` array in a literal port) and reads it
back reads new data each time, which no tiling could keep on chip across blocks.  Loads with no
write in between stay reloads."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cuda2nki.fidelity.tracefind import ProblemSize, findings, summarise
from cuda2nki.nkisim.state import Instr
from tests.port.test_literal import _kernel

SIZE = ProblemSize(rows=4096, bytes_per_partition=128, total_bytes=16384, elements=4096)
REGION = ("scratch", 0, (128, 8))


def _load(line: int) -> Instr:
    return Instr("dma", "dma_copy", (), (), (), 128, 8, 4096, "p.py", line, (("src", REGION),))


def _store(line: int) -> Instr:
    return Instr("dma", "dma_copy", (), (), (), 128, 8, 4096, "p.py", line, (("dst", "scratch"),))


def _ids(trace: list[Instr]) -> set[str]:
    return {d.code for d in findings(summarise(trace), SIZE, "p.py")}


def test_loads_between_writes_of_their_buffer_are_not_reloads() -> None:
    trace = [ins for _ in range(8) for ins in (_store(10), _load(11))]
    assert all(len(v) == 1 for v in summarise(trace).loads_by_source.values())
    assert "C2N5006" not in _ids(trace)


def test_loads_with_no_write_between_are_reloads() -> None:
    trace = [_store(10)] + [_load(11) for _ in range(8)]
    assert "C2N5006" in _ids(trace)
    # a write to another buffer does not refresh this one
    other = Instr("dma", "dma_copy", (), (), (), 128, 8, 4096, "p.py", 12, (("dst", "out"),))
    assert "C2N5006" in _ids([ins for _ in range(8) for ins in (other, _load(11))])


SHARED_REVERSE = """
#define B 64
__global__ void k(const float* x, float* y, int n) {
    __shared__ float s[B];
    int i = blockIdx.x * B + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) y[i] = s[B - 1 - threadIdx.x] + 1.0f;
}
"""


def test_a_literal_shared_buffer_is_read_once_per_write(tmp_path: Path) -> None:
    from cuda2nki import api

    params = (
        'x = { shape = ["n"], dtype = "float32", role = "in" }\n'
        'y = { shape = ["n"], dtype = "float32", role = "out" }\n'
        "n = 640"
    )
    cu = _kernel(tmp_path, SHARED_REVERSE, "k", '"ceil_div(n, 64)"', "64", params)
    res = api.port(cu, lowering="literal")
    assert res.source is not None and "buffer=nl.hbm" in res.source
    port = tmp_path / "port.py"
    port.write_text(res.source)
    sim = api.simulate(port, {"x": np.arange(640, dtype=np.float32)})
    summary = summarise(sim.trace)
    assert summary.loads_by_source
    assert max(len(v) for v in summary.loads_by_source.values()) == 1
