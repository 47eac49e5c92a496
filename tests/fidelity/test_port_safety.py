"""``cuda2nki check`` on ports that misbehave: each misbehaviour is a finding with its own id, on the
port's own file, and the check itself finishes normally (issue 5 §7)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.fidelity.check import check

ROOT = Path(__file__).resolve().parents[2]
CUDA = ROOT / "corpus/basic/vector_add.cu"
PORT = (ROOT / "corpus/basic/ports/vector_add_port.py").read_text()
BODY = "    (N,) = a.shape\n"
ONE = {"N": 1000}  # one test point
HOG = "hog = []\nwhile True:\n    hog.append(bytearray(1 << 26))\n"


def _port(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "port.py"
    p.write_text(text)
    return p


def _indent(code: str) -> str:
    return "".join("    " + line + "\n" for line in code.splitlines())


@pytest.mark.parametrize(
    ("where", "text"),
    [
        ("kernel", PORT.replace(BODY, BODY + _indent(HOG))),
        ("module", PORT.replace("import nki\n", "import nki\n" + HOG, 1)),
    ],
)
def test_unbounded_allocation_is_reported_as_exhausting_memory(
    tmp_path: Path, where: str, text: str
) -> None:
    port = _port(tmp_path, text)
    rep = check(CUDA, port, seeds=1, memory_mb=1024, extra_points=False, timeout=60, overrides=ONE)
    assert rep.verdict == "fail"
    # stopped before any output existed: the numbers are unknown, not wrong
    assert rep.numerics_outcome == "unfinished"
    codes = {d.code for d in rep.findings}
    assert "C2N4016" in codes, [d.message for d in rep.findings]
    mem = next(d for d in rep.findings if d.code == "C2N4016")
    assert Path(mem.loc.file).name == "port.py" and mem.loc.line > 1


def test_a_call_out_is_reported_once_on_the_port(tmp_path: Path) -> None:
    text = PORT.replace(BODY, BODY + "    import subprocess\n    subprocess.run(['true'])\n")
    rep = check(CUDA, _port(tmp_path, text), seeds=1, extra_points=False, timeout=60, overrides=ONE)
    assert rep.verdict == "fail"
    assert [d.code for d in rep.findings if d.severity.name == "ERROR"] == ["C2N4017"]
    assert all(Path(d.loc.file).name == "port.py" for d in rep.findings)


@pytest.mark.parametrize(
    ("snippet", "code", "numerics"),
    [
        ("    raise ValueError('unfinished')\n", "C2N3023", "fail"),
        ("    while True:\n        pass\n", "C2N4015", "unfinished"),
        ("    import os\n    os._exit(3)\n", "C2N4018", "fail"),
    ],
    ids=["raises", "hangs", "dies"],
)
def test_raise_hang_and_hard_exit_are_findings(
    tmp_path: Path, monkeypatch, snippet: str, code: str, numerics: str
) -> None:
    _port(tmp_path, PORT.replace(BODY, BODY + snippet))
    monkeypatch.chdir(tmp_path)
    port = Path("port.py")  # named relatively, as on a command line
    rep = check(CUDA, port, seeds=1, extra_points=False, timeout=3, overrides=ONE)
    assert rep.verdict == "fail"
    assert code in {d.code for d in rep.findings}
    # a port that raised or died is a defect; one stopped for time has unknown numbers
    assert rep.numerics_outcome == numerics
    # on the port as the caller named it (the simulator reports its absolute path)
    assert all(
        d.loc.file == str(port) for d in rep.findings if d.code.startswith(("C2N3", "C2N40"))
    )


def test_a_check_that_compares_nothing_fails(tmp_path: Path) -> None:
    """The only test point asked for cannot be resolved (a negative size): nothing is compared,
    which is an error (C2N4023) next to the point's own diagnostic, never a pass."""
    port = _port(tmp_path, PORT)
    rep = check(CUDA, port, seeds=1, extra_points=False, timeout=60, overrides={"N": -4})
    codes = {d.code for d in rep.findings}
    assert rep.verdict == "fail" and rep.numerics == []
    assert "C2N4023" in codes and len(codes) >= 2, codes


def test_values_no_store_wrote_are_not_the_kernels() -> None:
    """Element-level provenance: where the simulator tracked the store behind each output
    element, a float32 value with no store behind it (the canary gone) fails the port."""
    import numpy as np

    from cuda2nki.fidelity.provenance import unstored_values
    from cuda2nki.fidelity.rootcause import Writers
    from cuda2nki.nkisim.dtypes import CANARY_F32

    stored = np.array([0, 0, 1, -1, -1], dtype=np.int64)
    honest = np.array([1, 2, 3, CANARY_F32, CANARY_F32], dtype=np.float32)
    forged = np.array([1, 2, 3, 4, 5], dtype=np.float32)
    run = {"status": "ok", "writers": Writers((stored,), {})}
    assert unstored_values([{**run, "outputs": [honest]}]) == ""
    assert "2 of 5 elements" in unstored_values([{**run, "outputs": [forged]}])


def test_a_timed_out_port_never_passes_even_with_its_finding_ignored(tmp_path: Path) -> None:
    """The numbers of a port stopped for time are unknown: ignoring C2N4015 leaves a fail."""
    port = _port(tmp_path, PORT.replace(BODY, BODY + "    while True:\n        pass\n"))
    rep = check(
        CUDA, port, seeds=1, extra_points=False, timeout=3, overrides=ONE, ignore=("C2N4015",)
    )
    assert rep.numerics_outcome == "unfinished"
    assert rep.verdict == "fail"


@pytest.mark.parametrize(
    ("entries", "outcome"),
    [
        ([], "none"),
        ([{"output": "o", "classification": "expected"}], "pass"),
        ([{"output": "o", "classification": "defect"}], "fail"),
        ([{"output": "*", "classification": "defect", "defect": "timeout"}], "unfinished"),
        ([{"output": "*", "classification": "defect", "defect": "memory"}], "unfinished"),
        ([{"output": "*", "classification": "defect", "defect": "crash"}], "fail"),
        ([{"output": "*", "classification": "defect", "defect": "error"}], "fail"),
        (
            [
                {"output": "o", "classification": "defect"},
                {"output": "*", "classification": "defect", "defect": "timeout"},
            ],
            "fail",
        ),
        (
            [
                {"output": "o", "classification": "expected"},
                {"output": "*", "classification": "defect", "defect": "timeout"},
            ],
            "unfinished",
        ),
    ],
)
def test_numerics_outcome_tells_unknown_numbers_from_wrong_ones(
    entries: list[dict[str, str]], outcome: str
) -> None:
    from cuda2nki.fidelity.check import numerics_outcome

    assert numerics_outcome(entries) == outcome


def test_a_check_with_a_deadline_stops_waiting_for_a_port_at_it(tmp_path: Path) -> None:
    """A batch check's share of its file's time (simt.deadline) bounds the wait for the port as
    well as the CUDA kernel's runs: the check ends there, whatever the port's own limit."""
    import time

    from cuda2nki.simt import deadline

    port = _port(tmp_path, PORT.replace(BODY, BODY + "    while True:\n        pass\n"))
    t0 = time.monotonic()
    with pytest.raises(deadline.Overtime), deadline.within(4):
        check(CUDA, port, seeds=1, extra_points=False, timeout=120, overrides=ONE)
    assert time.monotonic() - t0 < 60  # not the port's 120 s
