"""What a template kernel that nothing instantiates lacks: its template arguments, by name.

A template ``__global__`` is instantiated from its launch sites (in the file, in host templates
its callers instantiate, in files including it), from ``--template NAME=VALUE``, from its
parameters' defaults, or, where nothing instantiates it, from assumed arguments
(:mod:`cuda2nki.frontend.assumedinst`).  When none applies (a kernel launched only where its
arguments are not known, a function parameter), binding inference reports the parameters still
unknown as a missing item (C2N2101), and the literal lowering's refusal names them, so the fix
is spelled out rather than left to a generic refusal.
"""

from __future__ import annotations

from cuda2nki.diagnostics import Diagnostic, make
from cuda2nki.frontend import ast as A


def unbound_params(fn: A.Function) -> list[str]:
    """The template parameters without a default of an uninstantiated template kernel (none
    when it is instantiated)."""
    if not fn.template_params or fn.template_args:
        return []
    lacking = [p.name for p in fn.template_params if p.default is None]
    return lacking or [p.name for p in fn.template_params]


def fix_text(names: list[str]) -> str:
    return " ".join(f"--template {n}=..." for n in names)


def missing_template_args(fn: A.Function, kernel: str) -> Diagnostic | None:
    """A C2N2101 naming the template arguments ``fn`` lacks, or None."""
    names = unbound_params(fn)
    if not names:
        return None
    plural = "s" if len(names) > 1 else ""
    return make(
        "C2N2101",
        fn.loc,
        what=f"the template argument{plural} {', '.join(names)}",
        kernel=kernel,
        why=f"no launch site instantiates the template and {'they have' if plural else 'it has'} "
        f"no default; add {fix_text(names)} (or a launch)",
    )


def refusal_text(fn: A.Function) -> str:
    names = unbound_params(fn)
    return (
        f"an uninstantiated template kernel (template arguments {', '.join(names)} unknown: "
        f"add {fix_text(names)} or a launch)"
    )
