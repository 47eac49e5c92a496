"""``halo-loads``: a stencil's taps along the free axis share one DMA of the tile with its halo
(shifted on-chip views of it); taps along the partition axis keep a DMA each.  The ports stay
exact against the SIMT interpreter, whatever the spelling of the taps."""

from __future__ import annotations

import pytest

from cuda2nki.ir.nodes import Load
from cuda2nki.passes.halo_loads import MAX_HALO
from cuda2nki.rewrite import nodes
from tests.port.acceptance import CORPUS, check_kernel, port_variant, tensor_param


def _loads_of(res, tensor: str) -> list[Load]:
    return [s for s in nodes(res.ir_tiles.body) if isinstance(s, Load) and s.src.tensor == tensor]


def _binding(cols: int, rows_shapes: list[int], extra: dict | None = None) -> dict:
    params = {
        "x": tensor_param(["R", cols], "in"),
        "y": tensor_param(["R", cols], "inout"),
        "R": rows_shapes[0],
        **(extra or {}),
    }
    return {
        "launch": {"grid": [f"ceil_div(R * {cols}, 128)"], "block": [128]},
        "params": params,
        "check": {"shapes": [{"R": r} for r in rows_shapes[1:]]},
    }


#: (name, source, input loads expected): 2-D stencils on a flat thread index, taps spelled in
#: different orders, radii and guards; one DMA per distinct row shift
VARIANTS = [
    (
        "row3",  # a 1 x 3 average: one row, three column taps
        "#define C 40\n"
        "__global__ void k(const float* x, float* y, int R) {\n"
        "    int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    int r = t / C, c = t % C;\n"
        "    if (r < R && c >= 1 && c < C - 1)\n"
        "        y[r * C + c] = (x[r * C + c + 1] + x[r * C + c] + x[r * C + c - 1]) / 3.0f;\n"
        "}\n",
        1,
    ),
    (
        "row5_asym",  # radius 2 on the right only, the taps out of order
        "#define C 50\n"
        "__global__ void k(const float* x, float* y, int R) {\n"
        "    int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    int row = t / C;\n"
        "    int col = t % C;\n"
        "    if (row >= R || col >= C - 4) return;\n"
        "    y[row * C + col] = 0.5f * x[row * C + col + 4] - x[row * C + col + 2]\n"
        "                     + 2.0f * x[row * C + col];\n"
        "}\n",
        1,
    ),
    (
        "cross",  # a 5-point cross: two row shifts of one tap each, three column taps
        "#define C 36\n"
        "__global__ void k(const float* x, float* y, int R) {\n"
        "    int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    int i = t / C, j = t % C;\n"
        "    if (i > 0 && i < R - 1 && j > 0 && j < C - 1)\n"
        "        y[i * C + j] = x[(i - 1) * C + j] + x[(i + 1) * C + j]\n"
        "                     + x[i * C + j - 1] + x[i * C + j + 1] - 4.0f * x[i * C + j];\n"
        "}\n",
        3,
    ),
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("vid", "src", "loads"), VARIANTS, ids=[v[0] for v in VARIANTS])
def test_column_taps_share_one_load(vid, src, loads, target, tmp_path) -> None:
    cols = int(src.split()[2])
    res, run, points = port_variant(
        f"stencil/{vid}", src, _binding(cols, [20, 3, 130, 257]), target, tmp_path, tol=1e-5
    )
    assert len(points) >= 2 and not run.mismatches, run.mismatches
    got = _loads_of(res, "x")
    assert len(got) == loads, [str(x.src) for x in got]


def test_taps_further_apart_than_the_halo_limit_keep_their_loads(tmp_path) -> None:
    far = MAX_HALO + 4
    cols = 2 * far
    src = (
        f"#define C {cols}\n"
        "__global__ void k(const float* x, float* y, int R) {\n"
        "    int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    int r = t / C, c = t % C;\n"
        f"    if (r < R && c < C - {far})\n"
        f"        y[r * C + c] = x[r * C + c] + x[r * C + c + {far}];\n"
        "}\n"
    )
    res, run, _ = port_variant("stencil/far", src, _binding(cols, [5, 3]), "nki", tmp_path)
    assert not run.mismatches, run.mismatches
    assert len(_loads_of(res, "x")) == 2


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("rel", ["stencil/box3x3_flat_macro", "stencil/conv3x3_macro_strides"])
def test_corpus_box_stencils_load_one_halo_tile_per_row_shift(rel, target, tmp_path) -> None:
    from cuda2nki.binding import load_binding
    from cuda2nki.pipeline import port_file

    cu = CORPUS / f"{rel}.cu"
    res = port_file(cu, binding=load_binding(cu.with_suffix(".toml")), target=target)
    tensor = {s.src.tensor for s in nodes(res.ir_tiles.body) if isinstance(s, Load)}
    inputs = [t for t in tensor if t in ("in", "A")]
    assert len(inputs) == 1 and len(_loads_of(res, inputs[0])) == 3
    out = check_kernel(cu, target, tmp_path)
    assert out.status == "match", out
