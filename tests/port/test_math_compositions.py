"""CUDA math functions NKI has no activation for (``coshf``, ``sinhf``, ``expm1f``, ``log1pf``,
``erfcf``, ``normcdff``, ``cbrtf``, ...) are ported as compositions of those it has, by the
lifter and by the literal lowering alike, and checked against the SIMT interpreter's real
functions; a function outside the table is still refused, naming it."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from cuda2nki.lift import mathcompose
from tests.port.test_literal import _kernel, _matches

#: the real functions, for the identities' own test
_REAL = {
    "cosh": np.cosh, "sinh": np.sinh, "expm1": np.expm1, "log1p": np.log1p, "exp2": np.exp2,
    "exp10": lambda x: np.power(10.0, x), "log2": np.log2, "log10": np.log10,
    "erfc": np.vectorize(math.erfc), "normcdf": lambda x: 0.5 * np.vectorize(math.erfc)(-x / math.sqrt(2)),
    "cbrt": np.cbrt, "rcbrt": lambda x: 1.0 / np.cbrt(x), "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "sinpi": lambda x: np.sin(np.pi * x),
    "cospi": lambda x: np.cos(np.pi * x), "hypot": np.hypot, "fdim": lambda x, y: np.maximum(x - y, 0),
    "atan": np.arctan, "rhypot": lambda x, y: 1.0 / np.hypot(x, y),
    "norm3d": lambda x, y, z: np.sqrt(x * x + y * y + z * z),
    "rnorm3d": lambda x, y, z: 1.0 / np.sqrt(x * x + y * y + z * z),
    "norm4d": lambda x, y, z, w: np.hypot(np.hypot(x, y), np.hypot(z, w)),
    "rnorm4d": lambda x, y, z, w: 1.0 / np.hypot(np.hypot(x, y), np.hypot(z, w)),
}  # fmt: skip

_NP = {
    "exp": np.exp, "log": np.log, "neg": np.negative, "abs": np.abs, "sign": np.sign,
    "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "erf": np.vectorize(math.erf),
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "pow": np.power,
    "max": np.maximum, "min": np.minimum, "atan": np.arctan, "gt": np.greater,
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(mathcompose.FORMULAS))
def test_each_composition_is_its_function(name: str) -> None:
    arity, f = mathcompose.FORMULAS[name]
    rng = np.random.default_rng(3)
    lo = 1.05 if name == "acosh" else (-0.9 if name == "atanh" else -3.0)
    hi = 0.9 if name == "atanh" else 3.0
    xs = tuple(rng.uniform(lo, hi, 64) for _ in range(arity))
    if name in ("log2", "log10"):
        xs = (np.abs(xs[0]) + 0.01,)
    if name == "log1p":
        xs = (np.abs(xs[0]) - 0.5,)
    got = mathcompose.build(f, xs, lambda c: c, lambda op, a: _NP[op](*a))
    np.testing.assert_allclose(got, _REAL[name](*xs), rtol=1e-9, atol=1e-12)
    for op in {o for o in _ops(f)}:
        assert mathcompose.nki_name(op)  # every operator has an NKI spelling


def _ops(f: mathcompose.Formula):
    if isinstance(f, tuple):
        yield f[0]
        for o in f[1:]:
            yield from _ops(o)


@pytest.mark.parametrize(
    ("spelling", "arity", "base"),
    [("coshf", 1, "cosh"), ("cosh", 1, "cosh"), ("__expm1f", 1, "expm1"), ("hypotf", 2, "hypot"),
     ("normcdff", 1, "normcdf"), ("log1p", 1, "log1p")],
)  # fmt: skip
def test_spellings_of_one_function(spelling: str, arity: int, base: str) -> None:
    assert mathcompose.formula(spelling, arity) == mathcompose.FORMULAS[base][1]


def test_not_a_composed_function() -> None:
    assert mathcompose.formula("expf", 1) is None
    assert mathcompose.formula("coshf", 2) is None  # another arity: not this function
    assert mathcompose.formula("lgammaf", 1) is None


_PARAMS = (
    'dx = { shape = ["n"], dtype = "float32", role = "out" }\n'
    'x = { shape = ["n"], dtype = "float32", role = "in" }\n'
    'dy = { shape = ["n"], dtype = "float32", role = "in" }\nn = 300'
)

#: elementwise kernels calling the composed functions: guard, early return, grid-stride loop
MAPS = {
    "gelu_grad_guard": """
__global__ void kern(float* dx, const float* x, const float* dy, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        float t = tanhf(0.79788456f * (v + 0.044715f * v * v * v));
        float c = coshf(0.79788456f * v);
        dx[i] = dy[i] * (0.5f * (1.0f + t) + 0.5f * v / (c * c));
    }
}
""",
    "early_return_double_names": """
__global__ void kern(float* dx, const float* x, const float* dy, int n) {
    int idx = threadIdx.x + blockIdx.x * blockDim.x;
    if (idx >= n) return;
    float a = x[idx];
    dx[idx] = sinh(a) * dy[idx] + expm1(a) - log1p(fabsf(a)) + erfc(a);
}
""",
    "grid_stride": """
__global__ void kern(float* dx, const float* x, const float* dy, int n) {
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += blockDim.x * gridDim.x) {
        float a = x[k];
        dx[k] = normcdff(a) + cbrtf(a) * dy[k] + hypotf(a, dy[k]) + log10f(fabsf(a) + 1.0f)
              + exp2f(a) + asinhf(a);
    }
}
""",
}


@pytest.mark.parametrize("name", sorted(MAPS))
def test_lifted_maps_with_composed_functions_pass_the_check(tmp_path: Path, name: str) -> None:
    from cuda2nki import api

    cu = _kernel(tmp_path, MAPS[name], "kern", '"ceil_div(n, 128)"', "128", _PARAMS,
                 ["n = 129", "n = 7"])  # fmt: skip
    res = api.port(cu)
    assert res.source is not None and not res.literal, [d.message for d in res.diagnostics]
    port = tmp_path / "kern.py"
    port.write_text(res.source)
    rep = api.check(cu, port, seeds=2)
    assert rep.numerics_outcome == "pass", rep.to_dict() if hasattr(rep, "to_dict") else rep


def test_literal_ports_compose_the_functions_on_tiles_and_scalars(tmp_path: Path) -> None:
    src = """
__global__ void rev(float* out, const float* x, float s, int n) {
    __shared__ float buf[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    float v = buf[blockDim.x - 1 - threadIdx.x];
    if (i < n) out[i] = coshf(v) + sinhf(s) * expm1f(v) - erfcf(v) + normcdff(s);
}
"""
    cu = _kernel(tmp_path, src, "rev", '"ceil_div(n, 64)"', "64",
                 'out = { shape = ["n"], dtype = "float32", role = "out" }\n'
                 'x = { shape = ["n"], dtype = "float32", role = "in" }\nn = 150\ns = 0.25',
                 ["n = 64", "n = 3"])  # fmt: skip
    _matches(cu, tmp_path)


def test_a_function_outside_the_table_is_still_refused_by_name(tmp_path: Path) -> None:
    from cuda2nki import api

    src = """
__global__ void kern(float* dx, const float* x, const float* dy, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dx[i] = lgammaf(x[i]) * dy[i];
}
"""
    cu = _kernel(tmp_path, src, "kern", '"ceil_div(n, 128)"', "128", _PARAMS)
    res = api.port(cu)
    assert res.source is None
    assert any("lgammaf" in d.message for d in res.diagnostics)


def test_atan_keeps_arctan_in_its_valid_range() -> None:
    """NKI's arctan is valid on [-pi/2, pi/2] only: the composition feeds it [0, 1] whatever x
    (infinities and NaN included) and gives C's values there."""
    seen: list[np.ndarray] = []

    def apply(op, a):
        if op == "atan":
            seen.append(np.asarray(a[0]))
        return _NP[op](*a)

    x = np.concatenate([np.geomspace(1e-30, 1e30, 200), -np.geomspace(1e-30, 1e30, 200),
                        [0.0, 1.0, -1.0, np.inf, -np.inf, np.nan]])  # fmt: skip
    with np.errstate(divide="ignore", invalid="ignore"):
        got = mathcompose.build(mathcompose.FORMULAS["atan"][1], (x,), lambda c: c, apply)
    inputs = np.concatenate(seen)
    assert np.all((inputs[~np.isnan(inputs)] >= 0) & (inputs[~np.isnan(inputs)] <= 1))
    np.testing.assert_allclose(got, np.arctan(x), rtol=1e-12, atol=0)


@pytest.mark.parametrize(
    "body", ["atanf(x[i] * 30.0f)", "atan(x[i]) * dy[i] + atanf(-8.0f * dy[i])"]
)
def test_lifted_atan_stays_in_the_activation_range(body: str, tmp_path: Path) -> None:
    """A map lifted with ``atanf`` of arguments beyond +-pi/2 ports without a range warning
    (C2N3028) and passes the check."""
    from cuda2nki import api
    from cuda2nki.nkisim.importer import load_kernel
    from cuda2nki.nkisim.kernel import simulate_kernel

    src = (
        "__global__ void kern(float* dx, const float* x, const float* dy, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"    if (i < n) dx[i] = {body};\n}}\n"
    )
    cu = _kernel(tmp_path, src, "kern", '"ceil_div(n, 128)"', "128", _PARAMS,
                 ["n = 129", "n = 7"])  # fmt: skip
    res = api.port(cu)
    assert res.source is not None and not res.literal, [d.message for d in res.diagnostics]
    port = tmp_path / "kern.py"
    port.write_text(res.source)
    rep = api.check(cu, port, seeds=2)
    assert rep.numerics_outcome == "pass"
    rng = np.random.default_rng(5)
    x, dy = (rng.uniform(-3, 3, 300).astype(np.float32) for _ in range(2))
    sim = simulate_kernel(load_kernel(port, "kern"), {"x": x, "dy": dy})
    assert not [w for w in sim.warnings if w.code == "C2N3028"], sim.warnings


@pytest.mark.parametrize(
    "body", ["tanf(x[i] * 0.4f)", "dy[i] * tan(0.3f * x[i] - 0.1f) + __tanf(dy[i])"]
)
def test_lifted_tan_ports_as_an_activation(body: str, tmp_path: Path) -> None:
    """``tanf`` (and ``tan``, ``__tanf``) in a lifted map is NKI's tan activation."""
    from cuda2nki import api

    src = (
        "__global__ void kern(float* dx, const float* x, const float* dy, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"    if (i < n) dx[i] = {body};\n}}\n"
    )
    cu = _kernel(tmp_path, src, "kern", '"ceil_div(n, 128)"', "128", _PARAMS,
                 ["n = 129", "n = 7"])  # fmt: skip
    res = api.port(cu)
    assert res.source is not None and not res.literal, [d.message for d in res.diagnostics]
    assert "nl.tan(" in res.source or "nl.tan," in res.source
    port = tmp_path / "kern.py"
    port.write_text(res.source)
    assert api.check(cu, port, seeds=2).numerics_outcome == "pass"
