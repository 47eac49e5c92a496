"""Findings are silenced by id (``--ignore``) or by a ``# cuda2nki: ignore[ID]`` comment on the
reported line; silenced findings are counted (note C2N5013), never dropped silently (§5)."""

from __future__ import annotations

from pathlib import Path

import pytest

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


GOOD = ROOT / "corpus/basic/ports/vector_add_port.py"


def test_the_comment_s_reason_is_reported_with_the_id_and_line(tmp_path: Path) -> None:
    before = _run(FLAWED)
    lit = next(d for d in before.findings if d.code == "C2N5001")
    lines = FLAWED.read_text().splitlines()
    lines.insert(lit.loc.line - 1, "    # cuda2nki: ignore[C2N5001] one thread per partition here")
    port = tmp_path / FLAWED.name
    port.write_text("\n".join(lines) + "\n")
    after = _run(port)
    (note,) = [d for d in after.findings if d.code == "C2N5013"]
    (why,) = [n for n in note.notes if n.startswith("C2N5001")]
    assert f"line {lit.loc.line}" in why and why.endswith("one thread per partition here")
    assert f":{lit.loc.line + 1})" in why  # the finding's own line, below the comment


@pytest.mark.parametrize(
    "comment",
    [
        "# cuda2nki: ignore-file[*] a blanket",
        "# cuda2nki: ignore-file[C2N4001]",
        "# cuda2nki: ignore[C2N4001,C2N5007] on the store",
    ],
)
def test_no_inline_comment_hides_a_numerics_finding(tmp_path: Path, comment: str) -> None:
    """A port that adds where the kernel adds, less one: the output differs (C2N4001) whatever
    its comments say, and the verdict is a fail."""
    src = GOOD.read_text().replace("op=nl.add)", "op=nl.subtract)")
    lines = src.splitlines()
    at = next(i for i, ln in enumerate(lines) if "dst=out[" in ln)
    lines.insert(at, "        " + comment)
    port = tmp_path / GOOD.name
    port.write_text("\n".join(lines) + "\n")
    rep = _run(port)
    assert "C2N4001" in [d.code for d in rep.findings]
    assert rep.verdict == "fail"
