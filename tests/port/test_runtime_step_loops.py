"""A short loop whose index is only a value and whose count the launch passes in (not a macro)
ports through the reduce recogniser on both targets, whatever the loop's spelling: ``<`` or
``<= n - 1`` bounds, counting up or down, steps of one or two, the count first or last among
the parameters.  The ports match the SIMT interpreter at step counts 1, 4 and 7."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.port.acceptance import check_kernel

_SRC = """\
__global__ void k(const float* x, float* y, int rows, int cols, int steps) {{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    const int r = blockIdx.y;
    if (c >= cols) return;
    float acc = 0.0f;
    {header} acc += x[r * cols + c] * (0.5f * {var} + 1.0f);
    y[r * cols + c] = acc;
}}
"""

_BINDING = """\
kernel = "k"
idiom = "reduce"
[launch]
grid = ["ceil_div(cols, 64)", "rows"]
block = [64]
[params]
rows = 130
cols = 70
steps = 4
x = { shape = ["rows", "cols"], dtype = "float32", role = "in" }
y = { shape = ["rows", "cols"], dtype = "float32", role = "out" }
[[check.shapes]]
rows = 9
cols = 200
steps = 1
[[check.shapes]]
rows = 140
cols = 33
steps = 7
"""

LOOPS = {
    "up_lt": ("for (int j = 0; j < steps; j++)", "j"),
    "up_le": ("for (int j = 0; j <= steps - 1; ++j)", "j"),
    "up_from_one": ("for (int t = 1; t < steps + 1; t += 1)", "t"),
    "up_by_two": ("for (int j = 0; j < steps; j += 2)", "j"),
    "down_ge_zero": ("for (int j = steps - 1; j >= 0; j--)", "j"),
    "down_gt_zero": ("for (int s = steps; s > 0; --s)", "s"),
    "down_minus_eq": ("for (int j = steps - 1; j >= 0; j -= 1)", "(float)j"),
}


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("loop", sorted(LOOPS))
def test_runtime_count_loop_ports_through_a_recogniser(loop: str, target: str, tmp_path: Path):
    header, var = LOOPS[loop]
    cu = tmp_path / "k.cu"
    cu.write_text(_SRC.format(header=header, var=var))
    cu.with_suffix(".toml").write_text(_BINDING)
    out = check_kernel(cu, target, tmp_path)
    assert out.status == "match", out
    assert len(out.shapes) >= 3


_WINDOW = """\
__global__ void k(const float* x, const float* w, float* y, int n, int taps) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {{
        float s = 0.0f;
        {header} s += w[{tap}] * x[i + {tap}];
        y[i] = s;
    }}
}}
"""

_WINDOW_BINDING = """\
kernel = "k"
idiom = "stencil"
[launch]
grid = ["ceil_div(n, 128)"]
block = [128]
[params]
n = 1000
taps = 3
x = { shape = ["n + taps"], dtype = "float32", role = "in" }
w = { shape = ["taps"], dtype = "float32", role = "in" }
y = { shape = ["n"], dtype = "float32", role = "out" }
[[check.shapes]]
n = 300
taps = 1
[[check.shapes]]
n = 130
taps = 6
"""

WINDOWS = {
    "lt": ("for (int t = 0; t < taps; t++)", "t"),
    "le": ("for (int t = 0; t <= taps - 1; ++t)", "t"),
    "down": ("for (int t = taps - 1; t >= 0; --t)", "t"),
}


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("loop", sorted(WINDOWS))
def test_1d_window_with_a_runtime_tap_count_ports_through_a_recogniser(
    loop: str, target: str, tmp_path: Path
):
    header, tap = WINDOWS[loop]
    cu = tmp_path / "k.cu"
    cu.write_text(_WINDOW.format(header=header, tap=tap))
    cu.with_suffix(".toml").write_text(_WINDOW_BINDING)
    out = check_kernel(cu, target, tmp_path)
    assert out.status == "match", out
    assert len(out.shapes) >= 3
