"""``check`` of a kernel whose blocks read what other blocks of the same launch write: CUDA's
result depends on the order the blocks run, so a port equal to another valid schedule (blocks
one at a time, as a literal port runs them) passes its numbers with a C2N4033 warning, and a
port equal to neither schedule still fails, with the warning.  A kernel without such a race
gets no warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.fidelity.check import check
from cuda2nki.pipeline import port_file

# block 0's thread 0 walks the whole buffer every block rescales before a __syncthreads() that
# orders only its own block
PREFIX = """
__global__ void rescale_then_prefix(float *w, const float *total, float *cum, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] = w[i] / total[0];
  __syncthreads();
  if (i == 0) {
    float s = 0.0f;
    for (int j = 0; j < n; ++j) {
      s += w[j];
      cum[j] = s;
    }
  }
}
"""
PREFIX_BINDING = {
    "kernel": "rescale_then_prefix",
    "launch": {"grid": ["ceil_div(n, 128)"], "block": [128]},
    "params": {
        "w": {"shape": ["n"], "dtype": "float32", "role": "inout"},
        "total": {"shape": [1], "dtype": "float32", "role": "in"},
        "cum": {"shape": ["n"], "dtype": "float32", "role": "out"},
        "n": 300,
    },
}

# per-block sums in a global buffer, added up by the grid's first thread in the same launch
TOTAL = """
#define LANES 64
__global__ void gather_total(const float *x, float *partial, float *total, int count) {
  __shared__ float acc[LANES];
  int t = threadIdx.x;
  int g = blockIdx.x * LANES + t;
  acc[t] = g < count ? x[g] : 0.0f;
  __syncthreads();
  if (t == 0) {
    float s = 0.0f;
    for (int k = 0; k < LANES; ++k) s += acc[k];
    partial[blockIdx.x] = s;
  }
  __syncthreads();
  if (g == 0) {
    float s = 0.0f;
    for (int b = 0; b < gridDim.x; ++b) s += partial[b];
    total[0] = s;
  }
}
"""
TOTAL_BINDING = {
    "kernel": "gather_total",
    "launch": {"grid": ["(count + 63) / 64"], "block": [64]},
    "params": {
        "x": {"shape": ["count"], "dtype": "float32", "role": "in"},
        "partial": {"shape": ["(count + 63) / 64"], "dtype": "float32", "role": "inout"},
        "total": {"shape": [1], "dtype": "float32", "role": "out"},
        "count": 200,
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


@pytest.mark.parametrize(
    ("src", "bind", "output"),
    [(PREFIX, PREFIX_BINDING, "cum"), (TOTAL, TOTAL_BINDING, "total")],
    ids=["prefix-of-rescaled", "total-of-block-sums"],
)
def test_a_port_equal_to_another_block_order_passes_with_a_warning(
    tmp_path: Path, src: str, bind: dict, output: str
) -> None:
    cu, port, binding = _ported(tmp_path, src, bind)
    rep = _check(cu, port, binding)
    assert rep.numerics_outcome == "pass", rep.numerics
    races = [d for d in rep.findings if d.code == "C2N4033"]
    assert len(races) == 1, [d.message for d in rep.findings]
    assert f"'{output}'" in races[0].message and "one at a time" in races[0].message


def test_a_port_equal_to_neither_order_still_fails(tmp_path: Path) -> None:
    _, port, binding = _ported(tmp_path, PREFIX, PREFIX_BINDING)
    cu = tmp_path / "shifted.cu"  # the same race, and every running sum one more
    cu.write_text(PREFIX.replace("cum[j] = s;", "cum[j] = s + 1.0f;"))
    rep = _check(cu, port, binding)
    assert rep.numerics_outcome == "fail"
    races = [d.message for d in rep.findings if d.code == "C2N4033"]
    assert races and "neither" in races[0], [d.message for d in rep.findings]


def test_a_kernel_without_a_race_gets_no_warning(tmp_path: Path) -> None:
    _, port, binding = _ported(tmp_path, PREFIX, PREFIX_BINDING)
    cu = tmp_path / "counting.cu"  # thread 0 reads nothing other blocks write
    cu.write_text(PREFIX.replace("s += w[j];", "s += 1.0f;"))
    rep = _check(cu, port, binding)
    assert rep.numerics_outcome == "fail"
    assert not [d for d in rep.findings if d.code == "C2N4033"]
