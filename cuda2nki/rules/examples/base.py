"""Runnable examples for the diagnostic catalogue: for each id, files and a command that raise it.

An :class:`Example` is a set of small files written into an empty directory and either a
``cuda2nki`` command line run there (``argv``) or, for ids that only the Python API can reach (the
tile IR's parser, evaluators and verifier), a short Python snippet (``python``).  ``{ROOT}`` in an
argument or a file stands for the repository root (for corpus files).  :func:`run_example` runs one
in-process and returns the ids it raised; ``tests/docs`` runs every example and checks that each
raises its own id.  :data:`NO_EXAMPLE` lists, with a reason, the ids no input can trigger.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Example", "Outcome", "render_example", "run_example"]

ROOT = Path(__file__).resolve().parents[3]
_ID = re.compile(r"\bC2N\d{4}\b")
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

    def resolved_argv(self, root: Path = ROOT) -> list[str]:
        return [a.replace("{ROOT}", str(root)) for a in self.argv]


@dataclass(frozen=True)
class Outcome:
    exit_code: int | None
    ids: frozenset[str]
    output: str


def run_example(ex: Example, workdir: Path) -> Outcome:
    """Write ``ex.files`` under ``workdir``, run it there in-process, and collect the raised ids.

    Ids are read from what the command printed, from the files it wrote (reports in JSON, SARIF,
    HTML, ports with ``C2Nxxxx`` notes), and, for a snippet, from the diagnostics it raised or left
    in a variable named ``diagnostics``.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    for name, text in ex.files.items():
        path = workdir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.replace("{ROOT}", str(ROOT)))
    before = set(workdir.rglob("*"))
    buf = io.StringIO()
    old = Path.cwd()
    os.chdir(workdir)
    try:
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            code, extra = _run_python(ex.python) if ex.python else (_run_argv(ex), "")
    finally:
        os.chdir(old)
    out = buf.getvalue() + extra
    for path in sorted(set(workdir.rglob("*")) - before):
        if path.is_file() and path.suffix not in _BINARY and path.stat().st_size < 4_000_000:
            out += "\n" + path.read_text(errors="replace")
    return Outcome(code, frozenset(_ID.findall(out)), out)


def _run_argv(ex: Example) -> int:
    from cuda2nki.cli.main import main

    return main(ex.resolved_argv())


def _run_python(snippet: str) -> tuple[int | None, str]:
    from cuda2nki.diagnostics import DiagnosticError

    scope: dict[str, object] = {}
    try:
        exec(compile(snippet, "<example>", "exec"), scope)  # noqa: S102 - our own catalogue
    except DiagnosticError as exc:
        return 2, "\n".join(f"[{d.code}] {d.message}" for d in exc.diagnostics)
    diags = scope.get("diagnostics", ())
    return None, "\n".join(f"[{d.code}] {d.message}" for d in diags)  # type: ignore[attr-defined]


def render_example(ex: Example) -> str:
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
        cmd = " ".join(_quote(a) for a in ("cuda2nki", *ex.argv))
        if any("{ROOT}" in a for a in ex.argv):
            parts.append("# run from the root of the cuda2nki source tree (corpus/ is there)")
        parts.append(f"$ {cmd}")
    if ex.exit_code is not None:
        parts.append(f"(exit code {ex.exit_code})")
    return "\n".join(parts)


def _quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg.replace("{ROOT}/", ""))
