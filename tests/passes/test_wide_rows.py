"""A matmul operand stored with the contraction axis last is transposed onto the partitions from
its rows loaded up to ROW_CHUNK columns per DMA, not one DMA per 128-column piece: a short
contraction (K = 257) moves each row block in one DMA, not three (512, 512 and 4 bytes).  And
the result's row block is staged across its 128-column blocks and stored by one DMA where the
binding's columns fit the staging budget."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.ir.evaluate import evaluate
from cuda2nki.ir.evaluate_tiles import evaluate_tiles
from cuda2nki.ir.nodes import Load, Loop, Store
from cuda2nki.ir.parser import parse
from cuda2nki.passes import DEFAULT_PIPELINE, PassContext, parse_pipeline, run_pipeline
from cuda2nki.passes._wide_rows import ROW_CHUNK

HEAD = (
    "kernel k(a: in float32[M, K], b: in float32[N, K], c: out float32[M, N], M: int32, "
    "N: int32, K: int32) {\n"
)
#: both operands stored [rows, K]: each is transposed (A B^T, a linear layer's weight)
STMTS = [
    "contract: c[i, j] = reduce(add, l < K: a[i, l] * b[j, l]; acc float32) for i < M, j < N",
    "contract: c[r, q] = reduce(add, p < K: b[q, p] * a[r, p]; acc float32) for r < M, q < N",
]


def _lowered(stmt: str, sizes: dict):
    k = parse(HEAD + f"  {stmt};\n}}\n", "k.ir")
    # the binding's sizes: the moving operand is cached transposed when it fits
    return k, run_pipeline(k, parse_pipeline(DEFAULT_PIPELINE), PassContext(scalars=sizes))


def _loads(stmts, out=None) -> list[Load]:
    out = [] if out is None else out
    for s in stmts:
        if isinstance(s, Loop):
            _loads(s.body, out)
        elif isinstance(s, Load):
            out.append(s)
    return out


def _count(kernel, sizes: dict) -> dict[str, int]:
    """DMAs per input at ``sizes`` (loop trips evaluated)."""
    counts: dict[str, int] = {}

    def walk(stmts, mult: int, env: dict) -> None:
        for s in stmts:
            if isinstance(s, Loop):
                lo, hi = s.start.evaluate(env), s.stop.evaluate(env)
                for v in range(lo, hi, s.step):
                    walk(s.body, mult, {**env, s.var: v})
            elif isinstance(s, Load):
                counts[s.src.tensor] = counts.get(s.src.tensor, 0) + mult
            elif isinstance(s, Store):
                counts["stores"] = counts.get("stores", 0) + mult

    walk(kernel.body, 1, dict(sizes))
    return counts


@pytest.mark.parametrize("stmt", STMTS)
@pytest.mark.parametrize(("K", "chunks"), [(96, 1), (257, 1), (2048, 1), (2178, 2)])
def test_each_row_block_is_loaded_in_wide_dmas(stmt: str, K: int, chunks: int) -> None:
    M, N = 130, 70
    k, low = _lowered(stmt, {"M": M, "N": N, "K": K})
    counts = _count(low, {"M": M, "N": N, "K": K})
    assert chunks == -(-K // ROW_CHUNK)
    # one DMA per row block (and chunk of ROW_CHUNK columns) of each operand
    want = {"a": -(-M // 128) * chunks, "b": -(-N // 128) * chunks, "stores": -(-M // 128)}
    assert counts == want, counts
    rng = np.random.default_rng(K)
    ins = {
        "a": rng.standard_normal((M, K)).astype(np.float32),
        "b": rng.standard_normal((N, K)).astype(np.float32),
    }
    want = evaluate(k, ins)["c"]
    np.testing.assert_allclose(evaluate_tiles(low, ins)["c"], want, rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("stmt", STMTS)
def test_wide_results_keep_one_store_per_block(stmt: str) -> None:
    # 5000 fp32 columns are above the staging budget: a store per (row, column) block
    M, N, K = 130, 5000, 96
    k, low = _lowered(stmt, {"M": M, "N": N, "K": K})
    assert _count(low, {"M": M, "N": N, "K": K})["stores"] == 2 * -(-N // 128)
    rng = np.random.default_rng(1)
    ins = {
        "a": rng.standard_normal((M, K)).astype(np.float32),
        "b": rng.standard_normal((N, K)).astype(np.float32),
    }
    want = evaluate(k, ins)["c"]
    np.testing.assert_allclose(evaluate_tiles(low, ins)["c"], want, rtol=2e-4, atol=2e-4)
