"""Findings are silenced by id (``--ignore``) or by a ``# cuda2nki: ignore[ID]`` comment on the
reported line; silenced findings are counted (note C2N5013), never dropped silently (§5)."""

from __future__ import annotations

from pathlib import Path

from cuda2nki.fidelity.check import check

ROOT = Path(__file__).resolve().parents[2]
CUDA = ROOT / "corpus/basic/vector_add.cu"
FLAWED = ROOT / "corpus/basic/ports/vector_add_flaw_literal_thread.py"
ONE = {"N": 4096}


def _run(port: Path, **kw):
    return check(CUDA, port, seeds=1, overrides=ONE, extra_points=False, **kw)


def test_inline_comment_silences_the_finding_on_its_line(tmp_path: Path) -> None:
    before = _run(FLAWED)
    lit = next(d for d in before.findings if d.code == "C2N5001")
    lines = FLAWED.read_text().splitlines()
    lines[lit.loc.line - 1] += "  # cuda2nki: ignore[C2N5001]"
    port = tmp_path / FLAWED.name
    port.write_text("\n".join(lines) + "\n")
    after = _run(port)
    codes = [d.code for d in after.findings]
    assert "C2N5001" not in codes and "C2N5013" in codes
    assert after.suppressed >= 1
    assert {c for c in codes if c != "C2N5013"} == {d.code for d in before.findings} - {"C2N5001"}


def test_ignore_by_id(tmp_path: Path) -> None:
    rep = _run(FLAWED, ignore=("C2N5001", "C2N5007"))
    assert [d.code for d in rep.findings] == ["C2N5013"]
    assert rep.verdict == "pass"  # only a note is left
