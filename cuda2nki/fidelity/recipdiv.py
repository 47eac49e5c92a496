"""Ports that divide as ``x * (1 / y)``: a documented deviation of the hardware, not a defect.

NKI has no division the hardware runs (reference/NKI.md §6, §11: ``nl.divide`` is not supported
on the device; the documented replacement is a multiplication by ``nl.reciprocal`` /
``nisa.reciprocal``, and no ALU ``divide`` op exists).  Ruling: a port computes ``x / y`` as
``x * (1 / y)``, and where the two differ only because the reciprocal leaves the float range,
the port is as faithful as Trainium allows.  For a divisor below ``2**-128`` in magnitude (a
subnormal) ``1 / y`` overflows to infinity and the port gives ±inf, or NaN for ``x == 0``, where
CUDA's IEEE quotient is finite; for a divisor above ``2**126`` the reciprocal is subnormal and
the quotient keeps few digits.

:func:`judged` runs the CUDA kernel once more with every floating division computed the
port's way (:mod:`cuda2nki.simt.recipdiv`).  When a port that takes reciprocals equals that
run, its numbers pass and a C2N4034 warning names each division, its line and the divisors out
of the reciprocal's range; a port that equals neither run still fails, with the warning as a
possible cause.
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from cuda2nki.binding import Resolved
from cuda2nki.diagnostics import Diagnostic, make
from cuda2nki.fidelity import refcache
from cuda2nki.fidelity.compare import Comparison, compare
from cuda2nki.fidelity.rerun import Outputs, Run, rerun
from cuda2nki.fileio import read_text
from cuda2nki.nkisim.dtypes import canary_mask
from cuda2nki.simt.recipdiv import Site, reciprocal_division


def judged(
    c: Comparison,
    got: np.ndarray,
    first: np.ndarray,
    tol: Any,
    dont_care: np.ndarray | None,
    run: Run,
    found: list[Diagnostic],
) -> Comparison:
    """``c`` (a failed comparison of output ``c.name`` against ``first``, CUDA's result with IEEE
    division), or the comparison against the kernel run with the port's reciprocal division
    when that is what makes the difference; a C2N4034 warning added to ``found`` then."""
    lines = reciprocal_lines(run.loc.file)
    if not lines:
        return c
    redone = _reciprocal_run(run.tu, run.name, run.r, run.arrays)
    if redone is None or c.name not in redone[0]:
        return c
    refs, sites = redone
    ref, mask = refs[c.name]
    first = np.asarray(first)
    if first.shape != ref.shape or not sites:
        return c
    differ = _differ(first, ref, tol.bound, mask)
    if differ == 0:
        return c
    again = compare(
        c.name,
        got,
        ref,
        tol.bound,
        alt_tols=tol.alternatives,
        unwritten=canary_mask(got),
        dont_care=mask if dont_care is None else (dont_care | mask),
    )
    evidence = _evidence(sites, differ, first.size, lines)
    loc = sites[0].loc
    if again.ok:
        evidence += "; the port equals the CUDA kernel with each division computed that way"
        found.append(make("C2N4034", loc, output=c.name, evidence=evidence))
        return again
    evidence += "; the port differs from that too"
    found.append(make("C2N4034", loc, output=c.name, evidence=evidence))
    return c


def reciprocal_lines(port: str) -> list[int]:
    """The lines of the port that take a reciprocal (``nl.reciprocal``, ``nisa.reciprocal``,
    an activation with ``op=nl.reciprocal``); empty when it takes none or cannot be read."""
    try:
        tree = ast.parse(read_text(port))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return []
    lines = {
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "reciprocal"
    }
    return sorted(lines)


def _evidence(sites: list[Site], differ: int, size: int, lines: list[int]) -> str:
    said = "; ".join(_site_words(s) for s in sites)
    where = ", ".join(str(n) for n in lines[:4]) + (" ..." if len(lines) > 4 else "")
    why = []
    if any(s.tiny for s in sites):
        why.append(
            "the reciprocal of a divisor below 2^-128 in magnitude overflows to inf "
            "(x * inf is inf, or NaN for x = 0, where x / y is finite)"
        )
    if any(s.huge for s in sites):
        why.append("the reciprocal of a divisor above 2^126 is subnormal (few digits kept)")
    return (
        f"{differ} of {size} elements differ from CUDA's IEEE division because the port computes "
        f"x / y as x * (1 / y) (reciprocal at port line(s) {where}), and {'; '.join(why)}: {said}"
    )


def _site_words(s: Site) -> str:
    parts = []
    if s.tiny:
        parts.append(f"{s.tiny} divisor(s) below 2^-128")
    if s.huge:
        parts.append(f"{s.huge} divisor(s) above 2^126")
    eg = ", ".join(dict.fromkeys(f"{v:.3g}" for v in s.examples))
    return f"the division at line {s.loc.line} met " + " and ".join(parts) + f" (e.g. {eg})"


def _differ(first: np.ndarray, ref: np.ndarray, bound: Any, mask: np.ndarray) -> int:
    """Elements (written by the kernel) where the two CUDA results differ beyond ``bound``."""
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.abs(first.astype(np.float64) - ref.astype(np.float64)) <= np.asarray(bound)
    same = close | (first == ref) | (np.isnan(first) & np.isnan(ref))
    return int(np.count_nonzero(~(mask | same)))


def _reciprocal_run(
    tu: Any, name: str, r: Resolved, arrays: dict[str, np.ndarray]
) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], list[Site]] | None:
    """Per output, the kernel's result with every division computed as x * (1 / y) and the
    elements it never writes; the divisions that met divisors out of the reciprocal's range
    (None: the run fails)."""
    key = refcache.run_key("reference with reciprocal division", tu, name, r, arrays)
    return refcache.remembered(key, lambda: _run(tu, name, r, arrays))


def _run(
    tu: Any, name: str, r: Resolved, arrays: dict[str, np.ndarray]
) -> tuple[Outputs, list[Site]] | None:
    divisions: list = []
    out = rerun(tu, name, r, arrays, mode=reciprocal_division(), entered=divisions)
    return None if out is None else (out, divisions[0].met())
