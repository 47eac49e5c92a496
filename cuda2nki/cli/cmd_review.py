"""``cuda2nki review kernel.cu port.py -o review.md|review.html``: the reviewer's rubric report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cuda2nki.cli.cmd_check import add_common, options
from cuda2nki.diagnostics import error


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("review", help="write a reviewer's assessment of a port (Markdown or HTML)")
    add_common(p)
    p.add_argument(
        "-o", "--output", type=Path, help="review.md or review.html (default: Markdown on stdout)"
    )
    p.add_argument(
        "--no-compare", action="store_true", help="skip the comparison with cuda2nki's own port"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cuda2nki.fidelity.check import check
    from cuda2nki.fidelity.review import generated_baseline
    from cuda2nki.fileio import write_atomic
    from cuda2nki.report import review

    suffix = args.output.suffix.lower() if args.output else ".md"
    if suffix not in (".html", ".htm", ".md", ".markdown", ".txt"):  # before any work is done
        raise error(
            "C2N0002", option="-o", reason=f"unknown report type '{suffix}'; use .md or .html"
        )
    opts = options(args)
    report = check(args.cuda, args.port, **opts).to_dict()
    generated = None
    if not args.no_compare and not args.static_only:
        generated = generated_baseline(args.cuda, report, opts)
    if suffix in (".html", ".htm"):
        text = review.to_html(report, args.cuda, args.port, generated)
    else:
        text = review.to_markdown(report, generated)
    if args.output:
        write_atomic(args.output, text)
        print(f"review: {args.output} (verdict {report['verdict']})", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0 if report["verdict"] == "pass" else 1
