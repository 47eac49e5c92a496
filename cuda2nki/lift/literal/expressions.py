"""The literal lowering, expressions: dispatch, unary and binary operators, pointer arithmetic,
conversions."""

from __future__ import annotations

import dataclasses

from cuda2nki.frontend import ast as A
from cuda2nki.ir.ops import DTYPE_BYTES
from cuda2nki.lift.collective import collective_reason
from cuda2nki.lift.literal import bitviews, deferred, intcalls
from cuda2nki.lift.literal.classify import is_float
from cuda2nki.lift.literal.deferred import Unset
from cuda2nki.lift.literal.globalnames import unbound_name_reason
from cuda2nki.lift.literal.helpers import (
    _int_literal,
    _is_u32,
    _kind,
    _sizeof,
)
from cuda2nki.lift.literal.reinterpret import resized, word_view
from cuda2nki.lift.literal.spelling import _FLOAT_DT
from cuda2nki.lift.literal.state import Scope
from cuda2nki.lift.literal.values import (
    DynPtr,
    Idx,
    Lin,
    Local,
    Ptr,
    Tile,
    Uni,
    Value,
    as_lin,
    is_int,
    lin_add,
    lin_scale,
    lin_sub,
    paren,
)
from cuda2nki.lift.literal.wide import is_wide, is_wide_type


class ExpressionMixin:
    """Expressions: dispatch, unary and binary operators, pointer arithmetic, conversions.

    A part of :class:`~.lower.Lowerer`, whose fields it uses."""

    # ------------------------------------------------------------------ expressions
    def expr(self, e: A.Expr, scope: Scope) -> Value:
        v = self._expr(e, scope)
        if isinstance(v, Tile) and v.ty == "int" and _is_u32(e.ty):
            return Tile(v.expr, v.ty, unsigned=True)  # converts to float as unsigned
        return v

    def _expr(self, e: A.Expr, scope: Scope) -> Value:  # noqa: PLR0911, PLR0912
        if isinstance(e, A.IntLit):
            return Uni(str(e.value), "int")
        if isinstance(e, A.BoolLit):
            return Uni("1" if e.value else "0", "int")
        if isinstance(e, A.FloatLit):
            text = repr(float(e.value))
            if text in ("inf", "-inf", "nan"):
                text = text.replace("inf", "np.inf").replace("nan", "np.nan")
            return Uni(f"np.float32({text})", "float")
        if isinstance(e, A.Name):
            b = self.lookup(e.name)
            if b is None:
                raise self.refuse(unbound_name_reason(self.tu, e.name), e)
            if b.klass == "S":
                return self.read_shared_scalar(b.value, e)  # type: ignore[arg-type]
            if isinstance(b.value, Unset):
                raise self.refuse(deferred.read_problem(e.name), e)
            return b.value
        if isinstance(e, A.Builtin):
            return self.builtin(e)
        if isinstance(e, A.SizeOf):
            return Uni(str(_sizeof(e.of, e, self)), "int")
        if isinstance(e, A.Assign):
            return self.assign(e, scope)
        if isinstance(e, A.Unary):
            return self.unary(e, scope)
        if isinstance(e, A.Binary):
            return self.binary(e, scope)
        if isinstance(e, A.Ternary):
            return self.ternary(e, scope)
        if isinstance(e, A.Cast):
            return self.cast(e, scope)
        if isinstance(e, A.Call):
            return self.call(e, scope)
        if isinstance(e, A.Index):
            return self.load(e, scope)
        if isinstance(e, A.Comma):
            v: Value = Uni("0", "int")
            for x in e.exprs:
                v = self.expr(x, scope)
            return v
        if isinstance(e, A.Member):
            raise self.refuse(f"member access '.{e.field}' (vector types)", e)
        raise self.refuse(collective_reason(e) or f"expression {type(e).__name__}", e)

    def builtin(self, e: A.Builtin) -> Value:
        if e.name == "threadIdx":
            lin = {"x": self.tx, "y": self.ty_, "z": Lin("0", "0", "0")}[e.dim or "x"]
            return Uni(lin.b, "int") if lin.uniform else lin
        if e.name == "blockIdx":
            return Uni("0" if self.batched else f"_b{e.dim}", "int")
        if e.name == "blockDim":
            return Uni(str(self.block_dims["xyz".index(e.dim or "x")]), "int")
        if e.name == "gridDim":
            return Uni(f"_g{e.dim}", "int")
        if e.name == "warpSize":
            return Uni("32", "int")
        raise self.refuse(f"builtin {e.name}", e)

    def assign(self, e: A.Assign, scope: Scope) -> Value:
        if e.op == "=":
            v = self.expr(e.value, scope)
        else:
            v = self.arith(e.op[:-1], self.expr(e.target, scope), self.expr(e.value, scope),
                           e.target.ty, e)  # fmt: skip
        self.store_to(e.target, v, scope, e)
        return self.expr(e.target, scope) if isinstance(e.target, A.Name) else v

    def snapshot(self, v: Value) -> Value:
        """``v`` with the variables its (trace-time) spelling reads copied first, so that a
        later store to them does not change it (``f(k++)``: the argument is the old ``k``)."""
        if isinstance(v, Uni) and not is_int(v.expr):
            name = self.fresh("old")
            self.emit("let", dst=name, value=v.expr)
            return Uni(name, v.ty)
        if isinstance(v, Lin) and not is_int(v.b):
            name = self.fresh("old")
            self.emit("let", dst=name, value=v.b)
            return dataclasses.replace(v, b=name)
        return v

    def unary(self, e: A.Unary, scope: Scope) -> Value:
        if e.op.endswith(("++", "--")):
            one = A.IntLit(loc=e.loc, value=1, ty=A.ScalarType(name="int32"))
            old = self.expr(e.operand, scope)
            if isinstance(old, Tile):
                old = Tile(self.copy_tile(old), old.ty)
            elif e.op.startswith("post"):  # the value before the store: held apart
                old = self.snapshot(old)
            new = self.arith("+" if "++" in e.op else "-", old, self.expr(one, scope),
                             e.operand.ty, e)  # fmt: skip
            self.store_to(e.operand, new, scope, e)
            return old if e.op.startswith("post") else self.expr(e.operand, scope)
        if e.op == "*" and (word := bitviews.local_word(e)) is not None:
            return bitviews.reinterpret(self, self.expr(word[0], scope), word[1], word[2], e)
        if e.op == "*":
            ptr, off = self.address(e, scope)  # type: ignore[misc]
            return self.read(ptr, off, scope, e)  # type: ignore[arg-type]
        if e.op == "&":
            if isinstance(e.operand, A.Name):
                b = self.lookup(e.operand.name)
                if b is not None and b.klass == "S":
                    return b.value
            if isinstance(e.operand, A.Index):
                where = self.address(e.operand, scope)
                if isinstance(where[0], Ptr) and isinstance(where[1], Tile):
                    return DynPtr(where[0].tensor, where[1].expr, where[0].ty)
                if isinstance(where[0], Ptr):
                    return Ptr(where[0].tensor, where[1], where[0].ty)  # type: ignore[arg-type]
            raise self.refuse("address of a local", e)
        v = self.expr(e.operand, scope)
        if e.op == "+":
            return v
        if is_wide(v):
            return self.wide_unary(e.op, v, e)  # type: ignore[arg-type]
        if isinstance(v, Lin) and e.op == "!":
            return Idx(f"({self.np_spell(v)} == 0)", "bool", (("equal", v),))
        if isinstance(v, Idx) and e.op in ("-", "!", "~"):
            spelled = {"-": f"(-{paren(v.expr)})", "!": f"(~({v.expr} != 0))",
                       "~": f"(~{paren(v.expr)})"}[e.op]  # fmt: skip
            return Idx(spelled, "bool" if e.op == "!" else "int")
        if e.op == "-":
            if isinstance(v, Uni):
                return Uni(f"-{paren(v.expr)}", v.ty)
            if isinstance(v, Lin):
                return lin_scale(v, "-1")
            if _kind(v) == "int":
                return self.int_arith("-", Uni("0", "int"), v, e)
            return self.op("negative", [self.tile(v, None, e)], _kind(v))
        if e.op == "!":
            if isinstance(v, Uni):
                return Uni(f"int(not {paren(v.expr)})", "int")
            return self.op("equal", [self.tile(v, None, e), "0"], "float")
        if e.op == "~":
            if isinstance(v, Uni):
                return Uni(f"~{paren(v.expr)}", "int")
            return self.op("invert", [self.tile(v, "int", e)], "int")
        raise self.refuse(f"unary operator '{e.op}'", e)

    def copy_tile(self, t: Tile) -> str:
        name = self.fresh("o")
        if is_wide(t):  # a pair: both limbs
            self.emit("let", dst=name, value=f"_c2n_wcopy({t.expr})")
            return name
        self.emit("op", dst=name, op="copy", args=t.expr, dtype=self.dt(t.ty))
        return name

    def binary(self, e: A.Binary, scope: Scope) -> Value:
        if e.op in ("&&", "||"):
            a, b = self.expr(e.left, scope), self.expr(e.right, scope)
            if isinstance(a, Uni) and isinstance(b, Uni):
                word = "and" if e.op == "&&" else "or"
                return Uni(f"int(bool({a.expr}) {word} bool({b.expr}))", "int")
            if e.op == "&&" and isinstance(a, Idx) and isinstance(b, Idx) and a.parts and b.parts:
                return Idx(f"({a.expr} & {b.expr})", "bool", a.parts + b.parts)
            if all(isinstance(v, Idx | Uni | Lin) for v in (a, b)):
                return self.idx_arith(e.op, a, b, e)
            ta, tb = self.cond_tile(a, e.left), self.cond_tile(b, e.right)
            return self.op("multiply" if e.op == "&&" else "maximum", [ta, tb], "bool")
        a, b = self.expr(e.left, scope), self.expr(e.right, scope)
        if isinstance(a, Ptr | DynPtr) or isinstance(b, Ptr | DynPtr):
            return self.ptr_arith(e, a, b)
        return self.arith(e.op, a, b, e.ty, e)

    def ptr_arith(self, e: A.Binary, a: Value, b: Value) -> Value:
        if isinstance(b, Ptr | DynPtr) and not isinstance(a, Ptr | DynPtr) and e.op == "+":
            a, b = b, a
        if isinstance(a, Ptr | DynPtr):  # a 64-bit offset moves a pointer by its low limb
            b = self.wide_index(b, e)  # type: ignore[attr-defined]
        # an offset from data, or a thread's index that is no affine form (``b * T * C`` with
        # ``b = idx / (NH * T)``): an address tile either way
        data = isinstance(a, DynPtr) or (isinstance(b, Tile) and b.ty != "float")
        data = data or (isinstance(a, Ptr) and isinstance(b, Idx))
        if e.op in "+-" and isinstance(a, Ptr | DynPtr) and data:
            if not isinstance(b, Uni | Lin | Idx | Tile):
                raise self.refuse("arithmetic between pointers", e)
            if e.op == "-":
                b = self.op("negative", [self.tile(b, "int", e)], "int")
            off = Tile(a.addr, "int") if isinstance(a, DynPtr) else a.off
            return DynPtr(a.tensor, self.dyn_address(off, [(b, "1")], e), a.ty)
        if e.op in "+-" and isinstance(a, Ptr) and isinstance(b, Uni | Lin | Idx):
            if isinstance(b, Idx) or isinstance(a.off, Idx):  # known when the kernel is traced
                off = Idx(f"({self.np_spell(a.off)} {e.op} {self.np_spell(b)})")
                return Ptr(a.tensor, off, a.ty, a.dims)
        if e.op == "+" and isinstance(a, Ptr) and isinstance(b, Uni | Lin):
            return Ptr(a.tensor, lin_add(a.off, as_lin(b)), a.ty, a.dims)
        if e.op == "+" and isinstance(b, Ptr) and isinstance(a, Uni | Lin):
            return Ptr(b.tensor, lin_add(b.off, as_lin(a)), b.ty, b.dims)
        if e.op == "-" and isinstance(a, Ptr) and isinstance(b, Uni | Lin):
            return Ptr(a.tensor, lin_sub(a.off, as_lin(b)), a.ty, a.dims)
        raise self.refuse(
            "pointer arithmetic with an offset that depends on data (a gather or scatter)", e
        )

    def ternary(self, e: A.Ternary, scope: Scope) -> Value:
        c = self.expr(e.cond, scope)
        a, b = self.expr(e.then, scope), self.expr(e.else_, scope)
        if is_wide(a) or is_wide(b):
            return self.wide_ternary(c, a, b, e)
        ty = "float" if is_float(e.ty) or _kind(a) == "float" or _kind(b) == "float" else "int"
        if isinstance(c, Uni):
            if isinstance(a, Uni) and isinstance(b, Uni):
                cast = "np.float32" if ty == "float" else ""
                return Uni(f"({cast}({a.expr}) if {c.expr} else {cast}({b.expr}))", ty)
            ta, tb = self.full_tile(a, ty, e), self.full_tile(b, ty, e)
            name = self.fresh("s")
            self.emit("let", dst=name, value=f"{ta} if {c.expr} else {tb}")
            return Tile(name, ty)
        if ty == "int" and all(isinstance(x, Uni | Lin | Idx) for x in (c, a, b)):
            return Idx(f"np.where({self.np_spell(c)}, {self.np_spell(a)}, {self.np_spell(b)})")
        ct = self.cond_tile(c, e.cond)
        ta, tb = self.full_tile(a, ty, e), self.full_tile(b, ty, e)
        name = self.fresh("s")
        self.emit("where", e.loc.line, dst=name, mask=ct, a=ta, b=tb, dtype=self.dt(ty))
        return Tile(name, ty)

    def convert(self, v: Value, to: object, node: A.Node) -> Value:
        """C's implicit/explicit conversion of ``v`` to type ``to``."""
        if not isinstance(to, A.ScalarType) or isinstance(v, Ptr | Local):
            return v
        if is_wide(v) and not is_wide_type(to):
            return self.narrow_wide(v, to, node)  # type: ignore[arg-type]
        if is_wide_type(to) and (is_wide(v) or self.wide_mode()):
            return self.widen(v, to, node)
        if to.name == "float64":
            return v
        if to.is_float:
            v = self.unsigned_to_float(v)
            if isinstance(v, Uni) and v.ty != "float":
                v = Uni(f"np.float32({v.expr})", "float")
            elif isinstance(v, Lin | Idx) or (isinstance(v, Tile) and v.ty == "int"):
                v = Tile(self.tile(v, "float", node), "float")
            if to.name in ("float16", "bfloat16") and isinstance(v, Uni):
                return Uni(bitviews.short_float(v.expr, to.name), "float")  # when traced
            if to.name in ("float16", "bfloat16") and isinstance(v, Tile):
                r = self.fresh("r")
                self.emit("let", dst=r, value=f"nl.copy(nl.copy({v.expr}, dtype="
                          f"{_FLOAT_DT[to.name]}), dtype=nl.float32)")  # fmt: skip
                return Tile(r, "float")
            return v
        if to.name == "bool":
            if isinstance(v, Uni):
                return Uni(f"int(bool({v.expr}))", "int")
            if isinstance(v, Tile) and v.ty == "bool":
                return v
            return Tile(self.cond_tile(v, node), "bool")
        if isinstance(v, Uni) and v.ty == "float":
            return Uni(intcalls.float_to_int_uniform(v.expr, to), "int")
        if isinstance(v, Tile) and v.ty == "float" and intcalls.narrow_bits(to):
            return intcalls.float_to_narrow(self, v, to)
        if isinstance(v, Tile) and v.ty == "float":
            # truncation toward zero (an out-of-range value is undefined in C)
            t = self.op("trunc", [v.expr], "float")
            return self.op("copy", [t.expr], "int")
        return self.int_convert(v, to, node)

    def int_convert(self, v: Value, to: A.ScalarType, node: A.Node) -> Value:
        """C's conversion of an integer to the integer type ``to``: modulo 2**bits.

        A uniform value is wrapped in Python; a per-thread index value (computed at trace time
        as an unbounded integer) becomes an int32 tile, where the 32-bit helpers give C's
        semantics; conversions to types narrower than 32 bits wrap with bit operations
        (:mod:`cuda2nki.lift.literal.intcalls`)."""
        if DTYPE_BYTES.get(to.name, 4) > 4:
            return v  # 64-bit index arithmetic (size_t) is left as computed
        bits = 8 * DTYPE_BYTES.get(to.name, 4)
        signed = not to.name.startswith("uint")
        if isinstance(v, Uni):
            known = _int_literal(v.expr)
            if known is not None:  # a constant: wrapped here, not in the port
                wrapped = known % (1 << bits)
                if signed and wrapped >= 1 << (bits - 1):
                    wrapped -= 1 << bits
                return Uni(str(wrapped), "int")
            if bits == 32 and not signed:
                return Uni(f"(({v.expr}) % 4294967296)", "int")
            half = 1 << (bits - 1)
            if signed:
                return Uni(f"((({v.expr}) + {half}) % {2 * half} - {half})", "int")
            return Uni(f"(({v.expr}) % {2 * half})", "int")
        if bits < 32:
            return intcalls.narrow(self, v, to, node)
        if isinstance(v, Lin) and not signed and "-" not in f"{v.b} {v.p} {v.f}":
            # thread and block indices, loop counters and parameters are non-negative (the
            # index assumption); combined without a minus, so is the value: unchanged
            return v
        if isinstance(v, Lin | Idx) and not signed:  # known when traced: wrapped there
            return Idx(f"_c2n_wrap({self.np_spell(v)}, 32, False)")
        if isinstance(v, Tile) and v.ty == "int" and v.unsigned and signed:
            return Tile(v.expr, "int")  # the same 32-bit pattern, read as signed
        return v

    def cast(self, e: A.Cast, scope: Scope) -> Value:
        v = self.expr(e.operand, scope)
        if isinstance(e.to, A.PointerType):
            if not isinstance(v, Ptr):
                raise self.refuse("cast of an integer to a pointer", e)
            if not isinstance(e.to.pointee, A.ScalarType):
                raise self.refuse("reinterpretation as a vector type", e)
            klass = "float" if e.to.pointee.is_float else "int"
            if resized(e.operand.ty, e.to.pointee):  # bytes of words, words of halves
                raise self.refuse("reinterpretation of a buffer as another element size", e)
            if klass != v.ty:
                view = word_view(v, e.operand.ty, e.to.pointee)
                if view is None:
                    raise self.refuse("reinterpretation of a buffer as another element type", e)
                return view
            return v
        if e.kind == "reinterpret":
            words = bitviews.scalar_view(e.operand.ty, e.to)
            if words is None:
                raise self.refuse("bit reinterpretation", e)
            return bitviews.reinterpret(self, v, *words, e)
        return self.convert(v, e.to, e)
