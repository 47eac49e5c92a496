"""``cuda2nki check --format text|md|html`` and ``--target``: every report form carries the verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
CUDA = str(ROOT / "corpus/basic/vector_add.cu")
PORT = str(ROOT / "corpus/basic/ports/vector_add_port.py")
FLAWED = str(ROOT / "corpus/norm/ports/softmax_naive_flaw_missing_tail.py")


@pytest.mark.parametrize(
    ("fmt", "target", "marker"),
    [
        ("text", "trn1", "verdict: PASS"),
        ("md", "trn2", "**Verdict: PASS**"),
        ("html", "trn3", "Verdict: PASS"),
    ],
)
def test_report_formats(tmp_path: Path, fmt: str, target: str, marker: str) -> None:
    out = tmp_path / f"report.{fmt}"
    argv = ["check", CUDA, PORT, "--seeds", "1", "--set", "N=1000", "--format", fmt]
    assert main([*argv, "--target", target, "-o", str(out)]) == 0
    assert marker in out.read_text()


def test_markdown_report_of_a_failing_port_lists_ids_and_lines(tmp_path: Path) -> None:
    cuda = str(ROOT / "corpus/norm/softmax_naive.cu")
    out = tmp_path / "report.md"
    argv = ["check", cuda, FLAWED, "--seeds", "1", "--set", "N=200", "--format", "md"]
    assert main([*argv, "-o", str(out)]) == 1
    text = out.read_text()
    assert "**Verdict: FAIL**" in text and "C2N4003" in text and "C2N5003" in text


def test_review_refuses_an_unknown_report_type_before_running_anything(tmp_path: Path) -> None:
    assert main(["review", CUDA, PORT, "-o", str(tmp_path / "review.pdf")]) == 2
    assert not (tmp_path / "review.pdf").exists()
