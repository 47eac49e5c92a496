"""Naive GEMMs that stride their second matrix by the contraction length (``B[i * K + col]``)
while their columns run to another size (``col < M``): correct only when the two sizes are equal,
so the binding ties one to the other (``M = { tie = "K" }``) and the kernel lowers to a matmul."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki import api
from cuda2nki.binding import binding_from_dict

#: `{row}`/`{col}` come from y/x (or x/y), `{i}` names the loop, `{w}`/`{k}` the two sizes
KERNEL = """
__global__ void gemm_naive(const float *A, const float *B, float *C, int {n}, int {w}, int {k},
                           float alpha, float beta)
{{
    int {col} = blockIdx.{cx} * blockDim.{cx} + threadIdx.{cx};
    int {row} = blockIdx.{rx} * blockDim.{rx} + threadIdx.{rx};
    float acc = 0.f;
    for (int {i} = 0; {i} < {k}; {i}++)
        acc += A[{row} * {k} + {i}] * B[{i} * {k} + {col}];
    C[{row} * {w} + {col}] = alpha * acc + beta * C[{row} * {w} + {col}];
}}
"""

SPELLINGS = {
    "NMK-col-from-x": dict(n="N", w="M", k="K", col="col", row="row", cx="x", rx="y", i="i"),
    "width-col-from-y": dict(
        n="rows", w="width", k="inner", col="c", row="r", cx="y", rx="x", i="e"
    ),
}


def _binding(names: dict, tie: bool) -> dict:
    grid = [f"{names['w']} / 16", f"{names['n']} / 16"]
    if names["cx"] == "y":
        grid.reverse()
    k, w, n = names["k"], names["w"], names["n"]
    return {
        "kernel": "gemm_naive",
        "launch": {"grid": grid, "block": [16, 16]},
        "params": {
            "A": {"shape": [n, k], "dtype": "float32", "role": "in"},
            "B": {
                "shape": [k, k] if tie else [f"{k}*{k}-{k}+{w}"],
                "dtype": "float32",
                "role": "in",
            },
            "C": {"shape": [n, k if tie else w], "dtype": "float32", "role": "inout"},
            n: 64,
            w: {"tie": k} if tie else 64,
            k: 64,
            "alpha": 2.0,
            "beta": 1.0,
        },
        "check": {"multiples": {n: 16, k: 16} if tie else {n: 16, w: 16}},
    }


def test_a_tied_size_follows_its_size_at_every_point() -> None:
    b = binding_from_dict(_binding(SPELLINGS["NMK-col-from-x"], tie=True))
    assert b.defaults["M"] == 64
    r = b.resolve({"K": 144, "M": 3})
    assert r.scalars["M"] == 144 and r.shapes["B"] == (144, 144) and r.grid[0] == 9


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_a_square_stride_gemm_lowers_to_a_matmul_once_its_sizes_are_tied(
    tmp_path: Path, name: str
) -> None:
    names = SPELLINGS[name]
    src = tmp_path / "g.cu"
    src.write_text(KERNEL.format(**names))
    tied = api.port(
        str(src), kernel="gemm_naive", binding=binding_from_dict(_binding(names, tie=True))
    )
    assert "lifted as contract" in " ".join(d.message for d in tied.diagnostics)
    assert tied.source is not None and "nc_matmul" in tied.source
