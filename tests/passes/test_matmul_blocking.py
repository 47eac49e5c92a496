"""Contractions blocked for reuse: the moving operand's column block is loaded once per block of
transposed stationary rows (outside the row-tile loop, one DMA per K tile), each row tile of the
stationary operand by one DMA and transposed once, the result's row block staged and stored by
one DMA; the port stays exact, fits SBUF at large M x K, and its cost-model time is within 1.25x
of the expert port in bench/expert."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from cuda2nki.binding import load_binding
from cuda2nki.ir.nodes import Load, Loop, Store, Unary
from cuda2nki.nkisim.importer import load_kernel
from cuda2nki.nkisim.kernel import simulate_kernel
from cuda2nki.pipeline import port_file, port_intent
from cuda2nki.rewrite import nodes
from tests.passes import intent_examples as ex
from tests.port.acceptance import CORPUS, check_kernel

EXPERT = Path(__file__).resolve().parents[2] / "bench" / "expert" / "matmul_blocked.py"


def _loads_by_depth(body: tuple, depth: int = 0, out: list | None = None) -> list:
    """(tensor, loop nest depth, enclosing loop vars) of every HBM load."""
    out = [] if out is None else out
    for s in body:
        if isinstance(s, Loop):
            _loads_by_depth(s.body, depth + 1, out)
        elif isinstance(s, Load):
            out.append((s.src.tensor, depth))
    return out


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_the_moving_operand_is_loaded_outside_the_row_block_loop(dtype: str) -> None:
    scheduled, _src, _ = port_intent(ex.matmul(a_dtype=dtype))
    one, more = _branches(scheduled.body)
    # N in one column block: B loaded once (K loop only), before the blocks of transposed rows;
    # A: block of transposed rows > row tile (all of K in one load)
    assert sorted(_loads_by_depth(one)) == [("A", 2), ("B", 1)]
    # more column blocks: B under block of transposed rows > column-block loop > K loop, A
    # outside the column-block loop
    assert sorted(_loads_by_depth(more)) == [("A", 2), ("B", 3)]
    for body in (one, more):
        assert len([s for s in nodes(body) if isinstance(s, Store)]) == 1


def _branches(body: tuple) -> tuple[tuple, tuple]:
    """The bodies of the branches on the number of column blocks: (one block, several)."""
    conds = [s for s in body if isinstance(s, Loop) and s.cond is not None]
    assert len(conds) == 2, body
    (one,) = [s for s in conds if not isinstance(s.cond, Unary)]
    (more,) = [s for s in conds if isinstance(s.cond, Unary)]
    return one.body, more.body


def _simulate(path: Path, name: str, inputs: dict):
    return simulate_kernel(load_kernel(path, name), inputs, profile=True)


@pytest.mark.parametrize(
    ("m", "k", "n"),
    [(512, 256, 1024), (384, 200, 700), (130, 1024, 2048), (4096, 4096, 128), (2048, 8192, 256)],
)
def test_generated_matmul_is_within_the_expert_ratio(m, k, n, tmp_path) -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((m, k)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((k, n)).astype(ml_dtypes.bfloat16)
    cu = CORPUS / "lowp" / "matmul_bf16.cu"  # the naive CUDA GEMM, bf16 in and out
    port = tmp_path / "matmul.py"
    port.write_text(port_file(cu, binding=load_binding(cu.with_suffix(".toml"))).source)
    gen = _simulate(port, "matmul_bf16", {"A": a, "B": b})
    exp = _simulate(EXPERT, "matmul_blocked_kernel", {"a": a, "b": b})
    want = a.astype(np.float32) @ b.astype(np.float32)
    for got in (gen.outputs, exp.outputs):  # bf16 results of fp32 sums
        np.testing.assert_allclose(
            np.asarray(got, np.float32), want, rtol=1e-2, atol=np.abs(want).max() * 1e-2
        )
    ratio = gen.profile.overlapped_ns / exp.profile.overlapped_ns
    assert ratio <= 1.25, (ratio, gen.profile.to_text())
    assert gen.profile.dma_count <= exp.profile.dma_count + 2 * -(-m // 128)


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(
    "rel",
    [
        "lowp/matmul_bf16",
        "linalg/matmul_naive",
        "linalg/matmul_tiled",
        "linalg/matmul_tiled_tpl",
        "linalg/sgemm_blocktile_1d",
        "linalg/bmm_nt",
        "linalg/attention_scores",
        "linalg/gesummv",
    ],
)
def test_contraction_ports_still_match(rel: str, target: str, tmp_path) -> None:
    out = check_kernel(CORPUS / f"{rel}.cu", target, tmp_path)
    assert out.status == "match", out


def test_the_resident_block_and_the_staged_result_stay_within_the_budget(tmp_path) -> None:
    """A short K and a wide N: the column block is bounded by what R and the staged fp32
    result take together per partition, not by R alone."""
    from cuda2nki.passes._matmul_blocks import CACHE_BUDGET

    rng = np.random.default_rng(2)
    a = rng.standard_normal((130, 100)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((100, 40000)).astype(ml_dtypes.bfloat16)
    port = tmp_path / "matmul.py"
    port.write_text(port_intent(ex.matmul())[1])  # bf16 operands, fp32 result
    run = _simulate(port, "matmul", {"A": a, "B": b})
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(np.asarray(run.outputs), want, rtol=1e-5, atol=1e-3)
    assert run.profile.peak_sbuf_bytes_per_partition <= CACHE_BUDGET + 8 * 1024


def _transposes_in_column_loops(body: tuple, inside: bool = False) -> list[bool]:
    """For every tensor-engine transpose: whether a column-block loop (``v...``) encloses it."""
    from cuda2nki.ir.nodes import TensorTranspose

    out: list[bool] = []
    for s in body:
        if isinstance(s, Loop):
            out += _transposes_in_column_loops(s.body, inside or s.var.startswith("v"))
        elif isinstance(s, TensorTranspose):
            out.append(inside)
    return out


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("rel", ["linalg/matmul_naive", "linalg/gemm_beta_inplace"])
def test_the_stationary_operand_is_transposed_once_before_the_column_blocks(
    rel: str, target: str
) -> None:
    """A stored [M, K] operand whose whole transpose fits is transposed before the loop over
    column blocks, not once per column block (the number of column blocks depends on N)."""
    cu = CORPUS / f"{rel}.cu"
    res = port_file(cu, binding=load_binding(cu.with_suffix(".toml")), target=target)
    assert res.ok, res.diagnostics
    placed = _transposes_in_column_loops(res.ir_tiles.body)
    assert placed and not any(placed), placed


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("m", "k", "n", "blocks"), [(1000, 8200, 300, 1), (9, 8300, 1100, 3)])
def test_either_order_computes_the_product(m, k, n, blocks, target, tmp_path) -> None:
    """The port branches on the number of column blocks when it is traced: a long K leaves room
    for one 512-wide block of B, so N=300 takes the hoisted order and N=1100 the per-block one;
    both give the product, and B is read from HBM once either way."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((m, k)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((k, n)).astype(ml_dtypes.bfloat16)
    cu = CORPUS / "lowp" / "matmul_bf16.cu"
    res = port_file(cu, binding=load_binding(cu.with_suffix(".toml")), target=target)
    port = tmp_path / "matmul.py"
    port.write_text(res.source)
    run = _simulate(port, "matmul_bf16", {"A": a, "B": b})
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(
        np.asarray(run.outputs, np.float32), want, rtol=1e-2, atol=np.abs(want).max() * 1e-2
    )
    kt = -(-k // 128)
    # A: one load per row tile; B: one per K tile and column block; C: one store per row tile
    row_tiles = -(-m // 128)
    assert run.profile.dma_count == row_tiles + kt * blocks + row_tiles * blocks
