"""Inside ``remembering_parses`` the same parse is done once; any difference in what a parse
depends on (text, options, macros whose -D wins) parses again; outside, nothing is kept."""

from __future__ import annotations

import pytest

from cuda2nki.diagnostics import DiagnosticError, SourceLoc, make
from cuda2nki.frontend import parse_source
from cuda2nki.frontend.remember import remembered_about, remembering_parses
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


def test_results_about_a_unit_are_kept_by_identity_and_key():
    calls = []

    def compute(tag):  # type: ignore[no-untyped-def]
        calls.append(tag)
        return [tag]

    with remembering_parses():
        tu = parse_source(SRC, "a.cu")
        other = parse_source(SRC, "b.cu")
        first = remembered_about(tu, "k", lambda: compute(1))
        assert remembered_about(tu, "k", lambda: compute(2)) is first
        assert remembered_about(tu, "j", lambda: compute(3)) == [3]
        assert remembered_about(other, "k", lambda: compute(4)) == [4]
    assert remembered_about(tu, "k", lambda: compute(5)) == [5]
    assert calls == [1, 3, 4, 5]


def test_a_diagnostic_raised_about_a_unit_is_raised_again():
    calls = []

    def refuse():  # type: ignore[no-untyped-def]
        calls.append(1)
        raise DiagnosticError(make("C2N2502", SourceLoc("a.cu", 1, 1), kernel="k", missing="n"))

    with remembering_parses():
        tu = parse_source(SRC, "a.cu")
        for _ in range(2):
            with pytest.raises(DiagnosticError):
                remembered_about(tu, "k", refuse)
    assert calls == [1]
