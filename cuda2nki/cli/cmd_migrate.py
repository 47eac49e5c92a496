"""``cuda2nki migrate IN_DIR -o OUT_DIR``: port or examine every kernel of a tree."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cuda2nki.diagnostics import error


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("migrate", help="port (or --examine) every CUDA kernel under a directory")
    p.add_argument("in_dir", type=Path, metavar="IN_DIR")
    p.add_argument("-o", "--out", type=Path, required=True, metavar="OUT_DIR")
    p.add_argument("--jobs", "-j", type=int, default=1)
    p.add_argument("--examine", action="store_true", help="census only: write no ports")
    p.add_argument(
        "--check", action="store_true", help="also check each port against its CUDA kernel"
    )
    p.add_argument("--include", action="append", default=[], metavar="GLOB")
    p.add_argument("--exclude", action="append", default=[], metavar="GLOB")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR")
    p.add_argument("-p", dest="compile_db", type=Path, metavar="compile_commands.json")
    p.add_argument("--target", choices=("nki", "legacy"), default="nki")
    p.add_argument("--executor", choices=("local", "dask"), default="local")
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="dask scheduler address (default: start a local cluster)",
    )
    p.add_argument(
        "--timeout", type=float, default=60.0, metavar="S", help="per-file time limit (default 60)"
    )
    p.add_argument(
        "--memory",
        type=int,
        default=2048,
        metavar="MB",
        help="per-worker memory limit (default 2048)",
    )
    p.add_argument("--quiet", "-q", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cuda2nki.batch.discover import load_compile_db
    from cuda2nki.batch.migrate import MigrateOptions, migrate, progress_printer

    if args.jobs < 1:
        raise error("C2N0002", option="--jobs", reason="must be at least 1")
    if args.timeout <= 0:
        raise error("C2N0002", option="--timeout", reason="must be positive")
    defines = dict((d.split("=", 1) + ["1"])[:2] for d in args.defines)
    opts = MigrateOptions(
        in_dir=args.in_dir,
        out_dir=args.out,
        jobs=args.jobs,
        mode="examine" if args.examine else "port",
        check=args.check,
        target=args.target,
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
    update, stop = progress_printer(not args.quiet)
    try:
        res = migrate(opts, update)
    finally:
        stop()
    s = res.report["summary"]
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
    return 1 if (s["failed"] or s["refused"] or s["manual"]) else 0
