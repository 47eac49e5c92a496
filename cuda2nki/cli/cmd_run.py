"""``cuda2nki run FILE --binding B.toml --out out.npz``: run a CUDA kernel in the SIMT interpreter.

Inputs come from ``--inputs in.npz`` (by parameter name); missing ones are generated from
``--seed``.  ``out.npz`` receives every ``out``/``inout`` parameter by name (bf16/fp8 as float32),
written atomically.  Exit status: 0 ok, 1 when the run produced warnings (e.g. a ``__syncthreads``
reached by part of a block), 2 on an input error or a runtime fault (out-of-bounds access...).
"""

from __future__ import annotations

import argparse
import sys

from cuda2nki.cli.common import (
    KERNEL_HELP,
    add_command,
    add_preprocessor_options,
    add_template_option,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "run", "run a CUDA kernel in the SIMT reference interpreter", __doc__)
    p.add_argument("file", help="CUDA source file (.cu)")
    p.add_argument("--binding", help="kernel binding (.toml); default: the sidecar FILE.toml")
    p.add_argument("--kernel", help=KERNEL_HELP)
    p.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a scalar parameter of the binding (repeatable)",
    )
    p.add_argument("--inputs", help=".npz with input arrays by parameter name")
    p.add_argument("--seed", type=int, default=0, help="seed for generated inputs")
    p.add_argument("--out", required=True, help="output .npz (every out/inout parameter)")
    add_preprocessor_options(p)
    add_template_option(p)
    p.add_argument(
        "--max-steps",
        type=int,
        default=None,
        help="loop-iteration budget per chunk (default: unlimited)",
    )
    p.add_argument(
        "--no-poison",
        action="store_true",
        help="zero-fill shared memory instead of poisoning never-written words with NaN",
    )
    p.add_argument(
        "--fmad",
        action="store_true",
        help="contract float x*y+z into fused multiply-adds as nvcc does by default",
    )
    p.set_defaults(func=run)


def _pairs(items: list[str], option: str) -> dict[str, str]:
    from cuda2nki.diagnostics import error

    out: dict[str, str] = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not name.strip().isidentifier():
            raise error("C2N0002", option=option, reason=f"expected NAME[=VALUE], got '{item}'")
        out[name.strip()] = value if eq else "1"
    return out


def run(args: argparse.Namespace) -> int:
    from cuda2nki import api
    from cuda2nki.binding import load_npz, parse_set_options, save_npz
    from cuda2nki.cli.common import print_diagnostics
    from cuda2nki.diagnostics import SourceLoc, error

    if args.max_steps is not None and args.max_steps <= 0:
        raise error("C2N0002", option="--max-steps", reason="must be positive")
    binding = api.find_binding(args.file, args.binding, args.kernel)
    if binding is None:
        what = f"for kernel '{args.kernel}' " if args.kernel else ""
        raise error(
            "C2N0003",
            SourceLoc(args.file, 1, 1),
            reason=f"no --binding given and no sidecar .toml beside the CUDA file {what}"
            "(a sidecar binds the kernels it names, or the file's only kernel)",
        )
    res = api.run_full(
        args.file,
        binding,
        kernel=args.kernel,
        overrides=parse_set_options(args.sets),
        inputs=load_npz(args.inputs) if args.inputs else None,
        seed=args.seed,
        defines=_pairs(args.defines, "-D"),
        include_dirs=args.include_dirs,
        templates=_pairs(args.templates, "--template"),
        poison_shared=not args.no_poison,
        max_steps=args.max_steps,
        fmad=args.fmad,
    )
    name, outs, resolved, result = res.kernel, res.outputs, res.resolved, res.simt
    save_npz(args.out, outs)
    g, b = resolved.grid, resolved.block
    print(
        f"{name}: grid ({g[0]}, {g[1]}, {g[2]}) block ({b[0]}, {b[1]}, {b[2]}), "
        f"{result.chunks} chunk(s), {result.steps} steps"
    )
    for k, v in outs.items():
        print(f"  {k}: {v.dtype} {tuple(v.shape)}")
    print(f"wrote {args.out}")
    sys.stdout.flush()
    if result.diagnostics:
        print_diagnostics(result.diagnostics)
        return 1
    return 0
