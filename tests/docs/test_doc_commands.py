"""Every `cuda2nki ...` command shown in a ```sh block under docs/ runs with the exit code the doc
states (a trailing `# exit N`; 0 otherwise).  Commands run in a temporary directory where
`corpus/` links to the repository's corpus, so `out/...` paths land in the temporary directory.
Commands marked `slow` in their trailing comment run in the slow tier only."""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import shlex
from pathlib import Path

import pytest

from cuda2nki.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def _blocks(lang: str) -> list[tuple[str, str]]:
    out = []
    for md in sorted(DOCS.rglob("*.md")):
        for m in FENCE.finditer(md.read_text()):
            if m.group(1) == lang:
                out.append((md.relative_to(ROOT).as_posix(), m.group(2)))
    return out


def commands() -> list[tuple[str, list[str], int, bool]]:
    """(doc, argv, expected exit code, slow) for every cuda2nki command in a sh block."""
    found = []
    for doc, block in _blocks("sh"):
        for line in block.splitlines():
            if not line.startswith("cuda2nki "):
                continue
            cmd, _, comment = line.partition("  #")
            m = re.search(r"exit (\d+)", comment)
            found.append(
                (doc, shlex.split(cmd)[1:], int(m.group(1)) if m else 0, "slow" in comment)
            )
    return found


COMMANDS = commands()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("docs")
    (d / "corpus").symlink_to(ROOT / "corpus")
    (d / "out").mkdir()
    return d


def _run(argv: list[str], cwd: Path) -> tuple[int, str]:
    buf = io.StringIO()
    old = Path.cwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            code = main(argv)
    finally:
        os.chdir(old)
    return code, buf.getvalue()


def _params():
    for doc, argv, code, slow in COMMANDS:
        marks = [pytest.mark.slow] if slow else []
        yield pytest.param(argv, code, id=f"{doc}:{' '.join(argv)[:60]}", marks=marks)


@pytest.mark.parametrize(("argv", "code"), list(_params()))
def test_doc_command(argv: list[str], code: int, workdir: Path) -> None:
    got, output = _run(argv, workdir)
    assert got == code, output[-3000:]
    assert "Traceback" not in output


def test_docs_show_commands() -> None:
    assert len(COMMANDS) >= 20
    subcommands = {argv[0] for _, argv, _, _ in COMMANDS}
    assert {
        "parse",
        "run",
        "simulate",
        "port",
        "check",
        "review",
        "migrate",
        "rules",
    } <= subcommands


def test_python_api_example_runs(workdir: Path) -> None:
    (doc, first), *rest = [b for b in _blocks("python") if "guide/python-api" in b[0]]
    old = Path.cwd()
    os.chdir(workdir)
    try:
        exec(compile(first, doc, "exec"), {})  # noqa: S102 - our own documentation
    finally:
        os.chdir(old)
    for doc, block in rest:
        ast.parse(block, doc)


def test_pytest_example_runs(workdir: Path) -> None:
    """The guide's pytest file, run as pytest would: collected in a directory holding `ports/` and
    `kernels/`, each parametrised case called (a passing port must pass)."""
    (doc, block), *_ = [
        b for b in _blocks("python") if "guide/python-api" in b[0] and "pytest" in b[1]
    ]
    proj = workdir / "team"
    (proj / "ports").mkdir(parents=True)
    (proj / "kernels").mkdir()
    for suffix in (".cu", ".toml"):
        src = ROOT / "corpus/basic" / f"vector_add{suffix}"
        (proj / "kernels" / src.name).write_text(src.read_text())
    port = ROOT / "corpus/basic/ports/vector_add_port.py"
    (proj / "ports" / port.name).write_text(port.read_text())
    old = Path.cwd()
    os.chdir(proj)
    try:
        ns: dict = {}
        exec(compile(block, doc, "exec"), ns)  # noqa: S102 - our own documentation
        assert [p.name for p in ns["PORTS"]] == ["vector_add_port.py"]
        marks = ns["test_port_matches_cuda"].pytestmark
        assert any(m.name == "parametrize" for m in marks)
        for p in ns["PORTS"]:
            ns["test_port_matches_cuda"](p)
    finally:
        os.chdir(old)


def test_make_demo_runs_the_commands_the_guide_shows() -> None:
    """`make demo` (getting started) runs the same cuda2nki commands as the guide's sh block,
    which test_doc_command executes; `make test` is this test suite."""
    recipe = (ROOT / "Makefile").read_text().split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    demo = [
        shlex.split(line.strip().replace("$(BIN)/", "").replace("out/demo/", "out/"))[1:]
        for line in recipe.splitlines()
        if "cuda2nki " in line
    ]
    shown = [argv for doc, argv, _, _ in COMMANDS if doc.endswith("getting-started.md")]
    assert demo and all(argv in shown for argv in demo), (demo, shown)


def test_binding_examples_load(tmp_path: Path) -> None:
    """Every TOML binding shown in the docs is a valid binding file (of one kernel or several);
    a binding named after a corpus file declares the same parameters, launch and test shapes as
    that file."""
    from cuda2nki.binding import load_binding, load_bindings

    blocks = [(doc, b) for doc, b in _blocks("toml") if "[tool.cuda2nki" not in b]
    assert blocks
    real = load_binding(ROOT / "corpus/basic/vector_add.toml")
    for i, (doc, block) in enumerate(blocks):
        p = tmp_path / f"example{i}.toml"
        p.write_text(block)
        for shown in load_bindings(p).bindings:
            if shown.kernel != real.kernel:
                continue
            assert [(t.name, t.shape, t.dtype, t.role) for t in shown.tensors] == [
                (t.name, t.shape, t.dtype, t.role) for t in real.tensors
            ], doc
            assert shown.test_points() == real.test_points(), doc


def test_pyproject_examples_configure(tmp_path: Path, monkeypatch) -> None:
    """Every `[tool.cuda2nki]` table shown in the docs is a valid configuration."""
    from cuda2nki.cli.config import apply, find
    from cuda2nki.cli.main import build_parser

    blocks = [b for _, b in _blocks("toml") if "[tool.cuda2nki" in b]
    assert blocks
    for i, block in enumerate(blocks):
        folder = tmp_path / str(i)
        folder.mkdir()
        (folder / "pyproject.toml").write_text(block)
        monkeypatch.chdir(folder)
        apply(build_parser(), find())


def test_make_demo_installs_no_development_tools() -> None:
    """`make demo` installs cuda2nki and its run-time dependencies, not dask, ruff or pytest."""
    import shutil
    import subprocess

    make = shutil.which("make")
    if make is None:
        pytest.skip("no make")
    plan = subprocess.run(
        [make, "-n", "-B", "demo", "PY=python3", "VENV=/nonexistent-venv"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    installs = [ln for ln in plan.splitlines() if "pip install" in ln and "--upgrade pip" not in ln]
    assert installs and all(ln.rstrip().endswith("install -q -e .") for ln in installs), installs
    assert "dask" not in plan and "ruff" not in plan and "[dev" not in plan
    dev = subprocess.run(
        [make, "-n", "-B", "venv", "PY=python3", "VENV=/nonexistent-venv"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "'.[dev,cluster]'" in dev
