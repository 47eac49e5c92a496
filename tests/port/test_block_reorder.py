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
