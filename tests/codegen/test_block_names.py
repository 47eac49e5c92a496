"""A contraction's block sizes are named after the dimension they block (``M_block``,
``N_block``, and ``N_block_n`` for the part of a block the problem fills), whatever the CUDA
kernel calls its dimensions; sizes that block no single dimension keep the generic name."""

from __future__ import annotations

import re

import pytest

from cuda2nki.binding import load_binding
from cuda2nki.codegen.block_names import block_name, blocked_dim
from cuda2nki.ir.nodes import Add, Const, FloorDiv, Max, Min, Mul, Sym
from cuda2nki.pipeline import port_file
from tests.port.acceptance import CORPUS

M, N, K = Sym("M"), Sym("N"), Sym("K")
DIMS = {"M", "N", "K"}


def _round(x: Sym, c: int) -> Mul:
    return Mul(Const(c), FloorDiv(Add(x, Const(c - 1)), Const(c)))


def _room(x: Sym) -> Mul:  # what SBUF holds, as a function of another dimension
    return Mul(Const(512), Max(Const(1), FloorDiv(Const(128), Add(x, Const(4)))))


def test_the_dimension_is_the_one_the_first_bound_rounds() -> None:
    n_block = Min(_round(N, 512), _room(K))
    assert blocked_dim(n_block, DIMS, {}) == "N"
    assert blocked_dim(Min(_round(M, 128), _room(N)), DIMS, {}) == "M"
    # the part of a named block the problem fills blocks the same dimension
    assert blocked_dim(Min(n_block, N), DIMS, {n_block: "N"}) == "N"
    # a constant first bound: the second names the dimension
    assert blocked_dim(Min(Const(4096), Max(Const(1), FloorDiv(N, Const(128)))), DIMS, {}) == "N"


def test_sizes_that_block_no_single_dimension_get_no_dimension() -> None:
    assert blocked_dim(Min(Const(512), Add(M, N)), DIMS, {}) is None
    assert blocked_dim(Mul(Const(2), N), DIMS, {}) is None
    assert blocked_dim(Min(Const(512), Sym("t")), DIMS, {}) is None  # a loop variable


def test_names_stay_fresh() -> None:
    assert block_name("N", set()) == "N_block"
    assert block_name("N", {"N_block"}) == "N_block_n"
    assert block_name("N", {"N_block", "N_block_n"}) == "N_block_n1"
    assert block_name(None, set()) == "f_size"
    assert block_name(None, {"f_size"}) == "f_size1"


def _port(rel: str) -> str:
    path = CORPUS / f"{rel}.cu"
    src = port_file(path, binding=load_binding(path.with_suffix(".toml"))).source
    assert src is not None
    return src


@pytest.mark.parametrize(
    ("rel", "rows", "cols"),
    [
        ("linalg/matmul_naive", "M", "N"),
        ("linalg/sgemm_blocktile_1d", "M", "N"),
        ("linalg/mm_scaled_rows_x", "NI", "NJ"),
        ("linalg/gemm_beta_inplace", "ni", "nj"),
    ],
)
def test_matmul_ports_name_their_blocks(rel: str, rows: str, cols: str) -> None:
    src = _port(rel)
    named = set(re.findall(r"^    (\w+) = min\(", src, re.M))
    assert {f"{rows}_block", f"{cols}_block"} <= named, named
    assert "f_size" not in src
    # each block drives the loop over its dimension
    rows_of = rf"({rows}|max\({rows}, 0\))"
    assert re.search(rf"range\(\({rows_of} \+ {rows}_block - 1\) // {rows}_block\)", src), rel


def test_a_flat_split_keeps_the_generic_name() -> None:
    # an elementwise kernel's per-partition width is no matmul block
    assert "f_size = min(" in _port("basic/saxpy")
