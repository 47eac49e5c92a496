"""``coalesce-dma`` on maps that read fields of records: ``p[i].x`` of an array of pairs or
``q[3 * i + 1]`` of a flattened array of triples rides on the flat ``[128, F]`` chunking (one DMA
per field and chunk, the record's stride in its access pattern) instead of one record per
partition.  The ports stay exact against the SIMT interpreter for both targets."""

from __future__ import annotations

import pytest

from cuda2nki.ir.nodes import Const, Load, Store
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


def _rw_binding(shape: list, sizes: list[int]) -> dict:
    return {
        "launch": {"grid": ["ceil_div(n, 128)"], "block": [128]},
        "params": {
            "s": tensor_param(shape, "inout"),
            "w": tensor_param(["n"], "in"),
            "n": sizes[0],
        },
        "check": {"shapes": [{"n": x} for x in sizes[1:]]},
    }


#: (name, source, shape of s, every field written): maps that write fields of records in place
WRITE_VARIANTS = [
    (
        "complex_struct",  # both fields of a float2 from the record read whole
        "__global__ void k(float2* s, const float* w, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) {\n"
        "        float2 v = s[i];\n"
        "        s[i] = make_float2(v.x * w[i] - v.y, v.y * w[i] + v.x);\n"
        "    }\n"
        "}\n",
        ["n", 2],
        True,
    ),
    (
        "pairs_flat_swapped",  # a flattened array of pairs, the odd field written first
        "__global__ void k(float* s, const float* w, int n) {\n"
        "    int r = threadIdx.x + blockIdx.x * blockDim.x;\n"
        "    if (r >= n) return;\n"
        "    float a = s[2 * r], b = s[2 * r + 1];\n"
        "    s[2 * r + 1] = a + b;\n"
        "    s[2 * r] = w[r] * a;\n"
        "}\n",
        ["2 * n"],
        True,
    ),
    (
        "triples_rows",  # rows of three, every field written
        "__global__ void k(float* s, const float* w, int n) {\n"
        "    int j = blockIdx.x * 128 + threadIdx.x;\n"
        "    if (j < n) {\n"
        "        float x = s[j * 3], y = s[j * 3 + 1], z = s[j * 3 + 2];\n"
        "        s[j * 3] = y * z;\n"
        "        s[j * 3 + 1] = x * w[j];\n"
        "        s[j * 3 + 2] = x + y;\n"
        "    }\n"
        "}\n",
        ["3 * n"],
        True,
    ),
    (
        "triples_one_field_kept",  # the middle field is not written: its old values stay
        "__global__ void k(float* s, const float* w, int n) {\n"
        "    int j = blockIdx.x * 128 + threadIdx.x;\n"
        "    if (j < n) {\n"
        "        float x = s[j * 3], z = s[j * 3 + 2];\n"
        "        s[j * 3] = z * w[j];\n"
        "        s[j * 3 + 2] = x - 1.0f;\n"
        "    }\n"
        "}\n",
        ["3 * n"],
        False,
    ),
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(
    ("vid", "src", "shape", "whole"), WRITE_VARIANTS, ids=[v[0] for v in WRITE_VARIANTS]
)
def test_record_fields_store_as_flat_chunks(vid, src, shape, whole, target, tmp_path) -> None:
    """Fields of records written in place ride on the flat chunks too (one DMA per field and
    chunk, the record's stride); when the statements write every field together, the old
    records are not copied first."""
    b = _rw_binding(shape, [5000, 129, 70000, 7])
    res, run, points = port_variant(f"map/{vid}", src, b, target, tmp_path, tol=1e-5)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    stores = [s for s in nodes(res.ir_tiles.body) if isinstance(s, Store) and s.dst.tensor == "s"]
    assert stores and all(st.src.dims[1].size != Const(1) for st in stores)
    copies = [st for st in stores if st.src.tensor.startswith("s_t")]  # old records copied
    assert bool(copies) is not whole, [str(st.dst) for st in copies]
