"""Blocks renumbered by a bijection of the launch grid (a diagonal order for a tiled transpose,
a rotation by a runtime amount, a reversed order) do the same work as the plain numbering, so
the kernel ports through its recogniser on both targets with the numbers of the CUDA kernel.
A renumbering that is not a bijection (two blocks on one tile) is never dropped: such a kernel
ports literally, with the CUDA kernel's numbers."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.lift.blockperm import unpermuted_blocks
from tests.port.acceptance import CORPUS, check_kernel, grid_binding, port_variant, tensor_param

TARGETS = ["nki", "legacy"]

FORMS = {
    "linalg/transpose_diagonal_blocks": "transpose",  # % gridDim.x, square and linearised forms
    "linalg/transpose_rotated_rows": "transpose",  # (blockIdx.x + rot) % gridDim.x, ragged
    "basic/scale_reversed_blocks": "map",  # gridDim.x - 1 - blockIdx.x
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rel", sorted(FORMS))
def test_reordered_blocks_port_through_a_recogniser(rel, target, tmp_path) -> None:
    out = check_kernel(CORPUS / f"{rel}.cu", target, tmp_path, max_points=3)
    assert out.status == "match", out
    assert out.idiom == FORMS[rel]
    assert len(out.shapes) == 3


#: two blocks take each half of the data: not a renumbering of the blocks
FOLDED = """
__global__ void k(float* y, const float* x, int n) {
    int b = blockIdx.x / 2;
    int i = b * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + 1.0f;
}
"""


def test_a_folding_renumbering_is_kept(tmp_path) -> None:
    cu = tmp_path / "fold.cu"
    cu.write_text(FOLDED)
    fn = parse_file(cu).function("k")
    from cuda2nki.lift.affine import Poly

    assert unpermuted_blocks(fn, (Poly.const(4),), [{"n": 512}]) is fn


@pytest.mark.parametrize("target", TARGETS)
def test_a_folding_renumbering_keeps_the_kernels_numbers(target, tmp_path) -> None:
    params = {"y": tensor_param(["n"], "out"), "x": tensor_param(["n"], "in"), "n": 300}
    binding = grid_binding(["ceil_div(n, 64)"], params, [{"n": 300}, {"n": 130}], block=64)
    _, run, points = port_variant(
        "reorder/folded", FOLDED, binding, target, tmp_path, literal_ok=True
    )
    assert len(points) >= 2 and not run.mismatches, run.mismatches


#: a block offset held in a local before any use: ``start = C * blockIdx.x`` is a scaled block
#: number, not a renumbering, whatever size the binding's first point gives (one block there)
SCALED = {
    "const-local": """
__global__ void k(const float* x, float* y, int n) {
    int start = blockIdx.x * 256;
    int t = threadIdx.x;
    if (start + t < n) y[start + t] = x[start + t] * 2.0f;
}
void go(const float* x, float* y, int n) { k<<<(n + 255) / 256, 256>>>(x, y, n); }
""",
    "macro-first": """
#define SPAN 192
__global__ void k(const float* x, float* y, int n) {
    int base;
    base = SPAN * blockIdx.x;
    if (base + threadIdx.x < n) y[base + threadIdx.x] = x[base + threadIdx.x] + 1.0f;
}
void go(const float* x, float* y, int n) { k<<<(n + SPAN - 1) / SPAN, SPAN>>>(x, y, n); }
""",
    "two-dims": """
__global__ void k(const float* x, float* y, int w, int h) {
    int r0 = blockIdx.y * 8, c0 = blockIdx.x * 32;
    int r = r0 + threadIdx.y, c = c0 + threadIdx.x;
    if (r < h && c < w) y[r * w + c] = x[r * w + c] * 0.5f;
}
void go(const float* x, float* y, int w, int h) {
    k<<<dim3((w + 31) / 32, (h + 7) / 8), dim3(32, 8)>>>(x, y, w, h);
}
""",
}


@pytest.mark.parametrize("case", sorted(SCALED))
def test_a_scaled_block_number_is_not_a_renumbering(case, tmp_path) -> None:
    from cuda2nki.lift.affine import Poly

    cu = tmp_path / "scaled.cu"
    cu.write_text(SCALED[case])
    fn = parse_file(cu).function("k")
    one_block = [{"n": 256, "w": 32, "h": 8}]  # the grid has a single block at this point
    grid = (Poly.const(1), Poly.const(1))
    assert unpermuted_blocks(fn, grid, one_block) is fn


@pytest.mark.parametrize("case", sorted(SCALED))
def test_scaled_block_offsets_lift(case, tmp_path) -> None:
    from cuda2nki.pipeline import port_file

    cu = tmp_path / "scaled.cu"
    cu.write_text(SCALED[case])
    res = port_file(cu, target="nki")
    assert res.source is not None and not res.literal, [d.render() for d in res.diagnostics]
