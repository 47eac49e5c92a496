"""The findings a check reports: numeric findings with their CUDA-side notes, port failures in
the sandbox, determinism, heavy and unexecuted points; and their assembly into the report.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cuda2nki.binding import Binding
from cuda2nki.diagnostics import Diagnostic, Note, SourceLoc, make
from cuda2nki.fidelity import pathscan, portscan, rootcause
from cuda2nki.fidelity.check_bind import PortBinding, _match_outputs
from cuda2nki.fidelity.compare import Comparison
from cuda2nki.fidelity.tolerance import Tolerance

_DEFECT_IDS = {
    "unwritten": "C2N4003",
    "tail": "C2N4004",
    "transposed": "C2N4005",
    "shifted": "C2N4006",
    "scaled": "C2N4007",
    "tiles": "C2N4008",
    "nonfinite": "C2N4009",
    "shape": "C2N4010",
}
_SANDBOX_IDS = {"timeout": "C2N4015", "memory": "C2N4016", "crash": "C2N4018"}


def _no_outputs(b: Binding, info: portscan.PortInfo, name: str) -> Diagnostic:
    """C2N4023 for a check whose runs gave nothing to compare: the kernel writes no tensor
    (it only prints, say), so the port's faithfulness is not shown by any number."""
    written = [t.name for t in b.tensors if t.role in ("out", "inout")]
    reason = (
        "the kernel writes no tensor the check can compare (what it prints is not compared)"
        if not written
        else f"no output of the port could be matched to {', '.join(written)}"
    )
    return make("C2N4023", SourceLoc(b.path or info.path, 1, 1), kernel=name, reason=reason)


def _returned_names(pb: PortBinding, info: portscan.PortInfo) -> dict[str, str]:
    """CUDA output -> the name the port returns it under (where it returns plain names)."""
    if len(info.returns) != len(pb.outputs):
        return {}
    return {c: r for c, r in zip(pb.outputs, info.returns) if r is not None}


def _as_given(d: Diagnostic, port_path: str) -> Diagnostic:
    """A diagnostic on the port names it as the command line did (the simulator reports the
    absolute path of the module it loaded)."""
    if d.loc.file == port_path:
        return d
    try:
        same = Path(d.loc.file).resolve() == Path(port_path).resolve()
    except (OSError, ValueError):
        same = False
    return dataclasses.replace(d, loc=dataclasses.replace(d.loc, file=port_path)) if same else d


def _dedupe(ds: list[Diagnostic]) -> list[Diagnostic]:
    """One diagnostic per (id, place); repeats on other shapes become a note on the first."""
    groups: dict[tuple[str, str, int], list[Diagnostic]] = {}
    for d in ds:
        groups.setdefault((d.code, d.loc.file, d.loc.line), []).append(d)
    out = []
    for group in groups.values():
        first = group[0]
        others = [d.message for d in group[1:] if d.message != first.message]
        if others:
            note = f"{len(others)} more like it, e.g. {others[0]}"
            first = Diagnostic(
                first.code, first.severity, first.message, first.loc, (*first.notes, note)
            )
        out.append(first)
    return sorted(out, key=lambda d: (-int(d.severity), d.code, d.loc.line))


def _heavy_note(
    info: portscan.PortInfo, heavy: Sequence[tuple[str, int, int]], limit: int | None
) -> Diagnostic:
    """The note for the points whose first run was heavy: (label, instructions of that run, runs
    left out) each."""
    return make(
        "C2N4029",
        SourceLoc(info.path, info.line, 1),
        points=", ".join(f"{lab} ({n:,} instructions)" for lab, n, _ in heavy),
        left=max(left for _, _, left in heavy),
        limit=f"{limit or 0:,}",
    )


def _unexecuted(
    fn: ast.FunctionDef, tree: ast.Module, executed: set[int], info: portscan.PortInfo, n: int
) -> list[Diagnostic]:
    """C2N4026 at the first port block that issues instructions and ran at no test point."""
    spans = pathscan.unexecuted(fn, tree, executed)
    if not spans:
        return []
    where = SourceLoc(info.path, spans[0][0], 1)
    return [make("C2N4026", where, lines=pathscan.describe(spans), points=n)]


def _memory_findings(
    diags: list[Diagnostic], entry: dict[str, Any], info: portscan.PortInfo, label: str
) -> list[Diagnostic]:
    """A port that ran out of host memory (MemoryError under the sandbox's address-space limit,
    raised by the kernel or while loading it) is reported as exhausting memory (C2N4016)."""
    texts = [d.message for d in diags] + [str(entry.get("error") or "")]
    if not any("MemoryError" in t for t in texts):
        return []
    line = next((d.loc.line for d in diags if Path(d.loc.file).name == Path(info.path).name), None)
    reason = next(t for t in texts if "MemoryError" in t)
    loc = SourceLoc(info.path, line or entry.get("line") or info.line, 1)
    return [make("C2N4016", loc, point=label, reason=reason)]


def _capacity_findings(diags: list[Diagnostic]) -> list[Diagnostic]:
    """An on-chip capacity violation from the simulator is also a budget finding (C2N5012)."""
    out = []
    for d in diags:
        if d.code in ("C2N3017", "C2N3018"):
            out.append(make("C2N5012", d.loc, evidence=d.message))
            break
    return out


def _numeric_entry(
    c: Comparison, label: str, seed: int, dist: str, tol: Tolerance
) -> dict[str, Any]:
    d = c.to_dict()
    d.update({"shape": label, "seed": seed, "distribution": dist, "tolerance_source": tol.source})
    return d


def _finding(
    c: Comparison,
    info: portscan.PortInfo,
    label: str,
    where: str = "",
    cause: rootcause.Cause | None = None,
    stores: Sequence[SourceLoc] = (),
) -> Diagnostic:
    """A numeric finding: on the port line the root cause names (else the kernel's line); its
    notes say why, and point at the CUDA lines that store the output (``stores``), so a reader
    (and code scanning) can jump to the CUDA side."""
    loc = SourceLoc(info.path, cause.line if cause is not None else info.line, 1)
    shape = f"shape {label}"
    notes: list[Any] = []
    if where:
        notes.append(
            Note(f"in the CUDA kernel these elements are {where}", stores[0] if stores else None)
        )
    elif stores:
        notes.append(Note(f"the CUDA kernel stores '{c.name}' here", stores[0]))
    notes.extend(Note(f"the CUDA kernel also stores '{c.name}' here", at) for at in stores[1:3])
    if cause is not None:
        notes = [*cause.notes(), *notes]
    if c.tiles and c.classification != "precision":
        shown = ", ".join(f"({p}, {f})" for p, f in c.tiles[:8])
        more = f" and {len(c.tiles) - 8} more" if len(c.tiles) > 8 else ""
        notes.insert(0, f"port tiles (partition tile of 128, free tile of 512): {shown}{more}")
    if c.classification == "precision":
        return make("C2N4002", loc, notes=notes, output=c.name, shape=shape, evidence=c.evidence)
    code = _DEFECT_IDS.get(c.defect or "", "C2N4001")
    if cause is not None and cause.mechanism is not None and cause.mechanism.name in _LITERAL:
        code = "C2N4001"  # the pattern (tiles, scale) is the literal's effect, not a layout bug
    return make(code, loc, notes=notes, output=c.name, shape=shape, evidence=c.evidence)


#: mechanisms that explain a wrong output by a literal (``constants.py``)
_LITERAL = ("changed constant", "eps misplaced")


def _run_failure(
    entry: dict[str, Any], info: portscan.PortInfo, label: str, given: str = ""
) -> list[Diagnostic]:
    """The port's failure; ``given`` (what it was called with) is added as a note, so a port that
    expects other shapes or dtypes than the CUDA binding's says so next to its error."""
    notes = (f"the port was called with {given}",) if given else ()
    if entry.get("diagnostics"):
        return [
            dataclasses.replace(d, notes=(*d.notes, *notes)) if i == 0 else d
            for i, d in enumerate(entry["diagnostics"])
        ]
    return [
        make(
            "C2N4014",
            SourceLoc(info.path, entry.get("line") or info.line, 1),
            notes=notes,
            point=label,
            reason=entry.get("error", "unknown error"),
        )
    ]


def _given(kwargs: Mapping[str, Any]) -> str:
    """``a: float32[4096], b: float32[4096], alpha=2.5``: the port's arguments, briefly."""
    from cuda2nki.binding import dtype_name

    parts = []
    for k, v in kwargs.items():
        if isinstance(v, np.ndarray):
            parts.append(f"{k}: {dtype_name(v.dtype)}[{', '.join(map(str, v.shape))}]")
        else:
            parts.append(f"{k}={v!r}")
    return ", ".join(parts)


def _determinism(
    a: dict[str, Any], b: dict[str, Any], pb: PortBinding, info: portscan.PortInfo
) -> list[Diagnostic]:
    oa, ob = _match_outputs(a["outputs"], pb, info), _match_outputs(b["outputs"], pb, info)
    out = []
    for c in pb.outputs:
        x, y = oa.get(c), ob.get(c)
        if x is None or y is None or x.shape != y.shape:
            continue
        differ = ~((x == y) | (np.isnan(x.astype(np.float64)) & np.isnan(y.astype(np.float64))))
        if differ.any():
            out.append(
                make(
                    "C2N4011", SourceLoc(info.path, info.line, 1), output=c, count=int(differ.sum())
                )
            )
    return out
