"""Assertions for a team's own test suite: keep hand-written NKI ports honest under pytest.

::

    from cuda2nki.testing import assert_port_matches

    def test_softmax_port():
        assert_port_matches("kernels/softmax.cu", "ports/softmax_port.py", seeds=2)

:func:`assert_port_matches` checks the port against its CUDA kernel (as ``cuda2nki check`` does)
and raises :class:`AssertionError` whose text is the check's readable report: the verdict, each
mismatching output with its shape and evidence, and each finding at or above ``fail_on`` with its
``file:line:col`` and id.  It returns the :class:`~cuda2nki.fidelity.check.CheckReport` when the
port passes, for further assertions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from cuda2nki.api import Hardware, check
from cuda2nki.diagnostics import Severity

if TYPE_CHECKING:
    from cuda2nki.binding import Binding, Number
    from cuda2nki.fidelity.check import CheckReport

__all__ = ["assert_port_matches", "failure_text"]

FailOn = Literal["error", "warning", "note"]


def assert_port_matches(
    cuda: str | Path,
    port: str | Path,
    *,
    binding: Binding | str | Path | None = None,
    kernel: str | None = None,
    port_kernel: str | None = None,
    seeds: int = 2,
    overrides: Mapping[str, Number] | None = None,
    binds: Mapping[str, str] | None = None,
    hw: Hardware = "trn2",
    ignore: Sequence[str] = (),
    fail_on: FailOn = "warning",
    timeout: float = 120.0,
    memory_mb: int | None = 4096,
    defines: Mapping[str, str] | None = None,
    include_dirs: Sequence[str] = (),
    trust: bool = False,
) -> CheckReport:
    """Assert that ``port`` computes what the CUDA kernel in ``cuda`` computes: every output
    within tolerance on ``seeds`` inputs per test point, and no finding of severity ``fail_on``
    or worse (``ignore`` drops finding ids).  Keywords as :func:`cuda2nki.api.check`."""
    __tracebackhide__ = True  # pytest shows the assertion, not this frame
    report = check(
        cuda,
        port,
        binding=binding,
        kernel=kernel,
        port_kernel=port_kernel,
        seeds=seeds,
        overrides=overrides,
        binds=binds,
        hw=hw,
        ignore=ignore,
        timeout=timeout,
        memory_mb=memory_mb,
        defines=defines,
        include_dirs=include_dirs,
        trust=trust,
    )
    text = failure_text(report, fail_on)
    if text:
        raise AssertionError(text)
    return report


def failure_text(report: CheckReport, fail_on: FailOn = "warning") -> str:
    """Why ``report`` fails the gate ``fail_on``, readably; empty when it passes."""
    threshold = Severity.parse(fail_on)
    numerics = [n for n in report.numerics if n.get("classification") != "expected"]
    findings = [f for f in report.findings if f.severity >= threshold]
    if not numerics and not findings:
        return ""
    head = (
        f"port {report.port_file} ({report.port_kernel}) does not match CUDA "
        f"{report.cuda_file} ({report.kernel}): verdict {report.verdict}"
    )
    lines = [head]
    if numerics:
        lines.append(f"{len(numerics)} of {len(report.numerics)} comparisons outside tolerance:")
        for n in numerics[:10]:
            lines.append(
                f"  output {n.get('output', '?')}, shape {n.get('shape', '?')}, seed "
                f"{n.get('seed', '?')}: {n.get('classification', '?')}, max abs error "
                f"{n.get('max_abs_error', float('nan')):.3g} ({n.get('mismatches', '?')} elements "
                f"outside tolerance) {n.get('evidence', '')}".rstrip()
            )
        if len(numerics) > 10:
            lines.append(f"  ... and {len(numerics) - 10} more")
    if findings:
        lines.append(f"{len(findings)} finding(s) at {fail_on} or above:")
        for f in findings:
            lines.append(f"  {f.loc}: {f.severity}: {f.message} [{f.code}]")
            lines.extend(f"    note: {note}" for note in f.notes)
    return "\n".join(lines)
