"""Every recognised corpus port passes our own ``check`` with nothing above a note (slow tier:
it checks the whole corpus).  The ports still short of that are listed with what stands in the
way; the test fails when one of them is fixed (strict), so the list only shrinks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cuda2nki.binding import load_binding
from cuda2nki.diagnostics import Severity
from cuda2nki.fidelity.check import check
from cuda2nki.pipeline import port_file

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
#: how each corpus kernel ports (tests/port/test_corpus_lowering.py keeps it current)
PINNED: dict[str, str] = json.loads(Path(__file__).with_name("corpus_lowering.json").read_text())

#: corpus kernel -> why its generated port still has a finding above a note
KNOWN: dict[str, str] = {}


def _cases() -> list:
    out = []
    for cu in sorted(CORPUS.glob("*/*.cu")):
        rel = f"{cu.parent.name}/{cu.stem}"
        why = KNOWN.get(rel)
        marks = (pytest.mark.slow,) + ((pytest.mark.xfail(reason=why, strict=True),) if why else ())
        out.append(pytest.param(rel, id=rel, marks=marks))
    return out


@pytest.mark.parametrize("rel", _cases())
def test_generated_port_has_nothing_above_a_note(rel: str, tmp_path: Path) -> None:
    cu = CORPUS / f"{rel}.cu"
    binding = load_binding(cu.with_suffix(".toml"))
    res = port_file(cu, binding=binding)
    if not PINNED[rel].startswith("recognised"):
        pytest.skip("pinned as refused or ported literally: not a recognised port")
    assert res.source is not None and not res.literal, f"{rel} no longer ports through a recogniser"
    port = tmp_path / f"{cu.stem}.py"
    port.write_text(res.source)
    rep = check(cu, port, binding=binding, kernel=res.kernel, seeds=1)
    above = [f"{d.code} {d.message}" for d in rep.findings if d.severity != Severity.NOTE]
    assert rep.verdict == "pass" and not above, above
