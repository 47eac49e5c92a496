"""The jinja2 environment of the code generator: templates ship inside the package.

Templates are loaded with :class:`jinja2.PackageLoader` from ``cuda2nki/templates`` so they work
from a source checkout and from an installed wheel alike; ``StrictUndefined`` turns a missing
context value into an error instead of an empty string.  Templates hold the NKI spelling only: one
macro per scheduled instruction in ``<target>/ops.j2`` and the module layout in
``<target>/module.py.j2``.  Every operand arrives already spelled by :mod:`cuda2nki.codegen.emit`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import jinja2

TARGETS = ("nki", "legacy")


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("cuda2nki", "templates"),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )


@lru_cache(maxsize=4)
def ops(target: str) -> Any:
    """The instruction macros of ``target`` (attribute access: ``ops("nki").dma(...)``)."""
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}")
    return environment().get_template(f"{target}/ops.j2").module


def instruction(target: str, kind: str, **operands: Any) -> str:
    macro = getattr(ops(target), kind)
    return str(macro(**operands)).strip()


def module(target: str, **context: Any) -> str:
    return environment().get_template(f"{target}/module.py.j2").render(**context)


def arguments(target: str, kind: str) -> tuple[str, ...]:
    return tuple(getattr(ops(target), kind).arguments)


def int_helpers() -> str:
    """The exact 32-bit integer helpers (shared with the literal ports), as module text."""
    return environment().get_template("int32_common.py.j2").render().strip("\n") + "\n"
