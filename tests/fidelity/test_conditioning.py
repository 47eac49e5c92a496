"""Kernels without an IR bound: their conditioning, measured by fp64 runs on inputs moved by one
fp32 ulp, widens the tolerance where valid fp32 results spread (a difference of nearly equal
products; a growing recurrence summed with cancelling signs), and nowhere else: a wrong value
still fails."""

from __future__ import annotations

import numpy as np

from cuda2nki.fidelity import conditioning
from cuda2nki.fidelity.compare import compare
from cuda2nki.fidelity.tolerance import empirical_tolerance


def _cross(ins, dtype, fused=False):
    """``a*b - c*d`` per element; ``fused``: the first product kept exact into the subtraction
    (an FMA, as a port's engine or another compiler may do) -- another valid rounding order."""
    a, b, c, d = (np.asarray(ins[k], np.float64) for k in "abcd")
    if dtype == np.float64:
        return a * b - c * d
    cd = (c * d).astype(np.float32).astype(np.float64)
    if fused:
        return (a * b - cd).astype(np.float32)
    return ((a * b).astype(np.float32).astype(np.float64) - cd).astype(np.float32)


def _inputs(seed=4, n=4096):
    """Mostly well-conditioned elements; one in 200 has a large ``a*b`` and ``c*d``
    within 1e-4 of it."""
    rng = np.random.default_rng(seed)
    a, b, c, d = (rng.standard_normal(n) for _ in range(4))
    near = np.arange(0, n, 200)
    a[near] *= 1000.0
    c[near] = a[near] * b[near] / d[near] * (1 + 1e-4 * rng.standard_normal(near.size))
    return {k: v.astype(np.float32) for k, v in zip("abcd", (a, b, c, d))}


def _run64(arrays):
    return {"out": _cross(arrays, np.float64)}


def _judge(port):
    ins = _inputs()
    ref = _cross(ins, np.float32)
    exact = _run64(ins)["out"]
    tol = empirical_tolerance(ref, exact, "float32")
    c = compare("out", port, ref, tol.bound)
    sens = conditioning.sensitivity(_run64, ins, set("abcd"), "out", exact)
    return c, conditioning.settle(c, port, ref, exact, tol.bound, sens)


def test_another_rounding_order_of_an_ill_conditioned_difference_is_expected() -> None:
    port = _cross(_inputs(), np.float32, fused=True)
    before, after = _judge(port)
    assert not before.ok  # the kernel's own elementwise error is too tight a yardstick here
    assert after.ok and after.classification == "expected"
    assert "ill-conditioned" in after.evidence


def test_a_wrong_term_still_fails_however_the_kernel_is_conditioned() -> None:
    port = _cross(_inputs(), np.float32, fused=True)
    port[7:40] = port[7:40] * np.float32(1.001)  # 0.1% off in well-conditioned elements
    before, after = _judge(port)
    assert not before.ok and not after.ok


def test_perturbation_moves_float_inputs_by_one_ulp_and_leaves_the_rest() -> None:
    a = np.array([1.0, -2.5, 0.0, 3e-39], np.float32)
    n = np.array([1, 2, 3], np.int32)
    out = conditioning.perturbed({"a": a, "n": n, "o": a.copy()}, {"a", "n"}, seed=1)
    up, down = np.nextafter(a, np.float32(np.inf)), np.nextafter(a, np.float32(-np.inf))
    assert np.all((out["a"] == up) | (out["a"] == down))
    assert out["n"] is n and np.array_equal(out["o"], a)
