"""A test point whose first run is heavy (a literal, thread-by-thread port issues thousands of
engine instructions per run) runs once: its other seeds and the determinism re-run are left out,
and the check says so (C2N4029).  A point under the limit runs every seed and the re-run."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.fidelity.check import HEAVY_RUN_INSTRUCTIONS, check
from cuda2nki.fidelity.sandbox_child import _heavy

ROOT = Path(__file__).resolve().parents[2]
VADD = ROOT / "corpus/basic/vector_add.cu"
VADD_PORT = ROOT / "corpus/basic/ports/vector_add_port.py"
GELU = ROOT / "corpus/activation/gelu_tanh.cu"
GELU_FLAW = ROOT / "corpus/activation/ports/gelu_tanh_flaw_changed_constant.py"


@pytest.mark.parametrize(
    ("entry", "limit", "want"),
    [
        ({"status": "ok", "instructions": 12_002}, 5_000, True),
        ({"status": "ok", "instructions": 5_000}, 5_000, False),
        ({"status": "ok", "instructions": 12_002}, None, False),
        ({"status": "error", "instructions": 12_002}, 5_000, False),
        ({"status": "ok"}, 0, False),
        ({"status": "ok", "instructions": 3}, True, False),  # not a count
    ],
)
def test_heavy_first_run(entry: dict, limit: object, want: bool) -> None:
    assert _heavy(entry, limit) is want


def _seeds_per_point(rep) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for n in rep.numerics:
        if "seed" in n:
            out.setdefault(n["shape"], set()).add(n["seed"])
    return out


def test_heavy_points_run_once_and_say_so() -> None:
    full = check(VADD, VADD_PORT, seeds=3, extra_points=False, heavy_instructions=None)
    once = check(VADD, VADD_PORT, seeds=3, extra_points=False, heavy_instructions=1)
    assert full.verdict == once.verdict == "pass"
    assert not [f for f in full.findings if f.code == "C2N4029"]
    every = _seeds_per_point(full)
    assert every and all(s == {0, 1, 2} for s in every.values())
    # the first seed alone is compared (with its own reference), at every point
    first = _seeds_per_point(once)
    assert first.keys() == every.keys() and all(s == {0} for s in first.values())
    notes = [f for f in once.findings if f.code == "C2N4029"]
    assert len(notes) == 1 and notes[0].loc.file.endswith("vector_add_port.py")
    assert "not 3 more time(s)" in notes[0].message and "check's 1 for" in notes[0].message
    assert all(f"{label} (" in notes[0].message for label in every)


def test_under_the_limit_every_seed_runs() -> None:
    rep = check(VADD, VADD_PORT, seeds=2, extra_points=False)
    assert HEAVY_RUN_INSTRUCTIONS > 100  # a tiled port's run at the binding's points is far under
    assert not [f for f in rep.findings if f.code == "C2N4029"]
    assert all(s == {0, 1} for s in _seeds_per_point(rep).values())


def test_a_heavy_flawed_port_still_fails() -> None:
    rep = check(GELU, GELU_FLAW, seeds=2, extra_points=False, heavy_instructions=1)
    assert rep.verdict == "fail"
    assert [f for f in rep.findings if f.code == "C2N4029"]
