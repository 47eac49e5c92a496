from __future__ import annotations

from cuda2nki.cli.main import main


def test_help_exits_zero(capsys) -> None:
    assert main(["--help"]) == 0
    assert "cuda2nki" in capsys.readouterr().out


def test_no_command_is_usage_error(capsys) -> None:
    assert main([]) == 2


def test_unknown_command_is_usage_error(capsys) -> None:
    assert main(["frobnicate"]) == 2


def test_output_into_a_closed_pipe_is_quiet() -> None:
    """`cuda2nki rules | head -1`: the reader leaving is not an internal error."""
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "cuda2nki", "rules", "--format", "md"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # like `head -1` exiting
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "C2N0005" not in err and "Traceback" not in err, err
