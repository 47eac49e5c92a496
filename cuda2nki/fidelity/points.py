"""The test points of a check: which shapes and input sets the port and the CUDA kernel run on.

Each point the binding gives (and ``--set`` overrides), then generated ones (ragged tails, several
tiles, size-1 edges); per point one input set per seed, and the port's runs: one per input set
plus a determinism re-run of the first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cuda2nki.binding import Binding, Number, Resolved
from cuda2nki.diagnostics import Diagnostic, DiagnosticError
from cuda2nki.fidelity import pathscan
from cuda2nki.fidelity.inputs import make_inputs, test_points


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
    one per input set plus a determinism re-run of the first).  A point the user asked for (the
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
        n = max(seeds, 1) if not point.generated else min(seeds, 2)
        sets = [make_inputs(r, s) for s in range(n)]
        runs = [port_kwargs(pb, r, a) for a in sets]
        runs.append(runs[0])
        plan.append((point, r, sets, runs))
    return plan


def no_points_reason(b: Binding, overrides: Mapping[str, Number] | None, extra_points: bool) -> str:
    """Why no test point could be used: the first point's resolution error, if any."""
    for point in test_points(b, overrides, extra=extra_points):
        try:
            b.resolve(point.values)
        except DiagnosticError as exc:
            return "; ".join(d.message for d in exc.diagnostics)
    return "the CUDA kernel could not run at any test point"


def port_kwargs(pb: Any, r: Resolved, arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    kw: dict[str, Any] = {p: arrays[c] for p, c in pb.inputs.items()}
    kw.update({p: r.scalars[c] for p, c in pb.scalars.items()})
    return kw


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
