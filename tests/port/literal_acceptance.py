"""Acceptance harness for literal ports: port a corpus kernel (the literal lowering when no
recogniser claims it, or forced), run the port in the NKI simulator and compare it with the SIMT
interpreter on the binding's test points.  Shared by tests/port/test_literal*.py and bench/."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from cuda2nki.codegen.spell import py_name


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
    from cuda2nki.binding import generate_inputs, load_binding
    from cuda2nki.codegen.pipeline import port_file
    from cuda2nki.diagnostics import DiagnosticError
    from cuda2nki.nkisim.importer import load_kernel
    from cuda2nki.nkisim.kernel import simulate_kernel
    from cuda2nki.simt.runner import run_kernel

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
        fn = load_kernel(port, py_name(res.kernel))
        accepted = set(inspect.signature(getattr(fn, "fn", fn)).parameters)
        for point in binding.test_points()[:max_points]:
            resolved = binding.resolve(point)
            inputs = generate_inputs(resolved, seed=1)
            ref = run_kernel(
                res.tu,
                res.kernel,
                grid=resolved.grid,
                block=resolved.block,
                shared_bytes=resolved.shared_bytes,
                args={**inputs, **resolved.scalars},
            )
            args = {
                py_name(t.name): inputs[t.name]
                for t in binding.tensors
                if t.role in ("in", "inout")
            }
            scalars = {py_name(k): v for k, v in resolved.scalars.items() if py_name(k) in accepted}
            sim = simulate_kernel(fn, {**args, **scalars}, profile=profile)
            outs = sim.outputs if isinstance(sim.outputs, tuple) else (sim.outputs,)
            names = [t.name for t in binding.tensors if t.role in ("out", "inout")]
            for name, got in zip(names, outs):
                want = np.asarray(ref[name], np.float64)
                have = np.asarray(got, np.float64).reshape(want.shape)
                if not np.allclose(have, want, rtol=rtol, atol=atol, equal_nan=True):
                    err = float(np.nanmax(np.abs(have - want)))
                    out.status, out.detail = "mismatch", f"{name} at {point}: max error {err:.3g}"
            if profile and sim.profile is not None:
                out.cost_ns = getattr(sim.profile, "overlapped_ns", None)
            out.points.append(dict(point))
    except DiagnosticError as exc:
        out.status, out.detail = "error", f"{exc.diagnostic.code} {exc.diagnostic.message}"
    return out
