"""Parser of the textual tile IR (grammar ``cuda2nki/grammars/tile_ir.lark``).

``parse(text)`` returns the one :class:`~cuda2nki.ir.nodes.Kernel` in ``text``; ``parse_all``
returns every kernel.  Malformed text raises :class:`~cuda2nki.diagnostics.DiagnosticError`
(``C2N2400``) located in the IR text, never a lark exception.
"""

from __future__ import annotations

import dataclasses
import json
from functools import lru_cache
from importlib import resources
from typing import Any

import lark
from lark import Token, Transformer, v_args

from cuda2nki.diagnostics import UNKNOWN_LOC, SourceLoc, error
from cuda2nki.ir import nodes as n
from cuda2nki.ir.ops import AxisKind, Op, Role
from cuda2nki.ir.printer import LIT_DEFAULT_DTYPE, OPCALLS

#: operand fields of scheduled statements where a bare name is a scalar parameter
_OPERAND_FIELDS = {
    "bias", "scale", "operand0", "operand1", "initial", "on_true", "on_false", "a", "b",
}  # fmt: skip


@lru_cache(maxsize=1)
def grammar_text() -> str:
    return resources.files("cuda2nki.grammars").joinpath("tile_ir.lark").read_text("utf-8")


@lru_cache(maxsize=1)
def _parser() -> lark.Lark:
    return lark.Lark(
        grammar_text(), parser="lalr", maybe_placeholders=True, propagate_positions=False
    )


def grammar() -> lark.Lark:
    """The LALR parser built from the packaged grammar (cached)."""
    return _parser()


def parse(text: str, filename: str = "<ir>") -> n.Kernel:
    kernels = parse_all(text, filename)
    if len(kernels) != 1:
        raise error(
            "C2N2400",
            SourceLoc(filename, 1, 1),
            reason=f"expected one kernel, found {len(kernels)}",
        )
    return kernels[0]


def parse_all(text: str, filename: str = "<ir>") -> tuple[n.Kernel, ...]:
    try:
        tree = _parser().parse(text)
    except lark.exceptions.UnexpectedInput as exc:
        line, col = getattr(exc, "line", 1) or 1, getattr(exc, "column", 1) or 1
        reason = _describe(exc)
        raise error("C2N2400", SourceLoc(filename, line, col), reason=reason) from None
    out = []
    for ktree in tree.children:
        try:
            out.append(_Builder(_kernel_file(ktree) or filename).transform(ktree))
        except lark.exceptions.VisitError as exc:
            reason = str(exc.orig_exc)
            raise error("C2N2400", SourceLoc(filename, _line_of(exc), 1), reason=reason) from None
    return tuple(out)


def _describe(exc: lark.exceptions.UnexpectedInput) -> str:
    if isinstance(exc, lark.exceptions.UnexpectedToken):
        exp = ", ".join(sorted(exc.expected)[:8])
        return f"unexpected {exc.token!r}; expected one of: {exp}"
    if isinstance(exc, lark.exceptions.UnexpectedCharacters):
        return f"unexpected character {exc.char!r}"
    return "unexpected end of input"


def _line_of(exc: lark.exceptions.VisitError) -> int:
    meta = getattr(exc.obj, "meta", None)
    return getattr(meta, "line", 1) if meta is not None and not meta.empty else 1


def _kernel_file(ktree: lark.Tree) -> str | None:
    for child in ktree.children:
        if isinstance(child, Token) and child.type == "LOC":
            return parse_loc(str(child), None).file
        if isinstance(child, lark.Tree) and child.data not in (
            "name",
            "tensor_param",
            "scalar_param",
        ):
            break
    return None


def parse_loc(text: str, default_file: str | None) -> SourceLoc:
    """``@"file":L:C-EL:EC`` or ``@L:C`` (file = ``default_file``: the kernel's, else the text's)."""
    body = text[1:]
    if body.startswith('"'):
        end = _string_end(body)
        file = json.loads(body[: end + 1])
        body = body[end + 2 :]
    elif default_file is None:
        raise ValueError(f"location {text} needs a file name (the kernel has no location)")
    else:
        file = default_file
    head, _, tail = body.partition("-")
    line, col = (int(x) for x in head.split(":"))
    end_line = end_col = None
    if tail:
        el, ec = tail.split(":")
        end_line = None if el == "_" else int(el)
        end_col = None if ec == "_" else int(ec)
    return SourceLoc(file, line, col, end_line, end_col)


def _string_end(s: str) -> int:
    i = 1
    while s[i] != '"':
        i += 2 if s[i] == "\\" else 1
    return i


class _Name(str):
    """A bare name in an operand position (resolved by the field it fills)."""


_BINOPS = {
    "b_lor": Op.LOR,
    "b_land": Op.LAND,
    "b_bitor": Op.BITOR,
    "b_bitxor": Op.BITXOR,
    "b_bitand": Op.BITAND,
    "b_eq": Op.EQ,
    "b_ne": Op.NE,
    "b_lt": Op.LT,
    "b_le": Op.LE,
    "b_gt": Op.GT,
    "b_ge": Op.GE,
    "b_shl": Op.SHL,
    "b_shr": Op.SHR,
    "b_add": Op.ADD,
    "b_sub": Op.SUB,
    "b_mul": Op.MUL,
    "b_div": Op.DIV,
    "b_mod": Op.MOD,
}
_SIZE_CALLS = {"min": n.Min, "max": n.Max, "ceildiv": n.CeilDiv}


@v_args(inline=True)
class _Builder(Transformer):
    def __init__(self, default_file: str | None) -> None:
        super().__init__()
        self.file = default_file

    def __default__(self, data: str, children: list, meta: Any) -> Any:
        if data in _BINOPS:
            return n.Binary(_BINOPS[data], children[0], children[1])
        return super().__default__(data, children, meta)

    # ------------------------------------------------------------------ tokens
    def name(self, tok: Token) -> str:
        s = str(tok)
        return s[1:-1] if s.startswith("`") else s

    def _loc(self, tok: Token | None) -> SourceLoc:
        return UNKNOWN_LOC if tok is None else parse_loc(str(tok), self.file)

    # ------------------------------------------------------------------ kernel
    def kernel(self, name: str, *rest: Any) -> n.Kernel:
        params, loc, items = [], UNKNOWN_LOC, []
        for r in rest:
            if r is None:
                continue
            if isinstance(r, (n.TensorDecl, n.ScalarDecl)) and not items and loc == UNKNOWN_LOC:
                params.append(r)
            elif isinstance(r, Token):
                loc = parse_loc(str(r), None)
            else:
                items.append(r)
        attrs = tuple(x[1] for x in items if isinstance(x, tuple) and x[0] == "attr")
        temps = tuple(x[1] for x in items if isinstance(x, tuple) and x[0] == "temp")
        body = tuple(x for x in items if not isinstance(x, tuple))
        return n.Kernel(name, tuple(params), body, temps, attrs, loc)

    def kattr(self, key: str, value: Token) -> tuple:
        return ("attr", (key, json.loads(str(value))))

    def temp(self, name: str, role: str | None, dtype: str, *rest: Any) -> tuple:
        *shape, loc = rest
        shape = [s for s in shape if s is not None]
        decl = n.TensorDecl(name, tuple(shape), dtype, Role(role or "temp"), self._loc(loc))
        return ("temp", decl)

    def tensor_param(self, name: str, role: str, dtype: str, *rest: Any) -> n.TensorDecl:
        *shape, loc = rest
        shape = [s for s in shape if s is not None]
        return n.TensorDecl(name, tuple(shape), dtype, Role(role), self._loc(loc))

    def scalar_param(self, name: str, dtype: str, loc: Token | None) -> n.ScalarDecl:
        return n.ScalarDecl(name, dtype, self._loc(loc))

    # ------------------------------------------------------------------ intent
    def compute(self, loc, idiom, target, acc, expr, axes, guard, attrs) -> n.Compute:
        domain = n.Domain(tuple(axes or ()), guard)
        return n.Compute(target, domain, expr, acc, idiom, tuple(attrs or ()), self._loc(loc))

    def access(self, name: str, *rest: Any) -> n.Access:
        *index, loc = rest
        return n.Access(name, tuple(i for i in index if i is not None), self._loc(loc))

    def for_clause(self, *axes: n.Axis) -> tuple:
        return tuple(a.replace(kind=a.kind or AxisKind.PARALLEL) for a in axes)

    def where_clause(self, e: n.Expr) -> n.Expr:
        return e

    def attrs(self, *items: Token | None) -> tuple:
        vals = [json.loads(str(t)) for t in items if t is not None]
        return tuple(zip(vals[0::2], vals[1::2]))

    def axis(self, kind: Any, name: str, extent: n.SizeExpr, loc: Token | None) -> n.Axis:
        ax = n.Axis(name, extent, AxisKind.PARALLEL, self._loc(loc))
        object.__setattr__(ax, "kind", None if kind is None else AxisKind(kind))
        return ax  # kind None: filled in by the context (for_clause / reduce)

    def axis_kind(self, tok: Token) -> str:
        return str(tok)

    # ------------------------------------------------------------------ scheduled
    def loop(self, var, start, stop, step, kind, loc, cond, *body) -> n.Loop:
        return n.Loop(var, start, stop, int(step), kind, tuple(body), self._loc(loc), cond)

    def when(self, cond: n.Expr) -> n.Expr:
        return cond

    def alloc(self, name: str, dtype: str, *rest: Any) -> n.Alloc:
        *shape, buffer, loc = rest
        shape = [s for s in shape if s is not None]
        return n.Alloc(name, tuple(shape), dtype, buffer, self._loc(loc))

    def opcall(self, opname: str, *rest: Any) -> Any:
        *kwargs, loc = rest
        cls = OPCALLS.get(opname)
        if cls is None:
            raise ValueError(f"unknown statement '{opname}'")
        args = dict(kw for kw in kwargs if kw is not None)
        fields = {f.name: f for f in dataclasses.fields(cls)}
        for key in args:
            if key not in fields or key == "loc":
                raise ValueError(f"'{opname}' has no operand '{key}'")
        built = {k: self._field(k, v) for k, v in args.items()}
        return cls(**built, loc=self._loc(loc))

    def _field(self, key: str, v: Any) -> Any:
        if isinstance(v, _Name):
            return n.Param(str(v), v.loc) if key in _OPERAND_FIELDS else str(v)  # type: ignore[attr-defined]
        if isinstance(v, n.Lit) and key not in _OPERAND_FIELDS and key != "value":
            if v.loc != UNKNOWN_LOC:
                raise ValueError(f"operand '{key}' cannot carry a location")
            return v.value
        if isinstance(v, tuple):
            return tuple(self._field("", x) for x in v)
        return v

    def kwarg(self, key: str, value: Any) -> tuple:
        return (key, value)

    def kname(self, name: str, loc: Token | None) -> _Name:
        out = _Name(name)
        out.loc = self._loc(loc)  # type: ignore[attr-defined]
        return out

    def kstring(self, tok: Token) -> str:
        return json.loads(str(tok))

    def ksize(self, s: n.SizeExpr) -> n.SizeExpr:
        return s

    def ktuple(self, *items: Any) -> tuple:
        return tuple(items)

    def view(self, name: str, *dims: Any) -> n.View:
        return n.View(name, tuple(dims))

    def whole_view(self, name: str) -> n.View:
        return n.View(name, ())

    def ds(self, start, size_, step) -> n.Slice:
        return n.Slice(start, size_, 1 if step is None else int(step))

    def indirect(self, view: n.View) -> n.Indirect:
        return n.Indirect(view)

    def indirect_flat(self, view: n.View) -> n.Indirect:
        return n.Indirect(view, flat=True)

    def overlap_rows(self, start, count, stride, width) -> n.Rows:
        return n.Rows(start, count, stride, width)

    def at(self, index: n.SizeExpr) -> n.At:
        return n.At(index)

    # ------------------------------------------------------------------ sizes
    def s_add(self, a, b):
        return n.Add(a, b)

    def s_sub(self, a, b):
        return n.Sub(a, b)

    def s_mul(self, a, b):
        return n.Mul(a, b)

    def s_floordiv(self, a, b):
        return n.FloorDiv(a, b)

    def s_mod(self, a, b):
        return n.Mod(a, b)

    def s_const(self, tok: Token) -> n.Const:
        return n.Const(int(tok))

    def s_sym(self, name: str) -> n.Sym:
        return n.Sym(name)

    def s_call(self, fn: str, a, b) -> n.SizeExpr:
        if fn not in _SIZE_CALLS:
            raise ValueError(f"unknown size function '{fn}' (min, max, ceildiv)")
        return _SIZE_CALLS[fn](a, b)

    def s_dyn(self, e: n.Expr) -> n.Dyn:
        return n.Dyn(e)

    # ------------------------------------------------------------------ values
    def located(self, e: Any, loc: Token | None = None) -> Any:
        if loc is None:
            return e
        return e.replace(loc=self._loc(loc))

    def read(self, name: str, *index: Any) -> n.Read:
        return n.Read(name, tuple(i for i in index if i is not None))

    def param_ref(self, name: str) -> n.Param:
        return n.Param(name)

    def lit(self, tok: Token, dtype: str | None) -> n.Lit:
        text = str(tok)
        if tok.type == "BOOL":
            value: Any = text == "true"
        elif tok.type == "SIGNED_INT":
            value = int(text)
        else:
            value = float(text)
        return n.Lit(value, dtype or LIT_DEFAULT_DTYPE[type(value)])

    def call(self, fn: str, *args: Any) -> n.Expr:
        args = tuple(a for a in args if a is not None)
        if fn == "select" and len(args) == 3:
            return n.Select(*args)
        if fn == "cast" and len(args) == 2 and isinstance(args[1], n.Param):
            return n.Cast(args[1].name, args[0])
        if fn == "bitcast" and len(args) == 2 and isinstance(args[1], n.Param):
            return n.Bitcast(args[1].name, args[0])
        if fn == "carry" and len(args) == 2 and all(isinstance(a, n.Param) for a in args):
            return n.Carry(args[0].name, args[1].name)
        try:
            op = Op(fn)
        except ValueError:
            raise ValueError(f"unknown function '{fn}'") from None
        if op.arity != len(args):
            raise ValueError(f"'{fn}' takes {op.arity} operand(s), got {len(args)}")
        return n.Unary(op, args[0]) if op.arity == 1 else n.Binary(op, args[0], args[1])

    def index_value(self, e: n.SizeExpr, dtype: str | None) -> n.IndexValue:
        return n.IndexValue(e, dtype or "int32")

    def reduce(self, op: str, *rest: Any) -> n.Reduce:
        axes = tuple(
            a.replace(kind=a.kind or AxisKind.REDUCTION) for a in rest if isinstance(a, n.Axis)
        )
        others = [r for r in rest if not isinstance(r, n.Axis)]
        body, opts = others[0], dict(others[1:])
        return n.Reduce(op, axes, body, opts.get("acc"), opts.get("where"))

    def scan(self, op: str, axis: str, body: n.Expr, *opts: Any) -> n.Scan:
        o = dict(opts)
        return n.Scan(op, axis, body, bool(o.get("exclusive")), o.get("acc"))

    def carried(self, var: str, dtype: str, init: n.Expr, update: n.Expr) -> tuple:
        return (var, dtype, init, update)

    def iterate(self, *rest: Any) -> n.Iterate:
        *carried, cond, trips, result, enter = rest
        names, dtypes, init, update = zip(*carried)
        return n.Iterate(names, dtypes, init, update, cond, trips, result, enter)

    def opt_acc(self, dtype: str) -> tuple:
        return ("acc", dtype)

    def opt_where(self, e: n.Expr) -> tuple:
        return ("where", e)

    def opt_exclusive(self) -> tuple:
        return ("exclusive", True)
