"""``halo-loads`` on a flat 1-D chunk: a 1-D stencil whose points ride on the ``[128, F]``
chunking (row ``p`` holds points ``p * F`` to ``p * F + F - 1``) loads its taps by one DMA of
overlapping rows -- each row widened by the halo, so neighbouring rows share the halo elements --
instead of one DMA per tap.  The ports stay exact against the SIMT interpreter, whatever the
spelling of the taps (an unrolled tap loop, literal taps, a constant-memory filter, shifted or
centred windows) and at sizes where the chunk has ragged rows."""

from __future__ import annotations

import pytest

from cuda2nki.ir.nodes import Load, Rows
from cuda2nki.rewrite import nodes
from tests.port.acceptance import port_variant, tensor_param


def _binding(out: str, sizes: list[int], extra: dict | None = None) -> dict:
    return {
        "launch": {"grid": [f"ceil_div({out}, 128)"], "block": [128]},
        "params": {
            "x": tensor_param(["n"], "in"),
            "y": tensor_param([out], "out"),
            "n": sizes[0],
            **(extra or {}),
        },
        "check": {"shapes": [{"n": s} for s in sizes[1:]]},
    }


#: (name, source, output extent, halo): 1-D stencils of a flat thread index
VARIANTS = [
    (
        "fir5_loop",  # an unrolled tap loop over a constant filter
        "__constant__ float w[5] = {0.1f, 0.2f, 0.4f, 0.2f, 0.1f};\n"
        "__global__ void k(const float* x, float* y, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i >= n - 4) return;\n"
        "    float acc = 0.0f;\n"
        "#pragma unroll\n"
        "    for (int t = 0; t < 5; ++t) acc += w[t] * x[i + t];\n"
        "    y[i] = acc;\n"
        "}\n",
        "n - 4",
        4,
    ),
    (
        "diff3_literal",  # literal taps out of order, a guard in the other direction
        "__global__ void k(const float* x, float* y, int n) {\n"
        "    int idx = threadIdx.x + blockDim.x * blockIdx.x;\n"
        "    if (idx < n - 2)\n"
        "        y[idx] = x[idx + 2] - 2.0f * x[idx + 1] + x[idx];\n"
        "}\n",
        "n - 2",
        2,
    ),
    (
        "gap_taps",  # taps with a gap (offsets 0, 3, 6): the halo still spans them
        "__global__ void k(const float* x, float* y, int n) {\n"
        "    int j = blockIdx.x * 128 + threadIdx.x;\n"
        "    if (j < n - 6) y[j] = 0.25f * (x[j] + x[j + 6]) + 0.5f * x[j + 3];\n"
        "}\n",
        "n - 6",
        6,
    ),
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("vid", "src", "out", "halo"), VARIANTS, ids=[v[0] for v in VARIANTS])
def test_flat_taps_share_one_load_of_overlapping_rows(vid, src, out, halo, target, tmp_path):
    sizes = [3000, 300, 1030, 131]
    b = _binding(out, sizes)
    res, run, points = port_variant(f"stencil/{vid}", src, b, target, tmp_path, tol=1e-5)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    loads = [s for s in nodes(res.ir_tiles.body) if isinstance(s, Load) and s.src.tensor == "x"]
    rows = [ld for ld in loads if isinstance(ld.src.dims[0], Rows)]
    assert rows, [str(ld.src) for ld in loads]
    assert all(r.src.dims[0].width == r.src.dims[0].stride + halo for r in rows)
    # one load per tile block: the full-tile block, the ragged rows and the ragged tail
    assert len(loads) <= 3, [str(ld.src) for ld in loads]


def test_overlapping_rows_round_trip_through_the_ir_text(tmp_path) -> None:
    from cuda2nki.ir.parser import parse
    from cuda2nki.ir.printer import to_text

    vid, src, out, _ = VARIANTS[0]
    res, _, _ = port_variant(f"stencil/{vid}", src, _binding(out, [20000]), "nki", tmp_path)
    text = to_text(res.ir_tiles)
    assert "overlap_rows(" in text
    assert parse(text) == res.ir_tiles


@pytest.mark.parametrize("n", [3000, 131, 1030])
def test_the_tile_evaluator_reads_overlapping_rows(n, tmp_path) -> None:
    import numpy as np

    from cuda2nki.diagnostics import Severity
    from cuda2nki.ir.evaluate_tiles import evaluate_tiles
    from cuda2nki.ir.verify import verify

    vid, src, out, _ = VARIANTS[1]
    res, _, _ = port_variant(f"stencil/{vid}", src, _binding(out, [n]), "nki", tmp_path)
    assert not [d for d in verify(res.ir_tiles) if d.severity is Severity.ERROR]
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    got = evaluate_tiles(res.ir_tiles, {"x": x}, {"n": n})["y"]
    want = x[2:] - 2.0 * x[1:-1] + x[:-2]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
