"""Layout findings on a port: avoidable transposes (C2N5009) and CUDA's warp structure carried
over (C2N5011).

The port's source is read for the shape of the code (which loop a transpose sits in and what its
input depends on; a loop that halves an offset; a loop that steps 32 lanes at a time); the
simulator's instruction trace then says how much work each place really did, and only work the
trace confirms is reported.  With ``--static-only`` the source reading alone is reported.

Avoidable transposes are transposes that do nothing useful, not transposes in general: a matmul
port must put the contraction axis on the partitions, and transposing a block once for that is
the idiom.  Two shapes are reported:

* *repeated*: a transpose inside a loop whose variable its input does not depend on, so every
  iteration transposes the same data again (hoist it out, keep the result in SBUF);
* *round trip*: a tile transposed and then transposed back (explicitly, or by the legacy
  ``nl.matmul(x, y)`` that transposes ``x`` itself) with only elementwise work in between.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from cuda2nki.diagnostics import Diagnostic, SourceLoc, make

TRANSPOSES = {"nc_transpose", "transpose", "dma_transpose", "load_transpose2d"}
#: calls that write their ``dst`` (or, positionally, first argument) in the current API
WRITERS = {
    "dma_copy",
    "tensor_copy",
    "nc_transpose",
    "dma_transpose",
    "tensor_tensor",
    "tensor_scalar",
    "activation",
    "tensor_reduce",
    "memset",
    "nc_matmul",
    "iota",
    "affine_select",
    "tensor_tensor_scan",
    "select",
    "range_select",
    "tensor_copy_predicated",
    "exponential",
}
#: operations that keep a tile's layout: the result is laid out as their tile operands are
ELEMENTWISE = {
    "tensor_copy",
    "copy",
    "tensor_scalar",
    "activation",
    "tensor_tensor",
    "exp",
    "log",
    "tanh",
    "sigmoid",
    "gelu",
    "relu",
    "silu",
    "sqrt",
    "rsqrt",
    "abs",
    "negative",
    "square",
    "multiply",
    "add",
    "subtract",
    "maximum",
    "minimum",
    "divide",
}
ALLOCS = {"ndarray", "zeros", "ones", "full", "empty", "zeros_like", "ones_like", "empty_like"}
_TILE_KWS = {"data", "data1", "data2", "src", "bias", "x", "y", "in_", "operand0", "operand1"}
WARP = 32


@dataclass(frozen=True)
class Candidate:
    """A place in the port's source that may be one of the findings; the trace decides."""

    code: str  # C2N5009 | C2N5011
    kind: str  # repeated | round-trip | matmul-result | halving | lanes | warp-tiles
    line: int
    lines: tuple[int, ...]  # the port lines whose executed instructions measure it
    detail: str
    producers: tuple[int, ...] = ()  # repeated: the lines that write the transposed data


# --------------------------------------------------------------------------- AST helpers


def _call_name(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _kw(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _root(node: ast.AST | None) -> str | None:
    while isinstance(node, ast.Subscript | ast.Attribute | ast.Starred | ast.Call):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _names(node: ast.AST | None) -> set[str]:
    if node is None:
        return set()
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _dst(call: ast.Call) -> ast.expr | None:
    dst = _kw(call, "dst")
    if dst is None and _call_name(call) in WRITERS and call.args:
        dst = call.args[0]
    return dst


def _transposed_operand(call: ast.Call) -> ast.expr | None:
    for k in ("data", "src", "x"):
        v = _kw(call, k)
        if v is not None:
            return v
    if _kw(call, "dst") is not None:
        return call.args[0] if call.args else None
    if _call_name(call) in ("nc_transpose", "dma_transpose") and len(call.args) >= 2:
        return call.args[1]  # (dst, data) positionally in the current API
    return call.args[0] if call.args else None


def _int(node: ast.AST | None, consts: dict[str, int]) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name):
        return consts.get(node.id)
    return None


# --------------------------------------------------------------------------- the walk


@dataclass
class _Write:
    name: str
    reads: set[str]
    loops: tuple[ast.For, ...]
    line: int = 0
    alloc: bool = False  # an allocation (no data written)


@dataclass
class _Scan:
    """One function's reads and writes, loop nesting and integer constants."""

    writes: list[_Write] = field(default_factory=list)
    loop_vars: set[str] = field(default_factory=set)
    calls: list[tuple[ast.Call, tuple[ast.For, ...], set[str]]] = field(default_factory=list)
    consts: dict[str, int] = field(default_factory=dict)
    order: list[ast.AST] = field(default_factory=list)  # statements and calls in source order

    def visit(self, body: Sequence[ast.stmt], loops: tuple[ast.For, ...], ctrl: set[str]) -> None:
        for st in body:
            self.order.append(st)
            if isinstance(st, ast.For):
                if isinstance(st.target, ast.Name):
                    self.loop_vars.add(st.target.id)
                    self.writes.append(_Write(st.target.id, _names(st.iter), loops))
                self.visit(st.body, (*loops, st), ctrl)
                self.visit(st.orelse, loops, ctrl)
            elif isinstance(st, ast.While):
                self.visit(st.body, loops, ctrl | _names(st.test))
            elif isinstance(st, ast.If):
                inner = ctrl | _names(st.test)
                self.visit(st.body, loops, inner)
                self.visit(st.orelse, loops, inner)
            elif isinstance(st, ast.With | ast.Try):
                self.visit(st.body, loops, ctrl)
            else:
                self._simple(st, loops, ctrl)

    def _simple(self, st: ast.stmt, loops: tuple[ast.For, ...], ctrl: set[str]) -> None:
        if isinstance(st, ast.Assign):
            reads = _names(st.value) | ctrl
            for t in st.targets:
                targets = t.elts if isinstance(t, ast.Tuple) else [t]
                for x in targets:
                    name = _root(x)
                    if name is None:
                        continue
                    extra = _names(x.slice) if isinstance(x, ast.Subscript) else set()
                    alloc = isinstance(st.value, ast.Call) and _call_name(st.value) in ALLOCS
                    self.writes.append(_Write(name, reads | extra, loops, st.lineno, alloc))
                    if isinstance(x, ast.Name) and len(st.targets) == 1 and len(targets) == 1:
                        v = _int(st.value, self.consts)
                        if v is not None:
                            self.consts[name] = v
        elif isinstance(st, ast.AugAssign) and _root(st.target):
            name = _root(st.target)
            self.writes.append(_Write(name, _names(st.value) | ctrl | {name}, loops))  # type: ignore[arg-type]
        for node in ast.walk(st):
            if isinstance(node, ast.Call):
                self.calls.append((node, loops, ctrl))
                if isinstance(st, ast.Assign) and node is st.value:
                    continue  # x = op(...): the assignment is the write
                dst = _dst(node)
                name = _root(dst)
                if name is not None:
                    reads = _names(node) - {name} | ctrl
                    others = [k.value for k in node.keywords if k.arg != "dst"] + [
                        a for a in node.args if a is not dst
                    ]
                    if any(_root(o) == name for o in others) or _accumulates(node):
                        reads.add(name)  # type: ignore[arg-type]
                    reads |= _names(dst) - {name}
                    self.writes.append(_Write(name, reads, loops, node.lineno))  # type: ignore[arg-type]

    def deps(self) -> dict[str, set[str]]:
        """name -> the loop variables its value depends on (data, control and loop-carried)."""
        deps: dict[str, set[str]] = {v: {v} for v in self.loop_vars}
        for _ in range(12):
            changed = False
            for w in self.writes:
                cur = deps.setdefault(w.name, set())
                new = set(cur)
                for r in w.reads:
                    new |= deps.get(r, set())
                if w.name in w.reads:  # updated from itself: changes every iteration
                    new |= {lp.target.id for lp in w.loops if isinstance(lp.target, ast.Name)}
                if new != cur:
                    deps[w.name] = new
                    changed = True
            if not changed:
                break
        return deps


def _accumulates(call: ast.Call) -> bool:
    acc = _kw(call, "accumulate")
    return acc is not None and not (isinstance(acc, ast.Constant) and not acc.value)


def _functions(tree: ast.Module) -> Iterator[ast.FunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            yield node


# --------------------------------------------------------------------------- avoidable transposes


def _trips_one(loop: ast.For) -> bool:
    it = loop.iter
    if isinstance(it, ast.Call) and _call_name(it).endswith("range") and len(it.args) == 1:
        a = it.args[0]
        return isinstance(a, ast.Constant) and a.value == 1
    return False


def _repeated(scan: _Scan) -> list[Candidate]:
    deps = scan.deps()
    out = []
    for call, loops, ctrl in scan.calls:
        if _call_name(call) not in TRANSPOSES or not loops:
            continue
        operand = _transposed_operand(call)
        if operand is None:
            continue
        needed: set[str] = set()
        for n in _names(operand) | ctrl:
            needed |= deps.get(n, set())
        roots = {_root(operand)}
        producers = tuple(
            sorted({w.line for w in scan.writes if w.name in roots and not w.alloc and w.line})
        )
        for loop in reversed(loops):
            var = loop.target.id if isinstance(loop.target, ast.Name) else None
            if var is None or var in needed or _trips_one(loop):
                continue
            out.append(
                Candidate(
                    "C2N5009",
                    "repeated",
                    call.lineno,
                    (call.lineno,),
                    f"the transpose at line {call.lineno} reads `{ast.unparse(operand)[:60]}`, "
                    f"which does not change across the loop over '{var}' (line {loop.lineno}): "
                    "every iteration transposes the same data again",
                    producers,
                )
            )
            break
    return out


def _round_trips(scan: _Scan, legacy: bool) -> list[Candidate]:
    """Tiles transposed back after only elementwise work (in source order)."""
    origin: dict[str, int] = {}  # tile -> line of the transpose that produced its layout
    product: dict[str, int] = {}  # tile -> line of the matmul whose result it holds
    out = []
    for call, _loops, _ctrl in sorted(scan.calls, key=lambda c: (c[0].lineno, c[0].col_offset)):
        name = _call_name(call)
        if name in TRANSPOSES or (legacy and name == "matmul" and not _transpose_x(call)):
            operand = call.args[0] if name == "matmul" and call.args else None
            operand = operand if name == "matmul" else _transposed_operand(call)
            src = _root(operand)
            if name in TRANSPOSES and src in product:
                out.append(
                    Candidate(
                        "C2N5009",
                        "matmul-result",
                        call.lineno,
                        (call.lineno,),
                        f"the transpose at line {call.lineno} turns the result of the matmul at "
                        f"line {product[src]} around; (X.T @ Y).T = Y.T @ X, so swapping the "
                        "stationary and moving operands gives the transposed result directly",
                    )
                )
            elif src in origin:
                how = (
                    "by nl.matmul without transpose_x=True (it transposes x itself)"
                    if name == "matmul"
                    else f"at line {call.lineno}"
                )
                out.append(
                    Candidate(
                        "C2N5009",
                        "round-trip",
                        call.lineno,
                        (origin[src], call.lineno),
                        f"the tile transposed at line {origin[src]} is transposed back {how} "
                        "with only elementwise work in between",
                    )
                )
            if name in TRANSPOSES:
                dst = _root(_dst(call)) if _kw(call, "dst") is not None else _assigned(scan, call)
                if dst is not None:
                    origin[dst] = call.lineno
            continue
        dst = _root(_dst(call)) if _kw(call, "dst") is not None else _assigned(scan, call)
        if dst is None:
            continue
        if name in ("nc_matmul", "matmul"):
            product[dst] = call.lineno
            origin.pop(dst, None)
            continue
        tiles = [
            _root(v)
            for k in call.keywords
            if k.arg in _TILE_KWS
            for v in [k.value]
            if not isinstance(v, ast.Constant)
        ] + [_root(a) for a in call.args if a is not _dst(call) and not isinstance(a, ast.Constant)]
        tiles = [t for t in tiles if t is not None and t != dst]
        if name in ELEMENTWISE and tiles and all(t in origin for t in tiles):
            origin[dst] = min(origin[t] for t in tiles)
        elif dst in origin and not (_kw(call, "dst") is not None and dst in tiles):
            origin.pop(dst, None)
        if name in ELEMENTWISE and len(set(tiles)) == 1 and tiles[0] in product:
            product[dst] = product[tiles[0]]  # a copy or a unary op commutes with the transpose
        elif dst in product and dst not in tiles:
            product.pop(dst, None)
    return out


def _transpose_x(call: ast.Call) -> bool:
    v = _kw(call, "transpose_x")
    if v is None and len(call.args) >= 3:
        v = call.args[2]
    return isinstance(v, ast.Constant) and bool(v.value)


def _assigned(scan: _Scan, call: ast.Call) -> str | None:
    """``x = op(...)``: the name the call's result is bound to."""
    for st in scan.order:
        if isinstance(st, ast.Assign) and st.value is call and len(st.targets) == 1:
            return _root(st.targets[0])
    return None


# --------------------------------------------------------------------------- warp-sized logic


def _halving_var(loop: ast.For | ast.While, consts: dict[str, int]) -> str | None:
    if isinstance(loop, ast.For) and isinstance(loop.target, ast.Name):
        it = loop.iter
        if isinstance(it, ast.Tuple | ast.List):
            vals = [_int(e, consts) for e in it.elts]
            if (
                len(vals) >= 3
                and all(v is not None and v >= 1 for v in vals)
                and all(a == 2 * b for a, b in zip(vals, vals[1:]))  # type: ignore[operator]
            ):
                return loop.target.id
        var = loop.target.id
        for st in ast.walk(loop):  # off = 16 >> s, 16 // 2 ** s, 16 // (1 << s): shrinking offsets
            if isinstance(st, ast.Assign) and isinstance(st.targets[0], ast.Name):
                v = st.value
                if not isinstance(v, ast.BinOp) or var not in _names(v.right):
                    continue
                if isinstance(v.op, ast.RShift) or (
                    isinstance(v.op, ast.FloorDiv)
                    and isinstance(v.right, ast.BinOp)
                    and isinstance(v.right.op, ast.Pow | ast.LShift)
                ):
                    return st.targets[0].id
        return None
    if isinstance(loop, ast.While):
        for st in ast.walk(loop):
            if (
                isinstance(st, ast.AugAssign)
                and isinstance(st.target, ast.Name)
                and (
                    (isinstance(st.op, ast.FloorDiv) and _int(st.value, consts) == 2)
                    or (isinstance(st.op, ast.RShift) and _int(st.value, consts) == 1)
                )
            ):
                return st.target.id
    return None


def _sliced_by(call: ast.Call, var: str) -> bool:
    for node in ast.walk(call):
        if isinstance(node, ast.Subscript) and var in _names(node.slice):
            return True
    return False


def _warp_logic(fn: ast.FunctionDef, scan: _Scan) -> list[Candidate]:
    consts = scan.consts
    out = []
    for loop in ast.walk(fn):
        if not isinstance(loop, ast.For | ast.While):
            continue
        var = _halving_var(loop, consts)
        if var is not None:
            lines = _engine_lines(loop, var)
            if lines:
                out.append(
                    Candidate(
                        "C2N5011",
                        "halving",
                        loop.lineno,
                        lines,
                        f"the loop at line {loop.lineno} halves an offset ('{var}') and combines "
                        "the two halves of a slice each step: CUDA's shuffle/shared-memory tree, "
                        "where one engine reduction along the free axis would do",
                    )
                )
                continue
        if isinstance(loop, ast.For) and isinstance(loop.target, ast.Name):
            it = loop.iter
            step = None
            if isinstance(it, ast.Call) and _call_name(it).endswith("range"):
                if len(it.args) == 3:
                    step = _int(it.args[2], consts)
                elif len(it.args) == 1 and isinstance(it.args[0], ast.BinOp):
                    b = it.args[0]
                    if isinstance(b.op, ast.FloorDiv):
                        step = _int(b.right, consts)
            if step == WARP:
                lines = _engine_lines(loop, loop.target.id)
                if lines and not _only_transposes(loop, lines):  # VectorE transposes are 32 x 32
                    out.append(
                        Candidate(
                            "C2N5011",
                            "lanes",
                            loop.lineno,
                            lines,
                            f"the loop at line {loop.lineno} walks 32 at a time ('{loop.target.id}'), "
                            "the width of a CUDA warp",
                        )
                    )
    for node in ast.walk(fn):  # on-chip tiles 32 partitions tall
        if isinstance(node, ast.Call) and _call_name(node) in ("ndarray", "zeros", "full", "empty"):
            shape = node.args[0] if node.args else _kw(node, "shape")
            buf = ast.unparse(_kw(node, "buffer") or ast.Constant(""))
            if (
                isinstance(shape, ast.Tuple)
                and shape.elts
                and _int(shape.elts[0], consts) == WARP
                and "hbm" not in buf
            ):
                tile = _assigned(scan, node)
                lines = _tile_lines(fn, tile) if tile else ()
                if lines and not _transposed_tile(fn, tile):  # VectorE transposes are 32 x 32
                    out.append(
                        Candidate(
                            "C2N5011",
                            "warp-tiles",
                            node.lineno,
                            lines,
                            f"tile '{tile}' (line {node.lineno}) is 32 partitions tall: one warp "
                            "per tile",
                        )
                    )
    return out


def _engine_lines(loop: ast.AST, var: str) -> tuple[int, ...]:
    lines = []
    for node in ast.walk(loop):
        if isinstance(node, ast.Call) and _call_name(node) in WRITERS | ELEMENTWISE:
            if _sliced_by(node, var):
                lines.append(node.lineno)
    return tuple(sorted(set(lines)))


def _only_transposes(loop: ast.AST, lines: tuple[int, ...]) -> bool:
    """Whether the engine work on ``lines`` of ``loop`` is transposes alone (32-wide pieces of
    a taller tile are the Vector engine's transpose limit, not a warp)."""
    calls = [
        n
        for n in ast.walk(loop)
        if isinstance(n, ast.Call) and getattr(n, "lineno", 0) in lines
        if _call_name(n) in WRITERS | ELEMENTWISE | TRANSPOSES
    ]
    return bool(calls) and all(_call_name(n) in TRANSPOSES for n in calls)


def _transposed_tile(fn: ast.FunctionDef, tile: str | None) -> bool:
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and _call_name(node) in TRANSPOSES:
            if any(_root(a) == tile for a in [*node.args, *(k.value for k in node.keywords)]):
                return True
    return False


def _tile_lines(fn: ast.FunctionDef, tile: str) -> tuple[int, ...]:
    lines = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and _call_name(node) in WRITERS | ELEMENTWISE:
            if any(_root(a) == tile for a in [*node.args, *(k.value for k in node.keywords)]):
                lines.append(node.lineno)
    return tuple(sorted(set(lines)))


# --------------------------------------------------------------------------- entry points


def scan(tree: ast.Module, legacy: bool = False) -> list[Candidate]:
    """Every candidate place in the port's module (all its functions)."""
    out: list[Candidate] = []
    module = _Scan()
    module.visit([st for st in tree.body if isinstance(st, ast.Assign)], (), set())
    for fn in _functions(tree):
        s = _Scan(consts=dict(module.consts))
        s.visit(fn.body, (), set())
        out += _repeated(s)
        out += _round_trips(s, legacy)
        out += _warp_logic(fn, s)
    seen: set[tuple[str, int]] = set()
    unique = []
    for c in out:
        if (c.code, c.line) not in seen:
            seen.add((c.code, c.line))
            unique.append(c)
    return unique


def findings(
    cands: Sequence[Candidate],
    path: str,
    per_line: dict[int, Any] | None = None,
    rows: int = 0,
) -> list[Diagnostic]:
    """Diagnostics for the candidates.  ``per_line``: port line -> executed-instruction stats
    (``count``, ``partitions``, ``free`` summed); ``None`` for a static-only check, which
    reports the source reading alone.  ``rows``: the problem's rows (warp-sized tiles are only a
    finding when there are at least 128 to fill the partitions with)."""
    out = []
    for c in cands:
        loc = SourceLoc(path, c.line, 1)
        if per_line is None:
            out.append(make(c.code, loc, evidence=c.detail + " (read from the source)"))
            continue
        stats = [per_line[ln] for ln in c.lines if ln in per_line]
        count = sum(s.count for s in stats)
        if not count:
            continue  # never executed for the shapes checked
        parts = sum(s.partitions for s in stats) / count
        free = sum(s.free for s in stats) / count
        figure = _figure(c, stats, count, parts, free)
        if c.kind == "repeated":
            figure = _repeats(c, per_line, count, parts, free)
        if figure is None or (c.kind == "warp-tiles" and rows < 128):
            continue
        out.append(make(c.code, loc, evidence=f"{c.detail}; {figure}"))
    return out


def _repeats(
    c: Candidate, per_line: dict[int, Any], count: int, parts: float, free: float
) -> str | None:
    """How many times each distinct input was transposed: the transposes over the distinct inputs
    their producers made (distinct HBM regions for a DMA, executions otherwise).  Under 2 the loop
    did not repeat anything for the shapes checked, and nothing is reported."""
    made = []
    for ln in c.producers:
        ls = per_line.get(ln)
        if ls is not None and ls.count:
            made.append(len(ls.keys) if ls.keys else ls.count)
    if not made:
        return None
    distinct = max(made)
    if count < 2 * distinct:
        return None
    return (
        f"it ran {count} times on [{parts:.0f}, {free:.0f}] tiles for {distinct} distinct "
        f"inputs ({count / distinct:.1f} times each)"
    )


def _figure(c: Candidate, stats: list[Any], count: int, parts: float, free: float) -> str | None:
    if c.kind == "repeated":
        if count < 2:
            return None
        return f"it ran {count} times on [{parts:.0f}, {free:.0f}] tiles"
    if c.kind == "matmul-result":
        return f"it ran {count} times on [{parts:.0f}, {free:.0f}] tiles"
    if c.kind == "round-trip":
        return f"{count} transposes ran at lines {', '.join(map(str, c.lines))}"
    if c.kind == "halving":
        if count < 3:
            return None
        return (
            f"{count} engine instructions ran in it, on [{parts:.0f}, {free:.0f}] slices on average"
        )
    if c.kind == "lanes":
        if count < 3 or free > WARP:
            return None
        return f"{count} engine instructions ran in it, {free:.0f} elements wide on average"
    if c.kind == "warp-tiles":
        if parts > WARP:
            return None
        return f"{count} engine instructions used {parts:.0f} of 128 partitions on average"
    return None
