"""Locals the literal lowering must hold as index values, kernel's and inlined functions' alike.

A local classified thread-affine that takes a value that is not (``lane = t & 31``,
``pos = 2 * t - (t & (n - 1))``) is lowered again as an index local, evaluated when the kernel
is traced (see :class:`~.state.NotAffine`).  A local of an inlined device function is named
``function:local`` here, so that it is forced in that function's classification only."""

from __future__ import annotations

from collections.abc import Mapping


def forced_key(callees: list[str], local: str) -> str:
    """The name under which ``local`` of the innermost inlined function (or the kernel) is forced."""
    return f"{callees[-1]}:{local}" if callees else local


def kernel_forced(forced: Mapping[str, str]) -> dict[str, str]:
    """The forced locals of the kernel's own body."""
    return {k: v for k, v in forced.items() if ":" not in k}


def callee_forced(forced: Mapping[str, str], callee: str) -> dict[str, str]:
    """The forced locals of the inlined function ``callee``, by their own names."""
    prefix = callee + ":"
    return {k[len(prefix) :]: v for k, v in forced.items() if k.startswith(prefix)}
