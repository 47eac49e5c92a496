"""``coalesce-dma`` on maps that read fields of records: ``p[i].x`` of an array of pairs or
``q[3 * i + 1]`` of a flattened array of triples rides on the flat ``[128, F]`` chunking (one DMA
per field and chunk, the record's stride in its access pattern) instead of one record per
partition.  The ports stay exact against the SIMT interpreter for both targets."""

from __future__ import annotations

import pytest

from cuda2nki.ir.nodes import Const, Load
from cuda2nki.rewrite import nodes
from tests.port.acceptance import port_variant, tensor_param


def _binding(shape: list, sizes: list[int]) -> dict:
    return {
        "launch": {"grid": ["ceil_div(n, 128)"], "block": [128]},
        "params": {
            "p": tensor_param(shape, "in"),
            "y": tensor_param(["n"], "out"),
            "n": sizes[0],
        },
        "check": {"shapes": [{"n": s} for s in sizes[1:]]},
    }


#: (name, source, shape of p): maps over records, fields spelled in different ways
VARIANTS = [
    (
        "pair_struct",  # float2 fields, the guard as an early return
        "__global__ void k(const float2* p, float* y, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i >= n) return;\n"
        "    float2 v = p[i];\n"
        "    y[i] = v.x * v.y - 1.0f;\n"
        "}\n",
        ["n", 2],
    ),
    (
        "triple_flat",  # a flattened array of triples, the fields read out of order
        "__global__ void k(const float* p, float* y, int n) {\n"
        "    int r = threadIdx.x + blockIdx.x * blockDim.x;\n"
        "    if (r < n) y[r] = p[3 * r + 2] + 0.5f * p[3 * r];\n"
        "}\n",
        ["3 * n"],
    ),
    (
        "quad_rows",  # rows of four, one field only
        "__global__ void k(const float* p, float* y, int n) {\n"
        "    int j = blockIdx.x * 128 + threadIdx.x;\n"
        "    if (j < n) y[j] = sqrtf(p[j * 4 + 3] * p[j * 4 + 3] + 1.0f);\n"
        "}\n",
        ["4 * n"],
    ),
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("vid", "src", "shape"), VARIANTS, ids=[v[0] for v in VARIANTS])
def test_record_fields_load_as_flat_chunks(vid, src, shape, target, tmp_path) -> None:
    sizes = [5000, 129, 70000, 7]
    b = _binding(shape, sizes)
    res, run, points = port_variant(f"map/{vid}", src, b, target, tmp_path, tol=1e-5)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    loads = [s for s in nodes(res.ir_tiles.body) if isinstance(s, Load) and s.src.tensor == "p"]
    assert loads
    # every tile holds a run of records per partition, not one record per partition
    assert all(ld.dst.dims[1].size != Const(1) for ld in loads), [str(x.dst) for x in loads]
