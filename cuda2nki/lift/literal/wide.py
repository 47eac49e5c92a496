"""The literal lowering, 64-bit integers carried as two 32-bit limbs.

NKI has no 64-bit integer tensors or arithmetic.  A kernel over ``long long``/``uint64_t``
buffers is ported with each such buffer as a uint32 tensor with a trailing dimension of 2 (its
little-endian limbs: the same bytes, :mod:`cuda2nki.limbs`), and every per-thread 64-bit value
as a pair ``(low, high)`` of int32 tiles of bit patterns: a :class:`Tile` of type ``"wide"``
whose spelling names the pair.  The operations are emulated exactly by the helpers of
``templates/int64_common.py.j2`` on top of the 32-bit ones: ``+ - *`` modulo 2**64, bit
operations, shifts (by uniform counts, or by per-thread counts one power of two at a time),
``/`` and ``%`` (restoring division, truncating toward zero), comparisons, selects,
``__popcll``, conversions to and from 32-bit integers and fp32 (rounded as C does: to nearest
even from integers, toward zero to integers).  A pair used as a subscript (or as the count of a
32-bit shift) stands for its low limb.  Uniform 64-bit values stay Python integers, wrapped modulo
2**64 when converted to a 64-bit type (index values stay trace-time arrays).

A per-thread local (or device-function parameter) declared with a 64-bit integer type holds a
pair in a kernel whose binding has a 64-bit integer buffer or that declares a 64-bit
``__shared__`` variable or local array, a local array of them a list of pairs
(:mod:`.widearrays`); elsewhere 64-bit locals keep their former 32-bit lowering.  There, an
operation that C's usual conversions make 64-bit (``m * ones`` with ``unsigned m`` and
``unsigned long ones``, ``1ULL << k``) is computed on pairs, the 32-bit operand extended as its
own type says.  Anything else on a pair (a conversion to a floating-point type other than fp32,
an atomic) is refused with C2N2301 naming the operation.  A 64-bit element at an address read
from data is gathered (scattered, thread by thread) limb by limb; a pair offsetting a pointer
moves it by its low limb, as a subscript does.
"""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk
from cuda2nki.lift.literal.state import Scope
from cuda2nki.lift.literal.values import Idx, Lin, Ptr, Tile, Uni, Value, is_int

WIDE, UWIDE = "wide", "uwide"  # a pair; the element class of a signed / unsigned 64-bit buffer
WIDE_DTYPES = frozenset({"int64", "uint64"})
_CMP = {"<": "less", "<=": "less_equal", ">": "greater", ">=": "greater_equal",
        "==": "equal", "!=": "not_equal"}  # fmt: skip
_FP32, _INT32 = A.ScalarType(name="float32"), A.ScalarType(name="int32")
_BITS = {"&": "bitwise_and", "|": "bitwise_or", "^": "bitwise_xor"}
_SUMS = {"+": "_c2n_wadd", "-": "_c2n_wsub", "*": "_c2n_wmul"}


WIDE_CLASSES = frozenset({WIDE, UWIDE})


def wide_class(t: object) -> str | None:
    """The element class of a 64-bit integer type (``wide``/``uwide``), else None."""
    if not is_wide_type(t):
        return None
    return UWIDE if t.name == "uint64" else WIDE  # type: ignore[attr-defined]


def limb_output(dtype: str, shape: str) -> tuple[str, str] | None:
    """The port's output tensor of a 64-bit integer buffer (spelled ``shape``): its uint32 limbs,
    a trailing dimension of 2; None for any other dtype."""
    if dtype not in WIDE_DTYPES:
        return None
    return f"{shape.rstrip(',')}, 2", "nl.uint32"


def is_wide_type(t: object) -> bool:
    return isinstance(t, A.ScalarType) and t.name in WIDE_DTYPES


def is_wide(v: object) -> bool:
    return isinstance(v, Tile) and v.ty == WIDE


def _signed_type(t: object) -> bool:
    return not (isinstance(t, A.ScalarType) and t.name.startswith("uint"))


class WideMixin:
    """64-bit integer values as limb pairs.  A part of :class:`~.lower.Lowerer`."""

    def wide_mode(self) -> bool:
        """Whether the kernel has a 64-bit integer buffer, or declares a ``__shared__`` or local
        array of 64-bit integers (its 64-bit locals are then pairs)."""
        if any(t.dtype in WIDE_DTYPES for t in self.binding.tensors):  # type: ignore[attr-defined]
            return True
        known = self.__dict__.get("_wide_arrays")
        if known is None:
            known = self.__dict__["_wide_arrays"] = declares_wide_arrays(self.fn)  # type: ignore[attr-defined]
        return known

    def limb_class(self, param: str) -> str | None:
        """The element class of pointer ``param`` when the binding makes it a 64-bit integer
        tensor (its port tensor holds limbs), else None."""
        for t in self.binding.tensors:  # type: ignore[attr-defined]
            if t.name == param and t.dtype in WIDE_DTYPES:
                return UWIDE if t.dtype == "uint64" else WIDE
        return None

    def local_type(self, t: object, klass: str, ty: str) -> str:
        """The value type of a local (or inlined parameter) of C type ``t`` and class ``klass``:
        a per-thread 64-bit integer in a kernel with 64-bit buffers is a limb pair."""
        if klass == "T" and is_wide_type(t) and self.wide_mode():
            return wide_class(t) or ty
        return ty

    def wide_pair(self, expr: str, signed: bool) -> Tile:
        dst = self.fresh("w")  # type: ignore[attr-defined]
        self.emit("let", dst=dst, value=expr)  # type: ignore[attr-defined]
        return Tile(dst, WIDE, unsigned=not signed)

    def wide_operand(self, v: Value, signed: bool, node: A.Node) -> str:
        """``v`` as an operand of the pair helpers: a pair, a uniform Python int, or an int32 tile
        extended to 64 bits with its sign (``signed``: its C type is signed) or zeros."""
        if is_wide(v):
            return v.expr  # type: ignore[union-attr]
        if isinstance(v, Uni):
            if v.ty == "float":
                raise self.refuse("a floating-point value converted to a 64-bit integer", node)  # type: ignore[attr-defined]
            return f"int({v.expr})"
        if isinstance(v, Lin) and v.uniform:
            return f"int({v.b})"
        if isinstance(v, Lin):  # an index value: exact at trace time, whatever its size
            return f"_c2n_wgrid({v.b}, {v.p}, {v.f})"
        if isinstance(v, Idx):
            return f"_c2n_wknown({v.expr})"
        if isinstance(v, Tile) and v.ty in ("int", "bool"):
            t = self.tile(v, "int", node)  # type: ignore[attr-defined]
            ext = signed and not (isinstance(v, Tile) and v.unsigned)
            return f"_c2n_wide({t}, {ext})"
        raise self.refuse("a floating-point value converted to a 64-bit integer", node)  # type: ignore[attr-defined]

    def widen(self, v: Value, to: A.ScalarType, node: A.Node) -> Value:
        """C's conversion of a per-thread data integer to the 64-bit type ``to``."""
        if is_wide(v):
            return Tile(v.expr, WIDE, unsigned=not _signed_type(to))  # type: ignore[union-attr]
        if isinstance(v, Tile) and v.ty == "float":  # truncated toward zero
            return self.wide_pair(f"_c2n_f2w({v.expr})", _signed_type(to))
        if isinstance(v, Uni) and v.ty == "float":
            return Uni(f"int({v.expr})", "int")
        if isinstance(v, Uni):  # a uniform value: modulo 2**64, as C's 64-bit types
            return Uni(_wrap64(v.expr, _signed_type(to)), "int")
        if isinstance(v, Tile) and v.ty in ("int", "bool"):  # extended as its own type says
            return self.wide_pair(self.wide_operand(v, True, node), _signed_type(to))
        return v

    def wide_promoted(self, op: str, a: Value, b: Value, node: A.Node) -> bool:
        """Whether C's usual conversions make ``a op b`` a 64-bit operation on a per-thread
        32-bit value (``m * ones`` with ``unsigned long ones``): it is then computed on pairs,
        the 32-bit operand extended as its own type says."""
        if not self.wide_mode() or op in ("&&", "||"):
            return False
        if not any(isinstance(v, Tile) and v.ty in ("int", "bool") for v in (a, b)):
            return False
        if any(isinstance(v, Tile | Uni) and v.ty == "float" for v in (a, b)):
            return False
        types = [x.ty for x in _two(node)]
        if op in ("<<", ">>"):  # the type of a shift is its left operand's
            types = types[:1]
        return any(is_wide_type(t) for t in types)

    def wide_arith(self, op: str, a: Value, b: Value, node: A.Node) -> Value:
        """``a op b`` where an operand is a pair (C's usual conversions make the operation
        64-bit): a pair, or a mask for a comparison."""
        operands = [x.ty for x in _two(node)]
        signed = all(not (isinstance(t, A.ScalarType) and t.name == "uint64") for t in operands)
        if op in ("<<", ">>"):
            return self.wide_shift(op, a, b, node)
        if op in ("&&", "||"):
            raise self.refuse(f"operator '{op}' on 64-bit integers", node)  # type: ignore[attr-defined]
        x = self.wide_operand(a, _signed_type(operands[0]) if operands else True, node)
        y = self.wide_operand(b, _signed_type(operands[1]) if len(operands) > 1 else True, node)
        if op in _CMP:
            dst = self.fresh("m")  # type: ignore[attr-defined]
            self.emit("let", dst=dst, value=f"_c2n_wcmp({x}, {y}, '{_CMP[op]}', {signed})")  # type: ignore[attr-defined]
            return Tile(dst, "bool")
        if op in _BITS:
            return self.wide_pair(f"_c2n_wbits({x}, {y}, '{_BITS[op]}')", signed)
        if op in _SUMS:
            return self.wide_pair(f"{_SUMS[op]}({x}, {y})", signed)
        if op in ("/", "%"):  # restoring division, one compare-and-subtract per quotient bit
            part = 0 if op == "/" else 1
            return self.wide_pair(f"_c2n_wdivmod({x}, {y}, {signed})[{part}]", signed)
        raise self.refuse(f"operator '{op}' on 64-bit integers (no exact emulation)", node)  # type: ignore[attr-defined]

    def wide_shift(self, op: str, a: Value, b: Value, node: A.Node) -> Value:
        left = _two(node)[0].ty if _two(node) else None
        if not is_wide(a) and not is_wide_type(left):  # a 32-bit shift: the count's low limb
            count32 = self.wide_index(b, node)
            return self.arith(op, a, count32, getattr(node, "ty", None), node)  # type: ignore[attr-defined]
        if not is_wide(a):  # a 64-bit value held as a 32-bit tile or a uniform: extended
            ext = self.wide_operand(a, _signed_type(left), node)
            a = self.wide_pair(f"_c2n_wide({ext})", _signed_type(left))
        signed = not a.unsigned  # type: ignore[union-attr]
        count = _uniform_int(b)
        if count is None:  # a per-thread count: its low 32 bits are enough for 0..63
            n = self.tile(self.wide_index(b, node), "int", node)  # type: ignore[attr-defined]
            left_shift = op == "<<"
            return self.wide_pair(f"_c2n_wshift_by({a.expr}, {n}, {left_shift}, {signed})", signed)  # type: ignore[union-attr]
        if op == "<<":
            return self.wide_pair(f"_c2n_wshl({a.expr}, {count})", signed)  # type: ignore[union-attr]
        return self.wide_pair(f"_c2n_wshr({a.expr}, {count}, {signed})", signed)  # type: ignore[union-attr]

    def wide_unary(self, op: str, v: Tile, node: A.Node) -> Value:
        signed = not v.unsigned
        if op == "~":
            return self.wide_pair(f"_c2n_wnot({v.expr})", signed)
        if op == "-":
            return self.wide_pair(f"_c2n_wneg({v.expr})", signed)
        if op == "!":
            return self.op("subtract", ["1.0", self.wide_mask(v)], "float")  # type: ignore[attr-defined]
        raise self.refuse(f"unary operator '{op}' on a 64-bit integer", node)  # type: ignore[attr-defined]

    def wide_ternary(self, c: Value, a: Value, b: Value, node: A.Node) -> Tile:
        """``c ? a : b`` where a branch is a pair."""
        if isinstance(c, Uni):
            x, y = self.wide_operand(a, True, node), self.wide_operand(b, True, node)
            signed = not all(is_wide(v) and v.unsigned for v in (a, b))  # type: ignore[union-attr]
            return self.wide_pair(f"(_c2n_wide({x}) if {c.expr} else _c2n_wide({y}))", signed)
        return self.wide_select(self.cond_tile(c, node), a, b, node)  # type: ignore[attr-defined]

    def wide_popc(self, v: Value, node: A.Node) -> Value:
        """``__popcll(v)``: the set bits of both limbs."""
        from cuda2nki.lift.literal.bitcalls import popc_tile

        if isinstance(v, Uni):
            return Uni(f"bin(int({v.expr}) % 2**64).count('1')", "int")
        pair = self.wide_operand(v, True, node)
        if not is_wide(v):
            pair = self.wide_pair(pair, True).expr
        counts = []
        for k in (0, 1):
            limb = self.fresh("lo")  # type: ignore[attr-defined]
            self.emit("let", dst=limb, value=f"{pair}[{k}]")  # type: ignore[attr-defined]
            counts.append(popc_tile(self, limb).expr)
        return self.op("add", counts, "int")  # type: ignore[attr-defined]

    def wide_mask(self, v: Tile) -> str:
        """``v != 0`` as a 0/1 fp32 mask tile."""
        dst = self.fresh("m")  # type: ignore[attr-defined]
        self.emit("let", dst=dst, value=f"_c2n_wnonzero({v.expr})")  # type: ignore[attr-defined]
        return dst

    def narrow_wide(self, v: Tile, to: object, node: A.Node) -> Value:
        """C's conversion of a pair to ``to``: a 32-bit or narrower integer keeps the low limb
        (modulo 2**bits), a bool tests for non-zero; floating point is refused."""
        if not isinstance(to, A.ScalarType):
            return v
        if to.name == "bool":
            return Tile(self.wide_mask(v), "bool")
        if to.name == "float32":
            dst = self.fresh("f")  # type: ignore[attr-defined]
            self.emit("let", dst=dst, value=f"_c2n_w2f({v.expr}, {not v.unsigned})")  # type: ignore[attr-defined]
            return Tile(dst, "float")
        if to.is_float:
            raise self.refuse(f"a 64-bit integer converted to {to.name}", node)  # type: ignore[attr-defined]
        low = self.fresh("lo")  # type: ignore[attr-defined]
        self.emit("let", dst=low, value=f"{v.expr}[0]")  # type: ignore[attr-defined]
        return self.int_convert(Tile(low, "int", unsigned=True), to, node)  # type: ignore[attr-defined]

    def wide_to_float(self, v: Value, node: A.Node) -> Value:
        """A pair entering floating-point arithmetic, as fp32 (other values as they are)."""
        return self.narrow_wide(v, _FP32, node) if is_wide(v) else v  # type: ignore[arg-type]

    def wide_index(self, v: Value, node: A.Node) -> Value:
        """A subscript that is a pair, as its low limb (a signed 32-bit index: buffers are far
        smaller than 2**31 elements, so an index beyond is out of bounds either way)."""
        return self.narrow_wide(v, _INT32, node) if is_wide(v) else v  # type: ignore[arg-type]

    def wide_select(self, mask: str, a: Value, b: Value, node: A.Node) -> Tile:
        signed = not all(is_wide(x) and x.unsigned for x in (a, b))  # type: ignore[union-attr]
        x, y = self.wide_operand(a, True, node), self.wide_operand(b, True, node)
        return self.wide_pair(f"_c2n_wwhere({mask}, {x}, {y})", signed)

    def wide_write(
        self, name: str, v: Value, scope: Scope, masked: bool, signed: bool, node: A.Node
    ) -> Tile:
        """Assign ``v`` to the pair local ``name`` (under the scope's mask when ``masked``)."""
        new = self.wide_operand(v, signed, node)
        if masked:
            new = f"_c2n_wwhere({scope.mask}, {new}, {name})"
        elif not is_wide(v):
            new = f"_c2n_wide({new}, {signed})" if new.startswith("int(") else new
        self.emit("let", node.loc.line, dst=name, value=new)  # type: ignore[attr-defined]
        return Tile(name, WIDE, unsigned=not signed)

    def wide_read(self, ptr: Ptr, off: object, node: A.Node) -> Tile:
        """Every thread's 64-bit element of ``ptr``'s limb tensor at ``off``."""
        dst = self.fresh("ld")  # type: ignore[attr-defined]
        if isinstance(off, Idx):
            value = f"_c2n_wload_at({ptr.tensor}, {off.expr})"
        elif isinstance(off, Lin):
            value = f"_c2n_wload({ptr.tensor}, {off.b}, {off.p}, {off.f})"
        elif isinstance(off, Tile):  # addresses read from data: both limbs gathered
            value = f"_c2n_wgather({ptr.tensor}, {off.expr}, None)"
        else:
            raise self.refuse("a 64-bit element read at an address of this kind", node)  # type: ignore[attr-defined]
        self.emit("let", node.loc.line, dst=dst, value=value)  # type: ignore[attr-defined]
        return Tile(dst, WIDE, unsigned=ptr.ty == UWIDE)

    def wide_store(self, ptr: Ptr, off: object, v: Value, scope: Scope, node: A.Node) -> None:
        signed = _signed_type(getattr(node, "ty", None))
        val = self.wide_operand(v, signed, node)
        mask = self.store_mask(scope)  # type: ignore[attr-defined]
        if isinstance(off, Idx):
            expr = f"_c2n_wstore_at({ptr.tensor}, {off.expr}, {val}, {mask})"
        elif isinstance(off, Lin):
            known = f", known={self.exact[mask]}" if mask in self.exact else ""  # type: ignore[attr-defined]
            expr = f"_c2n_wstore({ptr.tensor}, {off.b}, {off.p}, {off.f}, {val}, {mask}{known})"
        elif isinstance(off, Tile):  # addresses read from data: both limbs, thread by thread
            expr = f"_c2n_wscatter({ptr.tensor}, {off.expr}, {val}, {mask})"
        else:
            raise self.refuse("a 64-bit element stored at an address of this kind", node)  # type: ignore[attr-defined]
        self.emit("call", node.loc.line, expr=expr)  # type: ignore[attr-defined]


def declares_wide_arrays(fn: A.Function) -> bool:
    """Whether ``fn`` declares a ``__shared__`` variable or a local array of 64-bit integers."""
    for n in walk(fn.body):
        if not isinstance(n, A.VarDecl):
            continue
        ty = n.ty
        while isinstance(ty, A.ArrayType):
            ty = ty.elem
        if is_wide_type(ty) and (n.storage != "local" or isinstance(n.ty, A.ArrayType)):
            return True
    return False


def _wrap64(expr: str, signed: bool) -> str:
    if is_int(expr):
        u = int(expr) % 2**64
        return str(u - 2**64 if signed and u >= 2**63 else u)
    if signed:
        return f"((({expr}) + 2**63) % 2**64 - 2**63)"
    return f"(({expr}) % 2**64)"


def _two(node: A.Node) -> list[A.Expr]:
    if isinstance(node, A.Binary):
        return [node.left, node.right]
    if isinstance(node, A.Assign):
        return [node.target, node.value]
    return []


def _uniform_int(v: Value) -> str | None:
    if isinstance(v, Uni) and v.ty != "float":
        return v.expr
    if isinstance(v, Lin) and v.uniform:
        return v.b
    return None


__all__ = [
    "limb_output",
    "UWIDE",
    "WIDE",
    "WIDE_CLASSES",
    "wide_class",
    "WIDE_DTYPES",
    "WideMixin",
    "is_wide",
    "is_wide_type",
]
