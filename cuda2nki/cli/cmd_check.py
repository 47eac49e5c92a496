"""``cuda2nki check kernel.cu port.py``: is the port faithful and idiomatic?

Runs the port in a sandbox on generated inputs at every test point of the binding and compares
its outputs with the CUDA kernel's (run in the SIMT interpreter); reads the port for NKI
constraint violations and performance findings.

Exit 0 pass; 1 numbers outside tolerance, a finding at --fail-on or worse, or unverified
(``--static-only`` runs nothing, so never passes); 2 input error."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from cuda2nki.cli.common import (
    KERNEL_HELP,
    add_command,
    add_fail_on,
    add_hw,
    add_preprocessor_options,
    add_template_option,
    defines,
    fails,
    templates,
)
from cuda2nki.diagnostics import error, use_color


def add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("cuda", type=Path, metavar="kernel.cu", help="the CUDA source file")
    p.add_argument("port", type=Path, metavar="port.py", help="the NKI port (a Python file)")
    p.add_argument(
        "--binding",
        type=Path,
        metavar="B.toml",
        help="kernel binding (default: the sidecar kernel.toml, else inferred)",
    )
    p.add_argument("--kernel", help=KERNEL_HELP)
    p.add_argument(
        "--port-kernel", metavar="NAME", help="the port's kernel function (default: the only one)"
    )
    p.add_argument("--seeds", type=int, default=5, help="random inputs per test point")
    p.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE", help="scalar parameter value"
    )
    p.add_argument(
        "--bind",
        action="append",
        default=[],
        metavar="CUDA=PORT",
        help="bind a CUDA parameter to a port name",
    )
    p.add_argument(
        "--static-only", action="store_true", help="read the port's text only; execute nothing"
    )
    add_hw(p)
    add_fail_on(p)
    p.add_argument(
        "--ignore", action="append", default=[], metavar="ID", help="suppress a finding id"
    )
    p.add_argument(
        "--timeout", type=float, default=120.0, metavar="S", help="time limit for running the port"
    )
    p.add_argument(
        "--memory", type=int, default=4096, metavar="MB", help="memory limit for running the port"
    )
    p.add_argument(
        "--trust",
        action="store_true",
        help="run the port even where this host lacks a sandbox layer (your own code only)",
    )
    add_preprocessor_options(p)
    add_template_option(p)


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "check", "check an NKI port against its CUDA kernel", __doc__)
    add_common(p)
    p.add_argument(
        "--format",
        choices=("text", "json", "sarif", "md", "html"),
        default="text",
        help="report format",
    )
    p.add_argument(
        "-o", "--output", type=Path, help="write the report here (default: standard output)"
    )
    p.set_defaults(func=run)


def options(args: argparse.Namespace) -> dict:
    from cuda2nki.binding import parse_set_options

    binds = {}
    for b in args.bind:
        cuda, sep, port = b.partition("=")
        if not sep or not cuda or not port:
            raise error(
                "C2N0002", option="--bind", reason=f"expected CUDA_NAME=PORT_NAME, got {b!r}"
            )
        binds[cuda] = port
    if args.seeds < 1:
        raise error("C2N0002", option="--seeds", reason="must be at least 1")
    if not args.timeout > 0:
        raise error("C2N0002", option="--timeout", reason="must be a positive number of seconds")
    if args.memory is not None and args.memory <= 0:
        raise error("C2N0002", option="--memory", reason="must be a positive number of MB")
    return dict(
        binding=args.binding,
        kernel=args.kernel,
        port_kernel=args.port_kernel,
        seeds=args.seeds,
        overrides=parse_set_options(args.set),
        binds=binds,
        static_only=args.static_only,
        hw=args.hw,
        ignore=tuple(i.upper() for i in args.ignore),
        timeout=args.timeout,
        memory_mb=args.memory,
        defines=defines(args.defines),
        include_dirs=tuple(args.include_dirs),
        templates=templates(args.templates),
        trust=args.trust,
    )


def early_sandbox(args: argparse.Namespace) -> Any:
    """The port's sandbox, launched before the checker's own heavy imports so that the two
    start-ups overlap (None for --static-only, or when the port file cannot be read yet: the
    check then reports that itself)."""
    if args.static_only or not args.port.is_file():
        return None
    from cuda2nki.fidelity.sandbox import PortSandbox

    box = PortSandbox(
        str(args.port),
        None,
        target=args.hw,
        timeout=args.timeout if args.timeout > 0 else 1.0,
        memory_mb=args.memory if args.memory and args.memory > 0 else None,
        trust=args.trust,
    )
    box.launch()
    return box


def run(args: argparse.Namespace) -> int:
    box = early_sandbox(args)
    try:
        return _run(args, box)
    finally:
        if box is not None:
            box.close()


def _run(args: argparse.Namespace, box: Any) -> int:
    from cuda2nki.api import check
    from cuda2nki.fileio import write_atomic
    from cuda2nki.report import check as fmt
    from cuda2nki.report import sarif

    start = sarif.now()
    report = check(args.cuda, args.port, **options(args), sandbox=box).to_dict()
    code = 1 if fails(report, args.fail_on) else 0
    if args.format == "text":
        text = fmt.to_text(report, color=args.output is None and use_color(sys.stdout))
    elif args.format == "json":
        text = fmt.to_json(report)
    elif args.format == "sarif":
        invocation = sarif.invocation_of(start, exit_code=code)
        text = json.dumps(fmt.to_sarif(report, invocation), indent=2)
    elif args.format == "md":
        text = fmt.to_markdown(report)
    else:
        from cuda2nki.report import review

        text = review.to_html(report, args.cuda, args.port)
    if args.output:
        write_atomic(args.output, text + "\n")
    else:
        sys.stdout.write(text + "\n")
    return code
