"""Calls the literal lowering passes through or refuses with the reason said plainly.

Compiler hints (``__builtin_assume_aligned(p, n)``, ``__builtin_expect(v, c)``) are their first
argument, as in the SIMT interpreter.  Calls with no counterpart in a port are refused naming
what they do: reads of the cycle counter (a kernel that times itself or spins on the clock),
a trap that aborts the launch, and device-side control of a CUDA graph's conditional node.
"""

from __future__ import annotations

HINTS = frozenset({"__builtin_assume_aligned", "__builtin_expect"})

_CLOCK = "a read of the cycle counter: a port has none, and its time is not the GPU's"
_WHY = {
    "clock": _CLOCK,
    "clock64": _CLOCK,
    "__trap": "a trap that aborts the launch: a port cannot abort",
    "__brkpt": "a debugger breakpoint: a port has none",
    "cudaGraphSetConditional": "sets a CUDA graph's conditional node from the device: a port "
    "is not a graph node; decide the condition on the host",
}


def call_reason(func: str) -> str:
    """The refusal of a call to ``func`` the literal lowering does not compute."""
    why = _WHY.get(func)
    return f"call to '{func}'" if why is None else f"call to '{func}' ({why})"
