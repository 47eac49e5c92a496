"""``cuda2nki review kernel.cu port.py -o review.md|review.html``: the reviewer's rubric report.

Checks the port as ``cuda2nki check`` does and writes a reviewer's assessment: the verdict, the
numbers, the findings by rubric, the port's cost against cuda2nki's own port of the kernel, and
the two sources side by side (HTML).  The format is --format, else the suffix of -o, else Markdown.

Exit status as ``cuda2nki check``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from cuda2nki.cli.cmd_check import add_common, early_sandbox, options
from cuda2nki.cli.common import add_command, fails
from cuda2nki.diagnostics import error

_SUFFIXES = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md", ".txt": "md"}


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub, "review", "write a reviewer's assessment of a port (Markdown or HTML)", __doc__
    )
    add_common(p)
    p.add_argument(
        "--format",
        choices=("md", "html"),
        help="md or html (default: from the suffix of -o, else md)",
    )
    p.add_argument(
        "-o", "--output", type=Path, help="review.md or review.html (default: standard output)"
    )
    p.add_argument(
        "--no-compare", action="store_true", help="skip the comparison with cuda2nki's own port"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    fmt = args.format or _format_of(args.output)  # before any work is done
    box = early_sandbox(args)
    try:
        return _run(args, fmt, box)
    finally:
        if box is not None:
            box.close()


def _run(args: argparse.Namespace, fmt: str, box: Any) -> int:
    from cuda2nki.api import review
    from cuda2nki.fileio import write_atomic

    opts = options(args)
    result = review(args.cuda, args.port, compare=not args.no_compare, **opts, sandbox=box)
    report = result.report.to_dict()
    text = result.to_html() if fmt == "html" else result.to_markdown()
    if args.output:
        write_atomic(args.output, text)
        print(f"review: {args.output} (verdict {report['verdict']})", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 1 if fails(report, args.fail_on) else 0


def _format_of(output: Path | None) -> str:
    suffix = output.suffix.lower() if output else ".md"
    if suffix not in _SUFFIXES:
        raise error(
            "C2N0002",
            option="-o",
            reason=f"unknown report type '{suffix}'; use .md or .html, or give --format",
        )
    return _SUFFIXES[suffix]
