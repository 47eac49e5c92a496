"""Merged views of a bound shape: groupings of contiguous dims, fewest merges first, and the
indices of a view taken back apart along the bound dims."""

from __future__ import annotations

from cuda2nki.lift import affine as af
from cuda2nki.lift.views import expand, merged_shape, merges, split_by_view


def test_merges_of_three_dims_fewest_first() -> None:
    assert list(merges(3)) == [
        ((0,), (1, 2)),
        ((0, 1), (2,)),
        ((0, 1, 2),),
    ]
    assert list(merges(1)) == []
    assert len(list(merges(4))) == 7  # every grouping but all singletons


def test_expand_takes_a_merged_index_apart_row_major() -> None:
    B, T, C = af.sym("B"), af.sym("T"), af.sym("C")
    i, c = af.sym("i"), af.sym("c")
    shape = (B, T, C)
    assert merged_shape(shape, ((0, 1), (2,))) == (B * T, C)
    dims = expand([i, c], shape, ((0, 1), (2,)))
    env = {"i": 11, "c": 2, "B": 3, "T": 4, "C": 5}
    assert [d.evaluate(env) for d in dims] == [11 // 4, 11 % 4, 2]
    flat = expand([i * C + c], shape, ((0, 1, 2),))
    assert [d.evaluate(env) for d in flat] == [(11 * 5 + 2) // 20, (11 * 5 + 2) // 5 % 4, 2]


def test_split_by_view_takes_the_first_view_that_splits() -> None:
    B, T, V = af.sym("B"), af.sym("T"), af.sym("V")
    i, y = af.sym("i"), af.sym("y")
    seen = []

    def split(flat, view):
        seen.append(view)
        return [i, y] if view == (B * T, V) else None

    dims = split_by_view(i * V + y, (B, T, V), split)
    assert seen == [(B, T * V), (B * T, V)]
    env = {"i": 7, "y": 1, "B": 2, "T": 3, "V": 4}
    assert [d.evaluate(env) for d in dims] == [2, 1, 1]
    assert split_by_view(i, (B,), split) is None
