"""Acceptance harness for literal ports: port a corpus kernel (the literal lowering when no
recogniser claims it, or forced), run the port in the NKI simulator and compare it with the SIMT
interpreter on the binding's test points.  Shared by tests/port/test_literal*.py and bench/."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tests.port.acceptance import run_against_simt


@dataclass
class LiteralOutcome:
    kernel: str
    status: str  # "match" | "mismatch" | "refused" | "claimed" | "error"
    detail: str = ""
    codes: tuple[str, ...] = ()
    points: list[dict] = field(default_factory=list)
    cost_ns: float | None = None


def check_literal(
    path: Path,
    tmp: Path,
    *,
    lowering: str = "auto",
    target: str = "nki",
    max_points: int = 3,
    profile: bool = False,
) -> LiteralOutcome:
    from cuda2nki.binding import load_binding
    from cuda2nki.diagnostics import DiagnosticError
    from cuda2nki.pipeline import port_file

    binding = load_binding(path.with_suffix(".toml"))
    res = port_file(path, binding=binding, lowering=lowering, target=target)
    codes = tuple(d.code for d in res.diagnostics)
    if res.source is None:
        why = "; ".join(d.message for d in res.diagnostics if d.code in ("C2N2301", "C2N2302"))
        return LiteralOutcome(res.kernel, "refused", why, codes)
    if not res.literal:
        return LiteralOutcome(res.kernel, "claimed", res.idiom or "", codes)
    port = tmp / f"{path.stem}_literal_{target}.py"
    port.write_text(res.source)
    out = LiteralOutcome(res.kernel, "match", "", codes)
    tol = binding.meta.get("check", {}) if isinstance(binding.meta, dict) else {}
    rtol, atol = float(tol.get("rtol", 1e-4)), float(tol.get("atol", 1e-4))
    try:
        run = run_against_simt(
            res,
            binding,
            port,
            points=binding.test_points()[:max_points],
            rtol=rtol,
            atol=atol,
            profile=profile,
            cost="overlapped_ns",
        )
        if run.mismatches:
            name, point, err = run.mismatches[-1]
            out.status, out.detail = "mismatch", f"{name} at {point}: max error {err:.3g}"
        out.cost_ns, out.points = run.cost_ns, run.points
    except DiagnosticError as exc:
        out.status, out.detail = "error", f"{exc.diagnostic.code} {exc.diagnostic.message}"
    return out


def run_literal_exactly(cu: Path, bdict: dict, target: str, tmp: Path) -> tuple:
    """Port ``cu`` (written) literally for ``target`` under the binding ``bdict`` (kernel ``k``)
    and run it against the interpreter with no tolerance at every test point of the binding:
    (the comparison, the points)."""
    from cuda2nki.binding import binding_from_dict
    from cuda2nki.pipeline import port_file

    binding = binding_from_dict({"kernel": "k", **bdict}, path=str(cu))
    res = port_file(cu, binding=binding, target=target, lowering="literal")
    assert res.source is not None, [d.render() for d in res.diagnostics]
    port = tmp / f"{cu.stem}_{target}.py"
    port.write_text(res.source)
    points = binding.test_points()
    return run_against_simt(res, binding, port, points=points, rtol=0.0, atol=0.0), points


def run_flat_kernel_exactly(cu: Path, block: list, target: str, tmp: Path) -> tuple:
    """:func:`run_literal_exactly` for a kernel ``k(const float* x, float* y, int n, int reach)``
    over ``n`` elements in blocks of ``block`` (checked at n = 77 and the binding's size)."""
    from tests.port.acceptance import tensor_param

    per_block = block[0] * (block[1] if len(block) > 1 else 1)
    bdict = {
        "launch": {"grid": [f"ceil_div(n, {per_block})"], "block": block},
        "params": {
            "x": tensor_param(["n"], "in", "float32", [-2.0, 2.0]),
            "y": tensor_param(["n"], "out"),
            "n": 200,
            "reach": 2,
        },
        "check": {"shapes": [{"n": 77}]},
    }
    return run_literal_exactly(cu, bdict, target, tmp)


def port_flat_kernel_literally(cu: Path):
    """The literal port (a PortResult) of a kernel ``k(const float* x, float* y, int n,
    int reach)`` over ``n`` elements in blocks of 64, for tests that expect a refusal."""
    from cuda2nki.binding import binding_from_dict
    from cuda2nki.pipeline import port_file
    from tests.port.acceptance import tensor_param

    bdict = {
        "kernel": "k",
        "launch": {"grid": ["ceil_div(n, 64)"], "block": [64]},
        "params": {
            "x": tensor_param(["n"], "in"),
            "y": tensor_param(["n"], "out"),
            "n": 100,
            "reach": 1,
        },
    }
    return port_file(cu, binding=binding_from_dict(bdict, path=str(cu)), lowering="literal")


def run_indexed_kernel_exactly(
    name: str, params_c: str, body: str, tensors: dict, tmp: Path, head: str = ""
) -> tuple:
    """:func:`run_literal_exactly` (on the current API) for ``k(params_c)`` whose ``body`` uses
    ``i``, the global thread index, over ``n`` elements in blocks of 128 (n = 300 and 130).
    ``tensors`` maps each tensor parameter to ``(dtype, role, value range or None)``."""
    from tests.port.acceptance import grid_binding, tensor_param

    params: dict = {
        k: tensor_param(["n"], spec[1], spec[0], spec[2]) for k, spec in tensors.items()
    }
    params["n"] = 300
    bdict = grid_binding(["ceil_div(n, 128)"], params, [{"n": 300}, {"n": 130}], block=128)
    cu = tmp / f"{name}.cu"
    cu.write_text(
        f"{head}__global__ void k({params_c}) {{\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n" + body + "}\n"
    )
    return run_literal_exactly(cu, bdict, "nki", tmp)
