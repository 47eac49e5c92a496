"""``check`` of ports that divide as ``x * (1 / y)`` (NKI has no division the hardware runs):
where the CUDA kernel divides by subnormals, whose reciprocal overflows, a port equal to the
kernel with that division passes its numbers with a C2N4034 warning naming the division's line
and its divisors; a port equal to neither still fails; ordinary divisors give no warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.fidelity.check import check
from cuda2nki.pipeline import port_file

# every divisor is a normal input times a subnormal-making constant: whatever the inputs, most
# divisors are below 2^-128 and their reciprocals overflow
GUARDED = """
__global__ void scale_down(const float *a, const float *d, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] / (d[i] * 1e-39f);
}
"""
GUARDED_BINDING = {
    "kernel": "scale_down",
    "launch": {"grid": ["ceil_div(n, 64)"], "block": [64]},
    "params": {
        "a": {"shape": ["n"], "dtype": "float32", "role": "in"},
        "d": {"shape": ["n"], "dtype": "float32", "role": "in"},
        "out": {"shape": ["n"], "dtype": "float32", "role": "out"},
        "n": 200,
    },
}

STRIDED = """
__global__ void shrink_all(float *x, const float *w, int len) {
  for (int k = threadIdx.x + blockIdx.x * blockDim.x; k < len; k += gridDim.x * blockDim.x) {
    x[k] /= w[k] * 2e-39f;
  }
}
"""
STRIDED_BINDING = {
    "kernel": "shrink_all",
    "launch": {"grid": [2], "block": [128]},
    "params": {
        "x": {"shape": ["len"], "dtype": "float32", "role": "inout"},
        "w": {"shape": ["len"], "dtype": "float32", "role": "in"},
        "len": 300,
    },
}

COLUMNS = """
#define TINY 5e-40f
__global__ void per_column(const float *v, const float *w, float *y, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y;
  if (r < rows && c < cols) {
    float q = w[c] * TINY;
    y[r * cols + c] = v[r * cols + c] / q;
  }
}
"""
COLUMNS_BINDING = {
    "kernel": "per_column",
    "launch": {"grid": ["ceil_div(cols, 32)", "rows"], "block": [32]},
    "params": {
        "v": {"shape": ["rows", "cols"], "dtype": "float32", "role": "in"},
        "w": {"shape": ["cols"], "dtype": "float32", "role": "in"},
        "y": {"shape": ["rows", "cols"], "dtype": "float32", "role": "out"},
        "rows": 6,
        "cols": 70,
    },
}


# the fast-division intrinsic, guarded against a zero divisor (the guard lets subnormals through)
FAST = """
__global__ void normalise(int w, int h, float *img, const float *norm) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    int at = y * w + x;
    const float d = norm[at] * 1e-39f;
    if (d != 0) img[at] = __fdividef(img[at], d);
  }
}
"""
FAST_BINDING = {
    "kernel": "normalise",
    "launch": {"grid": ["ceil_div(w, 16)", "ceil_div(h, 16)"], "block": [16, 16]},
    "params": {
        "img": {"shape": ["h", "w"], "dtype": "float32", "role": "inout"},
        "norm": {"shape": ["h", "w"], "dtype": "float32", "role": "in"},
        "w": 40,
        "h": 20,
    },
}


def _ported(tmp_path: Path, src: str, bind: dict) -> tuple[Path, Path, object]:
    cu = tmp_path / "k.cu"
    cu.write_text(src)
    binding = binding_from_dict(bind, path=str(cu))
    res = port_file(cu, binding=binding)
    assert res.source is not None, [d.message for d in res.diagnostics]
    port = tmp_path / "k_port.py"
    port.write_text(res.source)
    return cu, port, binding


def _check(cu: Path, port: Path, binding: object):
    return check(cu, port, binding=binding, seeds=1, extra_points=False, timeout=300)


def _line_of(src: str, text: str) -> int:
    return next(n for n, ln in enumerate(src.splitlines(), 1) if text in ln)


@pytest.mark.parametrize(
    ("src", "bind", "output", "division"),
    [
        (GUARDED, GUARDED_BINDING, "out", "a[i] /"),
        (STRIDED, STRIDED_BINDING, "x", "/="),
        (COLUMNS, COLUMNS_BINDING, "y", "/ q"),
        (FAST, FAST_BINDING, "img", "__fdividef"),
    ],
    ids=["guarded-map", "grid-stride-compound", "2d-local-divisor", "fdividef-intrinsic"],
)
def test_subnormal_divisors_pass_with_a_warning(
    tmp_path: Path, src: str, bind: dict, output: str, division: str
) -> None:
    cu, port, binding = _ported(tmp_path, src, bind)
    rep = _check(cu, port, binding)
    assert rep.numerics_outcome == "pass", rep.numerics
    warned = [d for d in rep.findings if d.code == "C2N4034"]
    assert len(warned) == 1, [d.message for d in rep.findings]
    line = _line_of(src, division)
    msg = warned[0].message
    assert warned[0].loc.line == line and f"the division at line {line} met" in msg
    assert f"output '{output}'" in msg and "below 2^-128" in msg and "x * (1 / y)" in msg


def test_a_port_equal_to_neither_division_still_fails(tmp_path: Path) -> None:
    _, port, binding = _ported(tmp_path, GUARDED, GUARDED_BINDING)
    cu = tmp_path / "shifted.cu"  # the same division, every quotient halved
    cu.write_text(GUARDED.replace("(d[i] * 1e-39f);", "(d[i] * 1e-39f) * 0.5f;"))
    rep = _check(cu, port, binding)
    assert rep.numerics_outcome == "fail"
    warned = [d.message for d in rep.findings if d.code == "C2N4034"]
    assert warned and "differs from that too" in warned[0], [d.message for d in rep.findings]


def test_the_warning_needs_a_reciprocal_and_an_out_of_range_divisor(tmp_path: Path) -> None:
    cu, port, binding = _ported(tmp_path, GUARDED, GUARDED_BINDING)
    assert [d for d in _check(cu, port, binding).findings if d.code == "C2N4034"]
    # ordinary divisors: the port passes without the warning
    plain = tmp_path / "plain"
    plain.mkdir()
    cu2, port2, binding2 = _ported(plain, GUARDED.replace("1e-39f", "1e-3f"), GUARDED_BINDING)
    rep = _check(cu2, port2, binding2)
    assert rep.numerics_outcome == "pass", rep.numerics
    assert not [d for d in rep.findings if d.code == "C2N4034"]
    # a port that takes no reciprocal (the divisor copied, not inverted) fails without it
    text = port.read_text()
    calls = [ln for ln in text.splitlines() if "nisa.reciprocal(" in ln]
    assert calls
    for ln in calls:
        copy = ln.replace("nisa.reciprocal(", "nisa.tensor_copy(").replace("data=", "src=")
        text = text.replace(ln, copy)
    wrong = tmp_path / "copy_port.py"
    wrong.write_text(text)
    rep = _check(cu, wrong, binding)
    assert rep.numerics_outcome == "fail"
    assert not [d for d in rep.findings if d.code == "C2N4034"]
