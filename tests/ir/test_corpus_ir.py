"""Every corpus kernel the lifter claims: its intent and scheduled IR print, parse back equal
(locations included) and verify without errors.  Skipped while the lifter is unavailable."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from cuda2nki.diagnostics import DiagnosticError, Severity
from cuda2nki.ir.parser import parse
from cuda2nki.ir.printer import to_text
from cuda2nki.ir.verify import verify

ROOT = Path(__file__).resolve().parents[2]
KERNELS = sorted(p for p in (ROOT / "corpus").glob("*/*.cu") if p.parent.name != "refuse")


def _port(path: Path):
    lift = importlib.import_module("cuda2nki.lift")
    if not hasattr(lift, "lift_kernel"):
        pytest.skip("lifter not available")
    from cuda2nki.codegen.pipeline import port_file

    try:
        return port_file(path, emit="tiles")
    except DiagnosticError as exc:
        pytest.skip(f"not ported: {exc}")


@pytest.mark.parametrize("path", KERNELS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_corpus_ir_round_trips_and_verifies(path: Path) -> None:
    res = _port(path)
    if res.ir_intent is None:
        pytest.skip("refused by the lifter")
    for layer in (res.ir_intent, res.ir_tiles):
        if layer is None:
            continue
        text = to_text(layer)
        assert parse(text, str(path)) == layer, text
        errors = [d for d in verify(layer) if d.severity is Severity.ERROR]
        assert not errors, "\n".join(d.render() for d in errors) + "\n" + text
