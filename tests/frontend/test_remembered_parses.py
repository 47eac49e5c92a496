"""Inside ``remembering_parses`` the same parse is done once; any difference in what a parse
depends on (text, options, macros whose -D wins) parses again; outside, nothing is kept."""

from __future__ import annotations

from cuda2nki.frontend import parse_source
from cuda2nki.frontend.remember import remembering_parses
from cuda2nki.frontend.sizemacros import defines_win

SRC = """#define WIDTH 64
__global__ void scale(float* v, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && i < WIDTH) v[i] *= s;
}
"""


def test_same_parse_in_scope_is_shared():
    with remembering_parses():
        a = parse_source(SRC, "a.cu", defines={"X": "1"}, include_dirs=["inc"])
        b = parse_source(SRC, "a.cu", defines={"X": "1"}, include_dirs=("inc",))
    assert a is b


def test_any_difference_parses_again():
    with remembering_parses():
        a = parse_source(SRC, "a.cu")
        assert parse_source(SRC, "b.cu") is not a
        assert parse_source(SRC + "\n", "a.cu") is not a
        assert parse_source(SRC, "a.cu", defines={"WIDTH": "8"}) is not a
        assert parse_source(SRC, "a.cu", templates={"T": "float"}) is not a
        with defines_win({"WIDTH": "8"}):
            assert parse_source(SRC, "a.cu", defines={"WIDTH": "8"}) is not a
        assert parse_source(SRC, "a.cu") is a


def test_nothing_kept_outside_the_scope():
    with remembering_parses():
        inside = parse_source(SRC, "a.cu")
    assert parse_source(SRC, "a.cu") is not inside
    assert parse_source(SRC, "a.cu") is not parse_source(SRC, "a.cu")
