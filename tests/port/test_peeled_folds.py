"""A block reduction whose final loop starts from the first warp's partial (``v = part[0];
for (w = 1; ...)``) or adds the last one after the loop lifts to one reduction over the row, as
the loop written whole does: the softmax that peels its max and sum folds ports through the
softmax recogniser on both targets (it used to go literal, "a masked reduction along a loop"),
and the row reductions read each row in one reduction instead of one per warp."""

from __future__ import annotations

import pytest

from cuda2nki.binding import load_binding
from cuda2nki.ir.nodes import Compute
from cuda2nki.passes._analysis import outermost, reductions
from cuda2nki.pipeline import port_file
from tests.port.acceptance import CORPUS, check_kernel

TARGETS = ["nki", "legacy"]
KERNELS = {
    "norm/softmax_block_peeled": "softmax",
    "reduce/row_sum_peeled_last": "reduce",
    "reduce/row_min_peeled": "reduce",
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rel", sorted(KERNELS))
def test_ports_through_a_recogniser(rel: str, target: str, tmp_path) -> None:
    out = check_kernel(CORPUS / f"{rel}.cu", target, tmp_path, max_points=3)
    assert out.status == "match", out
    assert out.idiom == KERNELS[rel]


@pytest.mark.parametrize("rel", sorted(KERNELS))
def test_each_fold_is_one_reduction_over_the_row(rel: str) -> None:
    path = CORPUS / f"{rel}.cu"
    res = port_file(path, binding=load_binding(path.with_suffix(".toml")), target="nki")
    computes = [s for s in res.ir_intent.body if isinstance(s, Compute)]
    assert computes
    for c in computes:
        for r in outermost(reductions(c.expr)):
            assert len(r.axes) == 1 and r.where is None, r
            assert not isinstance(r.body, type(r)), r  # not a warp of lanes of a stride
