"""``cuda2nki simulate PORT.py --out out.npz``: run an NKI kernel in the CPU simulator.

Inputs come from ``--inputs in.npz`` by parameter name; missing array parameters are generated
from ``--seed`` (float32 standard normal, or the ``--dtype`` given) with the ``--shape`` given;
scalar parameters with a default keep it.  ``out.npz`` holds the outputs as ``out0``, ``out1``...
or by name when the kernel returns a dict / named tuple (bf16/fp8 written as float32).
Exit status: 0 ok, 2 on an input error or a diagnostic raised by the port (with its line).
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import io
import json
import sys
import zlib
from typing import TYPE_CHECKING

from cuda2nki.cli.common import add_command, add_hw

if TYPE_CHECKING:
    import numpy as np


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub, "simulate", "run an NKI kernel (current or legacy API) in the CPU simulator", __doc__
    )
    p.add_argument("port", help="Python file holding the NKI kernel")
    p.add_argument("--kernel", help="kernel function name (default: the only @nki.jit kernel)")
    p.add_argument("--inputs", help=".npz with input arrays by parameter name")
    p.add_argument("--seed", type=int, default=0, help="seed for generated inputs")
    p.add_argument("--out", required=True, help="output .npz")
    add_hw(p, default=None)
    p.add_argument("--profile", action="store_true", help="print the cost-model profile")
    p.add_argument("--format", choices=("text", "json"), default="text", help="report format")
    p.add_argument(
        "--shape",
        dest="shapes",
        action="append",
        default=[],
        metavar="NAME=D0,D1",
        help="shape of a generated input (repeatable)",
    )
    p.add_argument(
        "--dtype",
        dest="dtypes",
        action="append",
        default=[],
        metavar="NAME=DTYPE",
        help="dtype of an input (generated, or rounded from a float32 array; repeatable)",
    )
    p.add_argument("--grid", help="legacy SPMD launch grid, e.g. 2,4 (or the LNC degree)")
    p.add_argument(
        "--strict-uninit", action="store_true", help="error on reads of never-written memory"
    )
    p.add_argument(
        "--shadow-nki",
        action="store_true",
        help="use the simulator even where a real nki / neuronxcc package is installed",
    )
    p.set_defaults(func=run)


def _pairs(items: list[str], option: str) -> dict[str, str]:
    from cuda2nki.diagnostics import error

    out: dict[str, str] = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name.strip().isidentifier() or not value.strip():
            raise error("C2N0002", option=option, reason=f"expected NAME=VALUE, got '{item}'")
        out[name.strip()] = value.strip()
    return out


def _shape(text: str, option: str) -> tuple[int, ...]:
    from cuda2nki.diagnostics import error

    try:
        dims = tuple(int(d) for d in text.split(","))
    except ValueError:
        raise error("C2N0002", option=option, reason=f"shape '{text}' is not D0,D1,...") from None
    if any(d < 0 for d in dims):
        raise error("C2N0002", option=option, reason=f"negative dimension in '{text}'")
    return dims


def _read_npz(path: str) -> dict[str, np.ndarray]:
    import numpy as np

    from cuda2nki.diagnostics import error

    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise error("C2N0001", path=path, reason="no such file") from None
    except (OSError, ValueError) as exc:
        raise error("C2N0001", path=path, reason=f"not a readable .npz ({exc})") from None


def _params(kernel) -> list[inspect.Parameter]:
    try:
        return list(inspect.signature(kernel.fn).parameters.values())
    except (TypeError, ValueError):
        return []


def build_inputs(kernel, provided: dict, shapes: dict, dtypes: dict, seed: int, path: str) -> dict:
    """Kernel keyword arguments: provided arrays, generated ones, scalar defaults."""
    import numpy as np

    from cuda2nki.diagnostics import DiagnosticError, SourceLoc, make
    from cuda2nki.nkisim import dtypes as ndt

    def bad(name: str, reason: str) -> DiagnosticError:
        return DiagnosticError(make("C2N3025", SourceLoc(path, 0, 0), name=name, reason=reason))

    def declared(name: str):
        if name not in dtypes:
            return None
        try:
            return ndt.as_dtype(dtypes[name])
        except TypeError:
            raise bad(name, f"unknown dtype '{dtypes[name]}'") from None

    kwargs: dict = {}
    for prm in _params(kernel):
        name = prm.name
        if prm.kind in (prm.VAR_POSITIONAL, prm.VAR_KEYWORD):
            continue
        d = declared(name)
        if name in provided:
            arr = provided[name]
            if arr.ndim == 0:
                kwargs[name] = arr.item()
                continue
            if d is not None and arr.dtype != d.np_dtype:
                if arr.dtype.kind == "f" or d.is_float is False and arr.dtype.kind in "iu":
                    arr = ndt.convert(arr.astype(np.float32) if arr.dtype.kind == "f" else arr, d)
                else:
                    raise bad(name, f"array of dtype {arr.dtype} cannot become {d.name}")
            if name in shapes and tuple(arr.shape) != shapes[name]:
                raise bad(
                    name, f"shape {arr.shape} in --inputs differs from --shape {shapes[name]}"
                )
            kwargs[name] = arr
        elif name in shapes:
            rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
            vals = rng.standard_normal(shapes[name], dtype=np.float32)
            if d is not None and not d.is_float:
                vals = np.rint(vals * 8)
            kwargs[name] = ndt.convert(vals, d) if d is not None else vals
        elif prm.default is not prm.empty:
            continue
        else:
            raise bad(name, "not in --inputs and no --shape given")
    unknown = sorted(set(provided) - {p.name for p in _params(kernel)})
    if unknown and not any(p.kind == p.VAR_KEYWORD for p in _params(kernel)):
        raise bad(unknown[0], "the kernel has no such parameter")
    return kwargs


def _as_storable(a) -> np.ndarray:
    import numpy as np

    arr = np.asarray(a)
    if arr.dtype.kind == "V" or arr.dtype.name in ("bfloat16",) or "float8" in arr.dtype.name:
        return arr.astype(np.float32)
    return arr


def output_arrays(outputs) -> dict[str, np.ndarray]:
    if isinstance(outputs, dict):
        return {str(k): _as_storable(v) for k, v in outputs.items()}
    if isinstance(outputs, tuple) and hasattr(outputs, "_fields"):
        return {f: _as_storable(v) for f, v in zip(outputs._fields, outputs)}
    if isinstance(outputs, (tuple, list)):
        return {f"out{i}": _as_storable(v) for i, v in enumerate(outputs)}
    if outputs is None:
        return {}
    return {"out0": _as_storable(outputs)}


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from cuda2nki.cli.common import print_diagnostics, write_atomic
    from cuda2nki.nkisim import load_kernel, simulate_kernel

    shapes = {k: _shape(v, "--shape") for k, v in _pairs(args.shapes, "--shape").items()}
    dtypes = _pairs(args.dtypes, "--dtype")
    grid = _shape(args.grid, "--grid") if args.grid else None
    kernel = load_kernel(args.port, args.kernel, shadow=args.shadow_nki)
    provided = _read_npz(args.inputs) if args.inputs else {}
    kwargs = build_inputs(kernel, provided, shapes, dtypes, args.seed, args.port)
    if grid is not None and not kernel.legacy:
        grid = grid[0]
    # the port's own prints (device_print, print) go to stderr: stdout carries the report
    with contextlib.redirect_stdout(sys.stderr):
        res = simulate_kernel(
            kernel,
            kwargs,
            target=args.hw,
            grid=grid,
            profile=args.profile,
            strict_uninit=args.strict_uninit,
            seed=args.seed,
        )
    outs = output_arrays(res.outputs)
    buf = io.BytesIO()
    np.savez(buf, **outs)
    write_atomic(args.out, buf.getvalue())
    print_diagnostics(res.warnings)
    if args.format == "json":
        doc = {
            "port": args.port,
            "kernel": kernel.__name__,
            "target": res.state.target.name,
            "outputs": {
                k: {"shape": list(v.shape), "dtype": str(v.dtype)} for k, v in outs.items()
            },
            "instructions": len(res.trace),
            "warnings": [d.to_dict() for d in res.warnings],
        }
        if res.profile is not None:
            doc["profile"] = res.profile.to_dict()
        print(json.dumps(doc, indent=2))
    else:
        shown = ", ".join(f"{k} {tuple(v.shape)} {v.dtype}" for k, v in outs.items())
        print(
            f"{args.port}: {kernel.__name__} on {res.state.target.name}: "
            f"{len(res.trace)} instructions; wrote {args.out} ({shown})"
        )
        if res.profile is not None:
            print(res.profile.to_text())
    sys.stdout.flush()
    return 0
