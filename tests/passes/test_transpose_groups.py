"""Transposes in groups of row blocks: each block of 128 source rows is loaded whole by one DMA,
up to four blocks are transposed side by side into one PSUM bank and stored by one DMA, so the
port's DMAs are large (no small-DMA finding) and its results exact on both targets."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.binding import load_binding
from cuda2nki.ir.nodes import Const, Load, Slice, Store, Sym
from cuda2nki.nkisim.importer import load_kernel
from cuda2nki.nkisim.kernel import simulate_kernel
from cuda2nki.pipeline import port_file, port_intent
from cuda2nki.rewrite import nodes
from tests.passes import intent_examples as ex
from tests.port.acceptance import CORPUS, check_kernel
from tests.port.intent_acceptance import check


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("rows", "cols"), [(520, 160), (1, 1000), (129, 33), (1100, 300)])
def test_transposes_are_exact_with_large_dmas(rows: int, cols: int, target: str, tmp_path) -> None:
    cu = CORPUS / "linalg" / "transpose_naive.cu"
    res = port_file(cu, binding=load_binding(cu.with_suffix(".toml")), target=target)
    port = tmp_path / "t.py"
    port.write_text(res.source)
    x = np.random.default_rng(2).standard_normal((rows, cols)).astype(np.float32)
    run = simulate_kernel(load_kernel(port, "transpose_naive"), {"in_": x}, profile=True)
    np.testing.assert_array_equal(np.asarray(run.outputs), x.T)
    groups, col_blocks = -(-rows // 512), -(-cols // 128)
    # one load per row block, one store per (group, column block)
    assert run.profile.dma_count == -(-rows // 128) + groups * col_blocks
    if rows >= 512 and cols >= 128:
        assert run.profile.dma_avg_bytes_per_partition >= 512


def test_each_row_block_is_loaded_once_and_each_group_stored_per_column_block() -> None:
    scheduled, _src, _ = port_intent(ex.transpose())
    loads = [s for s in nodes(scheduled.body) if isinstance(s, Load)]
    stores = [s for s in nodes(scheduled.body) if isinstance(s, Store)]
    assert len(loads) == 1 and len(stores) == 1
    assert loads[0].src.dims[1] == Slice(Const(0), Sym("N"))  # whole rows


@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_intent_transpose_matches_the_evaluator(target: str, tmp_path) -> None:
    row = check(ex.transpose(), target, tmp_path)
    assert row.status == "match", row.detail


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("rel", ["linalg/transpose_naive", "linalg/transpose_shared"])
def test_corpus_transposes_match(rel: str, target: str, tmp_path) -> None:
    assert check_kernel(CORPUS / f"{rel}.cu", target, tmp_path).status == "match"
