"""The merged view of a read that takes one index apart along its tensor's dims
(``x[r // T, r % T, c]`` on ``[B, T, C]``): which groups merge, with what stride, and the one
strided block (``Rows``) a tile of it is."""

from __future__ import annotations

from cuda2nki.ir.nodes import At, Const, FloorDiv, Mod, Mul, Rows, Slice, Sym
from cuda2nki.passes._merged_rows import merged_read, rows_of

B, T, H, W, C = (Sym(n) for n in ("B", "T", "H", "W", "C"))
r, c = Sym("r"), Sym("c")


def test_two_leading_dims_merge_into_rows_of_the_last() -> None:
    m = merged_read((FloorDiv(r, T), Mod(r, T), c), (B, T, C))
    assert m is not None and m.index == (r, c) and m.strides == (C, Const(1))


def test_three_dims_merge_with_their_product_in_any_order() -> None:
    index = (FloorDiv(r, Mul(W, H)), Mod(FloorDiv(r, W), H), Mod(r, W), c)
    m = merged_read(index, (B, H, W, C))
    assert m is not None and m.index == (r, c)
    assert m.strides[0] == C


def test_a_trailing_group_and_a_fixed_leading_dim() -> None:
    # x[b, c // W, c % W] on [B, H, W]: the columns merge, the batch dim stays
    m = merged_read((Sym("b"), FloorDiv(c, W), Mod(c, W)), (B, H, W))
    assert m is not None and m.index == (Sym("b"), c) and m.strides == (Mul(H, W), Const(1))


def test_reads_that_do_not_take_one_index_apart_do_not_merge() -> None:
    assert merged_read((r, c), (T, C)) is None  # nothing to merge
    assert merged_read((FloorDiv(r, T), Mod(r, H), c), (B, T, C)) is None  # wrong divisor
    assert merged_read((FloorDiv(r, T), Mod(c, T), c), (B, T, C)) is None  # two indices
    assert merged_read((FloorDiv(r, C), Mod(r, T), c), (B, T, C)) is None


def test_a_tile_of_the_merged_view_is_one_rows_block() -> None:
    m = merged_read((FloorDiv(r, T), Mod(r, T), c), (B, T, C))
    view = (Slice(Const(128) * Sym("t"), Const(128)), Slice(Sym("c0"), Sym("n")))
    (sel,) = rows_of(view, m)
    assert sel == Rows(Const(128) * Sym("t") * C + Sym("c0"), Const(128), C, Sym("n"))
    # a per-row value (one column) and a strided column selection
    assert rows_of((Slice(Const(0), Const(64)),), m.__class__((r,), (C,)))[0].width == Const(1)
    assert rows_of((Slice(Const(0), Const(8)), Slice(Const(0), Const(4), 2)), m) is None
    assert rows_of((At(Const(3)), At(Const(1))), m) is None
