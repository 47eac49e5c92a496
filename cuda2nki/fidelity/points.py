"""The test points of a check: which shapes and input sets the port and the CUDA kernel run on.

Each point the binding gives (and ``--set`` overrides), then generated ones (ragged tails, several
tiles, size-1 edges); per binding point one input set per seed, and the port's runs: one per
input set plus a determinism re-run of the first; per generated point one input set and run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cuda2nki.binding import Binding, Number, Resolved
from cuda2nki.diagnostics import Diagnostic, DiagnosticError
from cuda2nki.fidelity import pathscan
from cuda2nki.fidelity.inputs import make_inputs, test_points
from cuda2nki.limbs import to_limbs
from cuda2nki.simt import deadline


def plan_points(
    b: Binding,
    overrides: Mapping[str, Number] | None,
    extra_points: bool,
    seeds: int,
    pb: Any,
    found: list[Diagnostic],
    bounds: Sequence[tuple[str, int]] = (),
) -> list[tuple[Any, Resolved, list[dict[str, np.ndarray]], list[dict[str, Any]]]]:
    """Per usable test point: (point, resolved binding, one input set per seed, the port's runs:
    one per input set plus a determinism re-run of the first; a generated point has one input
    set and no re-run).  A point the user asked for (the
    binding's or ``--set``'s) that cannot be used is reported into ``found``; a generated one is
    skipped."""
    plan = []
    for point in test_points(b, overrides, extra=extra_points, bounds=bounds):
        try:
            r = b.resolve(point.values)
        except DiagnosticError as exc:
            if not point.generated:
                found.extend(exc.diagnostics)
            continue
        # a generated point tests a path (tiles, tails, a threshold's side): one input set, and
        # no determinism re-run (the binding's points have those); its runs are the check's
        # largest, a literal (thread-by-thread) port's most of all
        n = max(seeds, 1) if not point.generated else 1
        sets = []
        for s in range(n):
            deadline.check()  # a check with a time budget: large inputs take seconds each
            sets.append(make_inputs(r, s))
        runs = [port_kwargs(pb, r, a) for a in sets]
        if not point.generated:
            runs.append(runs[0])
        plan.append((point, r, sets, runs))
    return plan


def steps_note(b: Binding, info: Any) -> Diagnostic:
    """C2N4028: the generated points keep the binding's stepped sizes multiples of their steps."""
    from cuda2nki.diagnostics import SourceLoc, make

    sizes = ", ".join(f"{n} a multiple of {s}" for n, s in b.multiples)
    return make("C2N4028", SourceLoc(info.path, info.line, 1), sizes=sizes)


def no_points_reason(b: Binding, overrides: Mapping[str, Number] | None, extra_points: bool) -> str:
    """Why no test point could be used: the first point's resolution error, if any."""
    for point in test_points(b, overrides, extra=extra_points):
        try:
            b.resolve(point.values)
        except DiagnosticError as exc:
            return "; ".join(d.message for d in exc.diagnostics)
    return "the CUDA kernel could not run at any test point"


def port_kwargs(pb: Any, r: Resolved, arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    # NKI has no float64 tensors: a port of a float64 kernel computes in fp32 (cuda2nki.fp64)
    kw: dict[str, Any] = {p: _nki_array(arrays[c]) for p, c in pb.inputs.items()}
    kw.update({p: r.scalars[c] for p, c in pb.scalars.items()})
    return kw


def _nki_array(a: np.ndarray) -> np.ndarray:
    # and no 64-bit integers: those travel as their uint32 limbs (cuda2nki.limbs)
    return a.astype(np.float32) if a.dtype == np.float64 else to_limbs(a)


def port_bounds(
    b: Binding, pb: Any, thresholds: Sequence[pathscan.Threshold]
) -> list[tuple[str, int]]:
    """The port's thresholds as (binding scalar, boundary): a scalar parameter bound to a scalar,
    or ``x.shape[k]`` of an input whose dimension ``k`` is a scalar of the binding."""
    scalars = {s.name for s in b.scalars}
    out: list[tuple[str, int]] = []
    for t in thresholds:
        name = None
        if t.size.axis is None:
            name = pb.scalars.get(t.size.param)
        elif t.size.param in pb.inputs:
            shape = b.tensor(pb.inputs[t.size.param]).shape
            if t.size.axis < len(shape) and isinstance(shape[t.size.axis], str):
                name = shape[t.size.axis]
        if name in scalars and (name, t.boundary) not in out:
            out.append((name, t.boundary))
    return out


def _size(r: Resolved) -> int:
    return sum(int(np.prod(s)) for s in r.shapes.values())


def cheapest_generated_last(plan: list[Any]) -> list[Any]:
    """The binding's points first, as given, then the generated ones from the smallest up (so
    that a port too slow for the largest can still be checked on the smaller ones)."""
    given = [p for p in plan if not p[0].generated]
    generated = sorted((p for p in plan if p[0].generated), key=lambda p: _size(p[1]))
    return given + generated


@dataclass
class Pace:
    """How much the port does, from the points run so far: engine instructions per element of
    the tensors at the largest of them.  A generated point is skipped when that pace says one run of it would issue
    more than ``limit`` instructions (a literal, thread-by-thread port issues instructions per
    CUDA block: at two full tiles of a matmul, tens of thousands, minutes of simulation).  The
    instruction count, not the time, decides, so a check skips the same points on any machine."""

    limit: float
    rate: float = 0.0  # instructions per element of a run at the largest point run so far
    size: int = 0  # that point's elements (a small point's rate is mostly fixed overhead)
    predicted: list[float] = field(default_factory=list)

    def ran(self, r: Resolved, instructions: int) -> None:
        if instructions > 0 and _size(r) > self.size:
            self.size = _size(r)
            self.rate = instructions / self.size

    def over(self, r: Resolved) -> bool:
        need = self.rate * _size(r)
        if need <= self.limit:
            return False
        self.predicted.append(need)
        return True

    def note(self, info: Any, labels: Sequence[str]) -> Diagnostic:
        from cuda2nki.diagnostics import SourceLoc, make

        return make(
            "C2N4027",
            SourceLoc(info.path, info.line, 1),
            points=", ".join(labels),
            instructions=f"{self.predicted[-1]:,.0f}" if self.predicted else "?",
            limit=f"{self.limit:,.0f}",
        )
