"""A pointer left unsized says why: which access, and what in its offset nothing bounds (the
C2N2101 note, and the TODO ``cuda2nki bind`` writes from it)."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.extents import extents
from cuda2nki.lift.infer import infer_binding

SIG = "__global__ void k(float* y, const float* x, int* slot, int n) {"
LAUNCH = {"grid": ["ceil_div(n, 128)"], "block": [128]}
GID = "int i = blockIdx.x * blockDim.x + threadIdx.x;"


def _missing(body: str) -> str | None:
    fn = parse_source(f"{SIG} {body} }}", "k.cu").function("k")
    return extents(fn, LAUNCH)["y"].missing


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("for (int j = 0; x[j] > 0.0f; ++j) y[j] = 1.0f;", "the counter 'j'"),
        (
            "for (int r = 0; r < n; ++r) for (int c = 0; x[c] != 0.0f; c += 4) y[r * n + c] = 0.f;",
            "the counter 'c'",
        ),
        (f"{GID} if (i < n) y[slot[i]] += 1.0f;", "the values read from 'slot'"),
        (f"{GID} if (i < n) {{ int h = (i * 7) ^ 3; y[h] = x[i]; }}", "the value of 'h'"),
    ],
    ids=["for", "inner-for", "data", "xor"],
)
def test_the_reason_names_what_nothing_bounds(body: str, words: str) -> None:
    got = _missing(body)
    assert got is not None and got.startswith("nothing bounds") and words in got
    assert "(line 1)" in got


@pytest.mark.parametrize(
    "body",
    [
        f"{GID} if (i < n) y[(int)x[i]] = 1.0f;",
        "int j = 0; while (x[j] > 0.0f) { y[j] = 0.0f; j += 2; }",
    ],
)
def test_an_address_the_scan_cannot_follow_is_said_so(body: str) -> None:
    assert _missing(body) == "the address (line 1) is not an index the scan can follow"


def test_the_offset_is_spelled_in_source_names() -> None:
    got = _missing(f"{GID} if (i < n) y[n * slot[i] + i] = 0.0f;")
    assert got is not None and "in the offset 'i + slot[...]*n'" in got


def test_a_sized_pointer_has_no_reason() -> None:
    assert _missing(f"{GID} if (i < n) y[i] = x[i];") is None


def test_the_missing_shape_note_carries_the_reason() -> None:
    src = f"{SIG} {GID} if (i < n) {{ int h = (i * 7) ^ 3; y[h] = x[i]; }} }}"
    src += "\nvoid run(float* y, const float* x, int* s, int n) { k<<<(n + 127) / 128, 128>>>(y, x, s, n); }"
    _, diags = infer_binding(parse_source(src, "k.cu"), "k")
    notes = [d.message for d in diags if d.code == "C2N2101" and "shape of 'y'" in d.message]
    assert notes and "the value of 'h'" in notes[0] and "add `y = { shape = [...] }`" in notes[0]
