"""SARIF 2.1.0 logs for code scanning (GitHub and others), from ``check``, ``port`` and ``migrate``.

What the code-scanning guidance asks for:

* one ``run`` with the tool's ``driver`` and every rule a result uses; each rule carries its help
  inline (``help.text`` and ``help.markdown``: explanation, example, fix) -- there is no public
  catalogue page to point a ``helpUri`` at, so none is given;
* an ``invocation`` saying how the tool was run (arguments, working directory, times, whether it
  ran to completion);
* results located relative to ``%SRCROOT%`` (the working directory) where the file is below it,
  with ``partialFingerprints`` that survive unrelated edits -- ``primaryLocationLineHash`` hashes
  the rule, the file and the text of the line (not its number), plus an occurrence count --
  and ``relatedLocations`` for the notes that point elsewhere (the CUDA lines behind a port's
  finding).

Findings come as the plain dictionaries of ``Diagnostic.to_dict()`` / ``CheckReport.to_dict()``
(``id``, ``severity``, ``message``, ``file``, ``line``, ``col``, ``notes``, ``related``).
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from cuda2nki import __version__
from cuda2nki.diagnostics import Diagnostic, rules

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
UTC = timezone.utc
_LEVEL = {"error": "error", "warning": "warning", "note": "note"}


@dataclass(frozen=True)
class Invocation:
    """How the tool was run, for ``runs[0].invocations``."""

    arguments: tuple[str, ...]
    start: datetime
    end: datetime
    successful: bool = True
    exit_code: int | None = None
    working_directory: Path = field(default_factory=Path.cwd)


def now() -> datetime:
    return datetime.now(UTC)


def invocation_of(
    start: datetime, successful: bool = True, exit_code: int | None = None
) -> Invocation:
    """This process's command line, started at ``start`` and ending now."""
    argv = ["cuda2nki", *sys.argv[1:]]
    return Invocation(tuple(argv), start, now(), successful, exit_code)


def findings_of(diags: Iterable[Diagnostic]) -> list[dict[str, Any]]:
    return [d.to_dict() for d in diags]


def to_sarif(
    findings: Sequence[Mapping[str, Any]],
    invocation: Invocation,
    properties: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A SARIF 2.1.0 log of ``findings`` (one run)."""
    root = invocation.working_directory.resolve()
    table = rules()
    ids = sorted({f["id"] for f in findings})
    index = {c: i for i, c in enumerate(ids)}
    lines = _LineCache()
    seen: dict[str, int] = {}
    results = []
    for f in findings:
        results.append(_result(f, index[f["id"]], root, lines, seen))
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "cuda2nki",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": [_rule(c, table.get(c)) for c in ids],
            }
        },
        "invocations": [_invocation(invocation)],
        "originalUriBaseIds": {SRCROOT: {"uri": root.as_uri() + "/"}},
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    if properties:
        run["properties"] = dict(properties)
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


def _rule(code: str, r: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": code}
    if r is None:
        return entry
    text = r.explanation or r.title
    md = [r.explanation or r.title]
    plain = [text]
    if r.example:
        md.append("Example:\n\n```\n" + r.example + "\n```")
        plain.append("Example:\n" + r.example)
    if r.fix:
        md.append("Fix: " + r.fix)
        plain.append("Fix: " + r.fix)
    if _has_example(code):
        md.append(f"Run `cuda2nki rules {code}` for a runnable example.")
        plain.append(f"Run `cuda2nki rules {code}` for a runnable example.")
    entry.update(
        {
            "name": "".join(w.capitalize() for w in r.title.replace("-", " ").split()),
            "shortDescription": {"text": r.title},
            "fullDescription": {"text": text},
            "help": {"text": "\n\n".join(plain), "markdown": "\n\n".join(md)},
            "defaultConfiguration": {"level": _LEVEL[str(r.severity)]},
        }
    )
    if r.tags:
        entry["properties"] = {"tags": list(r.tags)}
    return entry


def _has_example(code: str) -> bool:
    from cuda2nki.rules.examples import EXAMPLES

    return code in EXAMPLES


def _artifact(file: str, root: Path) -> dict[str, Any]:
    p = Path(file)
    try:
        rel = (p if p.is_absolute() else (root / p)).resolve().relative_to(root)
    except (ValueError, OSError):
        return {"uri": p.resolve().as_uri() if p.is_absolute() else p.as_posix()}
    return {"uri": rel.as_posix(), "uriBaseId": SRCROOT}


def _location(file: str, line: int, col: int, root: Path) -> dict[str, Any]:
    return {
        "physicalLocation": {
            "artifactLocation": _artifact(file, root),
            "region": {"startLine": max(1, int(line or 1)), "startColumn": max(1, int(col or 1))},
        }
    }


def _result(
    f: Mapping[str, Any], rule_index: int, root: Path, lines: _LineCache, seen: dict[str, int]
) -> dict[str, Any]:
    res: dict[str, Any] = {
        "ruleId": f["id"],
        "ruleIndex": rule_index,
        "level": _LEVEL.get(f["severity"], "warning"),
        "message": {"text": _message(f)},
        "locations": [_location(f["file"], f["line"], f.get("col", 1), root)],
        "partialFingerprints": {"primaryLocationLineHash": _fingerprint(f, lines, seen)},
    }
    related = [
        {
            **_location(r["file"], r["line"], r.get("col", 1), root),
            "id": i,
            "message": {"text": r["message"]},
        }
        for i, r in enumerate(f.get("related", []))
    ]
    if related:
        res["relatedLocations"] = related
    return res


def _message(f: Mapping[str, Any]) -> str:
    """The message, with the notes that have no location of their own appended."""
    placed = {r["message"] for r in f.get("related", [])}
    extra = [n for n in f.get("notes", []) if n not in placed]
    return "\n".join([f["message"], *(f"note: {n}" for n in extra)])


def _fingerprint(f: Mapping[str, Any], lines: _LineCache, seen: dict[str, int]) -> str:
    """``HASH:N``: the rule, the file's name and the whitespace-normalised text of the line (the
    message where the line cannot be read), and N counting earlier results with the same hash."""
    text = lines.get(f["file"], int(f["line"] or 0))
    basis = "\0".join([f["id"], Path(f["file"]).name, text if text is not None else f["message"]])
    digest = hashlib.sha256(basis.encode()).hexdigest()[:16]
    seen[digest] = seen.get(digest, 0) + 1
    return f"{digest}:{seen[digest]}"


class _LineCache:
    def __init__(self) -> None:
        self._files: dict[str, list[str] | None] = {}

    def get(self, file: str, line: int) -> str | None:
        if file not in self._files:
            try:
                self._files[file] = Path(file).read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError):
                self._files[file] = None
        text = self._files[file]
        if text is None or not 1 <= line <= len(text):
            return None
        return " ".join(text[line - 1].split())


def _invocation(inv: Invocation) -> dict[str, Any]:
    out: dict[str, Any] = {
        "executionSuccessful": inv.successful,
        "commandLine": " ".join(inv.arguments),
        "arguments": list(inv.arguments),
        "startTimeUtc": _time(inv.start),
        "endTimeUtc": _time(inv.end),
        "workingDirectory": {"uri": inv.working_directory.resolve().as_uri() + "/"},
        "machine": os.uname().nodename if hasattr(os, "uname") else "",
    }
    if inv.exit_code is not None:
        out["exitCode"] = inv.exit_code
    return out


def _time(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"
