"""dedupe-loads on tiles filled by runs of statements (a memset and guarded DMAs of a ragged
block): a second run filling a tile from the same window the same way is dropped, its reads
read the first tile; runs that differ, or are separated by a store to their tensor, stay."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.ir.evaluate import evaluate
from cuda2nki.ir.evaluate_tiles import evaluate_tiles
from cuda2nki.ir.nodes import Load, Loop, Memset, Store
from cuda2nki.ir.parser import parse
from cuda2nki.passes import PassContext, parse_pipeline, run_pipeline
from cuda2nki.rewrite import nodes

HEAD = (
    "kernel k(v: in float32[n], a: out float32[(G - 1 + n) // G], "
    "b: out int32[(G - 1 + n) // G], n: int32) {\n"
)
UPTO = "fold-peeled,drop-identities,unit-reductions,split-sums,factor-scales,dead-stores,"
UPTO += "hoist-guards,guards-to-domains,split-rotations,merge-lanes,one-hot-gather,split-flat,"
UPTO += "choose-layout,tile-sizes,coalesce-dma,dtype-policy,clamp-reads,lower-tiles,fuse-loops,"
UPTO += "hoist-loads"

# per-group results of a ragged vector (groups of G, the last one short), each statement
# reading the group's window under its own names: every one loads a zero-padded tile
SPELLINGS = [
    (
        32,
        "reduce: a[i] = reduce(add, j < 32: v[j + 32 * i]; acc float32; where index(j + 32 * i)"
        " < index(n)) for i < (31 + n) // 32",
        "reduce: b[k] = reduce(add, l < 32: cast(select(index(l + 32 * k) < index(n), "
        "v[l + 32 * k], 0.0) > 0.0, int32)) for k < (31 + n) // 32",
    ),
    (
        16,
        "reduce: a[g] = reduce(add, q < 16: select(index(16 * g + q) < index(n), "
        "2.0 * v[16 * g + q], 0.0)) for g < (15 + n) // 16",
        "reduce: b[h] = reduce(min, r < 16: select(index(16 * h + r) < index(n), "
        "cast(abs(v[16 * h + r]) < 2.5, int32), 1)) for h < (15 + n) // 16",
    ),
    (
        8,
        "reduce: a[w] = reduce(add, e < 8: v[8 * w + e] * v[8 * w + e]; acc float32; "
        "where index(8 * w + e) < index(n)) for w < (7 + n) // 8",
        "reduce: b[w] = reduce(max, e < 8: select(index(8 * w + e) < index(n), "
        "cast(v[8 * w + e] > 1.0, int32), 0)) for w < (7 + n) // 8",
    ),
]


def _kernel(group: int, *stmts: str):
    head = HEAD.replace("G - 1", str(group - 1)).replace("// G", f"// {group}")
    return parse(head + "".join(f"  {s};\n" for s in stmts) + "}\n", "k.ir")


def _run(kernel, spec: str):
    return run_pipeline(kernel, parse_pipeline(spec), PassContext())


def _v_loads(kernel) -> list[Load]:
    return [s for s in nodes(kernel.body) if isinstance(s, Load) and s.src.tensor == "v"]


def _memsets(kernel) -> int:
    return sum(isinstance(s, Memset) for s in nodes(kernel.body))


def _same_results(before, after, group: int) -> None:
    rng = np.random.default_rng(5)
    for n in (1, group + 3, 4 * group, 1000, 128 * group + 5):
        inputs = {"v": rng.uniform(-3, 3, n).astype(np.float32)}
        want = evaluate(before, inputs, {"n": n})
        got = evaluate_tiles(after, inputs, {"n": n})
        for name in ("a", "b"):
            np.testing.assert_allclose(got[name], want[name], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(("group", "first", "second"), SPELLINGS)
def test_a_second_padded_run_of_the_same_window_is_dropped(
    group: int, first: str, second: str
) -> None:
    k = _kernel(group, first, second)
    plain = _run(k, UPTO)
    deduped = _run(k, UPTO + ",dedupe-loads")
    assert _memsets(plain) > 0, "the windows are no longer filled by padded runs"
    assert 0 < len(_v_loads(deduped)) < len(_v_loads(plain))
    assert len(_v_loads(deduped)) * 2 == len(_v_loads(plain))  # one run of the two
    _same_results(k, deduped, group)


def test_runs_of_different_windows_stay() -> None:
    """The second statement reads the next group's window (``v[... + 32]``): not the same run."""
    first = SPELLINGS[0][1]
    shifted = SPELLINGS[0][2].replace("l + 32 * k) < index(n)", "l + 32 * k + 32) < index(n)")
    shifted = shifted.replace("v[l + 32 * k]", "v[l + 32 * k + 32]")
    k = _kernel(32, first, shifted)
    plain = _run(k, UPTO)
    deduped = _run(k, UPTO + ",dedupe-loads")
    assert len(_v_loads(deduped)) == len(_v_loads(plain))


def test_runs_padding_with_different_values_stay() -> None:
    """A maximum pads its window with -inf, a count with 0: two different tiles."""
    first = (
        "reduce: a[g] = reduce(max, q < 16: select(index(16 * g + q) < index(n), v[16 * g + q],"
        " -inf)) for g < (15 + n) // 16"
    )
    k = _kernel(16, first, SPELLINGS[1][2])
    plain = _run(k, UPTO)
    deduped = _run(k, UPTO + ",dedupe-loads")
    assert len(_v_loads(deduped)) == len(_v_loads(plain))
    _same_results(k, deduped, 16)


def test_a_store_to_the_window_between_the_runs_keeps_the_second() -> None:
    k = _kernel(32, *SPELLINGS[0][1:])
    sched = _run(k, UPTO)
    loop = next(s for s in sched.body if isinstance(s, Loop))
    store = next(s for s in nodes(loop.body) if isinstance(s, Store))
    poke = store.replace(dst=store.dst.replace(tensor="v"))
    body = list(loop.body)
    body.insert(body.index(store) + 1, poke)  # between the first run and the second
    poked = sched.replace(
        body=tuple(loop.replace(body=tuple(body)) if s is loop else s for s in sched.body)
    )
    deduped = _run(poked, "dedupe-loads")
    assert len(_v_loads(deduped)) == len(_v_loads(poked))
