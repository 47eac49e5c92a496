"""A literal port spells the binding's size functions as Python's own: a grid of
``min(cap, ceil_div(n, 128))`` blocks (a grid-stride reduction sized by occupancy) and an output
of one partial sum per block run in the port, not as ``min_`` (a NameError when it ran)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.lift.literal.lower import c_expr_to_py
from tests.port.acceptance import grid_binding, port_variant, tensor_param

#: one partial sum per block over a grid-stride loop, a shared-memory tree in each block
PARTIALS = """
__global__ void k(const float* in, float* out, int n) {
    __shared__ float s[128];
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        acc += in[i];
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h) s[threadIdx.x] += s[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
"""


@pytest.mark.parametrize(
    "blocks",
    ["min(4, (n + 127) / 128)", "max(1, min(n / 128, 3))", "min(ceil_div(n, 128), int(5))"],
)
def test_a_grid_of_size_functions_runs_in_the_literal_port(blocks: str, tmp_path: Path) -> None:
    params = {"in": tensor_param(["n"], "in"), "out": tensor_param([blocks], "out"), "n": 1000}
    binding = grid_binding([blocks], params, [{"n": 1000}, {"n": 300}])
    res, run, points = port_variant(
        "literal/partials", PARTIALS, binding, "nki", tmp_path, 1e-4, literal_ok=True
    )
    assert "min_" not in res.source and "max_" not in res.source
    assert len(points) >= 2 and not run.mismatches, run.mismatches


def test_only_the_functions_keep_their_names() -> None:
    assert c_expr_to_py("min(8, (size + 255) / 256)") == "min(8, _c2n_idiv(size + 255, 256))"
    # a size that happens to be called like a Python name is still renamed
    assert c_expr_to_py("max(min, range)") == "max(min_, range_)"
