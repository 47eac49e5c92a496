"""Outputs are written atomically, with the permissions a user expects."""

from __future__ import annotations

import os
import stat

import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.fileio import _UMASK, write_atomic


def _mode(p) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_new_file_has_the_usual_permissions(tmp_path) -> None:
    p = tmp_path / "sub" / "port.py"
    write_atomic(p, "x = 1\n")
    assert p.read_text() == "x = 1\n"
    assert _mode(p) == 0o666 & ~_UMASK  # not the temporary file's 0600


def test_rewritten_file_keeps_its_permissions(tmp_path) -> None:
    p = tmp_path / "report.md"
    p.write_text("old")
    os.chmod(p, 0o640)
    write_atomic(p, b"new")
    assert p.read_bytes() == b"new" and _mode(p) == 0o640


def test_failed_write_leaves_no_temporary_file(tmp_path) -> None:
    target = tmp_path / "dir"
    target.mkdir()
    (target / "keep").write_text("")
    with pytest.raises(DiagnosticError) as ei:
        write_atomic(target, "x")  # replacing a directory by a file fails
    assert ei.value.diagnostic.code == "C2N0004"
    assert sorted(q.name for q in tmp_path.iterdir()) == ["dir"]
