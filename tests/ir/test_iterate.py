"""``iterate``: an elementwise loop-carried iteration with a data-dependent exit a counter bounds
(text round trip, verifier, evaluator in both modes, tile evaluator of the lowered loop)."""

from __future__ import annotations

import numpy as np

from cuda2nki.ir.evaluate import analyse, evaluate
from cuda2nki.ir.evaluate_tiles import evaluate_tiles
from cuda2nki.ir.parser import parse
from cuda2nki.ir.printer import to_text
from cuda2nki.ir.verify import verify

NEWTON = """
kernel newton(x: in float32[N], r: out float32[N], k: out int32[N], N: int32) {
  map: r[i] = iterate(it: int32 = 0 -> carry(it, int32) + 1,
      g: float32 = select(x[i] > 1.0, x[i], 1.0) -> 0.5 * (carry(g, float32) + x[i] / carry(g, float32));
      abs(0.5 * (carry(g, float32) + x[i] / carry(g, float32)) - carry(g, float32))
        > 1e-6 * (0.5 * (carry(g, float32) + x[i] / carry(g, float32))) && carry(it, int32) + 1 < 60;
      60; g) for i < N;
  map: k[i] = iterate(it: int32 = 0 -> carry(it, int32) + 1,
      g: float32 = select(x[i] > 1.0, x[i], 1.0) -> 0.5 * (carry(g, float32) + x[i] / carry(g, float32));
      abs(0.5 * (carry(g, float32) + x[i] / carry(g, float32)) - carry(g, float32))
        > 1e-6 * (0.5 * (carry(g, float32) + x[i] / carry(g, float32))) && carry(it, int32) + 1 < 60;
      60; it) for i < N;
}
"""

#: a while loop: elements whose test fails before the first iteration run none (``enter``)
HALVE = """
kernel halve(x: in float32[N], y: out float32[N], c: out int32[N], T: int32, N: int32) {
  map: y[i] = iterate(v: float32 = x[i] -> carry(v, float32) * 0.5, n: int32 = 0 -> carry(n, int32) + 1;
      carry(v, float32) * 0.5 > 1.0 && carry(n, int32) + 1 < T; T; v; x[i] > 1.0) for i < N;
  map: c[i] = iterate(v: float32 = x[i] -> carry(v, float32) * 0.5, n: int32 = 0 -> carry(n, int32) + 1;
      carry(v, float32) * 0.5 > 1.0 && carry(n, int32) + 1 < T; T; n; x[i] > 1.0) for i < N;
}
"""


def _newton_ref(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = x.astype(np.float32)
    g = np.where(a > 1, a, np.float32(1.0)).astype(np.float32)
    it = np.zeros(a.shape, np.int32)
    active = np.ones(a.shape, bool)
    for _ in range(60):
        new = (np.float32(0.5) * (g + a / g)).astype(np.float32)
        go = (np.abs(new - g) > np.float32(1e-6) * new) & (it + 1 < 60)
        g = np.where(active, new, g)
        it = np.where(active, it + 1, it)
        active &= go
    return g, it


def test_iterations_print_parse_and_verify() -> None:
    for text in (NEWTON, HALVE):
        k = parse(text)
        assert verify(k) == []
        assert parse(to_text(k)) == k
        assert parse(to_text(k, locs=False)) == k


def test_verifier_findings() -> None:
    bad = HALVE.replace("T; v; x[i] > 1.0", "T; w; carry(v, float32) > 1.0")
    codes = [d.code for d in verify(parse(bad))]
    assert codes.count("C2N2445") == 2  # result 'w' is no variable; carry() before the loop
    bad = HALVE.replace("-> carry(n, int32) + 1;", "-> carry(n, float32) + 1;", 1)
    assert "C2N2445" in [d.code for d in verify(parse(bad))]


def test_every_element_iterates_until_its_own_condition_fails() -> None:
    x = np.random.default_rng(2).uniform(0.001, 1000.0, 700).astype(np.float32)
    k = parse(NEWTON)
    g, it = _newton_ref(x)
    out = evaluate(k, {"x": x}, mode="declared")
    np.testing.assert_array_equal(out["r"], g)
    np.testing.assert_array_equal(out["k"], it)
    exact = evaluate(k, {"x": x}, mode="fp64")
    np.testing.assert_allclose(exact["r"], np.sqrt(x.astype(np.float64)), rtol=1e-9)
    bound = analyse(k, {"x": x}).bound["r"]
    assert np.all(np.isfinite(bound)) and np.all(np.abs(out["r"] - exact["r"]) <= bound)


def test_a_while_loop_may_run_no_iteration() -> None:
    x = np.array([0.5, 1.0, 3.0, 40.0, 1e6], np.float32)
    out = evaluate(parse(HALVE), {"x": x}, {"T": 8}, mode="declared")
    # while (v > 1 && n < 8) { v *= 0.5; ++n; }
    np.testing.assert_array_equal(
        out["y"], np.array([0.5, 1.0, 0.75, 0.625, 1e6 / 256], np.float32)
    )
    np.testing.assert_array_equal(out["c"], [0, 0, 2, 6, 8])


def test_the_lowered_loop_runs_once_for_both_results() -> None:
    from cuda2nki.ir.nodes import Const, Loop
    from cuda2nki.passes import PassContext, parse_pipeline, run_pipeline

    k = parse(NEWTON)
    tiles = run_pipeline(k, parse_pipeline(), PassContext())
    assert verify(tiles) == []
    x = np.random.default_rng(4).uniform(0.001, 1000.0, 300).astype(np.float32)
    out = evaluate_tiles(tiles, {"x": x})
    g, it = _newton_ref(x)
    np.testing.assert_array_equal(out["r"], g)  # the division is rounded as IEEE's
    np.testing.assert_array_equal(out["k"], it)

    def loops(body) -> list:
        found = []
        for s in body:
            if isinstance(s, Loop):
                found.append(s)
                found += loops(s.body)
        return found

    steps = [lp for lp in loops(tiles.body) if lp.stop == Const(60)]
    chunks = [lp for lp in tiles.body if isinstance(lp, Loop)]
    assert len(steps) == len(chunks)
