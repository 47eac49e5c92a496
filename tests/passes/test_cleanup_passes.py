"""fold-peeled, dead-stores and dedupe-loads: what they rewrite, what they must leave alone, and
that the rewritten kernel means the same (IR evaluator) and ports to a clean tile program."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.ir.evaluate import evaluate
from cuda2nki.ir.nodes import Alloc, Load, Loop, Reduce
from cuda2nki.ir.parser import parse
from cuda2nki.ir.printer import to_text
from cuda2nki.passes import PassContext, parse_pipeline, run_pipeline
from cuda2nki.passes._analysis import walk

HEAD = "kernel k(x: in float32[R, C], y: out float32[R, C], R: int32, C: int32) {\n"


def _kernel(*stmts: str):
    return parse(HEAD + "".join(f"  {s};\n" for s in stmts) + "}\n", "k.ir")


def _run(kernel, spec: str):
    return run_pipeline(kernel, parse_pipeline(spec), PassContext())


def _same_meaning(before, after, shape=(5, 7)) -> None:
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    a = evaluate(before, {"x": x})["y"]
    b = evaluate(after, {"x": x})["y"]
    np.testing.assert_allclose(a, b, rtol=1e-12)


PEELED = [
    # running max from the first element, peeled on the left
    "y[i, j] = x[i, j] - max(x[i, 0], reduce(max, k < -1 + C: x[i, 1 + k])) for i < R, j < C",
    # peeled on the right, min
    "y[i, j] = x[i, j] - min(reduce(min, q < -1 + C: x[i, 1 + q]), x[i, 0]) for i < R, j < C",
    # a sum started from element 2 (the first two columns are something else)
    "y[i, j] = x[i, j] + (x[i, 2] + reduce(add, k < -3 + C: x[i, 3 + k])) for i < R, j < C",
]


@pytest.mark.parametrize("stmt", PEELED)
def test_peeled_first_element_folds_into_the_reduction(stmt: str) -> None:
    before = _kernel("softmax: " + stmt)
    after = _run(before, "fold-peeled")
    reds = [e for e in walk(after.body[0].expr) if isinstance(e, Reduce)]
    assert len(reds) == 1 and not any(
        type(e).__name__ == "Binary" and e.op.value in ("max", "min")
        for e in walk(after.body[0].expr)
    ), to_text(after)
    _same_meaning(before, after)
    _same_meaning(before, after, shape=(3, 4))  # a row one longer than the peeled start


@pytest.mark.parametrize(
    "stmt",
    [
        # another element than the one before the reduction's range
        "y[i, j] = max(x[i, 2], reduce(max, k < -1 + C: x[i, 1 + k])) for i < R, j < C",
        # different ops
        "y[i, j] = max(x[i, 0], reduce(add, k < -1 + C: x[i, 1 + k])) for i < R, j < C",
        # the peeled element of another row
        "y[i, j] = max(x[0, 0], reduce(max, k < -1 + C: x[i, 1 + k])) for i < R, j < C",
        # subtraction is not a fold
        "y[i, j] = x[i, 0] - reduce(add, k < -1 + C: x[i, 1 + k]) for i < R, j < C",
    ],
)
def test_non_peeled_shapes_are_left_alone(stmt: str) -> None:
    before = _kernel("map: " + stmt)
    assert _run(before, "fold-peeled") == before


def test_overwritten_store_is_dropped() -> None:
    before = _kernel(
        "softmax: y[i, j] = exp(x[i, j]) for i < R, j < C",
        "softmax: y[l, m] = exp(x[l, m]) / reduce(add, n < C: exp(x[l, n])) for l < R, m < C",
    )
    after = _run(before, "dead-stores")
    assert len(after.body) == 1 and after.body[0] == before.body[1]
    _same_meaning(before, after)


@pytest.mark.parametrize(
    "second",
    [
        # reads what the first statement wrote
        "map: y[l, m] = y[l, m] * 2.0 for l < R, m < C",
        # writes only part of it
        "map: y[l, m] = x[l, m] for l < R, m < -1 + C",
        # accumulates into it
        "map: y[l, m] add= x[l, m] for l < R, m < C",
    ],
)
def test_stores_that_are_read_or_partly_overwritten_stay(second: str) -> None:
    before = _kernel("map: y[i, j] = exp(x[i, j]) for i < R, j < C", second)
    assert len(_run(before, "dead-stores").body) == 2


def _loads(stmts) -> list:
    out = []
    for s in stmts:
        if isinstance(s, Loop):
            out += _loads(s.body)
        elif isinstance(s, Load):
            out.append(s)
    return out


def test_one_load_per_row_window_after_dedupe() -> None:
    k = _kernel(
        "softmax: y[i, j] = exp(x[i, j] - reduce(max, k < C: x[i, k]))"
        " / reduce(add, n < C: exp(x[i, n] - reduce(max, k < C: x[i, k]))) for i < R, j < C"
    )
    base = "guards-to-domains,choose-layout,tile-sizes,coalesce-dma,dtype-policy,lower-tiles"
    plain = _run(k, base)
    deduped = _run(k, base + ",dedupe-loads")
    # the row tile read under three axis names (j, k, n) is one load after dedupe; the lowering
    # itself already shares the reads along the row whatever the axis is called
    assert len(_loads(deduped.body)) == 1 <= len(_loads(plain.body))
    names = {s.name for s in _allocs(deduped.body)}
    for s in _walk_all(deduped.body):  # no view of a dropped tile is left behind
        for x in _views(s):
            assert x.tensor in names or x.tensor in ("x", "y"), x


def _allocs(stmts):
    return [s for s in _walk_all(stmts) if isinstance(s, Alloc)]


def _walk_all(stmts):
    for s in stmts:
        yield s
        if isinstance(s, Loop):
            yield from _walk_all(s.body)


def _views(node):
    from cuda2nki.ir.nodes import View

    if isinstance(node, View):
        yield node
    elif isinstance(node, tuple):
        for x in node:
            yield from _views(x)
    elif hasattr(node, "__dataclass_fields__") and not isinstance(node, Loop):
        for f in node.__dataclass_fields__:
            yield from _views(getattr(node, f))


BCAST_HEAD = "kernel k(x: in float32[n], w: in float32[4], y: out float32[n], n: int32) {\n"
BCAST_STMTS = [
    # Horner with coefficients from memory: four scalar broadcasts
    "map: y[i] = ((w[3] * x[i] + w[2]) * x[i] + w[1]) * x[i] + w[0] for i < n",
    # one coefficient read twice, another once
    "map: y[q] = w[1] * x[q] - w[1] / (w[0] + x[q]) for q < n",
    # a single scale
    "map: y[t] = x[t] * w[2] for t < n",
]
PIPE = (
    "guards-to-domains,merge-lanes,choose-layout,tile-sizes,coalesce-dma,dtype-policy,lower-tiles"
)


def _bcast_kernel(stmt: str):
    return parse(BCAST_HEAD + f"  {stmt};\n}}\n", "k.ir")


@pytest.mark.parametrize("stmt", BCAST_STMTS)
def test_broadcasts_loaded_before_the_loops_serve_the_ragged_tails(stmt: str) -> None:
    k = _bcast_kernel(stmt)
    plain = _run(k, PIPE + ",hoist-loads")
    deduped = _run(k, PIPE + ",hoist-loads,dedupe-loads")
    coeffs = {str(s.src) for s in _loads(deduped.body) if s.src.tensor == "w"}
    w_loads = [s for s in _loads(deduped.body) if s.src.tensor == "w"]
    assert len(w_loads) == len(coeffs)  # each coefficient loaded once, for every block
    assert all(s in deduped.body for s in w_loads)  # ... before the loops
    assert len(_loads(deduped.body)) < len(_loads(plain.body))
    names = {s.name for s in _allocs(deduped.body)}
    for s in _walk_all(deduped.body):
        for x in _views(s):
            assert x.tensor in names or x.tensor in ("x", "w", "y"), x
    from cuda2nki.ir.evaluate_tiles import evaluate_tiles

    rng = np.random.default_rng(2)
    for n in (1, 129, 1000, 128 * 512 + 3):
        inputs = {"x": rng.standard_normal(n).astype(np.float32)}
        inputs["w"] = rng.standard_normal(4).astype(np.float32)
        want = evaluate(k, inputs, {"n": n})["y"]
        got = evaluate_tiles(deduped, inputs, {"n": n})["y"]
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_a_broadcast_is_reloaded_after_its_tensor_is_stored() -> None:
    """A store to the broadcast's tensor between the loops: the tail must load it again."""
    from cuda2nki.ir.nodes import Store

    k = _bcast_kernel(BCAST_STMTS[2])
    sched = _run(k, PIPE + ",hoist-loads")
    loops = [p for p, s in enumerate(sched.body) if isinstance(s, Loop)]
    first_store = next(s for s in _walk_all(sched.body) if isinstance(s, Store))
    poke = first_store.replace(dst=first_store.dst.replace(tensor="w"))
    body = list(sched.body)
    body.insert(loops[1], poke)  # after the first loop, before the tails
    poked = sched.replace(body=tuple(body))
    deduped = _run(poked, "dedupe-loads")
    before_tail = [s for s in _loads(deduped.body[: loops[1]]) if s.src.tensor == "w"]
    after = [s for s in _loads(deduped.body[loops[1] :]) if s.src.tensor == "w"]
    assert before_tail and after  # the tails still load their own copy
