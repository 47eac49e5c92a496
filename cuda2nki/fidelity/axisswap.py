"""Evidence that a port ran the CUDA kernel's row-wise computation down the columns.

A port that takes a 2-D input with its axes swapped (an access pattern with the strides
exchanged, a transposed load, columns on the partitions) computes, for a row-wise operation
such as a softmax or a normalisation, the kernel's result on the transposed input, transposed
back.  The hypothesis is tested by a differential re-run: the CUDA kernel on ``X.T`` at the
binding point with the two sizes of ``X`` exchanged.  It holds when that re-run, transposed,
explains nearly all of the port's error -- whatever the port's precision (a bf16 port's values
sit within bf16 rounding of it, far from the kernel's own output).

Plain reductions along the other axis are :func:`cuda2nki.fidelity.compare.wrong_axis`'s.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

#: the share of the port's error (as a norm) the swapped-axes re-run must leave unexplained
EXPLAINED = 0.05

#: ``(scalar overrides, inputs) -> the output``, or None where the re-run fails
Rerun = Callable[[Mapping[str, Any], Mapping[str, np.ndarray]], np.ndarray | None]

_NAME = re.compile(r"with input '([^']+)' transposed")


def swapped_sizes(
    shape_exprs: tuple[str | int, ...], scalars: Mapping[str, Any]
) -> dict[str, Any] | None:
    """Scalar overrides that exchange the two sizes of a 2-D tensor whose shape is two scalar
    names (``["N", "C"]`` -> ``{N: C's value, C: N's value}``); ``{}`` where the sizes are equal
    or the same name; None where they are not plain scalars."""
    if len(shape_exprs) != 2:
        return None
    a, b = shape_exprs
    if not (isinstance(a, str) and isinstance(b, str) and a in scalars and b in scalars):
        return None
    if a == b or scalars[a] == scalars[b]:
        return {}
    return {a: scalars[b], b: scalars[a]}


def transposed_layout(
    got: np.ndarray,
    expected: np.ndarray,
    inputs: Mapping[str, np.ndarray],
    shapes: Mapping[str, tuple[str | int, ...]],
    scalars: Mapping[str, Any],
    rerun: Rerun,
) -> str:
    """Evidence (empty when none) that ``got`` is the CUDA kernel's output on one 2-D input
    transposed, transposed back: ``got`` and ``expected`` are the same 2-D shape as that
    input; ``shapes`` gives each input's shape expressions and ``rerun`` runs the kernel with
    scalar overrides on other inputs."""
    g = np.asarray(got, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    if g.ndim != 2 or g.shape != e.shape or g.size < 4:
        return ""
    written = np.isfinite(g) & np.isfinite(e)
    err = float(np.linalg.norm((g - e)[written]))
    if err == 0.0 or written.mean() < 0.5:
        return ""
    for name, x in inputs.items():
        x = np.asarray(x)
        if x.ndim != 2 or x.shape != g.shape or x.dtype.kind not in "fV":
            continue
        overrides = swapped_sizes(shapes.get(name, ()), scalars)
        if overrides is None:
            continue
        alt = rerun(overrides, {**inputs, name: np.ascontiguousarray(x.T)})
        if alt is None or np.size(alt) != g.size:
            continue
        a = np.asarray(alt, dtype=np.float64).reshape(g.shape[::-1]).T
        ok = written & np.isfinite(a)
        if ok.sum() < written.sum():
            continue
        left = float(np.linalg.norm((g - a)[ok]))
        if left <= EXPLAINED * err:
            return (
                f"the port's output equals the CUDA kernel's with input '{name}' transposed "
                f"(re-run at {name}.T, transposed back, it leaves {left / err:.1%} of the "
                f"port's error): the port computes along axis 0 of '{name}' what the CUDA "
                "kernel computes along axis 1 -- wrong reduction axis"
            )
    return ""


def layout_input(evidence: str) -> str | None:
    """The input a :func:`transposed_layout` evidence names (None for other evidence)."""
    m = _NAME.search(evidence)
    return m.group(1) if m else None
