"""Kernels written with C++ constructs -- device functions as template arguments, template
parameters deduced from the launch, namespace-qualified calls, enums as constants -- port
through a recogniser on both targets with the numbers of the CUDA kernel."""

from __future__ import annotations

import pytest

from tests.port.acceptance import CORPUS, check_kernel

TARGETS = ["nki", "legacy"]

#: corpus kernel -> the idiom that claims it
FORMS = {
    "cxx/act_kernel_fnarg": "map",  # apply_act<act::silu><<<...>>>, enum class
    "cxx/block_sum_fnarg": "reduce",  # blockReduce<warpReduceSum>, function-pointer typedef
    "cxx/convert_deduced": "map",  # Tin, Tout deduced; using namespace nn::fn
    "cxx/row_max_fnptr": "reduce",  # warp_all<&red::ops::max2>, nested namespaces
    "cxx/rowsum_deduced_ns": "reduce",  # row_total<128> with T deduced; fwd::weight, bwd::weight
    "cxx/scale_deduced": "map",  # T deduced from a cast; cfg::Tile::COLS, cfg::ROWS
}


def test_every_cxx_corpus_kernel_is_listed() -> None:
    assert sorted(f"cxx/{p.stem}" for p in (CORPUS / "cxx").glob("*.cu")) == sorted(FORMS)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rel", sorted(FORMS))
def test_cxx_corpus_kernels_port_through_a_recogniser(rel, target, tmp_path) -> None:
    out = check_kernel(CORPUS / f"{rel}.cu", target, tmp_path, max_points=3)
    assert out.status == "match", out
    assert out.idiom == FORMS[rel], out
    assert len(out.shapes) >= 3
