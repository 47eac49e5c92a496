"""A run whose chunk of threads exhausts the memory is run again with smaller chunks (a check
under a worker's memory limit), with the same outputs; only a chunk too small to shrink
further ends in C2N0005."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.frontend import parse_source
from cuda2nki.simt import runner

#: a grid-stride sum into one accumulator per block and a plain elementwise map
STRIDED = """
__global__ void stride_sum(const float* vals, float* partial, int total) {
    float acc = 0.0f;
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < total; k += gridDim.x * blockDim.x)
        acc += vals[k];
    atomicAdd(&partial[blockIdx.x], acc);
}
__global__ void twice(float* dst, const float* src, int count) {
    int j = threadIdx.x + blockIdx.x * blockDim.x;
    if (j < count) dst[j] = src[j] * 2.0f;
}
"""


def _limited(monkeypatch: pytest.MonkeyPatch, most: int) -> list[int]:
    """Chunks of more than ``most`` threads run out of memory; returns the sizes tried."""
    tried: list[int] = []
    real = runner.Chunk

    class Tight(real):  # type: ignore[misc, valid-type]
        def __init__(self, launch, box, shared):  # type: ignore[no-untyped-def]
            super().__init__(launch, box, shared)
            tried.append(self.T)
            if self.T > most:
                raise MemoryError

    monkeypatch.setattr(runner, "Chunk", Tight)
    return tried


@pytest.mark.parametrize(
    ("kernel", "grid", "block"), [("stride_sum", (64,), (128,)), ("twice", (512,), (64,))]
)
def test_a_chunk_out_of_memory_is_run_again_smaller(
    monkeypatch: pytest.MonkeyPatch, kernel: str, grid: tuple[int], block: tuple[int]
) -> None:
    tu = parse_source(STRIDED, "s.cu")
    n = grid[0] * block[0] - 5
    x = np.arange(n, dtype=np.float32)
    args = (
        {"vals": x, "partial": np.zeros(grid[0], np.float32), "total": n}
        if kernel == "stride_sum"
        else {"src": x, "dst": np.zeros(n, np.float32), "count": n}
    )
    want = runner.run_kernel(tu, kernel, grid=grid, block=block, args=args)
    tried = _limited(monkeypatch, 4096)
    got = runner.run_kernel(tu, kernel, grid=grid, block=block, args=args)
    for name, arr in want.items():
        np.testing.assert_array_equal(got[name], arr)
    assert max(tried) > 4096 and tried[-1] <= 4096  # shrunk, then run to the end


def test_a_chunk_that_cannot_shrink_is_c2n0005(monkeypatch: pytest.MonkeyPatch) -> None:
    tu = parse_source(STRIDED, "s.cu")
    _limited(monkeypatch, 16)  # below the smallest chunk retried
    x = np.ones(4096, np.float32)
    with pytest.raises(DiagnosticError) as info:
        runner.run_kernel(
            tu, "twice", grid=(64,), block=(64,), args={"src": x, "dst": x * 0, "count": 4096}
        )
    assert [d.code for d in info.value.diagnostics] == ["C2N0005"]
    assert "out of memory" in info.value.diagnostics[0].message
