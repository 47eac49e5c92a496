"""C math functions composed with selects (``atan2f``, ``asinf``, ``acosf``, ``copysignf``,
``fmodf``, ``remainderf`` and the classification macros ``isnan``/``isinf``/``isfinite``/
``signbit``) are lifted as data trees (cuda2nki.lift.mathselect): a map of them is a recognised
map with whole-tile instructions, not a literal port.  The formulas keep C's edge values
(signed zeros, infinities, NaN, halfway remainders), checked here in float32 against NumPy."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from cuda2nki.lift import mathselect
from tests.port.test_literal import _kernel

_F = np.float32
_NP = {
    "abs": np.abs, "neg": np.negative, "min": np.minimum, "max": np.maximum, "floor": np.floor,
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "sqrt": np.sqrt,
    "atan": np.arctan, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal, "lor": np.logical_or,
}  # fmt: skip


def _eval(f: object, args: tuple[np.ndarray, ...]) -> np.ndarray:
    """A formula on float32 arrays (comparisons as 0/1 outside a select's condition)."""
    if isinstance(f, str):
        return args[0 if f == "x" else 1]
    if isinstance(f, float | int):
        return _F(f)
    op, *ops = f
    vals = [_eval(o, args) for o in ops]
    if op == "select":
        return np.where(vals[0].astype(bool), vals[1], vals[2]).astype(_F)
    out = _NP[op](*vals)
    return out.astype(_F) if out.dtype != bool or op not in ("lor",) else out


_EDGES = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -3.5, 7.0, 1e-30, -1e-30, 3e38, -3e38,
                   np.inf, -np.inf, np.nan, 6.2831855, -100.25, 1e6, 0.1], _F)  # fmt: skip
_X, _Y = (a.ravel() for a in np.meshgrid(_EDGES, _EDGES))


def _c_remainder(x: float, y: float) -> float:
    """C's ``remainder`` (IEEE; NaN where C gives NaN rather than raising)."""
    if math.isnan(x) or math.isnan(y) or math.isinf(x) or y == 0:
        return math.nan
    return math.remainder(x, y)


_REAL = {
    "atan2": np.arctan2, "copysign": np.copysign, "fmod": np.fmod,
    "remainder": np.vectorize(_c_remainder, otypes=[np.float64]),
    "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite, "signbit": np.signbit,
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(mathselect.FORMULAS))
def test_each_formula_keeps_c_edge_values(name: str) -> None:
    arity, f = mathselect.FORMULAS[name]
    args = (_X, _Y)[:arity]
    if name in ("asin", "acos"):
        args = (np.concatenate([_EDGES, np.linspace(-1, 1, 101, dtype=_F)]),)
    with np.errstate(all="ignore"):
        got = np.asarray(_eval(f, args))
        real = {"asin": np.arcsin, "acos": np.arccos}.get(name) or _REAL[name]
        want = np.asarray(real(*args))
    if name in mathselect.PREDICATES:
        np.testing.assert_array_equal(got.astype(bool), want)
        return
    if name in ("fmod", "copysign", "remainder"):  # exact, signed zeros included
        keep = _exact_range(*args) if name != "copysign" else slice(None)
        got, want = got[keep], want[keep].astype(_F)
        np.testing.assert_array_equal(got, want)
        assert np.array_equal(np.signbit(got[~np.isnan(got)]), np.signbit(want[~np.isnan(want)]))
        return
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)
    assert np.array_equal(np.signbit(got[~np.isnan(got)]), np.signbit(want[~np.isnan(want)]))


def _exact_range(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Where the remainders are exact: a quotient below 2**12 (the split product of ``n * y``
    is exact there), or an infinite or zero operand (C's special cases)."""
    with np.errstate(all="ignore"):
        q = np.abs(x.astype(np.float64) / y.astype(np.float64))
    special = ~np.isfinite(x) | ~np.isfinite(y) | (y == 0)
    return special | (q < 4096)


@pytest.mark.parametrize(
    ("spelling", "arity", "name"),
    [("atan2f", 2, "atan2"), ("std::atan2", 2, "atan2"), ("__isnanf", 1, "isnan"),
     ("__finitef", 1, "isfinite"), ("isinf", 1, "isinf"), ("remainderf", 2, "remainder"),
     ("fmod", 2, "fmod"), ("copysign", 2, "copysign"), ("asinf", 1, "asin")],
)  # fmt: skip
def test_spellings_of_one_function(spelling: str, arity: int, name: str) -> None:
    assert mathselect.formula(spelling, arity) == (name, mathselect.FORMULAS[name][1])


def test_other_calls_are_not_select_compositions() -> None:
    assert mathselect.formula("atanf", 1) is None  # composed without a select
    assert mathselect.formula("atan2f", 1) is None
    assert mathselect.formula("expf", 1) is None


_PARAMS = (
    'dx = { shape = ["n"], dtype = "float32", role = "out" }\n'
    'x = { shape = ["n"], dtype = "float32", role = "in" }\n'
    'dy = { shape = ["n"], dtype = "float32", role = "in" }\nn = 300'
)

#: maps of the functions: guard, early return, grid-stride loop, early exit with stores
MAPS = {
    "guard_atan2_copysign": """
__global__ void kern(float* dx, const float* x, const float* dy, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dx[i] = atan2f(dy[i], x[i]) + copysignf(fabsf(x[i]), dy[i] - 0.25f);
}
""",
    "early_return_double_names": """
__global__ void kern(float* dx, const float* x, const float* dy, int n) {
    int idx = threadIdx.x + blockIdx.x * blockDim.x;
    if (idx >= n) return;
    float a = x[idx] * 7.0f;
    dx[idx] = fmod(a, 1.5f) + remainder(a, dy[idx] + 2.0f) + (isnan(a) ? 1.0f : 0.0f);
}
""",
    "grid_stride_inverse_trig": """
__global__ void kern(float* dx, const float* x, const float* dy, int n) {
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += blockDim.x * gridDim.x) {
        float c = fminf(1.0f, fmaxf(-1.0f, x[k]));
        float s = asinf(c) - acos(c * 0.5f);
        dx[k] = signbit(dy[k]) ? -s : s + (isinf(dy[k]) ? 0.0f : 1.0f);
    }
}
""",
    "early_exit_with_stores": """
__global__ void kern(float* dx, const float* x, const float* dy, int n) {
    int t = blockDim.x * blockIdx.x + threadIdx.x;
    if (t >= n) return;
    float v = x[t] - 0.5f;
    if (!__finitef(dy[t]) || v > 0.3f) {
        dx[t] = -1.0f;
        return;
    }
    dx[t] = std::fmod(v * 9.0f, dy[t] + 3.0f);
}
""",
}


@pytest.mark.parametrize("name", sorted(MAPS))
def test_lifted_maps_with_select_compositions_pass_the_check(tmp_path: Path, name: str) -> None:
    from cuda2nki import api

    cu = _kernel(tmp_path, MAPS[name], "kern", '"ceil_div(n, 128)"', "128", _PARAMS,
                 ["n = 129", "n = 7"])  # fmt: skip
    res = api.port(cu)
    assert res.source is not None and not res.literal, [d.message for d in res.diagnostics]
    assert any(d.code == "C2N2001" and "as map" in d.message for d in res.diagnostics)
    port = tmp_path / "kern.py"
    port.write_text(res.source)
    rep = api.check(cu, port, seeds=2)
    assert rep.numerics_outcome == "pass", rep


_SIM_EDGES = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -3.5, 1e-30, -1e-30, 3e38, -3e38,
                       np.inf, -np.inf, np.nan, 1e-45, 6.2831855, -100.25], _F)  # fmt: skip


@pytest.mark.parametrize(
    ("call", "real"),
    [("fmodf(x[i], dy[i])", np.fmod), ("remainderf(x[i], dy[i])", None),
     ("atan2f(x[i], dy[i])", np.arctan2), ("copysignf(x[i], dy[i])", np.copysign),
     ("(float)isnan(x[i]) + 2.0f * isinf(dy[i]) + 4.0f * signbit(x[i]) + 8.0f * isfinite(dy[i])",
      lambda x, y: np.isnan(x) + 2.0 * np.isinf(y) + 4.0 * np.signbit(x) + 8.0 * np.isfinite(y))],
)  # fmt: skip
def test_lifted_ports_keep_the_edge_values(call: str, real: object, tmp_path: Path) -> None:
    """The lifted port itself (its simplified tree on the simulator) on signed zeros,
    subnormals, infinities and NaN gives C's values."""
    from cuda2nki import api
    from cuda2nki.nkisim.importer import load_kernel
    from cuda2nki.nkisim.kernel import simulate_kernel

    src = (
        "__global__ void kern(float* dx, const float* x, const float* dy, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"    if (i < n) dx[i] = {call};\n}}\n"
    )
    cu = _kernel(tmp_path, src, "kern", '"ceil_div(n, 128)"', "128", _PARAMS)
    res = api.port(cu)
    assert res.source is not None and not res.literal, [d.message for d in res.diagnostics]
    port = tmp_path / "kern.py"
    port.write_text(res.source)
    x, y = (a.ravel().astype(_F) for a in np.meshgrid(_SIM_EDGES, _SIM_EDGES))
    got = np.asarray(simulate_kernel(load_kernel(port), [x, y]).outputs).ravel()
    with np.errstate(all="ignore"):
        want = (real or np.vectorize(_c_remainder, otypes=[np.float64]))(x, y).astype(_F)
        keep = _exact_range(x, y) if "fmod" in call or "remainder" in call else slice(None)
    if "atan2" in call:
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)
    else:
        np.testing.assert_array_equal(got[keep], want[keep])
    assert np.array_equal(np.signbit(got[keep])[~np.isnan(want[keep])],
                          np.signbit(want[keep])[~np.isnan(want[keep])])  # fmt: skip
