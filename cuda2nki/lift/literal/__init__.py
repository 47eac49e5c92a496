"""The generic literal lowering: a kernel no recogniser claims, translated thread by thread.

:func:`lower_literal` returns a :class:`LiteralProgram` (spelled by
:mod:`cuda2nki.codegen.literal`) or raises :class:`LiteralRefusal` naming the construct it cannot
translate faithfully.  See :mod:`cuda2nki.lift.literal.lower` for the design choices.
"""

from __future__ import annotations

from cuda2nki.lift.literal.program import Branch, Instr, LiteralProgram, Loop
from cuda2nki.lift.literal.state import LiteralRefusal


def lower_literal(tu, name: str, binding) -> LiteralProgram:  # noqa: ANN001
    """Lower kernel ``name`` of ``tu`` under ``binding`` (raises :class:`LiteralRefusal`)."""
    from cuda2nki.frontend import ast as A
    from cuda2nki.lift.literal.kernel import build

    fn = next((f for f in tu.kernels if f.name == name), None)
    if fn is None:
        raise LiteralRefusal(f"no __global__ kernel '{name}'", A.Node(loc=_loc(tu)).loc)
    if fn.template_params and not fn.template_args:
        from cuda2nki.lift.templategap import refusal_text

        raise LiteralRefusal(refusal_text(fn), fn.loc)
    from cuda2nki.lift.rng import rng_call, rng_construct

    drawn = rng_call(tu, fn)
    if drawn is not None:
        raise LiteralRefusal(rng_construct(drawn), drawn.loc)
    from cuda2nki.lift.literal.reuse import reuse_loads
    from cuda2nki.lift.literal.runtime_scope import check_runtime_loops
    from cuda2nki.lift.literal.scalarise import scalarise

    tu, fn = scalarise(tu, fn)  # vectors and record structs: their lanes
    return check_runtime_loops(reuse_loads(build(tu, fn, binding, name)))


def _loc(tu):  # noqa: ANN001, ANN202
    from cuda2nki.diagnostics import SourceLoc

    return SourceLoc(tu.file, 1, 1)


__all__ = ["Branch", "Instr", "LiteralProgram", "LiteralRefusal", "Loop", "lower_literal"]
