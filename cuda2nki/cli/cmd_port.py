"""``cuda2nki port FILE``: draft an NKI port of a CUDA kernel.

Exit 0: ported by an idiom recogniser; 1: ported literally, or refused with a diagnostic;
2: input error (unreadable file, bad binding, unknown kernel, bad option).
"""

from __future__ import annotations

import argparse
import json
import sys

from cuda2nki.cli.common import print_diagnostics, write_atomic
from cuda2nki.diagnostics import error


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("port", help="draft an NKI port of a CUDA kernel")
    p.add_argument("file", help="CUDA source file")
    p.add_argument(
        "--binding",
        help="binding .toml (default: the sidecar FILE.toml's entry for the kernel, else inferred)",
    )
    p.add_argument("--kernel", help="kernel name when the file has several")
    p.add_argument("-o", "--output", help="write the port here (default: stdout)")
    p.add_argument("--target", choices=("nki", "legacy"), default="nki")
    p.add_argument("--emit", choices=("ast", "intent", "tiles", "nki"), default="nki")
    p.add_argument(
        "-p", "--passes", help="pass pipeline, e.g. 'choose-layout,tile-sizes{free=2048}'"
    )
    p.add_argument(
        "--lowering",
        choices=("auto", "literal", "recognise"),
        default="auto",
        help="auto: an idiom recogniser, else the literal (thread-by-thread) lowering; "
        "literal: force the literal lowering; recognise: refuse what no recogniser claims",
    )
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=V")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR")
    p.set_defaults(func=run)


def _defines(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not name:
            raise error("C2N0002", option="-D", reason=f"{item!r} is not NAME[=VALUE]")
        out[name] = value if eq else "1"
    return out


def run(args: argparse.Namespace) -> int:
    from cuda2nki.codegen.pipeline import port_file

    res = port_file(
        args.file,
        binding=args.binding,
        kernel=args.kernel,
        target=args.target,
        passes=args.passes,
        defines=_defines(args.defines),
        include_dirs=args.include_dirs,
        emit=args.emit,
        lowering=args.lowering,
    )
    text = _stage_text(res, args.emit)
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
    if args.emit != "nki":
        return 0 if text is not None else 1
    return res.exit_code


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
