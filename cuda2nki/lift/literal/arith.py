"""The literal lowering, arithmetic on values: per-thread tiles, C integers, index values and
uniforms."""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.classify import is_float, is_intlike
from cuda2nki.lift.literal.content import divides
from cuda2nki.lift.literal.helpers import (
    _exact,
    _is_scalar,
    _is_u32,
    _kind,
    _operands,
    _unsigned,
)
from cuda2nki.lift.literal.spelling import (
    _BIN,
    _CMP,
    _EXACT_INT,
)
from cuda2nki.lift.literal.values import (
    Idx,
    Lin,
    Tile,
    Uni,
    Value,
    add,
    as_lin,
    is_int,
    lin_add,
    lin_scale,
    lin_sub,
    mul,
    paren,
    sub,
)
from cuda2nki.lift.literal.wide import is_wide


class ArithMixin:
    """Arithmetic on values: per-thread tiles, C integers, index values and uniforms.

    A part of :class:`~.lower.Lowerer`, whose fields it uses."""

    def arith(self, op: str, a: Value, b: Value, ty: object, node: A.Node) -> Value:  # noqa: PLR0911
        if is_wide(a) or is_wide(b) or self.wide_promoted(op, a, b, node):  # limb pairs
            if _kind(a) != "float" and _kind(b) != "float":
                return self.wide_arith(op, a, b, node)
            a, b = self.wide_to_float(a, node), self.wide_to_float(b, node)
        fl = is_float(ty) or _kind(a) == "float" or _kind(b) == "float"
        if op in _CMP:
            fl = _kind(a) == "float" or _kind(b) == "float"
        if isinstance(a, Uni) and isinstance(b, Uni):
            return self.uni_arith(op, a, b, fl, ty, node)
        if op in _CMP and not fl and all(isinstance(x, Uni | Lin | Idx) for x in (a, b)):
            return self.index_compare(op, a, b)
        if not fl and isinstance(a, Uni | Lin) and isinstance(b, Uni | Lin):
            la, lb = as_lin(a), as_lin(b)
            if op == "+":
                return lin_add(la, lb)
            if op == "-":
                return lin_sub(la, lb)
            if op == "*" and isinstance(b, Uni):
                return lin_scale(la, b.expr)
            if op == "*" and isinstance(a, Uni):
                return lin_scale(lb, a.expr)
            exact = self.lin_divmod(op, a, b) if isinstance(a, Lin) and isinstance(b, Uni) else None
            if exact is not None:
                return exact
            if op == "<<" and isinstance(b, Uni) and is_int(b.expr):
                return lin_scale(la, str(1 << int(b.expr)))
        if not fl and isinstance(a, Uni | Lin | Idx) and isinstance(b, Uni | Lin | Idx):
            return self.idx_arith(op, a, b, node)
        if not fl and op in _EXACT_INT:
            return self.int_arith(op, a, b, node)
        if op == "%":
            raise self.refuse("floating-point remainder of a per-thread value", node)
        name = _BIN.get(op)
        if name is None:
            raise self.refuse(f"operator '{op}' on per-thread values", node)
        want = "float" if fl else "int"
        if fl:
            a, b = self.unsigned_to_float(a), self.unsigned_to_float(b)
        ta, tb = self.tile(a, want, node), self.tile(b, want, node)
        if not fl:  # bit operations: uniform operands as 32-bit patterns
            ta, tb = (f"_c2n_u32({t})" if isinstance(x, Uni) else t for t, x in ((ta, a), (tb, b)))
        if _is_scalar(a) and _is_scalar(b):
            ta = self.full_tile(a, want, node)
        return self.op(name, [ta, tb], "bool" if op in _CMP else want)

    def int_arith(self, op: str, a: Value, b: Value, node: A.Node) -> Tile:
        """C's 32-bit integer ``+ - * / % >>`` and comparisons on per-thread values, bit-exact
        (the engines' arithmetic is fp32, so the helpers split values into 16-bit halves and
        bytes)."""
        unsigned = _unsigned(node)
        if op == ">>":  # the shift's type is its left operand's
            left = _operands(node)[0]
            unsigned = _is_u32(left.ty if left is not None else getattr(node, "ty", None))
        x, y = self.int_operand(a, node), self.int_operand(b, node)
        if op in _CMP:
            expr = f"_c2n_cmp32({x}, {y}, '{_BIN[op]}', {unsigned})"
        elif op in ("/", "%"):
            f = "_c2n_udivmod" if unsigned else "_c2n_sdivmod"
            expr = f"{f}({x}, {y})[{0 if op == '/' else 1}]"
        elif op == ">>":
            expr = f"_c2n_shr({x}, {y}, {unsigned})"
        else:
            expr = {"+": "_c2n_add32", "-": "_c2n_sub32", "*": "_c2n_mul32"}[op] + f"({x}, {y})"
        dst = self.fresh("n")
        self.emit("let", dst=dst, value=expr)
        return Tile(dst, "bool" if op in _CMP else "int")

    def int_operand(self, v: Value, node: A.Node) -> str:
        """An operand of the exact integer helpers: a uniform Python int or an int32 tile."""
        if _is_scalar(v):
            return f"int({self.tile(v, 'int', node)})"
        return self.tile(v, "int", node)

    def unsigned_to_float(self, v: Value) -> Value:
        """An unsigned 32-bit per-thread value entering floating-point arithmetic or converted
        to a float type, as fp32 (its int32 tile holds the bit pattern)."""
        if not (isinstance(v, Tile) and v.ty == "int" and v.unsigned):
            return v
        dst = self.fresh("f")
        self.emit("let", dst=dst, value=f"_c2n_u2f({v.expr})")
        return Tile(dst, "float")

    def index_compare(self, op: str, a: Value, b: Value) -> Idx:
        expr = f"({self.np_spell(a)} {op} {self.np_spell(b)})"
        if isinstance(a, Uni | Lin) and isinstance(b, Uni | Lin):
            d = lin_sub(as_lin(a), as_lin(b))
            return Idx(expr, "bool", ((_BIN[op], d),))
        return Idx(expr, "bool")

    def index_np(self, e: A.Expr) -> str | None:
        """The value of ``e`` as a trace-time NumPy expression when it depends on indices only
        (no loads, no floating point), else None.  Pure: emits nothing."""
        if isinstance(e, A.IntLit):
            return str(e.value)
        if isinstance(e, A.BoolLit):
            return "1" if e.value else "0"
        if isinstance(e, A.Name):
            b = self.lookup(e.name)
            if b is None or b.klass in ("P", "A", "S", "T") or isinstance(b.value, Tile):
                return None
            v = b.value
            return (
                self.np_spell(v) if isinstance(v, Uni | Lin | Idx) and _kind(v) == "int" else None
            )
        if isinstance(e, A.Builtin):
            v = self.builtin(e)
            return self.np_spell(v) if isinstance(v, Uni | Lin) else None
        if isinstance(e, A.Binary):
            x, y = self.index_np(e.left), self.index_np(e.right)
            if x is None or y is None or is_float(e.left.ty) or is_float(e.right.ty):
                return None
            if e.op == "/":
                return f"_c2n_tdiv({x}, {y})"
            if e.op == "%":
                return f"_c2n_tmod({x}, {y})"
            opx = {"&&": "&", "||": "|"}.get(e.op, e.op)
            if e.op in ("&&", "||"):
                return f"(({x} != 0) {opx} ({y} != 0))"
            return f"({x} {opx} {y})"
        if isinstance(e, A.Unary) and e.op in ("-", "!", "~", "+"):
            x = self.index_np(e.operand)
            if x is None:
                return None
            return {"-": f"(-{x})", "!": f"({x} == 0)", "~": f"(~{x})", "+": x}[e.op]
        if isinstance(e, A.Cast) and is_intlike(e.to):
            return self.index_np(e.operand)
        if isinstance(e, A.Ternary):
            c, x, y = (self.index_np(v) for v in (e.cond, e.then, e.else_))
            return None if None in (c, x, y) else f"np.where({c}, {x}, {y})"
        if isinstance(e, A.Call) and e.func in ("min", "max") and len(e.args) == 2:
            x, y = (self.index_np(a) for a in e.args)
            fn = "np.minimum" if e.func == "min" else "np.maximum"
            return None if x is None or y is None else f"{fn}({x}, {y})"
        return None

    @staticmethod
    def np_spell(v: Value) -> str:
        """An integer value as a trace-time NumPy expression."""
        if isinstance(v, Uni):
            return paren(v.expr)
        if isinstance(v, Lin):
            return f"_c2n_grid({v.b}, {v.p}, {v.f})"
        assert isinstance(v, Idx)
        return paren(v.expr)

    def idx_arith(self, op: str, a: Value, b: Value, node: A.Node) -> Value:
        """Index arithmetic that is not affine, evaluated at trace time with C semantics."""
        x, y = self.np_spell(a), self.np_spell(b)
        if _unsigned(node):  # C's unsigned operands: their values modulo 2**32
            x, y = (f"_c2n_wrap({v}, 32, False)" for v in (x, y))
        if op in _CMP:
            return Idx(f"({x} {op} {y})", "bool")
        if op == "/":
            return Idx(f"_c2n_tdiv({x}, {y})")
        if op == "%":
            return Idx(f"_c2n_tmod({x}, {y})")
        if op in ("+", "-", "*", "<<") and _unsigned(node):  # modulo 2**32, as C's unsigned
            return Idx(f"_c2n_wrap({x} {op} {y}, 32, False)")
        if op in ("+", "-", "*", "<<", ">>", "&", "|", "^"):
            return Idx(f"({x} {op} {y})")
        if op in ("&&", "||"):
            return Idx(f"(({x} != 0) {'&' if op == '&&' else '|'} ({y} != 0))", "bool")
        raise self.refuse(f"operator '{op}' on per-thread indices", node)

    def lin_divmod(self, op: str, a: Lin, b: Uni) -> Lin | None:
        """``a / d``, ``a % d``, ``a >> k``, ``a & (2**k - 1)`` kept affine where exact: ``d``
        divides the uniform part and the partition coefficient, and the free part stays below
        ``d`` (so the quotient drops it and the remainder is it).  C's ``/`` and ``%`` truncate,
        so those also get a trace-time check that the value is not negative."""
        if not is_int(b.expr) or not is_int(a.f):
            return None
        k = int(b.expr)
        if op == ">>":
            d, want = 1 << k, "q"
        elif op == "&" and k >= 0 and (k + 1) & k == 0:
            d, want = k + 1, "r"
        elif op in ("/", "%") and k > 0:
            d, want = k, "q" if op == "/" else "r"
        else:
            return None
        cf = int(a.f)
        if not (0 <= cf * (self.free - 1) < d) or cf < 0:
            return None
        if not (divides(d, a.b, self.known) and divides(d, a.p, self.known)):
            return None
        if op in ("/", "%"):
            self.emit("call", expr=f"_c2n_nonneg({a.b}, {a.p})")
        if want == "r":
            return Lin("0", "0", a.f)
        q = Lin(_exact(a.b, d), _exact(a.p, d), "0")
        return q

    def uni_arith(self, op: str, a: Uni, b: Uni, fl: bool, ty: object, node: A.Node) -> Uni:
        x, y = paren(a.expr), paren(b.expr)
        if op in _CMP:
            return Uni(f"int({x} {op} {y})", "int")
        if fl:
            x = x if a.ty == "float" else f"np.float32({a.expr})"
            y = y if b.ty == "float" else f"np.float32({b.expr})"
            if op in ("+", "-", "*", "/"):
                return Uni(f"np.float32({x} {op} {y})", "float")
            raise self.refuse(f"operator '{op}' on floating-point values", node)
        if op == "/":
            return Uni(f"_c2n_idiv({a.expr}, {b.expr})", "int")
        if op == "%":
            return Uni(f"_c2n_imod({a.expr}, {b.expr})", "int")
        if op in ("+", "-", "*", "<<", ">>", "&", "|", "^"):
            if op == "+":
                return Uni(add(a.expr, b.expr), "int")
            if op == "-":
                return Uni(sub(a.expr, b.expr), "int")
            if op == "*":
                return Uni(mul(a.expr, b.expr), "int")
            # binds looser than + and *: parenthesised, as an operand of a sum it stays whole
            return Uni(f"({x} {op} {y})", "int")
        raise self.refuse(f"operator '{op}'", node)
