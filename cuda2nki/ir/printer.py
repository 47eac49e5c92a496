"""Textual form of the tile IR (parsed back by :mod:`cuda2nki.ir.parser`; ``parse(to_text(k)) == k``).

Shape of the text (grammar: ``cuda2nki/grammars/tile_ir.lark``)::

    kernel softmax(x: in float32[R, C], y: out float32[R, C], R: int32, C: int32) @"k.cu":3:1 {
      temp m: float32[R];
      @9:5 softmax: m[i] = reduce(max, j < C: x[i, j]) for i < R;
      @10:5 softmax: e[i, j] = exp(x[i, j] - m[i]) for i < R, j < C;
      ...
    }

* A statement starts with its idiom (``map:``, ``contract:`` ...); ``c[i] add= v`` accumulates.
* Value expressions: C-like infix (``+ - * / % == != < <= > >= && || & | ^ << >>``), other ops as
  calls (``exp(x)``, ``max(a, b)``, ``select(c, a, b)``, ``cast(x, bfloat16)``); a bare name is a
  scalar parameter; ``index(i + 1)`` is an integer index as a value; literals ``1.0`` (float32),
  ``3`` (int32), ``true`` (bool), else ``2.5:float64``.
* Sizes/indices: ``+ - * // %``, ``min(a, b)``, ``max(a, b)``, ``ceildiv(a, b)``, ``$(expr)`` for a
  data-dependent index.
* Reductions: ``reduce(add, k < K: body; acc float32; where guard)``; scans:
  ``scan(add, j: body; exclusive; acc float32)``; a domain axis of kind scan is ``scan j < C``.
* Iterations: ``iterate(r: float32 = init -> update, it: int32 = 0 -> carry(it, int32) + 1;
  cond; trips; result[; enter])`` (see :class:`~cuda2nki.ir.nodes.Iterate`); ``carry(r, float32)``
  is a variable's value at the start of an iteration.
* Scheduled statements: ``for t = range(0, ceildiv(N, 128), 1) affine { ... }``,
  ``alloc ta: float32[128, F] sbuf;`` and NKI-like calls with keyword operands
  ``tensor_tensor(dst=tc[ds(0, 128), ds(0, F)], op=add, a=..., b=...);``; a whole view is
  ``t[...]``; ``ds(start, size, step)``, ``indirect(view)`` and plain indices select dims.
* ``@"file":line:col`` (``-end_line:end_col``) records a node's source location; ``@line:col``
  when the file is the kernel's.  Names that clash with keywords or are not identifiers are
  written in backticks.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from functools import lru_cache

from cuda2nki.diagnostics import UNKNOWN_LOC, SourceLoc
from cuda2nki.ir import nodes as n
from cuda2nki.ir.ops import AxisKind, Op

# value-expression infix operators: op -> (token, precedence)
INFIX: dict[Op, tuple[str, int]] = {
    Op.LOR: ("||", 1),
    Op.LAND: ("&&", 2),
    Op.BITOR: ("|", 3),
    Op.BITXOR: ("^", 4),
    Op.BITAND: ("&", 5),
    Op.EQ: ("==", 6),
    Op.NE: ("!=", 6),
    Op.LT: ("<", 7),
    Op.LE: ("<=", 7),
    Op.GT: (">", 7),
    Op.GE: (">=", 7),
    Op.SHL: ("<<", 8),
    Op.SHR: (">>", 8),
    Op.ADD: ("+", 9),
    Op.SUB: ("-", 9),
    Op.MUL: ("*", 10),
    Op.DIV: ("/", 10),
    Op.MOD: ("%", 10),
}
_ATOM = 100

SIZE_INFIX: dict[type, tuple[str, int]] = {
    n.Add: ("+", 1),
    n.Sub: ("-", 1),
    n.Mul: ("*", 2),
    n.FloorDiv: ("//", 2),
    n.Mod: ("%", 2),
}
SIZE_CALLS: dict[type, str] = {n.Min: "min", n.Max: "max", n.CeilDiv: "ceildiv"}

#: scheduled statement classes by their call name in the text
OPCALLS: dict[str, type] = {
    "load": n.Load,
    "store": n.Store,
    "matmul": n.Matmul,
    "activation": n.Activation,
    "tensor_tensor": n.TensorTensor,
    "tensor_scalar": n.TensorScalar,
    "tensor_reduce": n.TensorReduce,
    "tensor_transpose": n.TensorTranspose,
    "tensor_select": n.TensorSelect,
    "tensor_copy": n.TensorCopy,
    "tensor_bitcast": n.TensorBitcast,
    "tensor_gather": n.TensorGather,
    "tensor_scan": n.TensorScan,
    "bn_stats": n.BnStats,
    "bn_aggr": n.BnAggr,
    "int_arith": n.IntArith,
    "memset": n.Memset,
    "iota": n.Iota,
    "note": n.Note,
}
OPCALL_NAMES = {cls: name for name, cls in OPCALLS.items()}

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
LIT_DEFAULT_DTYPE = {bool: "bool", int: "int32", float: "float32"}


@lru_cache(maxsize=1)
def keywords() -> frozenset[str]:
    """Every word the grammar reserves (names equal to one are written in backticks)."""
    from cuda2nki.ir.parser import grammar_text

    return frozenset(re.findall(r'"([A-Za-z_][A-Za-z0-9_]*)"', grammar_text())) | {
        "true",
        "false",
        "inf",
        "nan",
    }


def name(s: str) -> str:
    if _IDENT.match(s) and s not in keywords():
        return s
    if "`" in s or not s:
        raise ValueError(f"cannot print the name {s!r}")
    return f"`{s}`"


def to_text(obj: object, locs: bool = True) -> str:
    """Text of a :class:`~cuda2nki.ir.nodes.Kernel`, statement, expression or size.

    ``locs=False`` leaves out the source locations (readable, but not a faithful round trip).
    """
    p = _Printer(locs=locs)
    if isinstance(obj, n.Kernel):
        return p.kernel(obj)
    if isinstance(obj, (n.Compute, *OPCALLS.values(), n.Loop, n.Alloc)):
        return "\n".join(p.stmt(obj, 0))
    if isinstance(obj, n.SizeExpr):
        return p.size(obj)
    if isinstance(obj, n.Expr):
        return p.expr(obj)
    if isinstance(obj, n.View):
        return p.view(obj)
    raise TypeError(f"cannot print {type(obj).__name__}")


class _Printer:
    def __init__(self, locs: bool = True) -> None:
        self.locs = locs
        self.file: str | None = None  # the kernel's file: locs in it print as @line:col

    # ------------------------------------------------------------------ locations
    def loc(self, loc: SourceLoc, full: bool = False) -> str:
        if not self.locs or loc == UNKNOWN_LOC:
            return ""
        head = "" if (loc.file == self.file and not full) else json.dumps(loc.file) + ":"
        text = f" @{head}{loc.line}:{loc.col}"
        if loc.end_line is not None or loc.end_col is not None:
            el = "_" if loc.end_line is None else str(loc.end_line)
            ec = "_" if loc.end_col is None else str(loc.end_col)
            text += f"-{el}:{ec}"
        return text

    # ------------------------------------------------------------------ kernel
    def kernel(self, k: n.Kernel) -> str:
        self.file = None if k.loc == UNKNOWN_LOC else k.loc.file
        params = ", ".join(self.param(p) for p in k.params)
        lines = [f"kernel {name(k.name)}({params}){self.loc(k.loc, full=True)} {{"]
        lines += [f"  attr {name(a)} = {json.dumps(v)};" for a, v in k.attrs]
        for t in k.temps:
            role = "" if t.role == n.Role.TEMP else f"{t.role} "
            lines.append(f"  temp {name(t.name)}: {role}{self.ttype(t)}{self.loc(t.loc)};")
        for s in k.body:
            lines += self.stmt(s, 1)
        lines.append("}")
        self.file = None
        return "\n".join(lines) + "\n"

    def ttype(self, t: n.TensorDecl) -> str:
        return f"{name(t.dtype)}[{self.sizes(t.shape)}]"

    def param(self, p: n.TensorDecl | n.ScalarDecl) -> str:
        if isinstance(p, n.ScalarDecl):
            return f"{name(p.name)}: {name(p.dtype)}{self.loc(p.loc)}"
        return f"{name(p.name)}: {name(str(p.role))} {self.ttype(p)}{self.loc(p.loc)}"

    # ------------------------------------------------------------------ statements
    def stmt(self, s: object, depth: int) -> list[str]:
        pad = "  " * depth
        if isinstance(s, n.Compute):
            return [pad + self.compute(s)]
        if isinstance(s, n.Loop):
            when = "" if s.cond is None else f" when {self.expr(s.cond)}"
            head = (
                f"for {name(s.var)} = range({self.size(s.start)}, {self.size(s.stop)}, {s.step})"
                f" {s.kind}{self.loc(s.loc)}{when} {{"
            )
            body = [line for b in s.body for line in self.stmt(b, depth + 1)]
            return [pad + head, *body, pad + "}"]
        if isinstance(s, n.Alloc):
            return [
                f"{pad}alloc {name(s.name)}: {name(s.dtype)}[{self.sizes(s.shape)}] "
                f"{s.buffer}{self.loc(s.loc)};"
            ]
        if type(s) in OPCALL_NAMES:
            return [pad + self.opcall(s)]
        raise TypeError(f"not a statement: {type(s).__name__}")

    def compute(self, c: n.Compute) -> str:
        acc = "" if c.accumulate is None else f" {c.accumulate}"
        lead = self.loc(c.loc).lstrip()
        lead = lead + " " if lead else ""
        text = f"{lead}{c.idiom}: {self.access(c.target)}{acc} = {self.expr(c.expr)}"
        if c.domain.axes:
            text += " for " + ", ".join(self.axis(a, AxisKind.PARALLEL) for a in c.domain.axes)
        if c.domain.guard is not None:
            text += " where " + self.expr(c.domain.guard)
        if c.attrs:
            text += " {" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in c.attrs) + "}"
        return text + ";"

    def access(self, a: n.Access) -> str:
        return f"{name(a.tensor)}[{self.sizes(a.index)}]{self.loc(a.loc)}"

    def axis(self, a: n.Axis, default: AxisKind) -> str:
        kind = "" if a.kind == default else f"{a.kind} "
        return f"{kind}{name(a.name)} < {self.size(a.extent)}{self.loc(a.loc)}"

    def opcall(self, s: object) -> str:
        args = []
        for f in dataclasses.fields(s):  # type: ignore[arg-type]
            v = getattr(s, f.name)
            if f.name == "loc" or v is None:
                continue
            args.append(f"{f.name}={self.kval(v)}")
        return f"{OPCALL_NAMES[type(s)]}({', '.join(args)}){self.loc(s.loc)};"  # type: ignore[attr-defined]

    def kval(self, v: object) -> str:
        if isinstance(v, n.View):
            return self.view(v)
        if isinstance(v, (n.Lit, n.Param)):
            return self.expr(v)
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int):
            return str(v)
        if isinstance(v, Op):
            return str(v)
        if isinstance(v, tuple):
            inner = ", ".join(self.kval(x) for x in v)
            return f"({inner},)" if len(v) == 1 else f"({inner})"
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, n.SizeExpr):  # a symbolic extent (an iota pattern over a row of V)
            return f"<{self.size(v)}>"
        raise TypeError(f"cannot print operand {v!r}")

    def view(self, v: n.View) -> str:
        if not v.dims:
            return f"{name(v.tensor)}[...]"
        return f"{name(v.tensor)}[{', '.join(self.dimsel(d) for d in v.dims)}]"

    def dimsel(self, d: object) -> str:
        if isinstance(d, n.Slice):
            step = "" if d.step == 1 else f", {d.step}"
            return f"ds({self.size(d.start)}, {self.size(d.size)}{step})"
        if isinstance(d, n.At):
            return self.size(d.index)
        if isinstance(d, n.Indirect):
            word = "indirect_flat" if d.flat else "indirect"
            return f"{word}({self.view(d.index)})"
        if isinstance(d, n.Rows):
            parts = (d.start, d.count, d.stride, d.width)
            return f"overlap_rows({', '.join(self.size(x) for x in parts)})"
        raise TypeError(f"not a dim selector: {d!r}")

    # ------------------------------------------------------------------ sizes
    def sizes(self, xs: tuple[n.SizeExpr, ...]) -> str:
        return ", ".join(self.size(x) for x in xs)

    def size(self, e: n.SizeExpr, ctx: int = 0, right: bool = False) -> str:
        if isinstance(e, n.Sym):
            return name(e.name)
        if isinstance(e, n.Const):
            return str(e.value)
        if isinstance(e, n.Dyn):
            return f"$({self.expr(e.expr)})"
        if type(e) in SIZE_CALLS:
            return f"{SIZE_CALLS[type(e)]}({self.size(e.a)}, {self.size(e.b)})"  # type: ignore[attr-defined]
        tok, prec = SIZE_INFIX[type(e)]
        text = f"{self.size(e.a, prec)} {tok} {self.size(e.b, prec, True)}"  # type: ignore[attr-defined]
        return f"({text})" if prec < ctx or (right and prec == ctx) else text

    # ------------------------------------------------------------------ values
    def expr(self, e: n.Expr, ctx: int = 0, right: bool = False) -> str:
        text, prec = self._expr(e)
        if self.locs and getattr(e, "loc", UNKNOWN_LOC) != UNKNOWN_LOC:
            if prec != _ATOM:
                text = f"({text})"
            return text + self.loc(e.loc).lstrip()  # type: ignore[attr-defined]
        if prec < ctx or (right and prec == ctx):
            return f"({text})"
        return text

    def _expr(self, e: n.Expr) -> tuple[str, int]:
        if isinstance(e, n.Read):
            return f"{name(e.tensor)}[{self.sizes(e.index)}]", _ATOM
        if isinstance(e, n.Lit):
            return self.lit(e), _ATOM
        if isinstance(e, n.Param):
            return name(e.name), _ATOM
        if isinstance(e, n.IndexValue):
            dt = "" if e.dtype == "int32" else f", {name(e.dtype)}"
            return f"index({self.size(e.expr)}{dt})", _ATOM
        if isinstance(e, n.Unary):
            return f"{e.op}({self.expr(e.x)})", _ATOM
        if isinstance(e, n.Binary):
            if e.op in INFIX:
                tok, prec = INFIX[e.op]
                return f"{self.expr(e.a, prec)} {tok} {self.expr(e.b, prec, True)}", prec
            return f"{e.op}({self.expr(e.a)}, {self.expr(e.b)})", _ATOM
        if isinstance(e, n.Select):
            return f"select({self.expr(e.cond)}, {self.expr(e.a)}, {self.expr(e.b)})", _ATOM
        if isinstance(e, n.Cast):
            return f"cast({self.expr(e.x)}, {name(e.dtype)})", _ATOM
        if isinstance(e, n.Bitcast):
            return f"bitcast({self.expr(e.x)}, {name(e.dtype)})", _ATOM
        if isinstance(e, n.Reduce):
            axes = ", ".join(self.axis(a, AxisKind.REDUCTION) for a in e.axes)
            opts = "" if e.acc_dtype is None else f"; acc {name(e.acc_dtype)}"
            if e.where is not None:
                opts += f"; where {self.expr(e.where)}"
            return f"reduce({e.op}, {axes}: {self.expr(e.body)}{opts})", _ATOM
        if isinstance(e, n.Carry):
            return f"carry({name(e.name)}, {name(e.dtype)})", _ATOM
        if isinstance(e, n.Iterate):
            carried = ", ".join(
                f"{name(v)}: {name(t)} = {self.expr(i)} -> {self.expr(u)}"
                for v, t, i, u in zip(e.names, e.dtypes, e.init, e.update)
            )
            enter = "" if e.enter is None else f"; {self.expr(e.enter)}"
            tail = f"{self.expr(e.cond)}; {self.size(e.trips)}; {name(e.result)}{enter}"
            return f"iterate({carried}; {tail})", _ATOM
        if isinstance(e, n.Scan):
            opts = "; exclusive" if e.exclusive else ""
            if e.acc_dtype is not None:
                opts += f"; acc {name(e.acc_dtype)}"
            return f"scan({e.op}, {name(e.axis)}: {self.expr(e.body)}{opts})", _ATOM
        raise TypeError(f"not a value expression: {type(e).__name__}")

    def lit(self, e: n.Lit) -> str:
        v = e.value
        if isinstance(v, bool):
            text = "true" if v else "false"
        elif isinstance(v, float):
            text = "nan" if math.isnan(v) else ("inf" if v == math.inf else repr(v))
            text = "-inf" if v == -math.inf else text
        else:
            text = str(v)
        default = LIT_DEFAULT_DTYPE[type(v)]
        return text if e.dtype == default else f"{text}:{name(e.dtype)}"
