"""``cuda2nki bind FILE``: the binding inferred from a CUDA file, as a commented sidecar.

Writes one ``[kernels.NAME]`` table per kernel (``--kernel`` for one) with each inferred item's
evidence (``file:line``) and a ``# TODO`` for each item the source does not say.  ``port``,
``check`` and ``migrate`` use the same inference when no binding is given; the written file,
once completed, is the sidecar they read (``FILE.toml`` beside the source).
Exit status: 0 when every binding is complete, 1 when TODOs remain, 2 on an input error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cuda2nki.cli.common import KERNEL_HELP, add_preprocessor_options


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bind",
        help="write the binding inferred from a CUDA file (TOML, with evidence and TODOs)",
        description=__doc__.split("\n\n")[0],
    )
    p.add_argument("file", help="CUDA source file (.cu/.cuh)")
    p.add_argument("--kernel", help=KERNEL_HELP)
    p.add_argument("-o", "--output", metavar="K.toml", help="write here instead of stdout")
    add_preprocessor_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cuda2nki.cli.cmd_parse import _pairs
    from cuda2nki.cli.common import print_diagnostics
    from cuda2nki.frontend import parse_file
    from cuda2nki.frontend.select import select_kernel
    from cuda2nki.lift.bindtoml import file_toml

    defines = _pairs(args.defines, "-D", need_value=False)
    tu = parse_file(args.file, defines=defines, include_dirs=args.include_dirs)
    if args.kernel:
        kernels = [select_kernel(tu, args.kernel)]
    else:
        kernels = [k.name for k in tu.kernels]
        if not kernels:
            print_diagnostics(tu.diagnostics)
            select_kernel(tu, None)  # says why (C2N0002 or the refusals)
    text, tables = file_toml(tu, kernels)
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    todo = [f"{t.kernel}: {', '.join(t.todo)}" for t in tables if t.todo]
    if todo:
        print("bind: items to complete -- " + "; ".join(todo), file=sys.stderr)
    return 1 if todo else 0
