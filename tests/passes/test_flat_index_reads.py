"""Reads that take a flat index apart along a tensor's dims (``field[k // W, k % W]`` of a
``[R, W]`` tensor: element ``k`` of its row-major storage) in a flat walk -- a count or flag over
a 2-D grid, a grid-stride sum over the flat index -- are one strided block (``Rows``) of the
flat tensor per chunk: recognised ports, exact against the SIMT interpreter."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cuda2nki.ir.nodes import Const, FloorDiv, Mod, Mul, Rows, Sym
from cuda2nki.passes._merged_rows import flat_chunk_rows, flat_merged
from tests.port.acceptance import check_kernel

HERE = Path(__file__).parent / "cuda" / "flat_index"
k, R, W = Sym("k"), Sym("R"), Sym("W")


def test_a_flat_index_taken_apart_along_every_dim_is_the_flat_storage() -> None:
    assert flat_merged((FloorDiv(k, Const(96)), Mod(k, Const(96))), (R, Const(96)), "k") == Const(0)
    assert flat_merged((FloorDiv(k, W), Mod(k, W)), (R, W), "k") == Const(0)
    three = (
        FloorDiv(k, Mul(Const(3), Const(4))),
        Mod(FloorDiv(k, Const(4)), Const(3)),
        Mod(k, Const(4)),
    )
    assert flat_merged(three, (R, Const(3), Const(4)), "k") == Const(0)
    view = flat_chunk_rows((FloorDiv(k, W), Mod(k, W)), (R, W), "k", Sym("b"), Const(128), Sym("F"))
    assert view == (Rows(Sym("b"), Const(128), Sym("F"), Sym("F")),)


def test_other_reads_are_not_the_flat_storage() -> None:
    assert flat_merged((FloorDiv(k, W), Mod(k, W)), (R, Const(96)), "k") is None  # not the width
    assert flat_merged((FloorDiv(k, W), Sym("j")), (R, W), "k") is None  # a column of its own
    assert flat_merged((k, Sym("j")), (R, W), "k") is None  # nothing taken apart
    # a field of records (the merged index moves by whole records): not one contiguous chunk
    assert flat_merged((FloorDiv(k, W), Mod(k, W), Const(1)), (R, W, Const(2)), "k") is None


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(
    "name",
    [
        "flag_negative",  # a flag over a 2-D __device__ grid: count over field[k // 64, k % 64]
        "any_big",  # tbl[k / 48][k % 48] spelled in the kernel, grid-stride loop
        "matrix_total",  # a grid-stride atomicAdd sum of m[k] on a [rows, 40] binding
    ],
)
def test_flat_reads_of_a_2d_tensor_port_recognised_and_exact(
    name: str, target: str, tmp_path: Path
) -> None:
    for suffix in (".cu", ".toml"):
        shutil.copy(HERE / f"{name}{suffix}", tmp_path / f"{name}{suffix}")
    out = check_kernel(tmp_path / f"{name}.cu", target, tmp_path)
    assert out.status == "match", out
