"""A block reduction whose staging writes zero past the data (``if (i < n) s[t] = x[i] * y[i];
else s[t] = 0;``) reads rows of whole blocks under a select: the port fetches only the elements
inside the tensors and zero-fills the rest of the last row, so a size that is not a multiple of
the block runs (before, the last row's load ran past the end of ``x`` and ``y``).  Spellings:
if/else, a ternary, a product and a single read, blocks of 256 and 128 threads."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.pipeline import port_file
from tests.port.acceptance import grid_binding, run_against_simt, tensor_param

STAGING = {
    "if-else-product": "if (i < n) { buf[threadIdx.x] = x[i] * y[i]; } else { buf[threadIdx.x] = 0; }",
    "ternary-product": "buf[threadIdx.x] = (i < n) ? x[i] * y[i] : 0.0f;",
    "if-else-single": "if (i >= n) buf[threadIdx.x] = 0.0f; else buf[threadIdx.x] = x[i] + 1.0f;",
}


def _kernel(staging: str, block: int) -> str:
    return f"""
#define TPB {block}
__global__ void partial_dots(const float* x, const float* y, float* out, int n) {{
    __shared__ float buf[TPB];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    {staging}
    __syncthreads();
    for (int half = TPB / 2; half > 0; half /= 2) {{
        if (threadIdx.x < half) buf[threadIdx.x] += buf[threadIdx.x + half];
        __syncthreads();
    }}
    if (threadIdx.x == 0) out[blockIdx.x] = buf[0];
}}
"""


@pytest.mark.parametrize("block", [256, 128])
@pytest.mark.parametrize("name", sorted(STAGING))
def test_ragged_sizes_run_and_match(name: str, block: int, tmp_path: Path) -> None:
    cu = tmp_path / f"{name}.cu"
    cu.write_text(_kernel(STAGING[name], block))
    params = {
        "x": tensor_param(["n"], "in"),
        "y": tensor_param(["n"], "in"),
        "out": tensor_param([f"ceil_div(n, {block})"], "out"),
        "n": 1000,
    }
    points = [{"n": 1000}, {"n": 2 * block}, {"n": 130 * block + 7}]
    bdict = grid_binding([f"ceil_div(n, {block})"], params, points, block=block)
    binding = binding_from_dict({"kernel": "partial_dots", **bdict}, path=str(cu))
    res = port_file(cu, binding=binding, target="nki")
    assert res.source is not None and not res.literal, [d.render() for d in res.diagnostics]
    port = tmp_path / f"{name}.py"
    port.write_text(res.source)
    run = run_against_simt(res, binding, port, points=points, rtol=1e-5, atol=1e-5)
    assert not run.mismatches, run.mismatches
