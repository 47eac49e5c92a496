"""``cuda2nki port FILE``: draft an NKI port of a CUDA kernel.

An idiom recogniser lifts the kernel to what it computes and writes an idiomatic NKI kernel;
where none claims it, the literal lowering runs the CUDA threads one by one (correct, slow).

Exit 0: ported by an idiom recogniser; 1: ported literally, refused with a diagnostic, or a
diagnostic at --fail-on or worse (default: error); 2: input error (unreadable file, bad
binding, unknown kernel, bad option).
"""

from __future__ import annotations

import argparse
import json
import sys

from cuda2nki.cli.common import (
    KERNEL_HELP,
    add_api,
    add_command,
    add_fail_on,
    add_preprocessor_options,
    add_template_option,
    at_or_above,
    defines,
    print_diagnostics,
    templates,
    write_atomic,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "port", "draft an NKI port of a CUDA kernel", __doc__)
    p.add_argument("file", help="CUDA source file")
    p.add_argument(
        "--binding",
        help="binding .toml (default: the sidecar FILE.toml's entry for the kernel, else inferred)",
    )
    p.add_argument("--kernel", help=KERNEL_HELP)
    p.add_argument("-o", "--output", help="write the port here (default: standard output)")
    add_api(p)
    p.add_argument(
        "--emit",
        choices=("ast", "intent", "tiles", "nki"),
        default="nki",
        help="what to print: the NKI port, or an intermediate stage",
    )
    p.add_argument(
        "--passes",
        help="pass pipeline, e.g. 'choose-layout,tile-sizes{free=2048}' (default: the standard one)",
    )
    p.add_argument("-p", dest="_deprecated_passes", metavar="PASSES", help=argparse.SUPPRESS)
    p.add_argument(
        "--lowering",
        choices=("auto", "literal", "recognise"),
        default="auto",
        help="auto: an idiom recogniser, else the literal (thread-by-thread) lowering; "
        "literal: force the literal lowering; recognise: refuse what no recogniser claims",
    )
    p.add_argument(
        "--format", choices=("text", "json", "sarif"), default="text", help="output format"
    )
    add_fail_on(p, "a diagnostic", default="error")
    add_preprocessor_options(p)
    add_template_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cuda2nki.api import port
    from cuda2nki.report import sarif

    start = sarif.now()
    res = port(
        args.file,
        binding=args.binding,
        kernel=args.kernel,
        api=args.api,
        passes=args.passes,
        defines=defines(args.defines),
        include_dirs=args.include_dirs,
        templates=templates(args.templates),
        emit=args.emit,
        lowering=args.lowering,
    )
    text = _stage_text(res, args.emit)
    code = (0 if text is not None else 1) if args.emit != "nki" else res.exit_code
    if at_or_above((str(d.severity) for d in res.diagnostics), args.fail_on):
        code = 1
    if args.format == "sarif":  # the log on stdout; the port, if any, only to -o
        if args.output and text is not None:
            write_atomic(args.output, text)
        findings = sarif.findings_of(res.diagnostics)
        props = {"kernel": res.kernel, "idiom": res.idiom, "literal": res.literal}
        log = sarif.to_sarif(findings, sarif.invocation_of(start, exit_code=code), props)
        print(json.dumps(log, indent=2))
        return code
    if args.format == "json":
        payload = {
            "kernel": res.kernel,
            "idiom": res.idiom,
            "literal": res.literal,
            "ported": res.source is not None,
            "output": args.output,
            "diagnostics": [d.to_dict() for d in res.diagnostics],
        }
        if args.output is None:
            payload["text"] = text
        if args.output and text is not None:
            write_atomic(args.output, text)
        print(json.dumps(payload, indent=2))
    else:
        if text is not None:
            if args.output:
                write_atomic(args.output, text)
            else:
                sys.stdout.write(text if text.endswith("\n") else text + "\n")
        print_diagnostics(res.diagnostics)
    return code


def _stage_text(res, emit: str) -> str | None:
    if emit == "nki":
        return res.source
    if emit == "ast":
        fn = res.tu.function(res.kernel) if res.tu is not None else None
        return None if fn is None else _pretty(fn)
    ir = res.ir_intent if emit == "intent" else res.ir_tiles
    if ir is None:
        return None
    try:
        from cuda2nki.ir.printer import to_text
    except ImportError:
        return _pretty(ir)
    return to_text(ir)


def _pretty(obj: object) -> str:
    import pprint

    return pprint.pformat(obj, width=100)
