"""`cuda2nki rules ID` examples need no source checkout: the corpus files they use ship with the
package, and `--write-example DIR` writes them where the printed command runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cuda2nki.cli.main import main
from cuda2nki.rules.examples import EXAMPLES, INPUTS

ROOT = Path(__file__).resolve().parents[2]


def test_no_example_refers_to_the_source_tree() -> None:
    for code, ex in EXAMPLES.items():
        for text in (*ex.argv, *ex.files.values(), ex.python):
            assert "{ROOT}" not in text and str(ROOT) not in text, code
        for rel in ex.corpus_files():
            assert (INPUTS / rel).is_file(), (code, rel)


def test_packaged_inputs_are_the_corpus_files() -> None:
    copies = sorted(p for p in INPUTS.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    assert copies
    for copy in copies:
        original = ROOT / "corpus" / copy.relative_to(INPUTS)
        assert copy.read_bytes() == original.read_bytes(), f"{copy} differs from {original}"
    used = {rel for ex in EXAMPLES.values() for rel in ex.corpus_files()}
    assert {c.relative_to(INPUTS).as_posix() for c in copies} == used, "unused copies"


def test_rendered_example_names_no_checkout(capsys) -> None:
    assert main(["rules", "C2N5001"]) == 0
    out = capsys.readouterr().out
    assert "source tree" not in out and "--write-example DIR" in out
    assert "$ cuda2nki check corpus/basic/vector_add.cu" in out


def test_write_example_then_run_it_there(tmp_path: Path, capsys, monkeypatch) -> None:
    folder = tmp_path / "ex"
    assert main(["rules", "C2N5001", "--write-example", str(folder)]) == 0
    out = capsys.readouterr().out
    assert (folder / "corpus/basic/vector_add.toml").is_file()
    command = out.strip().splitlines()[-1].split(": ", 1)[1]
    argv = command.split()[1:]
    monkeypatch.chdir(folder)
    assert main(argv) == 1
    assert "[C2N5001]" in capsys.readouterr().out
    assert os.getcwd() == str(folder)


def test_write_example_needs_an_id_with_an_example(tmp_path: Path, capsys) -> None:
    assert main(["rules", "--write-example", str(tmp_path)]) == 2
    assert "C2N0002" in capsys.readouterr().err


@pytest.mark.parametrize("code", ["C2N0001", "C2N1001"])
def test_write_example_of_a_self_contained_example(tmp_path: Path, capsys, code: str) -> None:
    if code not in EXAMPLES:
        pytest.skip(f"{code} has no example")
    assert main(["rules", code, "--write-example", str(tmp_path / "x")]) == 0
    assert not (tmp_path / "x" / "corpus").exists() or EXAMPLES[code].corpus_files()
