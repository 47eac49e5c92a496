"""CUDA's C++ math overloads (``cos(x)``, ``pow(x, y)``, ``ceil(x)``...) and fast-math
intrinsics in literal ports: the same NKI op as the ``f``-suffixed spelling, for per-thread and
uniform arguments, on both targets."""

from __future__ import annotations

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.pipeline import port_file
from tests.port.acceptance import grid_binding, map_kernel, run_against_simt, tensor_param

_BIND = grid_binding(
    ["ceil_div(n, 32)"],
    {
        "x": tensor_param(["n"], "in", "float32", [0.25, 3.0]),
        "y": tensor_param(["n"], "out"),
        "n": 1000,
        "t": 0.5,
    },
    [{"n": 77}, {"n": 5}],
    block=32,
)

OVERLOADS = [
    ("cos_of_data", "cos(x[i] * 2.0f)"),
    ("sin_and_cos_of_a_sum", "0.5f + 0.5f * sin(t + x[i]) * cos(t - x[i])"),
    ("ceil_and_floor", "ceil(x[i] * 3.0f) - floor(x[i] * 1.5f)"),
    ("pow_of_data", "pow(x[i], 1.5f) + __powf(x[i], 2.0f)"),
    ("rsqrt_and_exp2", "rsqrt(x[i]) + exp2(x[i])"),
    ("trunc_of_scaled", "trunc(x[i] * 7.0f)"),
    ("uniform_ceil_of_double", "x[i] * (float)ceil((double)n / 3.0)"),
    ("uniform_cos", "x[i] + cos(t)"),
    ("uniform_pow_and_fast_divide", "x[i] * powf(t, 3.0f) + __fdividef(t, 4.0f) - pow(2.0f, t)"),
    ("roundf_halves_away_from_zero", "roundf((x[i] - 1.5f) * 4.0f) + round(-x[i] * 2.0f)"),
    ("roundf_of_exact_halves", "x[i] + roundf((float)(i % 9) * 0.5f - 2.0f)"),
    ("roundf_of_uniform", "x[i] * roundf(t * 5.0f) - roundf(-t)"),
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("name", "body"), OVERLOADS, ids=[o[0] for o in OVERLOADS])
def test_math_overloads_port_literally(name, body, target, tmp_path) -> None:
    cu = tmp_path / f"{name}.cu"
    cu.write_text(map_kernel(body, "const float* x, float* y, int n, float t"))
    binding = binding_from_dict({"kernel": "k", **_BIND}, path=str(cu))
    res = port_file(cu, binding=binding, target=target, lowering="literal")
    assert res.source is not None and res.literal, [d.message for d in res.diagnostics]
    port = tmp_path / f"{name}_{target}.py"
    port.write_text(res.source)
    run = run_against_simt(res, binding, port, points=binding.test_points(), rtol=2e-5, atol=2e-5)
    assert len(run.points) >= 2 and not run.mismatches, run.mismatches
