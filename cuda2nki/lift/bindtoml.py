"""The inferred binding of a file's kernels as a commented sidecar (``cuda2nki bind``).

Each kernel gets a ``[kernels.NAME]`` table (see :mod:`cuda2nki.binding`).  Every inferred item is
preceded by a comment giving its evidence (``file:line`` and what it was read from); every item
inference could not supply is a ``# TODO`` comment with a commented-out line to complete, so the
file fails validation (C2N0003) until it is completed and loads as is once it is.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from cuda2nki.diagnostics import Diagnostic
from cuda2nki.frontend import ast as A

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


@dataclass(frozen=True)
class KernelToml:
    """One kernel's table: its text and the items it leaves to the user."""

    kernel: str
    text: str
    todo: tuple[str, ...]


def kernel_toml(tu: A.TranslationUnit, kernel: str) -> KernelToml:
    """The ``[kernels.NAME]`` table of ``kernel`` with its evidence and TODOs."""
    from cuda2nki.lift.infer import infer_binding

    partial, diags = infer_binding(tu, kernel)
    fn = tu.function(kernel)
    key = _key(kernel)
    todo: list[str] = []
    out = [f"# kernel '{kernel}' ({_where(fn.loc) if fn is not None else tu.file})"]
    out.append(f"[kernels.{key}.launch]")
    launch = partial.get("launch")
    launch_diags = [d for d in diags if "launch" in d.message and d.code in ("C2N2100", "C2N2101")]
    out += _comments(launch_diags)
    if launch is not None:
        out.append(f"grid = {_value(launch['grid'])}")
        out.append(f"block = {_value(launch['block'])}")
        if "shared_bytes" in launch:
            out.append(f"shared_bytes = {_value(launch['shared_bytes'])}")
    else:
        todo.append("launch")
        out += ['# grid = ["ceil_div(n, 256)"]', "# block = [256]"]
    out.append("")
    out.append(f"[kernels.{key}.params]")
    for p in fn.params if fn is not None else ():
        mine = [d for d in diags if d.loc == p.loc and d not in launch_diags]
        out += _comments(mine)
        spec = partial["params"].get(p.name)
        line = _param_line(p, spec)
        if line is None:
            todo.append(p.name)
            out.append("# " + _placeholder(p, spec))
        else:
            out.append(line)
    steps = partial.get("check", {}).get("multiples", {})
    if steps:
        out += ["", f"[kernels.{key}.check.multiples]"]
        out += [f"{_key(n)} = {v}" for n, v in steps.items()]
    other = [
        d
        for d in diags
        if d not in launch_diags and all(d.loc != p.loc for p in (fn.params if fn else ()))
    ]
    if other:
        out.append("")
        out += _comments(other)
    return KernelToml(kernel, "\n".join(out) + "\n", tuple(todo))


def file_toml(tu: A.TranslationUnit, kernels: list[str]) -> tuple[str, list[KernelToml]]:
    """The sidecar text binding ``kernels`` of ``tu``, and each kernel's table."""
    tables = [kernel_toml(tu, k) for k in kernels]
    head = [
        f"# Bindings of {tu.file}, inferred from its source by `cuda2nki bind`.",
        "# Each item says where it came from; complete every `# TODO` (uncomment its line).",
        "# Sizes need no exact value: check chooses further sizes itself.",
        "",
    ]
    return "\n".join(head) + "\n".join(t.text for t in tables), tables


def _key(name: str) -> str:
    return name if _BARE.match(name) else json.dumps(name)


def _where(loc: A.SourceLoc) -> str:
    return f"{loc.file}:{loc.line}"


def _comments(diags: list[Diagnostic]) -> list[str]:
    out = []
    for d in diags:
        msg = " ".join(d.message.split())
        if d.code == "C2N2101":
            out.append(f"# TODO ({_where(d.loc)}): {msg}")
        else:
            out.append(f"# {_where(d.loc)}: {msg}")
    return out


def _value(v: object) -> str:
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, int | float):
        return repr(v)
    return json.dumps(str(v))


def _param_line(p: A.Param, spec: object) -> str | None:
    if isinstance(spec, dict) and set(spec) == {"tie"}:  # a size tied to another
        return f"{_key(p.name)} = {{ tie = {_value(spec['tie'])} }}"
    if isinstance(spec, dict):
        if "shape" not in spec or "role" not in spec:
            return None
        keys = [k for k in ("shape", "dtype", "role", "range", "offset") if k in spec]
        items = ", ".join(f"{k} = {_value(spec[k])}" for k in keys)
        return f"{_key(p.name)} = {{ {items} }}"
    if isinstance(spec, int | float) and not isinstance(spec, bool):
        return f"{_key(p.name)} = {_value(spec)}"
    return None


def _placeholder(p: A.Param, spec: object) -> str:
    if isinstance(spec, dict) or isinstance(p.ty, A.PointerType | A.ArrayType):
        got = spec if isinstance(spec, dict) else {}
        shape = _value(got.get("shape", ["n"]))
        dtype = _value(got.get("dtype", "float32"))
        role = _value(got.get("role", "in"))
        return f"{_key(p.name)} = {{ shape = {shape}, dtype = {dtype}, role = {role} }}"
    return f"{_key(p.name)} = 1"
