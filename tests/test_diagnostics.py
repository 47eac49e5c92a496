from __future__ import annotations

import pytest

from cuda2nki.diagnostics import Diagnostic, DiagnosticError, Severity, SourceLoc, make, rules


def test_render_is_clang_style_with_caret() -> None:
    d = Diagnostic("C2N0001", Severity.ERROR, "boom", SourceLoc("k.cu", 2, 5))
    text = d.render(["first", "    x = y;"])
    assert text.splitlines() == ["k.cu:2:5: error: boom [C2N0001]", "    x = y;", "    ^"]


def test_make_formats_registered_template() -> None:
    d = make("C2N0001", SourceLoc("a.cu", 1, 1), path="a.cu", reason="no such file")
    assert d.message == "cannot read 'a.cu': no such file"
    assert d.severity is Severity.ERROR


def test_unknown_id_is_refused() -> None:
    with pytest.raises(KeyError):
        make("C2N9999")


def test_every_rule_is_well_formed() -> None:
    for code, r in rules().items():
        assert code == r.code
        assert code.startswith("C2N") and len(code) == 7 and code[3:].isdigit()
        assert r.title and r.message


def test_diagnostic_error_carries_all() -> None:
    a = make("C2N0002", option="--x", reason="bad")
    err = DiagnosticError([a, a])
    assert err.diagnostic is a and len(err.diagnostics) == 2
