from __future__ import annotations

from cuda2nki.cli.main import main


def test_help_exits_zero(capsys) -> None:
    assert main(["--help"]) == 0
    assert "cuda2nki" in capsys.readouterr().out


def test_no_command_is_usage_error(capsys) -> None:
    assert main([]) == 2


def test_unknown_command_is_usage_error(capsys) -> None:
    assert main(["frobnicate"]) == 2
