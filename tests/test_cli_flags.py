"""Flags mean one thing across subcommands; every subcommand is described with its defaults;
``--fail-on``; ``[tool.cuda2nki]`` defaults from pyproject.toml; shell completion."""

from __future__ import annotations

import argparse
import shutil
import subprocess
from pathlib import Path

import pytest

from cuda2nki.cli.common import apply_deprecated, fails
from cuda2nki.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
CU = str(ROOT / "corpus/basic/vector_add.cu")
PORT = str(ROOT / "corpus/basic/ports/vector_add_port.py")
LITERAL = str(ROOT / "corpus/basic/ports/vector_add_flaw_literal_thread.py")


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


@pytest.mark.parametrize("name", sorted(_commands()))
def test_every_subcommand_is_described_and_shows_defaults(name: str) -> None:
    p = _commands()[name]
    assert p.description and len(p.description) > 30, name
    text = p.format_help()
    for a in p._actions:
        if a.help == argparse.SUPPRESS or isinstance(a, argparse._HelpAction):
            continue
        assert a.help, f"{name}: {a.option_strings or a.dest} has no help"
        meaningful = a.option_strings and a.default not in (None, False, [])
        if meaningful:
            shown = a.help if "default" in a.help else f"(default: {a.default})"
            assert "default" in a.help or shown in " ".join(text.split()), (name, a.dest)


def test_hardware_has_one_name_and_the_api_another() -> None:
    cmds = _commands()
    for name in ("check", "review", "simulate"):
        flags = {
            s for a in cmds[name]._actions if a.help != argparse.SUPPRESS for s in a.option_strings
        }
        assert "--hw" in flags and "--target" not in flags and "--api" not in flags, name
    for name in ("port", "migrate"):
        flags = {
            s for a in cmds[name]._actions if a.help != argparse.SUPPRESS for s in a.option_strings
        }
        assert "--api" in flags and "--target" not in flags and "--hw" not in flags, name


@pytest.mark.parametrize(
    ("argv", "dest", "value"),
    [
        (["check", CU, PORT, "--target", "trn3"], "hw", "trn3"),
        (["simulate", PORT, "--out", "o.npz", "--target", "trn1"], "hw", "trn1"),
        (["port", CU, "--target", "legacy"], "api", "legacy"),
        (["migrate", "d", "-o", "o", "--target", "legacy"], "api", "legacy"),
    ],
)
def test_old_target_spelling_still_works_with_a_note(argv, dest, value, capsys) -> None:
    args = build_parser().parse_args(argv)
    apply_deprecated(args)
    assert getattr(args, dest) == value
    assert f"--target is deprecated here; use --{dest} {value}" in capsys.readouterr().err


def test_target_keeps_its_meaning_per_command() -> None:
    with pytest.raises(SystemExit):  # port's --target never meant hardware
        build_parser().parse_args(["port", CU, "--target", "trn2"])


def test_p_means_the_compile_database_and_passes_is_spelled_out(capsys) -> None:
    args = build_parser().parse_args(["migrate", "d", "-o", "o", "-p", "cc.json"])
    long = build_parser().parse_args(["migrate", "d", "-o", "o", "--compile-commands", "cc.json"])
    assert args.compile_db == long.compile_db == Path("cc.json")
    args = build_parser().parse_args(["port", CU, "-p", "choose-layout"])
    apply_deprecated(args)
    assert args.passes == "choose-layout" and "use --passes" in capsys.readouterr().err


def test_port_old_and_new_api_spelling_agree(capsys) -> None:
    assert main(["port", CU, "--api", "legacy"]) == 0
    new = capsys.readouterr().out
    assert main(["port", CU, "--target", "legacy"]) == 0
    old = capsys.readouterr()
    assert old.out == new and "neuronxcc" in new and "deprecated" in old.err


def test_review_format_overrides_the_suffix(tmp_path: Path, capsys) -> None:
    argv = ["review", CU, PORT, "--static-only", "--no-compare"]
    assert main([*argv, "--format", "html"]) == 1  # static-only: unverified
    assert capsys.readouterr().out.lstrip().lower().startswith("<!doctype html")
    out = tmp_path / "review.txt"
    assert main([*argv, "--format", "md", "-o", str(out)]) == 1
    assert out.read_text().startswith("# Review")


def test_fail_on_threshold_decides_the_exit_status() -> None:
    argv = ["check", CU, LITERAL, "--seeds", "1", "--set", "N=4096"]
    assert main(argv) == 1  # warnings fail the default gate
    assert main([*argv, "--fail-on", "error"]) == 0
    assert main([*argv, "--fail-on", "error", "--static-only"]) == 1  # never a pass


def test_fails_by_severity() -> None:
    note = {"severity": "note"}
    ok = {"verdict": "pass", "numerics": [{"classification": "expected"}], "findings": [note]}
    assert not fails(ok, "warning") and fails(ok, "note")
    warned = {**ok, "verdict": "fail", "findings": [{"severity": "warning"}]}
    assert fails(warned, "warning") and not fails(warned, "error")
    wrong = {**ok, "verdict": "fail", "numerics": [{"classification": "defect"}]}
    assert fails(wrong, "error")
    assert fails({**ok, "verdict": "unverified", "numerics": []}, "error")


_WARNED = """struct Foo { int a;
void broken( {
__global__ void vector_add(float* out, const float* a, const float* b, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) out[i] = a[i] + b[i];
}
void launch(float* out, const float* a, const float* b, int N) {
    vector_add<<<(N + 255) / 256, 256>>>(out, a, b, N);
}
"""


@pytest.mark.parametrize(("fail_on", "code"), [(None, 0), ("error", 0), ("warning", 1)])
def test_port_fail_on_counts_its_warnings(tmp_path: Path, fail_on, code) -> None:
    cu = tmp_path / "k.cu"
    cu.write_text(_WARNED)  # an idiomatic port, with a warning for the broken host code
    argv = ["port", str(cu), "-o", str(tmp_path / "k.py")]
    assert main(argv + (["--fail-on", fail_on] if fail_on else [])) == code


def test_port_fail_on_note_fails_on_notes(tmp_path: Path) -> None:
    argv = ["port", CU, "-o", str(tmp_path / "k.py")]
    assert main(argv) == 0 and main([*argv, "--fail-on", "warning"]) == 0
    assert main([*argv, "--fail-on", "note"]) == 1  # 'lifted as map' is a note
    assert (tmp_path / "k.py").is_file()  # the port is written whatever the gate says


def test_port_fail_on_sets_the_sarif_exit_code(tmp_path: Path, capsys) -> None:
    import json

    assert main(["port", CU, "--format", "sarif", "--fail-on", "note"]) == 1
    log = json.loads(capsys.readouterr().out)
    assert log["runs"][0]["invocations"][0]["exitCode"] == 1


@pytest.mark.parametrize(("fail_on", "code"), [(None, 0), ("warning", 1), ("note", 1)])
def test_migrate_fail_on_counts_diagnostics_of_every_kernel(tmp_path: Path, fail_on, code) -> None:
    tree = tmp_path / "src"
    tree.mkdir()
    (tree / "k.cu").write_text(_WARNED)
    argv = ["migrate", str(tree), "-o", str(tmp_path / "out"), "-q"]
    assert main(argv + (["--fail-on", fail_on] if fail_on else [])) == code


def test_migrate_fail_on_from_pyproject(tmp_path: Path, monkeypatch) -> None:
    tree = tmp_path / "cu"
    tree.mkdir()
    (tree / "k.cu").write_text(_WARNED)
    _project(tmp_path, '[tool.cuda2nki.migrate]\nfail-on = "warning"\n', monkeypatch)
    assert main(["migrate", str(tree), "-o", str(tmp_path / "out"), "-q"]) == 1


# --------------------------------------------------------------------------- pyproject.toml


def _project(tmp_path: Path, body: str, monkeypatch) -> Path:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n' + body)
    sub = tmp_path / "src"
    sub.mkdir()
    monkeypatch.chdir(sub)  # found from below, as ruff does
    return tmp_path / "pyproject.toml"


def test_pyproject_table_sets_defaults(tmp_path: Path, monkeypatch) -> None:
    from cuda2nki.cli.config import apply, find

    _project(
        tmp_path,
        '[tool.cuda2nki]\nhw = "trn3"\nfail-on = "error"\n\n'
        '[tool.cuda2nki.check]\nseeds = 2\nignore = ["C2N5001"]\ntimeout = 30\n',
        monkeypatch,
    )
    parser = build_parser()
    apply(parser, find())
    args = parser.parse_args(["check", CU, PORT])
    assert (args.hw, args.fail_on, args.seeds, args.ignore, args.timeout) == (
        "trn3",
        "error",
        2,
        ["C2N5001"],
        30.0,
    )
    args = parser.parse_args(["simulate", PORT, "--out", "o.npz"])
    assert args.hw == "trn3"
    args = parser.parse_args(["check", CU, PORT, "--hw", "trn1", "--seeds", "4"])
    assert (args.hw, args.seeds) == ("trn1", 4)  # the command line wins


def test_pyproject_fail_on_applies_to_a_real_check(tmp_path: Path, monkeypatch) -> None:
    _project(tmp_path, '[tool.cuda2nki]\nfail-on = "error"\n', monkeypatch)
    assert main(["check", CU, LITERAL, "--seeds", "1", "--set", "N=4096"]) == 0


@pytest.mark.parametrize(
    ("body", "line", "words"),
    [
        ('[tool.cuda2nki]\nhw = "trn2"\nbogus = 1\n', 6, "no subcommand has this option"),
        ('[tool.cuda2nki]\nhw = "trn9"\n', 5, "'trn9' is not one of trn1, trn2, trn3"),
        ('[tool.cuda2nki.check]\nseeds = "many"\n', 5, "is not a valid value"),
        ("[tool.cuda2nki.check]\njobs = 3\n", 5, "'check' has no option --jobs"),
        ("[tool.cuda2nki.frob]\nx = 1\n", 4, "no subcommand 'frob'"),
        ("[tool.cuda2nki]\nhw = [\n", 1, "pyproject.toml"),
    ],
)
def test_pyproject_errors_point_at_the_key(
    tmp_path, monkeypatch, capsys, body, line, words
) -> None:
    path = _project(tmp_path, body, monkeypatch)
    assert main(["rules", "C2N0002"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:{line}:" in err and words in err and "[C2N0002]" in err, err
    assert "Traceback" not in err


# --------------------------------------------------------------------------- completion


def _complete(shell_script: str, words: list[str]) -> list[str]:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    quoted = " ".join(f"'{w}'" for w in words)
    probe = (
        shell_script
        + f"\nCOMP_WORDS=({quoted})\nCOMP_CWORD={len(words) - 1}\n_cuda2nki\n"
        + 'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    out = subprocess.run([bash, "--norc", "-c", probe], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_bash_completion_completes_commands_options_and_choices(capsys) -> None:
    assert main(["completion", "bash"]) == 0
    script = capsys.readouterr().out
    assert "complete -o filenames" in script
    assert _complete(script, ["cuda2nki", "mi"]) == ["migrate"]
    assert "--fail-on" in _complete(script, ["cuda2nki", "check", "--fa"])
    assert _complete(script, ["cuda2nki", "check", "k.cu", "--hw", ""]) == ["trn1", "trn2", "trn3"]
    assert _complete(script, ["cuda2nki", "port", "--api", "l"]) == ["legacy"]
    assert _complete(script, ["cuda2nki", "completion", ""]) == ["bash", "zsh"]
    assert "--target" not in _complete(script, ["cuda2nki", "check", "--t"])


def test_zsh_completion_uses_bashcompinit(capsys) -> None:
    assert main(["completion", "zsh"]) == 0
    script = capsys.readouterr().out
    assert "bashcompinit" in script and "complete -o filenames" in script
