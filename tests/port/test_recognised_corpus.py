"""Corpus kernels that once fell back to the literal lowering and now port through a recogniser:
each ports on both targets without the literal fallback and matches the SIMT interpreter on the
binding's test points (>= 3 shapes, ragged sizes among them)."""

from __future__ import annotations

import pytest

from tests.port.acceptance import CORPUS, check_kernel

RECOGNISED = (
    "basic/residual_cache_hints",  # __ldcs, __ldlu, __ldg, __ldca loads, an __stcs store
    "basic/roll",  # a roll by a runtime amount: two shifted copies
    "reduce/argmax_rows",  # (value, index) pairs merged with shuffles
    "linalg/permute_nchw_nhwc",  # a 4-axis permutation: transposed [C, W] blocks
    "linalg/sgemm_blocktile_1d",  # eight interleaved rows per thread: one matmul
    "misc/cross_entropy",  # logsumexp minus x[i, t[i]]: a one-hot selection along the row
    "misc/embedding_backward",  # rows scatter-added at data ids: one-hot^T @ rows
    "misc/histogram_global",  # atomicAdd at a data key: one-hot contraction into PSUM
    "misc/histogram_shared",  # shared privatised histogram: the same scatter
    "misc/kmeans_assign",  # argmin over a distance sum (a loop around the row tile)
    "norm/causal_softmax_warp",  # online (max, sum) pairs over xor shuffles, causal rows
    "norm/layernorm",  # mean and variance spelled with other axis names per statement
    "reduce/mse_loss",  # per-block sum / n added with atomics: one reduction, then / n
    "reduce/reduce_warp_shuffle",  # grid-stride, two shuffle levels through shared memory
    "reduce/block_partials_gridstride",  # per-block partials of a grid-stride loop: trips loop
    "reduce/block_partials_unrolled",  # a local array of running sums, (warp, lane) merged
    "reduce/block_sumsq_while",  # x[k] * x[k] masked on both factors past the end
    "reduce/total_unrolled_warp_atomic",  # unrolled trips inside a total: loops per chunk
    "stencil/stencil_1d_shared",  # window and halos staged in shared memory
    "scan/scan_hillis_steele",  # double-buffered block scan in shared memory
    "scan/scan_blelloch",  # up-sweep / down-sweep in place: an exclusive scan and the chunk sums
    "stencil/conv2d_3x3",  # 3x3 taps with a zero boundary: loops around the row tile
    "stencil/jacobi2d_shared",  # 18x18 tile by a strided cooperative load, boundary copied
)


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("rel", RECOGNISED)
def test_ports_through_a_recogniser(rel, target, tmp_path) -> None:
    out = check_kernel(CORPUS / f"{rel}.cu", target, tmp_path)
    assert out.status == "match", out
    assert len(out.shapes) >= 3
