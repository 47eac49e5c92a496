"""Every corpus kernel ported literally passes our own ``check`` with nothing above a note after
the port's inline suppressions (slow tier: it ports and checks each such kernel).  A literal port
earns no suppression for being literal: only a finding that the kernel's own shape forces may be
suppressed, with its reason (cuda2nki.codegen.suppress).  The kernels still short of that are
listed with what stands in the way; the test fails when one of them is fixed (strict), so the
list only shrinks -- and a kernel that comes to port through a recogniser leaves this test for
tests/port/test_corpus_findings.py."""

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
LITERAL = sorted(rel for rel, how in PINNED.items() if how.startswith("literal"))

#: literal corpus port -> why it still has a finding above a note (no recogniser claims the
#: kernel, and the thread-by-thread lowering is what the findings describe)
KNOWN: dict[str, str] = {
    "misc/compact_above": "slots and the survivors' scatter are found on chip (315 DMAs), but "
    "one 128-thread block per (128, 1) tile and the shared counters in DRAM, read back by every "
    "thread each pass: DMAs of 4 B per partition row (C2N5001, C2N5006, C2N5007, C2N5014)",
    "misc/fir_taps_template": "the per-thread trip count min(7, n - i) keeps the taps a runtime "
    "loop of one-element reads: 12x the needed DMA traffic (C2N5014); the stencil recogniser "
    "does not claim a loop whose bound is a min",
}


def test_the_known_list_names_only_literal_ports() -> None:
    assert set(KNOWN) <= set(LITERAL), sorted(set(KNOWN) - set(LITERAL))


def _cases() -> list:
    out = []
    for rel in LITERAL:
        why = KNOWN.get(rel)
        marks = (pytest.mark.slow,) + ((pytest.mark.xfail(reason=why, strict=True),) if why else ())
        out.append(pytest.param(rel, id=rel, marks=marks))
    return out


@pytest.mark.parametrize("rel", _cases())
def test_literal_port_has_nothing_above_a_note(rel: str, tmp_path: Path) -> None:
    cu = CORPUS / f"{rel}.cu"
    binding = load_binding(cu.with_suffix(".toml"))
    res = port_file(cu, binding=binding)
    assert res.source is not None and res.literal, f"{rel} no longer ports literally"
    port = tmp_path / f"{cu.stem}.py"
    port.write_text(res.source)
    rep = check(cu, port, binding=binding, kernel=res.kernel, seeds=1)
    above = [f"{d.code} {d.message}" for d in rep.findings if d.severity != Severity.NOTE]
    assert rep.verdict == "pass" and not above, above
