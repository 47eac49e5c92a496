"""Binding a CUDA kernel's parameters to a port's: inputs and scalars by name, then by
position; outputs in the order the port returns them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cuda2nki.binding import Binding
from cuda2nki.diagnostics import DiagnosticError, SourceLoc, make
from cuda2nki.fidelity import portscan

# --------------------------------------------------------------------------- binding CUDA <-> port


@dataclass(frozen=True)
class PortBinding:
    inputs: dict[str, str]  # port parameter -> CUDA tensor name
    scalars: dict[str, str]  # port parameter -> CUDA scalar name
    outputs: list[str]  # CUDA out/inout tensor names in the order the port returns them


def _pyname(name: str) -> str:
    import keyword

    return name + "_" if keyword.iskeyword(name) else name


def bind_port(
    binding: Binding, info: portscan.PortInfo, overrides: Mapping[str, str] | None = None
) -> PortBinding:
    """Match CUDA parameters to the port: by name (keyword + '_'), then by position; ``overrides``
    maps CUDA names to port names."""
    overrides = dict(overrides or {})
    ins = [t for t in binding.tensors if t.role in ("in", "inout")]
    outs = [t for t in binding.tensors if t.role in ("out", "inout")]
    scalars = {s.name for s in binding.scalars}
    port_params = list(info.params) + list(info.keyword_params)
    bad = [c for c in overrides if c not in {t.name for t in binding.tensors} | scalars]
    if bad:
        raise _bind_error(info, f"--bind names unknown CUDA parameter(s): {', '.join(bad)}")
    inputs: dict[str, str] = {}
    scal: dict[str, str] = {}
    free_params = [p for p in info.params]
    for t in ins:
        want = overrides.get(t.name, _pyname(t.name))
        cand = want if want in port_params else (t.name if t.name in port_params else None)
        if cand is not None:
            inputs[cand] = t.name
            if cand in free_params:
                free_params.remove(cand)
    for p in list(free_params):
        if p in scalars or p in {overrides.get(s, s) for s in scalars}:
            scal[p] = next(s for s in scalars if overrides.get(s, s) == p)
            free_params.remove(p)
    unmatched = [t for t in ins if t.name not in inputs.values()]
    for t, p in zip(unmatched, list(free_params)):  # by position
        inputs[p] = t.name
        free_params.remove(p)
    missing = [t.name for t in ins if t.name not in inputs.values()]
    if missing:
        raise _bind_error(
            info,
            f"CUDA input(s) {', '.join(missing)} have no port parameter; the port takes "
            f"({', '.join(info.params)}); use --bind cuda_name=port_name",
        )
    if free_params:
        raise _bind_error(
            info,
            f"port parameter(s) {', '.join(free_params)} match no CUDA parameter; "
            f"CUDA has {', '.join(binding.param_names)}",
        )
    for p in info.keyword_params:
        cuda = next((s for s in scalars if overrides.get(s, _pyname(s)) == p), None)
        if cuda is not None:
            scal[p] = cuda
    order = _output_order(outs, info, overrides)
    return PortBinding(inputs, scal, order)


def _output_order(
    outs: Sequence[Any], info: portscan.PortInfo, overrides: Mapping[str, str]
) -> list[str]:
    names = [t.name for t in outs]
    ret = list(info.returns)
    if ret and len(ret) == len(names):
        by_port = {overrides.get(n, _pyname(n)): n for n in names}
        if all(r in by_port for r in ret):
            return [by_port[r] for r in ret]  # type: ignore[index]
    return names


def _bind_error(info: portscan.PortInfo, reason: str) -> DiagnosticError:
    return DiagnosticError(make("C2N4019", SourceLoc(info.path, info.line, 1), reason=reason))


def _match_outputs(outs: Any, pb: PortBinding, info: portscan.PortInfo) -> dict[str, np.ndarray]:
    if isinstance(outs, Mapping):
        return {c: outs.get(c, outs.get(_pyname(c))) for c in pb.outputs}
    return {c: a for c, a in zip(pb.outputs, outs)}
