"""Corpus acceptance harness: port a corpus kernel, run it in the NKI simulator, compare with the
SIMT interpreter on every test point of its binding (shared by the tests and bench/bench_port.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cuda2nki.codegen.spell import py_name

CORPUS = Path(__file__).resolve().parents[2] / "corpus"


def corpus_kernels() -> list[Path]:
    return sorted(p for p in CORPUS.glob("*/*.cu") if p.with_suffix(".toml").exists())


@dataclass
class Outcome:
    kernel: str
    target: str
    status: str  # "match" | "mismatch" | "refused" | "literal" | "error"
    idiom: str | None = None
    detail: str = ""
    shapes: list[dict] = field(default_factory=list)
    cost_ns: float | None = None


def check_kernel(
    path: Path, target: str, tmp: Path, max_points: int = 3, profile: bool = False
) -> Outcome:
    from cuda2nki.binding import load_binding
    from cuda2nki.diagnostics import DiagnosticError
    from cuda2nki.pipeline import port_file

    binding = load_binding(path.with_suffix(".toml"))
    res = port_file(path, binding=binding, target=target)
    if res.source is None:
        why = "; ".join(
            f"{d.code} {d.message}" for d in res.diagnostics if d.code.startswith("C2N2")
        )
        return Outcome(res.kernel, target, "refused", res.idiom, why)
    port = tmp / f"{path.stem}_{target}.py"
    port.write_text(res.source)
    out = Outcome(res.kernel, target, "literal" if res.literal else "match", res.idiom)
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
        )
        if run.mismatches:
            name, point, _err = run.mismatches[-1]
            out.status, out.detail = "mismatch", f"{name} at {point}"
        out.cost_ns, out.shapes = run.cost_ns, run.points
    except DiagnosticError as exc:
        out.status, out.detail = "error", f"{exc.diagnostic.code} {exc.diagnostic.message}"
    return out


@dataclass
class SimtComparison:
    """A generated port run beside the SIMT interpreter: the outputs that differ (name, test
    point, max abs error), the points run and the port's cost-model time at the last one."""

    mismatches: list[tuple[str, dict, float]] = field(default_factory=list)
    points: list[dict] = field(default_factory=list)
    cost_ns: float | None = None


@dataclass(frozen=True)
class PortedSource:
    """A CUDA source ported from a test: the port result, and the files written for it."""

    res: Any
    cu: Path
    binding: Path
    port: Path


def port_source(tmp: Path, name: str, src: str, binding: str, **kw: Any) -> PortedSource:
    """Write ``src`` and its ``binding`` as ``name.cu`` / ``name.toml`` under ``tmp``, port it
    (``cuda2nki.api.port`` with ``kw``) and write the port; asserts that a port came out."""
    from cuda2nki import api

    cu, toml = tmp / f"{name}.cu", tmp / f"{name}.toml"
    cu.write_text(src)
    toml.write_text(binding)
    if "target" in kw:  # the NKI API, as callers of this helper name it
        kw["api"] = kw.pop("target")
    res = api.port(cu, binding=toml, **kw)
    assert res.source is not None, res.diagnostics
    port = tmp / f"{name}_port.py"
    port.write_text(res.source)
    return PortedSource(res, cu, toml, port)


def run_against_simt(
    res,
    binding,
    port: Path,
    *,
    points: list[dict],
    rtol: float = 1e-4,
    atol: float = 1e-4,
    seed=lambda k: 1,
    profile: bool = False,
    cost: str = "time_ns",
) -> SimtComparison:
    """Run ``port`` (written from the port result ``res``) and the CUDA kernel on the same inputs
    at each of ``points``; raises the simulator's DiagnosticError if the port fails."""
    from cuda2nki.binding import generate_inputs
    from cuda2nki.nkisim.importer import load_kernel
    from cuda2nki.nkisim.kernel import simulate_kernel
    from cuda2nki.simt.runner import run_kernel

    fn = load_kernel(port, py_name(res.kernel))
    keywords = _keywords(res, fn)
    out = SimtComparison()
    for k, point in enumerate(points):
        resolved = binding.resolve(point)
        inputs = generate_inputs(resolved, seed=seed(k))
        ref = run_kernel(
            res.tu,
            res.kernel,
            grid=resolved.grid,
            block=resolved.block,
            shared_bytes=resolved.shared_bytes,
            args={**inputs, **resolved.scalars},
        )
        args = {py_name(t.name): _nki(inputs[t.name]) for t in binding.tensors if t.role != "out"}
        scalars = {py_name(n): v for n, v in resolved.scalars.items() if py_name(n) in keywords}
        sim = simulate_kernel(fn, {**args, **scalars}, profile=profile)
        outs = sim.outputs if isinstance(sim.outputs, tuple) else (sim.outputs,)
        names = [t.name for t in binding.tensors if t.role in ("out", "inout")]
        for name, got in zip(names, outs):
            exact = _exact_ints(ref[name], got)
            want = np.asarray(ref[name], np.float64)
            have = np.asarray(exact if exact is not None else got, np.float64).reshape(want.shape)
            if exact is not None and not np.array_equal(exact.reshape(want.shape), ref[name]):
                out.mismatches.append((name, dict(point), float(np.max(np.abs(have - want)))))
            elif not np.allclose(have, want, rtol=rtol, atol=atol, equal_nan=True):
                with np.errstate(invalid="ignore"):
                    err = float(np.nanmax(np.abs(have - want)))
                out.mismatches.append((name, dict(point), err))
        if profile and sim.profile is not None:
            out.cost_ns = getattr(sim.profile, cost, None)
        out.points.append(dict(point))
    return out


def _nki(a: np.ndarray) -> np.ndarray:
    """An input as an NKI port takes it: float64 arrays as float32 (NKI has no fp64), 64-bit
    integers as their uint32 limbs."""
    from cuda2nki.limbs import to_limbs

    return a.astype(np.float32) if a.dtype == np.float64 else to_limbs(a)


def _exact_ints(want: np.ndarray, got: np.ndarray) -> np.ndarray | None:
    """A 64-bit integer output joined from its limbs, compared exactly (float64 would round
    it); None for other outputs."""
    from cuda2nki.limbs import WIDE_INTS, from_limbs

    want = np.asarray(want)
    return from_limbs(got, want.dtype) if want.dtype in WIDE_INTS else None


def tensor_param(shape: list, role: str, dtype: str = "float32", rng: list | None = None) -> dict:
    """A binding's tensor parameter (``rng``: the range its generated values are drawn from)."""
    out = {"shape": shape, "dtype": dtype, "role": role}
    return {**out, "range": rng} if rng else out


def grid_binding(grid: list, params: dict, shapes: list[dict], block: int = 128) -> dict:
    """A binding dict for kernel ``k`` launched on ``grid`` blocks of ``block`` threads."""
    return {
        "launch": {"grid": grid, "block": [block]},
        "params": params,
        "check": {"shapes": shapes},
    }


def map_kernel(body: str, params: str = "const float* x, float* y, int n", out: str = "y") -> str:
    """Kernel ``k`` of one thread per element ``i < n``: ``out[i] = body``."""
    return (
        f"__global__ void k({params}) {{\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"    if (i < n) {out}[i] = {body};\n"
        "}\n"
    )


def assert_ports_exactly(
    vid: str, src: str, bdict: dict, target: str, tmp: Path, tol: float = 0.0, **kw: Any
) -> None:
    """:func:`port_variant`, then every test point (two at least) matches the SIMT run."""
    _, run, points = port_variant(vid, src, bdict, target, tmp, tol, **kw)
    assert len(points) >= 2 and not run.mismatches, run.mismatches


def port_variant(
    vid: str,
    src: str,
    bdict: dict,
    target: str,
    tmp: Path,
    tol: float = 0.0,
    seed0: int = 3,
    literal_ok: bool = False,
) -> tuple[Any, SimtComparison, list[dict]]:
    """Port a lift-variant kernel ``k`` (``vid`` = ``family/name``, binding given as a dict)
    through the recognised path (or any path, ``literal_ok``) and run it beside the SIMT
    interpreter on every test point of its binding (seeds ``seed0``, ``seed0 + 1``, ...):
    (port result, comparison, points)."""
    from cuda2nki.binding import binding_from_dict
    from cuda2nki.pipeline import port_file

    cu = tmp / f"{vid.split('/')[1]}.cu"
    cu.write_text(src)
    binding = binding_from_dict({"kernel": "k", **bdict}, path=str(cu))
    res = port_file(cu, binding=binding, target=target)
    assert res.source is not None, [d.message for d in res.diagnostics]
    assert literal_ok or not res.literal, [d.message for d in res.diagnostics]
    port = tmp / f"{cu.stem}_{target}.py"
    port.write_text(res.source)
    points = binding.test_points()
    run = run_against_simt(
        res, binding, port, points=points, rtol=tol, atol=tol, seed=lambda k: seed0 + k
    )
    return res, run, points


def _keywords(res, fn) -> set[str]:
    """The port's keyword scalars: from the scheduled IR, or (a literal port has none) from the
    port function's own signature."""
    import inspect

    from cuda2nki.codegen.emit import signature

    if res.ir_tiles is not None:
        return {py_name(n) for n, _ in signature(res.ir_tiles).keywords}
    try:
        params = inspect.signature(getattr(fn, "fn", fn)).parameters
    except (TypeError, ValueError):
        return set()
    return {n for n, p in params.items() if p.default is not inspect.Parameter.empty}
