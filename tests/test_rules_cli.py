from __future__ import annotations

import json

from cuda2nki.cli.main import main
from cuda2nki.diagnostics import rules


def test_rules_lists_every_id(capsys) -> None:
    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    for code in rules():
        assert code in out


def test_rules_one_entry_and_formats(capsys) -> None:
    assert main(["rules", "c2n0003"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("C2N0003 (error): invalid binding file") and "fix:" in text
    assert main(["rules", "C2N0003", "--format", "json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)
    assert entry["code"] == "C2N0003" and entry["severity"] == "error"
    assert main(["rules", "C2N0003", "--format", "md"]) == 0
    assert capsys.readouterr().out.startswith("## C2N0003")


def test_unknown_rule_is_usage_error(capsys) -> None:
    assert main(["rules", "C2N9998"]) == 2
    assert "C2N0002" in capsys.readouterr().err
