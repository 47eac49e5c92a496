"""Classification of differences: each structured defect is recognised, expected variation passes."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.fidelity.compare import compare, localise, vacuous

RNG = np.random.default_rng(0)


def _ref(shape=(300, 700)) -> np.ndarray:
    return RNG.standard_normal(shape)


def test_within_tolerance_is_expected() -> None:
    e = _ref()
    a = e * (1 + 1e-7 * RNG.standard_normal(e.shape))
    c = compare("out", a, e, 1e-5 * np.abs(e) + 1e-6)
    assert c.classification == "expected" and c.mismatches == 0 and c.ok


def test_unwritten_region_is_found_by_nan_canaries() -> None:
    e = _ref()
    a = e.copy()
    a[256:, :] = np.nan
    c = compare("out", a, e, 1e-6)
    assert c.defect == "unwritten" and "30800 elements never written" in c.evidence
    assert c.regions[0].start == (256, 0) and c.regions[0].stop == (300, 700)
    assert (2, 0) in c.tiles and (0, 0) not in c.tiles


@pytest.mark.parametrize("shape", [(300, 64), (129,), (1000, 3)])
def test_wrong_tail_only(shape) -> None:
    e = _ref(shape)
    a = e.copy()
    rows = shape[0]
    a[(rows // 128) * 128 :] += 1.0
    c = compare("out", a, e, 1e-6)
    assert c.defect == "tail", c.evidence
    assert "tail" in c.evidence


def test_transposed() -> None:
    e = _ref((64, 64))
    c = compare("out", e.T.copy(), e, 1e-6)
    assert c.defect == "transposed"


@pytest.mark.parametrize("shift", [1, -1, 128])
def test_shifted(shift) -> None:
    e = _ref((1000,))
    a = np.roll(e, shift)
    c = compare("out", a, e, 1e-6)
    assert c.defect == "shifted" and str(shift) in c.evidence


def test_scaled() -> None:
    e = _ref((50, 50))
    c = compare("out", 0.5 * e, e, 1e-6)
    assert c.defect == "scaled" and "0.5" in c.evidence


def test_some_tiles() -> None:
    e = _ref((512, 1024))
    a = e.copy()
    a[128:256, 512:] += 3
    c = compare("out", a, e, 1e-6)
    assert c.defect == "tiles" and c.tiles == ((1, 1),)


def test_precision_hypothesis() -> None:
    e = _ref((128, 128))
    a = e * (1 + 4e-3 * RNG.uniform(-1, 1, e.shape))
    c = compare("out", a, e, 1e-6 * np.abs(e), alt_tols={"bf16 inputs": 8e-3 * np.abs(e)})
    assert c.classification == "precision" and "bf16" in c.evidence


def test_shape_mismatch_is_a_defect() -> None:
    c = compare("out", np.zeros(10), np.zeros(12), 1e-6)
    assert c.defect == "shape"


def test_metrics() -> None:
    e = np.array([1.0, 2.0, 4.0])
    a = np.array([1.0, 2.5, 4.0])
    c = compare("out", a, e, 0.1)
    assert c.max_abs == pytest.approx(0.5) and c.max_rel == pytest.approx(0.25)
    assert c.normwise == pytest.approx(0.5 / np.sqrt(21))
    assert c.mismatches == 1 and c.mismatch_pct == pytest.approx(100 / 3, rel=1e-3)
    assert c.worst_index == (1,)


def test_localise_regions() -> None:
    bad = np.zeros((10, 10), bool)
    bad[2:4, 3:5] = True
    bad[7, 9] = True
    regions, tiles = localise(bad)
    assert [(r.start, r.stop, r.count) for r in regions] == [
        ((2, 3), (4, 5), 4),
        ((7, 9), (8, 10), 1),
    ]
    assert tiles == ((0, 0),)


def test_vacuity() -> None:
    e = _ref((100,))
    assert vacuous(e, 1e-5, np.random.default_rng(1)) == []
    assert set(vacuous(e, 1e9, np.random.default_rng(1))) == {"zeros", "negated", "shuffled"}


def test_canary_mask_separates_unwritten_from_computed_nan() -> None:
    e = _ref((256, 4))
    a = e.copy()
    a[:10] = np.nan
    mask = np.zeros(e.shape, bool)
    computed = compare("out", a, e, 1e-6, unwritten=mask)
    assert computed.defect == "nonfinite"
    mask[:10] = True
    unwritten = compare("out", a, e, 1e-6, unwritten=mask)
    assert unwritten.defect == "unwritten"


def test_wrong_reduction_axis_is_named() -> None:
    from cuda2nki.fidelity.compare import wrong_axis

    x = RNG.standard_normal((40, 40))
    assert "axis=1" in wrong_axis(x.sum(axis=1), x.sum(axis=0), {"x": x})
    assert wrong_axis(x.sum(axis=0) + 1.0, x.sum(axis=0), {"x": x}) == ""
    short = np.full(60, np.nan)
    y = RNG.standard_normal((30, 60))
    short[:30] = y.max(axis=1)
    assert "max(y, axis=1)" in wrong_axis(short, y.max(axis=0), {"y": y})


def test_every_precision_hypothesis_that_explains_the_error_is_named_tightest_first() -> None:
    e = _ref((128, 128))
    a = e * (1 + 4e-3 * RNG.uniform(-1, 1, e.shape))
    wide, tight = 0.1 * np.abs(e), 8e-3 * np.abs(e)
    c = compare(
        "out", a, e, 1e-6 * np.abs(e), alt_tols={"bf16 accumulation": wide, "bf16 inputs": tight}
    )
    assert c.classification == "precision"
    assert c.evidence.endswith("bf16 inputs (also within the bound for bf16 accumulation)")


def test_subnormal_inputs_rounded_to_bf16_stay_precision_loss() -> None:
    """A subnormal fp32 input rounded to bf16 errs by up to half bf16's subnormal spacing: an
    absolute error the relative bound 2u|a||b| lacks (special-value seeds contain such inputs)."""
    import ml_dtypes

    from cuda2nki.fidelity.tolerance import subnormal_floor

    a = np.full((4, 1), 1e-40, np.float32)
    b = np.full((1, 4), 1e6, np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    bf = a.astype(ml_dtypes.bfloat16).astype(np.float64) @ b.astype(ml_dtypes.bfloat16).astype(
        np.float64
    )
    rel_bound = 4 * 2.0**-8 * np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    assert (np.abs(bf - exact) > rel_bound).any()  # the relative bound alone misses it
    floor = subnormal_floor({"a": a, "b": b}, "bfloat16")
    assert (np.abs(bf - exact) <= rel_bound + floor).all()
    assert floor < 1e-30  # far below any real error


def test_nan_on_one_side_is_no_mismatch_where_the_bound_is_infinite() -> None:
    """The bound is infinite where the reference itself is unknowable (a square root of a sum
    that cancels to about zero): NaN against a number passes there, and nowhere else; a port's
    NaN that marks an element it never wrote still fails."""
    e = np.array([np.nan, 0.5, 1.0, np.nan, 2.0], dtype=np.float32)
    a = np.array([0.5, np.nan, 1.0, np.nan, np.nan], dtype=np.float32)
    tol = np.array([np.inf, np.inf, 1e-6, 1e-6, 1e-6])
    c = compare("y", a, e, tol)
    assert c.mismatches == 1 and c.worst_index == (4,), c  # finite bound: NaN is a mismatch
    unwritten = np.array([False, True, False, False, False])
    c = compare("y", a, e, tol, unwritten=unwritten)
    assert c.mismatches == 2, c  # the never-written element is caught whatever its bound
    assert compare("y", a[:4], e[:4], tol[:4]).classification == "expected"


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_an_infinity_the_bound_reaches_is_no_defect(dtype: type) -> None:
    """A float16 sum near the top of its range: the kernel's narrow partial sums stay finite,
    a port summing in fp32 rounds the total to infinity.  Where the bound reaches past the
    dtype's largest value, that infinity is within it; elsewhere it is a defect."""
    from cuda2nki.fidelity.compare import largest_finite

    top = float(np.finfo(dtype).max)
    e = np.array([[0.9 * top, 1.0, -0.95 * top, 2.0]], dtype=dtype)
    a = e.astype(np.float64)
    a[0, 0], a[0, 2] = np.inf, -np.inf
    tol = np.array([[0.2 * top, 0.01, 0.1 * top, 0.01]])
    c = compare("c", a, e, tol, overflow=largest_finite(e))
    assert c.ok and c.mismatches == 0, c.evidence
    for wrong in ((0, 1, np.inf), (0, 0, -np.inf)):  # unbounded there, or the other sign
        b = a.copy()
        b[wrong[0], wrong[1]] = wrong[2]
        c = compare("c", b, e, tol, overflow=largest_finite(e))
        assert c.defect == "nonfinite" and c.mismatches == 1
    c = compare("c", a, e, tol)  # the dtype unknown: no overflow allowed
    assert c.defect == "nonfinite"
    assert largest_finite(np.arange(3)) is None
