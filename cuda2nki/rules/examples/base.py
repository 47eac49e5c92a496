"""Runnable examples for the diagnostic catalogue: for each id, files and a command that raise it.

An :class:`Example` is a set of small files written into an empty directory and either a
``cuda2nki`` command line run there (``argv``) or, for ids that only the Python API can reach (the
tile IR's parser, evaluators and verifier), a short Python snippet (``python``).  ``{CORPUS}`` in an
argument or a file stands for the corpus kernels and ports the examples use; copies of them ship
with the package (``inputs/``), so an example runs from an installed wheel too, and
:func:`write_example` (``cuda2nki rules ID --write-example DIR``) writes them out beside the
example's own files.  :func:`run_example` runs one in-process and returns the ids it raised;
``tests/docs`` runs every example and checks that each raises its own id.  :data:`NO_EXAMPLE`
lists, with a reason, the ids no input can trigger.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "INPUTS",
    "Example",
    "Outcome",
    "command_line",
    "render_example",
    "run_example",
    "write_example",
]

#: the packaged copies of the corpus files the examples use (``{CORPUS}``)
INPUTS = Path(__file__).resolve().parent / "inputs"
CORPUS = "{CORPUS}"
_ID = re.compile(r"\bC2N\d{4}\b")
_CORPUS_REF = re.compile(r"\{CORPUS\}/([\w./-]+)")
_BINARY = {".npz", ".npy", ".pkl"}


@dataclass(frozen=True)
class Example:
    """Files to write, and the command (or Python snippet) that raises the id from them."""

    files: Mapping[str, str] = field(default_factory=dict)
    argv: tuple[str, ...] = ()
    python: str = ""
    exit_code: int | None = None
    #: ``"module:attribute"`` the example needs (a component still landing); see :meth:`ready`
    requires: str = ""

    def ready(self) -> bool:
        """Whether what the example needs exists (it is skipped, not failed, until then)."""
        if not self.requires:
            return True
        import importlib

        module, _, attr = self.requires.partition(":")
        try:
            mod = importlib.import_module(module)
        except ImportError:
            return False
        return not attr or hasattr(mod, attr)

    def resolved_argv(self, inputs: Path = INPUTS) -> list[str]:
        return [a.replace(CORPUS, str(inputs)) for a in self.argv]

    def corpus_files(self) -> list[str]:
        """The corpus files the example uses (relative to the corpus), each CUDA file's sidecar
        binding included."""
        found: list[str] = []
        for text in (*self.argv, *self.files.values(), self.python):
            for rel in _CORPUS_REF.findall(text):
                extra = [rel]
                if rel.endswith(".cu") and (INPUTS / rel).with_suffix(".toml").is_file():
                    extra.append(rel[: -len(".cu")] + ".toml")
                found.extend(x for x in extra if x not in found)
        return found


@dataclass(frozen=True)
class Outcome:
    exit_code: int | None
    ids: frozenset[str]
    output: str


def run_example(ex: Example, workdir: Path, cli: Callable[[list[str]], int]) -> Outcome:
    """Write ``ex.files`` under ``workdir``, run it there in-process, and collect the raised ids.
    ``cli`` runs a command's arguments (``cuda2nki.cli.main.main``: passed in, the catalogue sits
    below the command line and does not import it).

    Ids are read from what the command printed, from the files it wrote (reports in JSON, SARIF,
    HTML, ports with ``C2Nxxxx`` notes), and, for a snippet, from the diagnostics it raised or left
    in a variable named ``diagnostics``.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    for name, text in ex.files.items():
        path = workdir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.replace(CORPUS, str(INPUTS)))
    before = set(workdir.rglob("*"))
    buf = io.StringIO()
    old = Path.cwd()
    os.chdir(workdir)
    try:
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            code, extra = _run_python(ex.python) if ex.python else (cli(ex.resolved_argv()), "")
    finally:
        os.chdir(old)
    out = buf.getvalue() + extra
    for path in sorted(set(workdir.rglob("*")) - before):
        if path.is_file() and path.suffix not in _BINARY and path.stat().st_size < 4_000_000:
            out += "\n" + path.read_text(errors="replace")
    return Outcome(code, frozenset(_ID.findall(out)), out)


def _run_python(snippet: str) -> tuple[int | None, str]:
    from cuda2nki.diagnostics import DiagnosticError

    scope: dict[str, object] = {}
    try:
        exec(compile(snippet, "<example>", "exec"), scope)  # noqa: S102 - our own catalogue
    except DiagnosticError as exc:
        return 2, "\n".join(f"[{d.code}] {d.message}" for d in exc.diagnostics)
    diags = scope.get("diagnostics", ())
    return None, "\n".join(f"[{d.code}] {d.message}" for d in diags)  # type: ignore[attr-defined]


def write_example(ex: Example, folder: Path) -> list[Path]:
    """Write the example's files, and the corpus files it uses under ``corpus/``, into
    ``folder``: its command then runs there as printed."""
    written = []
    for name, text in ex.files.items():
        written.append(_write(folder / name, text.replace(CORPUS, "corpus")))
    for rel in ex.corpus_files():
        written.append(_write(folder / "corpus" / rel, (INPUTS / rel).read_text()))
    return written


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def render_example(ex: Example, code: str = "") -> str:
    """The example as a reader would reproduce it: each file, then the command."""
    parts = []
    for name, text in ex.files.items():
        lines = text.rstrip().splitlines()
        if len(lines) > 60:
            lines = [*lines[:3], f"... ({len(lines)} lines in all)"]
        parts.append(f"--- {name}\n" + "\n".join(lines))
    if ex.python:
        parts.append("--- python\n" + ex.python.rstrip())
    else:
        cmd = command_line(ex)
        if ex.corpus_files():
            parts.append(
                f"# uses corpus files shipped with cuda2nki: `cuda2nki rules {code or 'ID'} "
                "--write-example DIR` writes them into DIR; run this there"
            )
        parts.append(f"$ {cmd}")
    if ex.exit_code is not None:
        parts.append(f"(exit code {ex.exit_code})")
    return "\n".join(parts)


def command_line(ex: Example) -> str:
    """The example's command as typed in the folder :func:`write_example` fills."""
    return " ".join(_quote(a) for a in ("cuda2nki", *ex.argv))


def _quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg.replace(CORPUS, "corpus"))
