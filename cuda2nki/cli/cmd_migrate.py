"""``cuda2nki migrate IN_DIR -o OUT_DIR``: port or examine every kernel of a tree.

Every CUDA file under IN_DIR is parsed and each kernel ported (or, with --examine, only
classified) in worker processes with a time and memory limit per file; results are cached in
OUT_DIR, so a second run redoes only changed files.  OUT_DIR receives the ports, report.json and
report.html.  Exit 0 when every kernel was ported automatically or literally and no diagnostic
reaches --fail-on (default: error); 1 otherwise."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from cuda2nki.cli.common import (
    add_api,
    add_command,
    add_fail_on,
    add_preprocessor_options,
    at_or_above,
    write_atomic,
)
from cuda2nki.diagnostics import error


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub, "migrate", "port (or --examine) every CUDA kernel under a directory", __doc__
    )
    p.add_argument("in_dir", type=Path, metavar="IN_DIR", help="the CUDA source tree")
    p.add_argument(
        "-o",
        "--out",
        type=Path,
        required=True,
        metavar="OUT_DIR",
        help="where ports and reports go",
    )
    p.add_argument("--jobs", "-j", type=int, default=1, help="worker processes")
    p.add_argument("--examine", action="store_true", help="census only: write no ports")
    p.add_argument(
        "--check", action="store_true", help="also check each port against its CUDA kernel"
    )
    p.add_argument(
        "--include", action="append", default=[], metavar="GLOB", help="only files matching"
    )
    p.add_argument(
        "--exclude", action="append", default=[], metavar="GLOB", help="skip files matching"
    )
    add_preprocessor_options(p)
    p.add_argument(
        "-p",
        "--compile-commands",
        dest="compile_db",
        type=Path,
        metavar="compile_commands.json",
        help="take each file's -D/-I from a compilation database (as clang tools do)",
    )
    add_api(p)
    p.add_argument(
        "--executor", choices=("local", "dask"), default="local", help="where the workers run"
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="dask scheduler address (default: start a local cluster)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        metavar="S",
        help="time limit of a file: S for each kernel it defines",
    )
    p.add_argument(
        "--memory",
        type=int,
        default=2048,
        metavar="MB",
        help="per-worker memory limit",
    )
    p.add_argument(
        "--format",
        choices=("text", "sarif"),
        default="text",
        help="text: the summary on stderr; sarif: also write OUT_DIR/report.sarif",
    )
    p.add_argument(
        "--progress-every",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds between progress lines when stderr is not a terminal",
    )
    add_fail_on(p, "a diagnostic of any kernel", default="error")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cuda2nki.batch.discover import load_compile_db
    from cuda2nki.batch.migrate import MigrateOptions, migrate, progress_printer

    if args.jobs < 1:
        raise error("C2N0002", option="--jobs", reason="must be at least 1")
    if args.timeout <= 0:
        raise error("C2N0002", option="--timeout", reason="must be positive")
    if not args.progress_every > 0:
        raise error("C2N0002", option="--progress-every", reason="must be positive")
    from cuda2nki.report import sarif

    start = sarif.now()
    defines = dict((d.split("=", 1) + ["1"])[:2] for d in args.defines)
    opts = MigrateOptions(
        in_dir=args.in_dir,
        out_dir=args.out,
        jobs=args.jobs,
        mode="examine" if args.examine else "port",
        check=args.check,
        target=args.api,
        include=tuple(args.include),
        exclude=tuple(args.exclude),
        defines=defines,
        include_dirs=tuple(args.include_dirs),
        compile_db=load_compile_db(args.compile_db) if args.compile_db else None,
        executor=args.executor,
        scheduler=args.scheduler,
        timeout=args.timeout,
        memory_mb=args.memory or None,
    )
    update, stop = progress_printer(not args.quiet, args.progress_every)
    try:
        res = migrate(opts, update)
    finally:
        stop()
    s = res.report["summary"]
    code = 1 if (s["failed"] or s["refused"] or s["manual"]) else 0
    if at_or_above(_severities(res.report), args.fail_on):
        code = 1
    if args.format == "sarif":
        from cuda2nki.report.migration import to_sarif

        log = to_sarif(res.report, args.in_dir, sarif.invocation_of(start, exit_code=code))
        write_atomic(args.out / "report.sarif", json.dumps(log, indent=2) + "\n")
    if not args.quiet:
        print(
            f"{s['kernels']} kernels in {s['files']} files: {s['automatic']} automatic, {s['literal']} literal, "
            f"{s['manual']} manual, {s['refused']} refused, {s['failed']} failed "
            f"({res.cached} files cached, {res.computed} computed, {res.seconds:.1f} s)",
            file=sys.stderr,
        )
        if "verdicts" in s:
            from cuda2nki.report.migration import counts_text

            checked, numerics = counts_text(s["verdicts"]), counts_text(s["numerics"])
            print(f"checks: {checked}; numerics: {numerics}", file=sys.stderr)
        print(f"report: {args.out / 'report.html'}", file=sys.stderr)
        if args.format == "sarif":
            print(f"sarif: {args.out / 'report.sarif'}", file=sys.stderr)
    return code


def _severities(report: dict) -> list[str]:
    """The severity of every diagnostic of every kernel in a migration report."""
    return [d["severity"] for k in report.get("kernels", []) for d in k.get("diagnostics", [])]
