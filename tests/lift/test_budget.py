"""The finaliser's work budget: counted in units of work, not seconds, so whether a kernel is
lifted never depends on how loaded the machine is; block-wide shared-memory trees stay cheap."""

from __future__ import annotations

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.frontend import parse_source
from cuda2nki.lift import finalize as F
from cuda2nki.lift import lift_kernel

TREE = """
__global__ void k(float* y, const float* x, int rows, int C) {
    __shared__ float red[BS];
    const int row = blockIdx.x;
    if (row >= rows) return;
    float ss = 0.0f;
    for (int c = threadIdx.x; c < C; c += blockDim.x) { float v = x[row * C + c]; ss += v * v; }
    red[threadIdx.x] = ss;
    __syncthreads();
    for (int s = blockDim.x >> 1; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    const float scale = rsqrtf(red[0] / C + 1e-6f);
    for (int c = threadIdx.x; c < C; c += blockDim.x) y[row * C + c] = x[row * C + c] * scale;
}"""


def _lift(bs: int):
    b = binding_from_dict(
        {
            "kernel": "k",
            "launch": {"grid": ["rows"], "block": [bs]},
            "params": {
                "y": {"shape": ["rows", "C"], "dtype": "float32", "role": "out"},
                "x": {"shape": ["rows", "C"], "dtype": "float32", "role": "in"},
                "rows": 8,
                "C": 100,
            },
        },
        path="<tree>",
    )
    return lift_kernel(parse_source(TREE.replace("BS", str(bs)), "tree.cu"), "k", b)


def _units(monkeypatch, bs: int) -> float:
    """Units the finalisation of the tree kernel spends (with an unbounded budget)."""
    made: list = []
    init = F.Finalizer.__init__

    def record(self, prog):
        init(self, prog)
        made.append(self)

    monkeypatch.setattr(F, "BUDGET_UNITS", 10**12)
    monkeypatch.setattr(F.Finalizer, "__init__", record)
    assert _lift(bs).claimed
    monkeypatch.setattr(F.Finalizer, "__init__", init)
    return sum(10**12 - f.units_left for f in made)


def test_work_is_counted_the_same_every_time(monkeypatch) -> None:
    assert _units(monkeypatch, 64) == _units(monkeypatch, 64) > 0


def test_the_budget_is_an_exact_threshold(monkeypatch) -> None:
    need = _units(monkeypatch, 32)
    monkeypatch.setattr(F, "BUDGET_UNITS", need)
    assert _lift(32).claimed
    monkeypatch.setattr(F, "BUDGET_UNITS", need - 1)
    res = _lift(32)
    assert not res.claimed
    d = res.diagnostics[-1]
    assert d.code == "C2N2015" and "work budget" in d.message


@pytest.mark.parametrize("bs", [128, 256, 1024])
def test_block_trees_fit_well_inside_the_budget(monkeypatch, bs: int) -> None:
    # a block-wide tree is linear in the block size: far from the budget even at 1024 threads
    assert _units(monkeypatch, bs) < F.BUDGET_UNITS / 4
