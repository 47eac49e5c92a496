"""Inverse trigonometric functions, classification macros, ``copysign``, ``fmod`` and
``remainder`` in literal ports (:mod:`cuda2nki.lift.literal.selectmath`): several spellings and
kernel shapes against the SIMT interpreter, and every composition against NumPy on edge values
(zeros of both signs, +-1, infinities, NaN, the largest and smallest floats)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.nkisim.importer import load_kernel
from cuda2nki.nkisim.kernel import simulate_kernel
from cuda2nki.pipeline import port_file
from tests.port.acceptance import grid_binding, map_kernel, run_against_simt, tensor_param

_PARAMS = "const float* x, const float* z, float* y, int n, float t"


def _binding(block: int = 32, lo: float = -4.0, hi: float = 4.0) -> dict:
    return grid_binding(
        [f"ceil_div(n, {block})"],
        {
            "x": tensor_param(["n"], "in", "float32", [lo, hi]),
            "z": tensor_param(["n"], "in", "float32", [-3.0, 3.0]),
            "y": tensor_param(["n"], "out"),
            "n": 1000,
            "t": 0.75,
        },
        [{"n": 77}, {"n": 300}],
        block=block,
    )


_GRID_STRIDE = """__global__ void k(const float* x, const float* z, float* y, int n, float t) {
    for (int j = threadIdx.x + blockIdx.x * blockDim.x; j < n; j += blockDim.x * gridDim.x) {
        float a = x[j], b = z[j];
        y[j] = BODY;
    }
}
"""

_EARLY_EXIT = """__global__ void k(const float* x, const float* z, float* y, int n, float t) {
    int idx = threadIdx.x + blockDim.x * blockIdx.x;
    if (idx >= n) return;
    float a = x[idx];
    float b = z[idx];
    y[idx] = BODY;
}
"""

KERNELS = [
    ("atanf", map_kernel("atanf(x[i] * 3.0f)", _PARAMS), 32),
    ("atan_double_overload", map_kernel("(float)atan((double)x[i] * 40.0)", _PARAMS), 64),
    ("atan2f_both_orders", map_kernel("atan2f(x[i], z[i]) - atan2f(z[i], x[i])", _PARAMS), 32),
    ("atan2_of_uniform_y", map_kernel("atan2(t, x[i]) + atan2f(x[i], -t)", _PARAMS), 128),
    ("asin_acos", map_kernel("asinf(x[i] * 0.25f) + acosf(z[i] / 3.0f)", _PARAMS), 32),
    ("asin_acos_overloads", _GRID_STRIDE.replace("BODY", "asin(a / 4.0f) * acos(-b / 3.0f)"), 64),
    ("fmodf_signs", map_kernel("fmodf(x[i] * 7.0f, z[i]) + fmod(-x[i], 0.1f)", _PARAMS), 32),
    ("remainderf", _EARLY_EXIT.replace("BODY", "remainderf(a * 9.0f, b) + remainder(b, 0.5f)"), 32),
    ("copysignf", _EARLY_EXIT.replace("BODY", "copysignf(a, b) + copysign(1.5f, a)"), 128),
    (
        "classification",
        map_kernel(
            "(float)isnan(x[i] / z[i]) + 2.0f * isinf(1.0f / (x[i] - z[i])) + "
            "(isfinite(logf(x[i])) ? 4.0f : 0.0f)",
            _PARAMS,
        ),
        32,
    ),  # fmt: skip
    (
        "signbit_branch",
        _GRID_STRIDE.replace("BODY", "signbit(a) ? -b : (__signbitf(b) ? a : t)"),
        32,
    ),  # fmt: skip
    (
        "uniform_arguments",
        map_kernel("x[i] + atan2f(t, 2.0f) + fmodf(7.5f, t) + isinf(t)", _PARAMS),
        32,
    ),  # fmt: skip
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("name", "src", "block"), KERNELS, ids=[k[0] for k in KERNELS])
def test_select_math_ports_literally(name, src, block, target, tmp_path) -> None:
    cu = tmp_path / f"{name}.cu"
    cu.write_text(src)
    binding = binding_from_dict({"kernel": "k", **_binding(block)}, path=str(cu))
    res = port_file(cu, binding=binding, target=target, lowering="literal")
    assert res.source is not None and res.literal, [d.message for d in res.diagnostics]
    port = tmp_path / f"{name}_{target}.py"
    port.write_text(res.source)
    run = run_against_simt(res, binding, port, points=binding.test_points(), rtol=1e-5, atol=1e-6)
    assert len(run.points) >= 2 and not run.mismatches, run.mismatches


_EDGES = np.array(
    [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.0 - 2.0**-24, -(1.0 + 2.0**-23), 2.0, -3.0, 0.1,
     np.pi, -np.pi / 2, 1e-30, -1e-38, 1e-45, 1e30, -1e30, 3.4e38, -3.4e38, np.inf, -np.inf,
     np.nan, 7.25, -100.0, 4095.5, 1e-5],
    dtype=np.float32,
)  # fmt: skip

_REFERENCE = {
    "atanf(x[i])": lambda x, z: np.arctan(x),
    "asinf(x[i])": lambda x, z: np.arcsin(x),
    "acosf(x[i])": lambda x, z: np.arccos(x),
    "atan2f(x[i], z[i])": np.arctan2,
    "copysignf(x[i], z[i])": np.copysign,
    "fmodf(x[i], z[i])": np.fmod,
    "remainderf(x[i], z[i])": lambda x, z: np.vectorize(_ieee_remainder)(x, z),
    "(float)isnan(x[i])": lambda x, z: np.isnan(x),
    "(float)isinf(x[i])": lambda x, z: np.isinf(x),
    "(float)isfinite(x[i])": lambda x, z: np.isfinite(x),
    "(float)signbit(x[i])": lambda x, z: np.signbit(x),
}


def _ieee_remainder(x: float, z: float) -> float:
    import math

    if math.isnan(x) or math.isnan(z) or math.isinf(x) or z == 0:
        return math.nan
    return x if math.isinf(z) else math.remainder(x, z)


def _pairs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(11)
    wide = (rng.choice([-1, 1], 400) * 10.0 ** rng.uniform(-8, 8, 400)).astype(np.float32)
    xs, zs = zip(*itertools.product(_EDGES, _EDGES))
    x = np.concatenate([np.array(xs, np.float32), wide])
    z = np.concatenate([np.array(zs, np.float32), np.roll(wide, 7)])
    return x, z


@pytest.mark.parametrize("body", sorted(_REFERENCE))
def test_compositions_on_edge_values(body: str, tmp_path: Path) -> None:
    x, z = _pairs()
    if body.startswith(("fmod", "remainder")):
        with np.errstate(all="ignore"):  # exact while the quotient has at most 12 bits
            keep = ~(np.abs(x / z) >= 4096) | ~np.isfinite(x) | ~np.isfinite(z)
        x, z = x[keep], z[keep]
    cu = tmp_path / "edge.cu"
    cu.write_text(map_kernel(body, _PARAMS))
    binding = binding_from_dict({"kernel": "k", **_binding()}, path=str(cu))
    res = port_file(cu, binding=binding, target="nki", lowering="literal")
    assert res.source is not None, [d.message for d in res.diagnostics]
    port = tmp_path / "edge_port.py"
    port.write_text(res.source)
    fn = load_kernel(port, "k")
    sim = simulate_kernel(fn, {"x": x, "z": z, "t": 0.75})
    got = np.asarray(sim.outputs, np.float64).reshape(-1)
    with np.errstate(all="ignore"):
        want = np.asarray(_REFERENCE[body](x, z), np.float32).astype(np.float64)
    close = np.isclose(got, want, rtol=4e-7, atol=1e-44, equal_nan=True)
    bad = [(float(a), float(b), got[k], want[k]) for k, (a, b) in enumerate(zip(x, z))
           if not close[k]]  # fmt: skip
    assert not bad, bad[:8]
