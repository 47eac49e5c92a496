"""The port's code paths, read from its text: size thresholds its branches test, and the blocks
that issue NKI instructions (to name those no test point executed).

A threshold is a comparison of a size with a constant: a scalar parameter, ``x.shape[k]`` of a
tensor parameter, or a name unpacked from or assigned one of those, against an integer literal,
a name bound once to one, or ``nl.tile_size.pmax`` style constants; or a loop whose trip count is
such a size floor-divided by such a constant (``for i in range(N // 512)``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: ``nl.tile_size`` fields and their values (NKI.md: 128 partitions, 512-element PSUM/moving tiles)
TILE_SIZE = {"pmax": 128, "psum_fmax": 512, "gemm_stationary_fmax": 128, "gemm_moving_fmax": 512}

#: NKI calls that issue no instruction: allocation, index and loop helpers
_NO_INSTRUCTION = {
    "ndarray",
    "zeros",
    "ones",
    "full",
    "empty",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
    "arange",
    "mgrid",
    "par_dim",
    "affine_range",
    "sequential_range",
    "static_range",
    "range",
    "program_id",
    "num_programs",
    "program_ndim",
    "device_print",
}


@dataclass(frozen=True)
class Size:
    """A size the port reads: scalar parameter ``param`` (axis None) or ``param.shape[axis]``."""

    param: str
    axis: int | None = None


@dataclass(frozen=True)
class Threshold:
    """``size`` is on the upper side of the port's test from ``boundary`` up (the lower side is
    ``boundary - 1`` and below)."""

    size: Size
    boundary: int
    line: int


def _sizes(fn: ast.FunctionDef) -> dict[str, Size]:
    """Local names bound to a size: parameters themselves, ``N, C = x.shape``, ``N = x.shape[0]``."""
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
    out = {p: Size(p) for p in params}
    for node in ast.walk(fn):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Tuple | ast.List) and _shape_of(value, params) is not None:
            owner = _shape_of(value, params)
            for k, elt in enumerate(target.elts):
                if isinstance(elt, ast.Name) and owner is not None:
                    out[elt.id] = Size(owner, k)
        elif isinstance(target, ast.Name):
            size = _size_expr(value, params, {})
            if size is not None:
                out[target.id] = size
    return out


def _shape_of(node: ast.expr, params: list[str]) -> str | None:
    """``p`` when ``node`` is ``p.shape`` of a parameter ``p``."""
    if (
        isinstance(node, ast.Attribute)
        and node.attr == "shape"
        and isinstance(node.value, ast.Name)
        and node.value.id in params
    ):
        return node.value.id
    return None


def _size_expr(node: ast.expr, params: list[str], names: Mapping[str, Size]) -> Size | None:
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        owner = _shape_of(node.value, params)
        k = node.slice.value
        if owner is not None and isinstance(k, int) and not isinstance(k, bool) and k >= 0:
            return Size(owner, k)
    return None


def _constants(fn: ast.FunctionDef, tree: ast.Module) -> dict[str, int]:
    """Names bound exactly once (module or kernel) to an integer constant or a tile size."""
    seen: dict[str, list[int | None]] = {}
    for node in [*tree.body, *ast.walk(fn)]:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            t = node.targets[0]
            if isinstance(t, ast.Name):
                seen.setdefault(t.id, []).append(_int_value(node.value, {}))
        elif isinstance(node, ast.AugAssign | ast.For) and isinstance(node.target, ast.Name):
            seen.setdefault(node.target.id, []).append(None)
    return {k: v[0] for k, v in seen.items() if len(v) == 1 and v[0] is not None}


def _int_value(node: ast.expr, consts: Mapping[str, int]) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return None if isinstance(node.value, bool) else node.value
    if isinstance(node, ast.Name):
        return consts.get(node.id)
    if (
        isinstance(node, ast.Attribute)
        and node.attr in TILE_SIZE
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "tile_size"
    ):
        return TILE_SIZE[node.attr]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult | ast.Add | ast.Sub):
        a, b = _int_value(node.left, consts), _int_value(node.right, consts)
        if a is None or b is None:
            return None
        if isinstance(node.op, ast.Mult):
            return a * b
        return a + b if isinstance(node.op, ast.Add) else a - b
    return None


#: per comparison operator with the size on the left: the boundary's offset from the constant
_UPPER = {ast.GtE: 0, ast.Lt: 0, ast.Gt: 1, ast.LtE: 1, ast.Eq: 0, ast.NotEq: 0}
_FLIP = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE}


def thresholds(fn: ast.FunctionDef, tree: ast.Module) -> list[Threshold]:
    """Every comparison of a size with a constant in the kernel's body, as a boundary."""
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
    names = _sizes(fn)
    consts = _constants(fn, tree)
    out: list[Threshold] = []
    for node in ast.walk(fn):
        if not isinstance(node, ast.Compare):
            continue
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            size, value, kind = _size_expr(left, params, names), _int_value(right, consts), type(op)
            if size is None:
                size, value = _size_expr(right, params, names), _int_value(left, consts)
                kind = _FLIP.get(kind, kind)
            if size is not None and value is not None and kind in _UPPER:
                t = Threshold(size, value + _UPPER[kind], node.lineno)
                if t not in out:
                    out.append(t)
            left = right
    for t in _trip_thresholds(fn, params, names, consts):
        if t not in out:
            out.append(t)
    return out


_RANGES = frozenset({"range", "affine_range", "sequential_range", "static_range"})


def _trip_thresholds(
    fn: ast.FunctionDef, params: list[str], names: Mapping[str, Size], consts: Mapping[str, int]
) -> list[Threshold]:
    """Loops whose trip count is a size divided by a constant (``range(N // 512)``,
    ``nl.affine_range(n // 128)``): the body runs only from that constant up."""
    out = []
    for node in ast.walk(fn):
        if not isinstance(node, ast.For) or not isinstance(node.iter, ast.Call):
            continue
        f = node.iter.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        args = node.iter.args
        if name not in _RANGES or not args:
            continue
        stop = args[0] if len(args) == 1 else args[1]
        if isinstance(stop, ast.BinOp) and isinstance(stop.op, ast.FloorDiv):
            size = _size_expr(stop.left, params, names)
            value = _int_value(stop.right, consts)
            if size is not None and value is not None and value > 1:
                out.append(Threshold(size, value, node.lineno))
    return out


# --------------------------------------------------------------------------- executed blocks


def _nki_aliases(tree: ast.Module) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in ("nki", "neuronxcc") or ".nki" in a.name:
                    out.add(a.asname or a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module:
            mod = node.module
            if mod.split(".")[0] in ("nki", "neuronxcc") or ".nki" in mod:
                out.update(a.asname or a.name for a in node.names)
    return out


def _issues(stmts: Iterable[ast.stmt], aliases: set[str]) -> bool:
    """Whether the statements call an NKI function that issues an instruction."""
    for stmt in stmts:
        for node in ast.walk(stmt):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            root: ast.expr = node.func
            while isinstance(root, ast.Attribute):
                root = root.value
            if (
                isinstance(root, ast.Name)
                and root.id in aliases
                and node.func.attr not in _NO_INSTRUCTION
            ):
                return True
    return False


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists nested directly in a compound statement."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return []  # a nested definition runs only when called: its body is not this path's
    out = []
    for name in ("body", "orelse", "finalbody"):
        block = getattr(stmt, name, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            out.append(block)
    for h in getattr(stmt, "handlers", ()):
        out.append(h.body)
    for c in getattr(stmt, "cases", ()):
        out.append(c.body)
    return out


def unexecuted(fn: ast.FunctionDef, tree: ast.Module, executed: set[int]) -> list[tuple[int, int]]:
    """(first, last) line of each outermost block of the kernel that issues NKI instructions
    but contains no line in ``executed`` (the lines instructions were issued from)."""
    aliases = _nki_aliases(tree)
    out: list[tuple[int, int]] = []

    def visit(block: list[ast.stmt]) -> None:
        first, last = block[0].lineno, max(s.end_lineno or s.lineno for s in block)
        if not any(first <= ln <= last for ln in executed) and _issues(block, aliases):
            out.append((first, last))
            return
        for stmt in block:
            for inner in _blocks(stmt):
                visit(inner)

    visit(fn.body)
    return out


def describe(spans: list[tuple[int, int]]) -> str:
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in spans)
