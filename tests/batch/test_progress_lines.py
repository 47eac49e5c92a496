"""`migrate` in CI (stderr not a terminal) prints a plain progress line periodically, so a log
never goes quiet for minutes."""

from __future__ import annotations

import io
import time

from cuda2nki.batch.migrate import plain_progress, progress_printer


def test_plain_lines_arrive_periodically_even_between_files() -> None:
    out = io.StringIO()
    update, stop = plain_progress(0.05, out)
    update(0, 0, 7)
    time.sleep(0.3)  # no file finishes: the ticker still reports
    update(3, 1, 7)
    time.sleep(0.15)
    stop()
    lines = out.getvalue().splitlines()
    assert len(lines) >= 4, lines
    assert lines[0].startswith("migrate: 0/7 files, 0 failed")
    assert any(ln.startswith("migrate: 3/7 files, 1 failed, ") for ln in lines)
    assert "files/s" in lines[-1] and "\x1b" not in out.getvalue()


def test_not_a_terminal_gets_plain_lines(monkeypatch) -> None:
    out = io.StringIO()
    monkeypatch.delenv("CI", raising=False)
    update, stop = progress_printer(True, 0.05, out)  # pytest's stderr is not a terminal
    assert update is not None
    update(1, 0, 2)
    time.sleep(0.12)
    stop()
    assert "migrate: 1/2 files, 0 failed" in out.getvalue()


def test_quiet_prints_nothing() -> None:
    update, stop = progress_printer(False, 0.01)
    assert update is None
    stop()


def test_migrate_cli_prints_progress_lines(tmp_path, capsys) -> None:
    from pathlib import Path

    from cuda2nki.cli.main import main

    root = Path(__file__).resolve().parents[2]
    src = tmp_path / "src"
    src.mkdir()
    for name in ("vector_add.cu", "vector_add.toml", "saxpy.cu", "saxpy.toml"):
        (src / name).write_text((root / "corpus/basic" / name).read_text())
    assert main(["migrate", str(src), "-o", str(tmp_path / "out"), "--progress-every", "0.01"]) == 0
    err = capsys.readouterr().err
    assert "migrate: 2/2 files, 0 failed" in err, err
