"""``cuda2nki parse FILE``: what the front end sees in a CUDA file.

Lists kernels (name, parameters with types, template parameters and arguments, launch bounds),
device functions, ``__constant__``/``__device__`` globals, host launch sites and diagnostics.
Exit status: 0 when every kernel was accepted, 1 when any kernel was rejected, 2 on an input
error (unreadable file, bad option).

``--emit ast`` prints the typed AST as an indented dump instead (one node per line,
``Kind field=value @line:col``).

JSON output (``--format json``), stable; keys are always present::

    {
      "file": "k.cu",
      "kernels": [FUNCTION, ...],            # __global__ functions (instantiations for templates)
      "device_functions": [FUNCTION, ...],   # __device__ / __host__ __device__ functions
      "globals": [{"name", "type", "space": "constant"|"device"|"host_const", "line"}],
      "launch_sites": [{"kernel", "line", "col", "template_args": [str], "grid": [str],
                        "block": [str], "shared_bytes": str|null, "grid_text", "block_text",
                        "args": [str]}],
      "rejected": {"kernel_name": [DIAGNOSTIC, ...]},
      "diagnostics": [DIAGNOSTIC, ...]       # everything, sorted by location
    }
    FUNCTION = {"name", "kind": "global"|"device"|"host_device", "line",
                "params": [{"name", "type"}], "return_type",
                "template_params": [{"name", "kind": "int"|"typename"|"function",
                                     "default": str|null}],
                "template_args": {"NAME": int | "type" | "function"}, "launch_bounds": [int],
                "forceinline": bool}
    DIAGNOSTIC = {"id", "severity", "message", "file", "line", "col", "notes": [str]}

Types are spelled ``const float32* __restrict__``, ``float32[16][17]``, ``float4``...
A template kernel launched with several template arguments is listed once per instantiation,
named ``k<128>``, ``k<256, float32>`` (the name ``run --kernel`` takes); instantiated once, it
keeps its plain name.
With ``--emit ast --format json`` the same document gains ``"ast": [str, ...]``, the lines of the
indented dump.  ``rejected`` lists kernels only; an error in a ``__device__`` function appears in
``diagnostics`` and in the rejection of each kernel that calls it.
"""

from __future__ import annotations

import argparse
import json

from cuda2nki.cli.common import add_command, add_preprocessor_options, add_template_option
from cuda2nki.diagnostics import error


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub, "parse", "show the kernels, launch sites and diagnostics of a CUDA file", __doc__
    )
    p.add_argument("file", help="CUDA source file (.cu/.cuh)")
    p.add_argument(
        "--emit",
        choices=("summary", "ast"),
        default="summary",
        help="what to print: the summary (default) or the typed AST",
    )
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    add_preprocessor_options(p)
    add_template_option(p)
    p.set_defaults(func=run)


def _pairs(items: list[str], option: str, need_value: bool) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        name, eq, value = item.partition("=")
        name = name.strip()
        if not name.isidentifier() or (need_value and not eq):
            raise error(
                "C2N0002",
                option=option,
                reason=f"expected NAME{'=' if need_value else '[='}"
                f"VALUE{'' if need_value else ']'}, got '{item}'",
            )
        out[name] = value if eq else "1"
    return out


def run(args: argparse.Namespace) -> int:
    from cuda2nki.cli.common import print_diagnostics
    from cuda2nki.frontend import parse_file
    from cuda2nki.frontend.dump import dump_ast, summary

    defines = _pairs(args.defines, "-D", need_value=False)
    templates = _pairs(args.templates, "--template", need_value=True)
    tu = parse_file(args.file, defines=defines, include_dirs=args.include_dirs, templates=templates)
    if args.emit == "ast":
        if args.format == "json":
            doc = summary(tu)
            doc["ast"] = dump_ast(tu).split("\n")
            print(json.dumps(doc, indent=2))
        else:
            print(dump_ast(tu), flush=True)
            print_diagnostics(tu.diagnostics)
    elif args.format == "json":
        print(json.dumps(summary(tu), indent=2))
    else:
        print(render_text(tu), flush=True)
        print_diagnostics(tu.diagnostics)
    return 1 if tu.rejected else 0


def render_text(tu) -> str:  # noqa: ANN001
    from cuda2nki.frontend.dump import expr_text
    from cuda2nki.frontend.typesys import type_str

    out = [f"{tu.file}:"]
    kernels = [f for f in tu.functions if f.kind == "global"]
    devs = [f for f in tu.functions if f.kind != "global"]
    out.append(f"  kernels: {len(kernels)}")
    for f in kernels:
        params = ", ".join(f"{type_str(p.ty)} {p.name}" for p in f.params)
        extra = []
        if f.template_params:
            extra.append(
                "template <"
                + ", ".join(f"{t.kind} {t.name}" for t in f.template_params)
                + "> (not instantiated)"
            )
        if f.template_args:
            extra.append(
                "<"
                + ", ".join(
                    f"{k}={v if isinstance(v, int) else type_str(v)}" for k, v in f.template_args
                )
                + ">"
            )
        if f.launch_bounds:
            extra.append(f"__launch_bounds__({', '.join(map(str, f.launch_bounds))})")
        out.append(f"    {f.name}({params})  line {f.loc.line}" + "".join("  " + e for e in extra))
    if devs:
        out.append(f"  device functions: {len(devs)}")
        for f in devs:
            params = ", ".join(f"{type_str(p.ty)} {p.name}" for p in f.params)
            out.append(f"    {type_str(f.return_type)} {f.name}({params})  line {f.loc.line}")
    if tu.globals:
        out.append(f"  globals: {len(tu.globals)}")
        for g in tu.globals:
            out.append(f"    {g.space} {type_str(g.ty)} {g.name}  line {g.loc.line}")
    out.append(f"  launch sites: {len(tu.launch_sites)}")
    for s in tu.launch_sites:
        targs = (
            "<" + ", ".join(expr_text(t) for t in s.template_args) + ">" if s.template_args else ""
        )
        smem = f", {expr_text(s.shared_bytes)}" if s.shared_bytes is not None else ""
        out.append(
            f"    {s.kernel}{targs}<<<({s.grid_text}), ({s.block_text}){smem}>>>"
            f"({', '.join(s.arg_texts)})  line {s.loc.line}"
        )
    if tu.rejected:
        out.append(f"  rejected: {len(tu.rejected)}")
        for name, ds in sorted(tu.rejected.items()):
            ids = ", ".join(sorted({d.code for d in ds}))
            out.append(f"    {name}: {ids}")
    return "\n".join(out)
