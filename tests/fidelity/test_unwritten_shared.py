"""``check`` of kernels whose CUDA result reads shared or local memory no thread wrote (a block
with fewer live threads than its tree reduction assumes): those elements are undefined on a GPU,
so they are left out of the comparison with a C2N4035 warning; a port that differs on the other
elements still fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.fidelity.check import check
from cuda2nki.pipeline import port_file

# integer tree reduction, early return past the data, warp-synchronous tail through volatile
EARLY_RETURN = """
#define LANES 256
__global__ void block_total(int *src, int *partial, unsigned int count) {
  __shared__ int buf[LANES];
  unsigned int t = threadIdx.x;
  if (blockIdx.x * blockDim.x + t >= count) return;
  int *base = src + blockIdx.x * blockDim.x;
  buf[t] = base[t];
  __syncthreads();
  if (blockDim.x >= 256 && t < 128) buf[t] += buf[t + 128];
  __syncthreads();
  if (blockDim.x >= 128 && t < 64) buf[t] += buf[t + 64];
  __syncthreads();
  if (t < 32) {
    volatile int *v = buf;
    v[t] += v[t + 32];
    v[t] += v[t + 16];
    v[t] += v[t + 8];
    v[t] += v[t + 4];
    v[t] += v[t + 2];
    v[t] += v[t + 1];
  }
  if (t == 0) partial[blockIdx.x] = buf[0];
}
"""
EARLY_BINDING = {
    "kernel": "block_total",
    "launch": {"grid": ["ceil_div(count, 256)"], "block": [256]},
    "params": {
        "src": {"shape": ["count"], "dtype": "int32", "role": "in"},
        "partial": {"shape": ["ceil_div(count, 256)"], "dtype": "int32", "role": "out"},
        "count": 300,
    },
}

# unsigned tree reduction over a loop of halving strides, lanes past the data never stored
SKIPPED_LANES = """
__global__ void row_sums(const unsigned *x, unsigned *sums, int width) {
  extern __shared__ unsigned lane[];
  int k = threadIdx.x;
  int row = blockIdx.x;
  if (k < width) lane[k] = x[row * width + k];
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half >>= 1) {
    if (k < half) lane[k] = lane[k] + lane[k + half];
    __syncthreads();
  }
  if (k == 0) sums[row] = lane[0];
}
"""
SKIPPED_BINDING = {
    "kernel": "row_sums",
    "launch": {"grid": ["rows"], "block": [128], "shared_bytes": 512},
    "params": {
        "x": {"shape": ["rows", "width"], "dtype": "uint32", "role": "in"},
        "sums": {"shape": ["rows"], "dtype": "uint32", "role": "out"},
        "rows": 3,
        "width": 90,
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
    [(EARLY_RETURN, EARLY_BINDING, "partial"), (SKIPPED_LANES, SKIPPED_BINDING, "sums")],
    ids=["early-return-int-warp-tail", "guarded-store-unsigned-loop"],
)
def test_elements_from_unwritten_shared_memory_are_not_compared(
    tmp_path: Path, src: str, bind: dict, output: str
) -> None:
    cu, port, binding = _ported(tmp_path, src, bind)
    rep = _check(cu, port, binding)
    assert rep.numerics_outcome == "pass", rep.numerics
    warned = [d for d in rep.findings if d.code == "C2N4035"]
    assert len(warned) == 1, [d.message for d in rep.findings]
    assert f"output '{output}'" in warned[0].message and "no thread" in warned[0].message
    kernel_line = next(n for n, ln in enumerate(src.splitlines(), 1) if "__global__" in ln)
    assert warned[0].loc.file == str(cu) and warned[0].loc.line == kernel_line


def test_a_port_wrong_on_the_defined_elements_still_fails(tmp_path: Path) -> None:
    _, port, binding = _ported(tmp_path, EARLY_RETURN, EARLY_BINDING)
    cu = tmp_path / "doubled.cu"  # the full first block is defined: its total doubled
    cu.write_text(EARLY_RETURN.replace("= buf[0];", "= 2 * buf[0];"))
    rep = _check(cu, port, binding)
    assert rep.numerics_outcome == "fail"
    warned = [d.message for d in rep.findings if d.code == "C2N4035"]
    assert warned and "differs on the other elements too" in warned[0], warned
