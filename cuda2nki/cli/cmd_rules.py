"""``cuda2nki rules [ID] [--format text|md|json]``: the diagnostic catalogue, or one entry.

One entry shows, besides the rule's text, the runnable example from
:mod:`cuda2nki.rules.examples`: the files to write and the command that raises the id.
``--write-example DIR`` writes those files (and the corpus files the example uses, which ship
with cuda2nki) into DIR, where the command runs as shown.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from cuda2nki.cli.common import add_command
from cuda2nki.diagnostics import Rule, error, rules
from cuda2nki.rules.examples import EXAMPLES, NO_EXAMPLE, Example, render_example


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "rules", "list diagnostic ids with explanations and fixes", __doc__)
    p.add_argument("id", nargs="?", help="one id, e.g. C2N1001 (default: list every id)")
    p.add_argument("--format", choices=("text", "md", "json"), default="text", help="output format")
    p.add_argument(
        "--write-example",
        metavar="DIR",
        type=Path,
        help="write the files of ID's runnable example into DIR (created if needed)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    table = rules()
    if args.id:
        code = args.id.upper()
        if code not in table:
            raise error(
                "C2N0002", option="ID", reason=f"no diagnostic {args.id}; see `cuda2nki rules`"
            )
        selected = [table[code]]
        if args.write_example is not None:
            return _write_example(code, args.write_example)
    else:
        if args.write_example is not None:
            raise error("C2N0002", option="--write-example", reason="name one ID to write")
        selected = list(table.values())
    print(render(selected, args.format, detail=bool(args.id)))
    return 0


def _write_example(code: str, folder: Path) -> int:
    from cuda2nki.rules.examples import command_line, write_example

    ex, reason = _runnable(code)
    if ex is None:
        raise error("C2N0002", option="--write-example", reason=reason or f"{code} has no example")
    try:
        written = write_example(ex, folder)
    except OSError as exc:
        raise error("C2N0004", path=str(folder), reason=exc.strerror or str(exc)) from None
    for path in written:
        print(f"wrote {path}")
    if ex.argv:
        print(f"run in {folder}: {command_line(ex)}")
    return 0


def render(selected: list[Rule], fmt: str, detail: bool = False) -> str:
    if fmt == "json":
        return json.dumps([_json(r) for r in selected], indent=2)
    if fmt == "md":
        return "\n\n".join(_markdown(r) for r in selected)
    if not detail:
        return "\n".join(
            f"{r.code}  {str(r.severity):7}  {r.title}{'  (retired)' if r.retired else ''}"
            for r in selected
        )
    return "\n\n".join(_text(r) for r in selected)


def _text(r: Rule) -> str:
    parts = [f"{r.code} ({r.severity}): {r.title}", f"message: {r.message}"]
    if r.explanation:
        parts.append(r.explanation)
    if r.example:
        parts.append("example:\n" + "\n".join("    " + ln for ln in r.example.splitlines()))
    if r.fix:
        parts.append(f"fix: {r.fix}")
    ex, reason = _runnable(r.code)
    if ex is not None:
        body = render_example(ex, r.code)
        parts.append("runnable example:\n" + "\n".join("    " + ln for ln in body.splitlines()))
    elif reason:
        parts.append(f"no runnable example: {reason}")
    return "\n".join(parts)


def _markdown(r: Rule) -> str:
    parts = [
        f"## {r.code}: {r.title}",
        f"*Severity:* {r.severity}{' (retired)' if r.retired else ''}",
        f"*Message:* `{r.message}`",
    ]
    if r.explanation:
        parts.append(r.explanation)
    if r.example:
        parts.append("Example:\n\n```\n" + r.example + "\n```")
    if r.fix:
        parts.append(f"*Fix:* {r.fix}")
    ex, reason = _runnable(r.code)
    if ex is not None:
        parts.append(
            "Runnable example (`cuda2nki rules "
            + r.code
            + "`):\n\n```\n"
            + render_example(ex, r.code)
            + "\n```"
        )
    elif reason:
        parts.append(f"*No runnable example:* {reason}")
    return "\n\n".join(parts)


def _runnable(code: str) -> tuple[Example | None, str]:
    return EXAMPLES.get(code), NO_EXAMPLE.get(code, "")


def _json(r: Rule) -> dict:
    entry = {**asdict(r), "severity": str(r.severity)}
    ex, reason = _runnable(r.code)
    if ex is not None:
        entry["runnable"] = {
            "files": dict(ex.files),
            "argv": ["cuda2nki", *ex.argv] if ex.argv else [],
            "python": ex.python,
            "exit_code": ex.exit_code,
        }
    elif reason:
        entry["no_example"] = reason
    return entry
