"""``check`` launches the port's sandbox first, so its start-up overlaps parsing and lifting the
CUDA kernel; a check that stops before the port runs leaves no sandbox behind."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.fidelity import check as checker
from cuda2nki.fidelity.check import check

ROOT = Path(__file__).resolve().parents[2]
VADD = ROOT / "corpus/basic/vector_add.cu"
PORT = ROOT / "corpus/basic/ports/vector_add_port.py"


def _sandbox_dirs() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("c2n-sandbox-*"))


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A $TMPDIR of this test's own (other tests' sandboxes may start and stop meanwhile)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def test_the_sandbox_is_launched_before_the_kernel_is_parsed(monkeypatch) -> None:
    from cuda2nki import frontend

    launched: list[bool] = []

    real = frontend.parse_source
    state: dict[str, object] = {}
    real_launch = checker.PortSandbox.launch

    def launch(self) -> None:
        launched.append(True)
        real_launch(self)

    def parse_source(*a, **k):
        state["launched_before_parse"] = bool(launched)
        return real(*a, **k)

    monkeypatch.setattr(checker.PortSandbox, "launch", launch)
    monkeypatch.setattr(frontend, "parse_source", parse_source)
    rep = check(VADD, PORT, seeds=1, extra_points=False)
    assert rep.verdict == "pass" and state["launched_before_parse"] is True


def test_a_check_that_stops_early_leaves_no_sandbox(private_tmp: Path) -> None:
    with pytest.raises(DiagnosticError):
        check(VADD, PORT, kernel="no_such_kernel", seeds=1)
    assert _sandbox_dirs() == set()
