"""A port whose output has another dtype or shape than the CUDA buffer is told so plainly
(C2N4021 / C2N4010), before and beside the value comparison; never a crash, never a pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.fidelity.check import check

ROOT = Path(__file__).resolve().parents[2]
CUDA = ROOT / "corpus/basic/vector_add.cu"
PORT = (ROOT / "corpus/basic/ports/vector_add_port.py").read_text()
ALLOC = "out = nl.ndarray((N,), dtype=a.dtype, buffer=nl.shared_hbm)"


def _check(tmp_path: Path, old: str, new: str, *more: tuple[str, str], **kw):
    text = PORT
    for a, b in ((old, new), *more):
        assert a in text
        text = text.replace(a, b)
    port = tmp_path / "port.py"
    port.write_text(text)
    return check(CUDA, port, seeds=1, extra_points=False, **kw)


def _by_code(rep) -> dict[str, str]:
    return {d.code: d.message for d in rep.findings}


@pytest.mark.parametrize(
    ("dtype", "compared"), [("nl.bfloat16", True), ("nl.int32", False), ("nl.float16", True)]
)
def test_wrong_output_dtype(tmp_path: Path, dtype: str, compared: bool) -> None:
    rep = _check(tmp_path, ALLOC, ALLOC.replace("a.dtype", dtype))
    found = _by_code(rep)
    assert rep.verdict == "fail"
    name = dtype.removeprefix("nl.")
    assert found["C2N4021"] == f"output 'out' is {name}, the CUDA buffer is float32"
    classes = {(n["classification"], n.get("defect")) for n in rep.numerics}
    if compared:  # both floating point: the values are still judged
        assert ("defect", "dtype") not in classes
    else:  # an integer output is not compared, so no misleading "scaled" verdict
        assert classes == {("defect", "dtype")}
        assert "C2N4007" not in found and "C2N4001" not in found


def test_same_elements_in_another_shape(tmp_path: Path) -> None:
    rep = _check(
        tmp_path,
        ALLOC + "\n",
        "out = nl.ndarray((N // 2, 2), dtype=a.dtype, buffer=nl.shared_hbm)\n"
        "    out_flat = out.reshape((N,))\n",
        ("dst=out[base", "dst=out_flat[base"),
        overrides={"N": 4096},  # an even size, so the port's (N // 2, 2) holds every element
    )
    found = _by_code(rep)
    assert all(n["classification"] == "expected" for n in rep.numerics)  # the values are right
    assert rep.verdict == "fail"
    assert "port output has shape (" in found["C2N4010"]
    assert "the CUDA buffer is (" in found["C2N4010"]


def test_another_number_of_elements(tmp_path: Path) -> None:
    rep = _check(tmp_path, ALLOC, ALLOC.replace("(N,)", "(N + 1,)"))
    assert rep.verdict == "fail"
    assert "port output has" in _by_code(rep)["C2N4010"]


def test_a_size_one_axis_is_not_a_shape_mismatch(tmp_path: Path) -> None:
    rep = _check(
        tmp_path,
        "    return out",
        "    return out.reshape((N, 1))",
    )
    assert "C2N4010" not in _by_code(rep)
    assert rep.verdict == "pass", rep.findings


def test_a_port_expecting_other_input_shapes_is_told_what_it_got(tmp_path: Path) -> None:
    rep = _check(tmp_path, "(N,) = a.shape", "N, C = a.shape")
    assert rep.verdict == "fail"
    (d,) = [d for d in rep.findings if d.severity.name == "ERROR"]
    assert "ValueError" in d.message
    assert any(n.startswith("the port was called with a: float32[") for n in d.notes), d.notes
    failed = [n for n in rep.numerics if n["output"] == "*"]
    assert failed and all("ValueError" in n["evidence"] for n in failed)
