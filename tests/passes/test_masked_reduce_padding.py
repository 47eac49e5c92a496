"""A reduction masked by a bound on its positions (``(g < n) ? f(x[g]) : 0`` summed by a block)
pads the reads of the ragged last block with the op's identity; that is exact only when ``f``
keeps the identity (a sum of products of reads).  For any other body (``exp``, ``log``,
``x + 1``) the identity is selected after the body, so the padding never enters the sum."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.diagnostics import Severity
from cuda2nki.fidelity.check import check
from cuda2nki.ir.nodes import Binary, Lit, Read, Sym, Unary
from cuda2nki.ir.ops import Op
from cuda2nki.passes._tiles import keeps_identity
from cuda2nki.pipeline import port_file

FOR_TREE = """
__global__ void exp_totals(const float *v, float *tot, int count) {
  __shared__ float part[256];
  int g = threadIdx.x + blockIdx.x * blockDim.x;
  part[threadIdx.x] = (g < count) ? expf(v[g]) : 0.f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) tot[blockIdx.x] = part[0];
}
"""
WHILE_TREE = """
#define LANES 128
__global__ void shifted_sums(const float *__restrict__ x, float *__restrict__ out, int n) {
  __shared__ float acc[LANES];
  int id = blockIdx.x * blockDim.x + threadIdx.x;
  acc[threadIdx.x] = (id < n) ? x[id] + 1.0f : 0.f;
  __syncthreads();
  int i = blockDim.x / 2;
  while (i != 0) {
    if (threadIdx.x < i) acc[threadIdx.x] += acc[threadIdx.x + i];
    __syncthreads();
    i /= 2;
  }
  if (threadIdx.x == 0) out[blockIdx.x] = acc[0];
}
"""


def _bind(kernel: str, src: str, dst: str, size: str, block: int) -> dict:
    blocks = f"ceil_div({size}, {block})"
    return {
        "kernel": kernel,
        "launch": {"grid": [blocks], "block": [block]},
        "params": {
            src: {"shape": [size], "dtype": "float32", "role": "in"},
            dst: {"shape": [blocks], "dtype": "float32", "role": "out"},
            size: 700,  # a ragged last block
        },
    }


CASES = {
    "exp-for-tree": (FOR_TREE, _bind("exp_totals", "v", "tot", "count", 256)),
    "shift-while-tree": (WHILE_TREE, _bind("shifted_sums", "x", "out", "n", 128)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_padding_of_the_last_block_never_enters_the_sum(name: str, tmp_path: Path) -> None:
    src, bind = CASES[name]
    cu = tmp_path / "k.cu"
    cu.write_text(src)
    binding = binding_from_dict(bind, path=str(cu))
    res = port_file(cu, binding=binding)
    assert res.source is not None and not res.literal, [d.render() for d in res.diagnostics]
    port = tmp_path / "k_port.py"
    port.write_text(res.source)
    rep = check(cu, port, binding=binding, seeds=2, extra_points=False, timeout=300)
    errors = [d.render() for d in rep.findings if d.severity == Severity.ERROR]
    assert rep.numerics_outcome == "pass" and not errors, errors


def test_which_bodies_keep_the_identity() -> None:
    x, y = Read("x", (Sym("k"),)), Read("y", (Sym("k"),))
    assert keeps_identity(Binary(Op.MUL, x, y), Op.ADD)
    assert keeps_identity(Binary(Op.MUL, x, Lit(3.0, "float32")), Op.ADD)
    assert keeps_identity(Unary(Op.SQUARE, Binary(Op.SUB, x, y)), Op.ADD)
    assert not keeps_identity(Unary(Op.EXP, x), Op.ADD)
    assert not keeps_identity(Binary(Op.ADD, x, Lit(1.0, "float32")), Op.ADD)
    assert not keeps_identity(Unary(Op.NEG, x), Op.MAX)  # -(-inf) is +inf
    assert keeps_identity(x, Op.MAX)
