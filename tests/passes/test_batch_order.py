"""Row-tile nests put their batch loops inside the tile loops when a tile's operand is the same
for every batch element (a positional embedding added to every sequence): it is loaded once per
tile, not once per batch element.  A gather whose offsets are computed inside the batch loop
stays there (hoist-loads never lifts a load above the tile it reads its offsets from)."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.ir.evaluate import evaluate
from cuda2nki.ir.evaluate_tiles import evaluate_tiles
from cuda2nki.ir.nodes import Load, Loop
from cuda2nki.ir.parser import parse
from cuda2nki.passes import PassContext, parse_pipeline, run_pipeline
from cuda2nki.passes._batch_order import shared_across_batch

HEAD = (
    "kernel k(out: out float32[B, T, C], ids: in int32[B, T], wte: in float32[V, C], "
    "wpe: in float32[T, C], x: in float32[B, T, C], B: int32, T: int32, C: int32, V: int32) {\n"
)
PIPE = (
    "guards-to-domains,choose-layout,tile-sizes,coalesce-dma,dtype-policy,lower-tiles,"
    "fuse-loops,hoist-loads,dedupe-loads"
)

SHARED = [
    "gather: out[i, j, k] = wte[$(min(max(ids[i, j], 0), index(-1 + V))), k] + wpe[j, k] "
    "for i < B, j < T, k < C",
    "map: out[b, t, c] = x[b, t, c] * wpe[t, c] for b < B, t < T, c < C",
    "map: out[n, r, q] = wpe[r, q] - x[n, r, q] for n < B, r < T, q < C",
]
PER_BATCH = [
    "map: out[b, t, c] = x[b, t, c] * 2.0 for b < B, t < T, c < C",
    "gather: out[i, j, k] = wte[$(ids[i, j]), k] for i < B, j < T, k < C",
]


def _kernel(stmt: str):
    return parse(HEAD + f"  {stmt};\n}}\n", "k.ir")


def _loads_in(stmts, tensor: str, depth: int = 0, out=None) -> list[int]:
    """The loop depth of every load from ``tensor``."""
    out = [] if out is None else out
    for s in stmts:
        if isinstance(s, Loop):
            _loads_in(s.body, tensor, depth + 1, out)
        elif isinstance(s, Load) and s.src.tensor == tensor:
            out.append(depth)
    return out


def _inputs() -> dict:
    rng = np.random.default_rng(0)
    B, T, C, V = 3, 130, 6, 11
    return {
        "ids": rng.integers(-2, V + 2, (B, T)).astype(np.int32),
        "wte": rng.standard_normal((V, C)).astype(np.float32),
        "wpe": rng.standard_normal((T, C)).astype(np.float32),
        "x": rng.standard_normal((B, T, C)).astype(np.float32),
    }


@pytest.mark.parametrize("stmt", SHARED)
def test_an_operand_shared_by_the_batch_is_loaded_once_per_tile(stmt: str) -> None:
    k = _kernel(stmt)
    comp = k.body[0]
    assert shared_across_batch([comp], {comp.domain.axes[0].name})
    low = run_pipeline(k, parse_pipeline(PIPE), PassContext())
    # the tile loops hold the wpe load; the batch loop is inside them
    depths = _loads_in(low.body, "wpe")
    others = _loads_in(low.body, "x") + _loads_in(low.body, "ids")
    assert depths and others and max(depths) < min(others), (depths, others)
    want = evaluate(k, _inputs())["out"]
    np.testing.assert_allclose(evaluate_tiles(low, _inputs())["out"], want, rtol=1e-6)


@pytest.mark.parametrize("stmt", PER_BATCH)
def test_operands_that_follow_the_batch_keep_it_outermost(stmt: str) -> None:
    comp = _kernel(stmt).body[0]
    assert not shared_across_batch([comp], {comp.domain.axes[0].name})


def test_a_gather_stays_below_the_offsets_it_reads() -> None:
    k = _kernel(SHARED[0])
    low = run_pipeline(k, parse_pipeline(PIPE), PassContext())
    assert min(_loads_in(low.body, "wte")) >= max(_loads_in(low.body, "ids"))
