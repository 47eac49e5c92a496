"""C2N2400-2499: tile IR text and verifier findings (``cuda2nki.ir``)."""

from cuda2nki.diagnostics import Rule, Severity, register

E, W, N = Severity.ERROR, Severity.WARNING, Severity.NOTE

register(
    Rule(
        "C2N2400",
        E,
        "malformed tile IR text",
        "cannot parse tile IR: {reason}",
        "The textual tile IR (as printed by `cuda2nki port --emit intent|tiles`) does not follow "
        "the grammar `cuda2nki/grammars/tile_ir.lark`, or names an unknown op, statement or operand.",
        example="map: c[i] = a[i] +  for i < N;",
        fix="Correct the text at the reported position; print a known-good kernel for the syntax.",
    ),
)
