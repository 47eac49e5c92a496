"""``cuda2nki check`` on the corpus's hand-written ports: correct ones pass clean, flawed ones are caught.

Each port's module docstring carries an ``EXPECT:`` line, e.g.
``EXPECT: defect:tiles C2N4008 (needs M > 128)`` or ``EXPECT: pass; C2N5002 (no tensor engine)``:
parts separated by ``;`` (parenthesised comments dropped); a part lists ids that must all be
reported, or alternatives joined by ``or``; ``defect:KIND`` / ``precision`` name the expected
numerical classification, ``pass`` says the numbers must match.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from cuda2nki.fidelity.check import check

ROOT = Path(__file__).resolve().parents[2]
PORTS = sorted(ROOT.glob("corpus/*/ports/*.py"))
ID = re.compile(r"C2N\d{4}")


def _expect(port: Path) -> str | None:
    doc = ast.get_docstring(ast.parse(port.read_text())) or ""
    m = re.search(r"EXPECT:\s*(.+)", doc)
    return m.group(1).strip() if m else None


def _cuda_for(port: Path) -> Path:
    stem = port.stem.split("_port")[0].split("_flaw_")[0].removesuffix("_legacy")
    return port.parent.parent / f"{stem}.cu"


def _detection_table() -> dict[str, str]:
    """The flawed-port table of docs/guide/reviewing.md: corpus-relative port path -> caught as."""
    rows = {}
    text = (ROOT / "docs/guide/reviewing.md").read_text()
    for m in re.finditer(
        r"^\|[^|\n]+\|\s*`([^`]+_flaw_[^`]+\.py)`\s*\|([^|\n]+)\|\s*$", text, re.M
    ):
        rows[m.group(1)] = re.sub(r"\([^)]*\)", "", m.group(2)).strip()
    return rows


DETECTION = _detection_table()


def test_detection_table_lists_every_flawed_port() -> None:
    flawed = {p.relative_to(ROOT / "corpus").as_posix() for p in PORTS if _expect(p) is not None}
    assert set(DETECTION) == flawed


def _parts(expect: str) -> list[str]:
    return [p.strip() for p in re.sub(r"\([^)]*\)", "", expect).split(";") if p.strip()]


@pytest.mark.parametrize("port", [p for p in PORTS if _expect(p) is None], ids=lambda p: p.stem)
def test_correct_port_passes_clean(port: Path) -> None:
    rep = check(_cuda_for(port), port, seeds=2)
    d = rep.to_dict()
    above_note = [f for f in d["findings"] if f["severity"] != "note"]
    assert rep.verdict == "pass", (
        above_note,
        [n for n in d["numerics"] if n["classification"] != "expected"],
    )
    assert not above_note


@pytest.mark.parametrize("port", [p for p in PORTS if _expect(p) is not None], ids=lambda p: p.stem)
def test_flawed_port_is_caught(port: Path) -> None:
    expect = _expect(port)
    assert expect
    rep = check(_cuda_for(port), port, seeds=2)
    assert rep.verdict == "fail"
    found = {f.code for f in rep.findings}
    classes = {(n["classification"], n.get("defect")) for n in rep.numerics}
    parts = _parts(expect)
    # "X; Y otherwise": Y is an alternative to X (it depends on the shapes checked)
    groups: list[list[str]] = []
    for part in parts:
        if part.endswith("otherwise") and groups:
            groups[-1].append(part)
        else:
            groups.append([part])
    for alternatives in groups:
        assert any(_holds(p, found, classes) for p in alternatives), (alternatives, found, classes)
    caught = DETECTION.get(port.relative_to(ROOT / "corpus").as_posix())
    assert caught and _holds(caught, found, classes), (caught, found, classes)


def _holds(part: str, found: set[str], classes: set[tuple[str, str | None]]) -> bool:
    head = part.split()[0]
    ids = ID.findall(part)
    ok = bool(found & set(ids)) if " or " in part else set(ids) <= found
    if head.startswith("defect"):
        kind = head.partition(":")[2]
        ok = ok and any(c == "defect" and (not kind or d == kind) for c, d in classes)
    elif head == "precision":  # precision loss, and nothing worse than it
        ok = ok and ("precision", None) in classes
        ok = ok and all(c in ("precision", "expected") for c, _ in classes)
    elif head == "pass":
        ok = ok and all(c == "expected" for c, _ in classes)
    return ok
