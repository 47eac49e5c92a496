"""Binding CUDA parameters to the port's: by name, then by position; ``--bind`` overrides (§2)."""

from __future__ import annotations

import json
from pathlib import Path

from cuda2nki.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
CUDA = str(ROOT / "corpus/basic/vector_add.cu")
PORT = (ROOT / "corpus/basic/ports/vector_add_port.py").read_text()


def _renamed(tmp_path: Path) -> str:
    """The vector_add port with its parameters renamed (y, x) -- names CUDA does not use."""
    text = PORT.replace("def vector_add(a, b):", "def vector_add(y, x):")
    text = text.replace("a.shape", "y.shape").replace("a.dtype", "y.dtype")
    text = (
        text.replace("b.dtype", "x.dtype").replace("src=a[", "src=y[").replace("src=b[", "src=x[")
    )
    p = tmp_path / "renamed_port.py"
    p.write_text(text)
    return str(p)


def _check(argv: list[str], capsys) -> tuple[int, dict]:
    rc = main(["check", *argv, "--seeds", "1", "--set", "N=1000", "--format", "json"])
    return rc, json.loads(capsys.readouterr().out)


def test_unknown_names_bind_by_position(tmp_path: Path, capsys) -> None:
    rc, rep = _check([CUDA, _renamed(tmp_path)], capsys)
    assert rc == 0 and rep["binding"] == {"a": "y", "b": "x", "out": "out"}


def test_bind_overrides_name_and_position(tmp_path: Path, capsys) -> None:
    rc, rep = _check([CUDA, _renamed(tmp_path), "--bind", "a=x", "--bind", "b=y"], capsys)
    assert rc == 0 and rep["binding"] == {"a": "x", "b": "y", "out": "out"}


def test_bad_binds_are_input_errors(tmp_path: Path, capsys) -> None:
    port = _renamed(tmp_path)
    assert main(["check", CUDA, port, "--bind", "nosuch=x"]) == 2
    assert "C2N4019" in capsys.readouterr().err
    assert main(["check", CUDA, port, "--bind", "a"]) == 2
    assert "C2N0002" in capsys.readouterr().err
