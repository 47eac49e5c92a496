"""Acceptance at the intent level: every intent kernel the passes accept is ported for both targets,
run in the NKI simulator, and compared with the IR evaluator (fp64) within the IR-derived error
bound on three shape sets (ragged sizes, K > 128 for contractions).  Shared by the tests and the
per-kernel table in bench/bench_port.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from cuda2nki.codegen.spell import py_name

SHAPES = (
    {"N": 300, "R": 130, "C": 70, "M": 150, "K": 200, "V": 12, "D": 5, "S": 130, "T": 6, "W": 40, "H": 150, "B": 3, "n": 5000},
    {"N": 129, "R": 5, "C": 513, "M": 64, "K": 129, "V": 50, "D": 33, "S": 7, "T": 200, "W": 9, "H": 1, "B": 2, "n": 129},
    {"N": 1000, "R": 128, "C": 128, "M": 257, "K": 300, "V": 7, "D": 64, "S": 128, "T": 129, "W": 130, "H": 64, "B": 1, "n": 66000},
)  # fmt: skip
SCALARS = {"alpha": 1.5, "eps": 1e-5, "scale": 0.125}


@dataclass
class Row:
    kernel: str
    target: str
    status: str  # "match" | "mismatch" | "refused" | "error"
    detail: str = ""
    shapes: list[dict] = field(default_factory=list)


def _inputs(kernel, dims: dict, rng) -> dict:
    out = {}
    for t in kernel.inputs:
        shape = tuple(int(s.evaluate(dims)) for s in t.shape)
        if t.dtype.startswith("int"):
            hi = dims.get("V", 8) if "V" in kernel.scalars else dims.get("B", 8)
            out[t.name] = rng.integers(0, max(hi, 1), size=shape).astype(t.dtype)
        else:
            out[t.name] = rng.standard_normal(shape).astype(np.float32)
    return out


def check(kernel, target: str, tmp: Path) -> Row:
    from cuda2nki.codegen.emit import signature
    from cuda2nki.diagnostics import DiagnosticError
    from cuda2nki.ir.evaluate import analyse
    from cuda2nki.nkisim.importer import load_kernel
    from cuda2nki.nkisim.kernel import simulate_kernel
    from cuda2nki.pipeline import port_intent

    try:
        scheduled, src, _ = port_intent(kernel, target=target)
    except DiagnosticError as exc:
        return Row(kernel.name, target, "refused", exc.diagnostic.message)
    path = tmp / f"{kernel.name}_{target}.py"
    path.write_text(src)
    keywords = {n for n, _ in signature(scheduled).keywords}
    rng = np.random.default_rng(5)
    row = Row(kernel.name, target, "match")
    try:
        fn = load_kernel(path, py_name(kernel.name))
        for dims in SHAPES:
            dims = {k: v for k, v in dims.items() if k in kernel.scalars}
            scalars = {**{k: v for k, v in SCALARS.items() if k in kernel.scalars}, **dims}
            inputs = _inputs(kernel, dims, rng)
            ref = analyse(kernel, inputs, scalars)
            args = {py_name(k): v for k, v in inputs.items()}
            kw = {py_name(k): v for k, v in scalars.items() if k in keywords}
            outs = simulate_kernel(fn, {**args, **kw}).outputs
            outs = outs if isinstance(outs, tuple) else (outs,)
            for decl, got in zip(kernel.outputs, outs):
                exact = ref.values[decl.name]
                got = np.asarray(got, np.float64).reshape(exact.shape)
                written = (
                    ~np.isnan(got)
                    if not _fully_written(kernel, decl.name)
                    else np.ones_like(got, bool)
                )
                with np.errstate(invalid="ignore"):
                    diff = np.where(got == exact, 0.0, np.abs(got - exact))
                ok = np.all(
                    (diff <= 2 * ref.bound[decl.name] + 1e-6 * np.abs(exact) + 1e-30)[written]
                )
                if not ok or not written.any():
                    row.status, row.detail = "mismatch", f"{decl.name} at {dims}"
            row.shapes.append(dims)
    except DiagnosticError as exc:
        row.status, row.detail = "error", f"{exc.diagnostic.code} {exc.diagnostic.message}"
    return row


def _fully_written(kernel, name: str) -> bool:
    """Outputs a guard or shifted domain writes only partly: compare the written elements."""
    for c in kernel.body:
        if c.target.tensor == name and c.domain.guard is None and not _shifted(c):
            return True
    return False


def _shifted(c) -> bool:
    from cuda2nki.ir.nodes import Sym

    return any(not isinstance(ix, Sym) for ix in c.target.index)
