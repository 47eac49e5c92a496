"""Readable renderings of the CUDA AST: an indented text dump and a JSON-able summary."""

from __future__ import annotations

import dataclasses
import math

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.typesys import type_str

_CTYPES = (A.ScalarType, A.VectorType, A.PointerType, A.ArrayType, A.OpaqueType)


def _scalar_repr(v: object) -> str:
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else str(v)
    return repr(v)


def dump_ast(node: object, indent: int = 0) -> str:
    """Indented dump: one node per line, ``Kind field=value ... @line:col``, children nested."""
    lines: list[str] = []
    _dump(node, indent, lines, "")
    return "\n".join(lines)


def _dump(node: object, depth: int, out: list[str], label: str) -> None:
    pad = "  " * depth + (f"{label}: " if label else "")
    if isinstance(node, A.TranslationUnit):
        out.append(f"{pad}TranslationUnit {node.file}")
        for g in node.globals:
            _dump(g, depth + 1, out, "")
        for f in node.functions:
            _dump(f, depth + 1, out, "")
        for s in node.launch_sites:
            _dump(s, depth + 1, out, "")
        return
    if isinstance(node, _CTYPES):
        out.append(pad + type_str(node))
        return
    if isinstance(node, (tuple, list)):
        if not node:
            return
        for item in node:
            _dump(item, depth, out, label)
        return
    if not dataclasses.is_dataclass(node):
        out.append(pad + _scalar_repr(node))
        return
    attrs: list[str] = []
    children: list[tuple[str, object]] = []
    for f in dataclasses.fields(node):
        if f.name == "loc":
            continue
        v = getattr(node, f.name)
        if f.name == "ty" or isinstance(v, _CTYPES):
            if v is not None:
                attrs.append(f"{f.name}={type_str(v)}")
        elif isinstance(v, A.Node) or (
            isinstance(v, tuple) and v and any(isinstance(x, A.Node) for x in v)
        ):
            children.append((f.name, v))
        elif isinstance(v, tuple) and v and all(isinstance(x, tuple) for x in v):
            attrs.append(
                f"{f.name}="
                + ",".join(f"{a}={type_str(b) if isinstance(b, _CTYPES) else b}" for a, b in v)
            )
        elif v is None or v == () or v is False:
            continue
        else:
            attrs.append(f"{f.name}={_scalar_repr(v)}")
    loc = getattr(node, "loc", None)
    where = f" @{loc.line}:{loc.col}" if loc is not None else ""
    out.append(f"{pad}{type(node).__name__}{' ' if attrs else ''}{' '.join(attrs)}{where}")
    for name, v in children:
        if isinstance(v, tuple):
            out.append("  " * (depth + 1) + f"{name}:")
            for item in v:
                _dump(item, depth + 2, out, "")
        else:
            _dump(v, depth + 1, out, name)


def expr_text(e: object) -> str:
    """A compact C-like spelling of an expression (for messages and JSON)."""
    if isinstance(e, _CTYPES):
        return type_str(e)
    if isinstance(e, A.IntLit):
        return str(e.value)
    if isinstance(e, A.FloatLit):
        return _scalar_repr(e.value)
    if isinstance(e, A.BoolLit):
        return "true" if e.value else "false"
    if isinstance(e, A.Name):
        return e.name
    if isinstance(e, A.Builtin):
        return f"{e.name}.{e.dim}" if e.dim else e.name
    if isinstance(e, A.Unary):
        if e.op.startswith("post"):
            return f"{expr_text(e.operand)}{e.op[4:]}"
        if e.op.startswith("pre"):
            return f"{e.op[3:]}{expr_text(e.operand)}"
        return f"{e.op}{expr_text(e.operand)}"
    if isinstance(e, A.Binary):
        return f"({expr_text(e.left)} {e.op} {expr_text(e.right)})"
    if isinstance(e, A.Assign):
        return f"{expr_text(e.target)} {e.op} {expr_text(e.value)}"
    if isinstance(e, A.Ternary):
        return f"({expr_text(e.cond)} ? {expr_text(e.then)} : {expr_text(e.else_)})"
    if isinstance(e, A.Call):
        return f"{e.func}({', '.join(expr_text(a) for a in e.args)})"
    if isinstance(e, A.Index):
        return f"{expr_text(e.base)}[{expr_text(e.index)}]"
    if isinstance(e, A.Member):
        return f"{expr_text(e.base)}{'->' if e.arrow else '.'}{e.field}"
    if isinstance(e, A.Cast):
        return f"({type_str(e.to)}){expr_text(e.operand)}"
    if isinstance(e, A.SizeOf):
        return f"sizeof({type_str(e.of)})"
    if isinstance(e, A.Comma):
        return "(" + ", ".join(expr_text(x) for x in e.exprs) + ")"
    if isinstance(e, A.InitList):
        return "{" + ", ".join(expr_text(x) for x in e.items) + "}"
    return "?"


def summary(tu: A.TranslationUnit) -> dict:
    """The JSON document of ``cuda2nki parse --format json`` (schema in cli/cmd_parse.py)."""
    return {
        "file": tu.file,
        "kernels": [_function(f) for f in tu.functions if f.kind == "global"],
        "device_functions": [_function(f) for f in tu.functions if f.kind != "global"],
        "globals": [
            {"name": g.name, "type": type_str(g.ty), "space": g.space, "line": g.loc.line}
            for g in tu.globals
        ],
        "launch_sites": [_launch(s) for s in tu.launch_sites],
        "rejected": {name: [d.to_dict() for d in ds] for name, ds in sorted(tu.rejected.items())},
        "diagnostics": [d.to_dict() for d in tu.diagnostics],
    }


def _function(f: A.Function) -> dict:
    return {
        "name": f.name,
        "kind": f.kind,
        "line": f.loc.line,
        "params": [{"name": p.name, "type": type_str(p.ty)} for p in f.params],
        "return_type": type_str(f.return_type),
        "template_params": [
            {
                "name": t.name,
                "kind": t.kind,
                "default": None if t.default is None else expr_text(t.default),
            }
            for t in f.template_params
        ],
        "template_args": {
            k: (v if isinstance(v, int) else type_str(v)) for k, v in f.template_args
        },
        "launch_bounds": list(f.launch_bounds),
        "forceinline": f.forceinline,
    }


def _launch(s: A.LaunchSite) -> dict:
    return {
        "kernel": s.kernel,
        "line": s.loc.line,
        "col": s.loc.col,
        "template_args": [expr_text(t) for t in s.template_args],
        "grid": [expr_text(e) for e in s.grid],
        "block": [expr_text(e) for e in s.block],
        "shared_bytes": None if s.shared_bytes is None else expr_text(s.shared_bytes),
        "grid_text": s.grid_text,
        "block_text": s.block_text,
        "args": list(s.arg_texts),
    }
