"""``cuda2nki check`` of a file sized by macros, at smaller values of them.

As ``migrate --check`` does (see :mod:`cuda2nki.frontend.sizesteps`): a kernel whose sizes are
object-like macros (``#define N 4096``) is checked with the file preprocessed at the check's
smaller values, which win over the file's own ``#define`` lines, with a C2N4032 note.  The port
under review is not remade: it is run on tensors of the smaller shapes, so a port that holds the
source's sizes as numbers (an integer literal equal to one of them) is checked at the source's
sizes, as before.  A binding given or found in a sidecar keeps its own sizes.

A performance finding whose figure follows the problem's size (small DMAs, partitions used),
measured at sizes the check chose in place of the source's, is a note, not a failure
(:func:`at_chosen_sizes`; ``migrate --check`` judges its checks at smaller sizes the same way).
So is one measured under a binding inferred from the host code whose sizes the inference chose
(the host's too large to simulate, or not given: :func:`at_inferred_sizes`).  At the source's
own sizes such a finding keeps its severity; numerics and memory-safety findings never change.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cuda2nki.diagnostics import Diagnostic, DiagnosticError, Severity, SourceLoc, make


def check_values(
    cuda_path: str,
    port_text: str,
    binding: object,
    defines: Mapping[str, str] | None = None,
    include_dirs: Sequence[str] = (),
) -> tuple[dict[str, str], dict[str, int]]:
    """The size macros' values to check at (name -> ``-D`` value; empty: check as given) and
    their values in the source."""
    from cuda2nki.fileio import read_text
    from cuda2nki.frontend.sizemacros import effective_values
    from cuda2nki.frontend.sizesteps import check_sizes

    if binding is not None or Path(cuda_path).with_suffix(".toml").is_file():
        return {}, {}
    try:
        text = read_text(cuda_path, source=True)
        small = check_sizes(cuda_path, text, include_dirs, defines)
        if not small:
            return {}, {}
        was = effective_values(list(small), cuda_path, text, include_dirs, defines)
    except (OSError, UnicodeDecodeError, DiagnosticError):
        return {}, {}
    if holds_sizes(port_text, was.values()):
        return {}, was
    return small, was


def holds_sizes(port_text: str, sizes: object) -> bool:
    """Whether the port's code has an integer literal equal to one of ``sizes`` (it was written
    for those sizes and cannot run at others); True where the port does not parse."""
    wanted = {int(v) for v in sizes}  # type: ignore[attr-defined]
    try:
        tree = ast.parse(port_text)
    except (SyntaxError, ValueError):
        return True
    return any(
        isinstance(n, ast.Constant) and type(n.value) is int and n.value in wanted
        for n in ast.walk(tree)
    )


def note(cuda_path: str, small: Mapping[str, str], was: Mapping[str, int]) -> Diagnostic:
    """C2N4032: the check ran at ``small`` instead of the source's values ``was``."""
    return make(
        "C2N4032",
        SourceLoc(cuda_path, 1, 1),
        defines=" ".join(f"-D {n}={v}" for n, v in small.items()),
        was=", ".join(f"{n} = {was.get(n, '?')}" for n in small),
    )


#: performance findings whose figure follows the problem's size (bytes per DMA row, partitions a
#: dimension fills): measured at sizes the check chose instead of the source's, they say nothing
#: certain about the user's run
SIZE_BOUND = frozenset({"C2N5007", "C2N5008"})


def at_chosen_sizes(report: Any, small: Mapping[str, str]) -> Any:
    """``report`` (a :class:`~cuda2nki.fidelity.check.CheckReport` of a check run at the size
    macros' ``small`` values) with its size-bound performance findings as notes, each saying
    so, and its verdict judged again."""
    from dataclasses import replace

    from cuda2nki.fidelity.check import judge

    sizes = " ".join(f"-D {n}={v}" for n, v in small.items())
    why = (
        f"measured at the check's sizes ({sizes}), not the source's: a note, not a failure; "
        "check at the sizes you run with -D to judge it"
    )
    findings = as_notes(report.findings, why)
    if findings == list(report.findings):
        return report
    verdict = judge(report.numerics, findings, report.static_only)
    return replace(report, findings=findings, verdict=verdict)


def as_notes(findings: Sequence[Diagnostic], why: str) -> list[Diagnostic]:
    """``findings`` with each size-bound performance finding above a note made a note that
    says ``why``; every other finding as it is."""
    from dataclasses import replace

    return [
        replace(d, severity=Severity.NOTE, notes=(*d.notes, why))
        if d.code in SIZE_BOUND and d.severity > Severity.NOTE
        else d
        for d in findings
    ]


def at_inferred_sizes(findings: Sequence[Diagnostic], binding: Any, label: str) -> list[Diagnostic]:
    """``findings`` of a check under ``binding``, measured at the test point ``label``: where
    the binding was inferred with sizes the inference chose (:mod:`cuda2nki.lift.chosensizes`),
    its size-bound performance findings as notes saying at which sizes they were measured and
    what the source's are."""
    from cuda2nki.lift.chosensizes import KEY, describe

    chosen = getattr(binding, "meta", {}).get(KEY)
    if not chosen:
        return list(findings)
    return as_notes(findings, describe(chosen, label))
