"""Diagnostics as clang prints them: notes with a location, colour on a terminal only,
``NO_COLOR`` / ``FORCE_COLOR`` respected."""

from __future__ import annotations

import io
import pickle

import pytest

from cuda2nki.cli.common import print_diagnostics
from cuda2nki.diagnostics import Note, SourceLoc, make, use_color

LOC = SourceLoc("k.cu", 3, 5)
ELSEWHERE = SourceLoc("port.py", 9, 1)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _diag():
    return make(
        "C2N0007",
        LOC,
        notes=["plain note", Note("about the port", ELSEWHERE)],
        kernel="k",
        known="'j'",
    )


def test_notes_carry_a_location() -> None:
    lines = _diag().render().splitlines()
    assert lines[0].startswith("k.cu:3:5: error: ")
    assert lines[1] == "k.cu:3:5: note: plain note"
    assert lines[2] == "port.py:9:1: note: about the port"


def test_related_locations_in_the_dictionary() -> None:
    d = _diag().to_dict()
    assert d["notes"] == ["plain note", "about the port"]
    assert d["related"] == [{"file": "port.py", "line": 9, "col": 1, "message": "about the port"}]


def test_note_survives_pickling() -> None:
    n = pickle.loads(pickle.dumps(Note("x", ELSEWHERE)))
    assert n == "x" and n.loc == ELSEWHERE


@pytest.mark.parametrize(
    ("env", "tty", "coloured"),
    [
        ({}, True, True),
        ({}, False, False),
        ({"NO_COLOR": "1"}, True, False),
        ({"FORCE_COLOR": "1"}, False, True),
        ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, True, False),
        ({"NO_COLOR": ""}, True, True),  # empty means unset
        ({"TERM": "dumb"}, True, False),
    ],
)
def test_colour_follows_the_terminal_and_the_environment(monkeypatch, env, tty, coloured) -> None:
    for var in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(var, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    stream = _Tty() if tty else io.StringIO()
    assert use_color(stream) is coloured
    print_diagnostics([_diag()], stream)
    text = stream.getvalue()
    assert ("\x1b[" in text) is coloured
    plain = text
    if coloured:
        import re

        plain = re.sub(r"\x1b\[[0-9;]*m", "", text)
        assert "\x1b[1;31merror:\x1b[0m" in text and "\x1b[1;36mnote:\x1b[0m" in text
    assert "k.cu:3:5: error: the binding has no entry for kernel 'k'" in plain


def test_check_text_report_is_coloured_like_the_diagnostics() -> None:
    from cuda2nki.report.check import to_text

    finding = {**_diag().to_dict()}
    report = {
        "findings": [finding],
        "numerics": [],
        "verdict": "fail",
        "kernel": "k",
        "cuda_file": "k.cu",
        "port_kernel": "k",
        "port_file": "port.py",
        "api": "nki",
    }
    plain = to_text(report)
    assert "k.cu:3:5: error: " in plain and "port.py:9:1: note: about the port" in plain
    assert "\x1b[" not in plain
    coloured = to_text(report, color=True)
    assert "\x1b[1;31merror:\x1b[0m" in coloured and "\x1b[1;36mnote:\x1b[0m" in coloured


def test_check_cli_colours_only_with_force_color(monkeypatch, capsys) -> None:
    from pathlib import Path

    from cuda2nki.cli.main import main

    root = Path(__file__).resolve().parents[1]
    argv = [
        "check",
        str(root / "corpus/norm/softmax_naive.cu"),
        str(root / "corpus/norm/ports/softmax_naive_flaw_missing_tail.py"),
        "--static-only",
    ]
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    main(argv)
    assert "\x1b[" not in capsys.readouterr().out
    monkeypatch.setenv("FORCE_COLOR", "1")
    main(argv)
    out = capsys.readouterr().out
    assert "\x1b[1;35mwarning:\x1b[0m" in out and "[static only]" in out
