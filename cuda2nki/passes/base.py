"""Pass protocol, pass-pipeline specs (``-p name,name{opt=v}``) and the pipeline runner.

A pass is a frozen dataclass with a kebab-case ``name`` class variable; its dataclass fields are its
options, parsed from the spec ``tile-rows{partitions=64,free=1024}``.  ``run(kernel, ctx)`` returns
new IR (passes never mutate).  The pipeline calls an optional ``after_each(pass, kernel)`` hook
between passes; the tests use it to run the IR verifier after every pass.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from cuda2nki.diagnostics import Diagnostic, SourceLoc, error, make


@dataclass
class PassContext:
    """What every pass may read: the target, the resolved binding and a diagnostics sink."""

    target: str = "nki"
    hw: str = "trn2"
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    scalars: dict[str, int | float] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def note(self, code: str, loc: SourceLoc, **fmt: object) -> None:
        diag = make(code, loc, **fmt)
        if diag not in self.diagnostics:
            self.diagnostics.append(diag)


@dataclass(frozen=True)
class Pass:
    """Base class: subclasses set ``name`` and implement :meth:`run`."""

    name: ClassVar[str] = ""

    def run(self, kernel: Any, ctx: PassContext) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def spec(self) -> str:
        opts = [f"{f.name}={getattr(self, f.name)}" for f in dataclasses.fields(self)]
        return self.name + ("{" + ",".join(opts) + "}" if opts else "")


_ITEM = re.compile(r"\s*([a-z][a-z0-9-]*)\s*(\{([^{}]*)\})?\s*(,|$)")


def map_computes(kernel: Any, fn: Callable[[Any], Any]) -> Any:
    """``kernel`` with ``fn`` applied to the expression of each top-level ``Compute`` (the
    intent-level passes that rewrite expressions in place)."""
    from cuda2nki.ir.nodes import Compute

    body = tuple(s.replace(expr=fn(s.expr)) if isinstance(s, Compute) else s for s in kernel.body)
    return kernel.replace(body=body)


def split_spec(spec: str) -> list[tuple[str, dict[str, str]]]:
    """``"a,b{x=1,y=2}"`` -> ``[("a", {}), ("b", {"x": "1", "y": "2"})]`` (C2N0002 if malformed)."""
    items: list[tuple[str, dict[str, str]]] = []
    pos = 0
    text = spec.strip()
    while pos < len(text):
        m = _ITEM.match(text, pos)
        if not m or m.end() == pos:
            raise error("C2N0002", option="-p", reason=f"cannot parse pass list at {text[pos:]!r}")
        opts: dict[str, str] = {}
        for kv in filter(None, (s.strip() for s in (m.group(3) or "").split(","))):
            key, eq, value = kv.partition("=")
            if not eq:
                raise error("C2N0002", option="-p", reason=f"option {kv!r} needs a value")
            opts[key.strip()] = value.strip()
        items.append((m.group(1), opts))
        pos = m.end()
    return items


def _convert(raw: str, default: Any, where: str) -> Any:
    kind = type(default)
    try:
        if kind is bool:
            if raw.lower() not in ("1", "0", "true", "false", "yes", "no"):
                raise ValueError(raw)
            return raw.lower() in ("1", "true", "yes")
        return kind(raw)
    except ValueError:
        raise error(
            "C2N0002", option="-p", reason=f"{where}: {raw!r} is not a {kind.__name__}"
        ) from None


def build_pass(name: str, opts: dict[str, str], registry: dict[str, Callable[[], type]]) -> Pass:
    if name not in registry:
        known = ", ".join(sorted(registry))
        raise error("C2N0002", option="-p", reason=f"unknown pass {name!r} (known: {known})")
    cls = registry[name]()
    fields = {f.name: f for f in dataclasses.fields(cls)}
    kwargs: dict[str, Any] = {}
    for key, raw in opts.items():
        if key not in fields:
            raise error("C2N0002", option="-p", reason=f"pass {name!r} has no option {key!r}")
        kwargs[key] = _convert(raw, fields[key].default, f"{name}.{key}")
    return cls(**kwargs)


AfterEach = Callable[[Pass, Any], None]


def run_pipeline(
    kernel: Any, passes: Sequence[Pass], ctx: PassContext, after_each: AfterEach | None = None
) -> Any:
    """Run ``passes`` in order; ``after_each`` sees every intermediate result."""
    for p in passes:
        kernel = p.run(kernel, ctx)
        if after_each is not None:
            after_each(p, kernel)
    return kernel
