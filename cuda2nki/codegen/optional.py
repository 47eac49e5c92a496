"""Ports with optional tensors: one kernel per presence decision, chosen when the port is traced.

A kernel that tests a pointer input against null (:mod:`cuda2nki.frontend.presence`) is ported
once with the input present and once without it; the module holds both as plain functions and an
``@nki.jit`` entry, named after the kernel, that takes the input as ``name=None`` and calls the
variant for what it was given.  ``is None`` is decided by Python while the kernel is traced, so
each traced kernel holds only one variant's instructions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_DEF = re.compile(r"^@nki\.jit\n(def )(\w+)(\()(.*)\):$", re.MULTILINE)


@dataclass(frozen=True)
class Variant:
    """One generated module and the inputs it leaves out (empty: every input present)."""

    absent: frozenset[str]
    source: str


def _variant_name(kernel: str, absent: frozenset[str]) -> str:
    if not absent:
        return f"_{kernel}_all_inputs"
    return f"_{kernel}_without_" + "_".join(sorted(absent))


def _split(source: str) -> tuple[str, str, list[str]]:
    """(text before the entry, the entry onward, the entry's parameters)."""
    m = _DEF.search(source)
    if m is None:
        raise ValueError("generated module has no @nki.jit entry")
    params = [p.strip() for p in m.group(4).split(",") if p.strip()]
    return source[: m.start()], source[m.start() :], params


def _renamed(entry: str, name: str) -> str:
    """The entry function as a plain function ``name`` (the jit entry is the dispatcher)."""
    return _DEF.sub(lambda m: f"{m.group(1)}{name}{m.group(3)}{m.group(4)}):", entry, count=1)


def _positional(params: Sequence[str]) -> list[str]:
    return [p for p in params if "=" not in p]


def compose(kernel: str, variants: Sequence[Variant], optional: Sequence[str]) -> str:
    """One module: every variant as a plain function plus the dispatching ``@nki.jit`` entry.

    ``variants[0]`` has every input present; its parameters order the entry's, with each of
    ``optional`` defaulting to ``None``."""
    prelude, entry, params = _split(variants[0].source)
    parts = [prelude.rstrip("\n"), ""]
    for v in variants:
        _, body, _ = _split(v.source)
        parts += ["", _renamed(body, _variant_name(kernel, v.absent)).rstrip("\n"), ""]
    tensors = _positional(params)
    keywords = [p for p in params if "=" in p]
    required = [t for t in tensors if t not in optional]
    sig = [*required, *(f"{t}=None" for t in tensors if t in optional), *keywords]
    lines = ["", "@nki.jit", f"def {kernel}({', '.join(sig)}):"]
    lines.append(f'    """Optional inputs: {", ".join(optional)} (None: the kernel without it)."""')
    for v in sorted(variants[1:], key=lambda v: -len(v.absent)):
        test = " and ".join(f"{t} is None" for t in sorted(v.absent))
        lines.append(f"    if {test}:")
        lines.append(f"        return {_call(kernel, v, params)}")
    lines.append(f"    return {_call(kernel, variants[0], params)}")
    return "\n".join(parts + lines) + "\n"


def _call(kernel: str, v: Variant, entry_params: Sequence[str]) -> str:
    _, _, params = _split(v.source)
    args = [p.split("=")[0].strip() for p in params]
    spelled = [a if "=" not in p else f"{a}={a}" for a, p in zip(args, params, strict=True)]
    del entry_params
    return f"{_variant_name(kernel, v.absent)}({', '.join(spelled)})"
