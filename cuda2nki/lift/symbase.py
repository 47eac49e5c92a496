"""Values, records and helpers of the symbolic execution (:mod:`cuda2nki.lift.symexec`): refusals,
pointer/vector/shared-array values, shared writes, loops, stores, the thread program, dtype rules
and the module-level helpers its mixins share."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from cuda2nki.diagnostics import UNKNOWN_LOC, SourceLoc
from cuda2nki.dtypes import NUMPY_DTYPES
from cuda2nki.frontend import ast as A
from cuda2nki.ir.ops import is_narrow_int
from cuda2nki.lift import affine as af
from cuda2nki.lift import mathcompose
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Cond, Poly

# --------------------------------------------------------------------------- refusals


class Refusal(Exception):
    """The kernel cannot be lifted: ``code`` (C2N2xxx) with format fields, at ``loc``."""

    def __init__(self, code: str, loc: SourceLoc | None, **fmt: object):
        self.code, self.loc, self.fmt = code, loc or UNKNOWN_LOC, fmt
        super().__init__(f"{code} {fmt}")


# --------------------------------------------------------------------------- runtime values


@dataclass(frozen=True)
class CondVal:
    cond: Cond


@dataclass(frozen=True)
class PtrVal:
    tensor: str
    offset: Poly
    dtype: str  # element dtype of the pointee
    width: int = 1  # vector width (float4 pointer: 4 scalars per element)
    shared: bool = False
    #: the element type the kernel reads through this pointer where it is not the buffer's own
    #: (a bit reinterpretation, see :mod:`cuda2nki.lift.bitcasts`); "" for the buffer's own
    seen_as: str = ""


@dataclass(frozen=True)
class VecVal:
    lanes: tuple  # DExpr per lane
    dtype: str


LANES = ("x", "y", "z", "w")


@dataclass
class SharedWrite:
    index: tuple  # tuple[Poly, ...] per array dim (in the writer's thread coordinates)
    value: object  # DExpr
    guard: Cond
    epoch: int
    loops: tuple  # LoopCtx of the loops around the write
    loc: SourceLoc = UNKNOWN_LOC
    accumulate: str | None = None  # a shared atomic: the element becomes old op value


@dataclass
class SharedArr:
    name: str
    dims: tuple  # tuple[int | None, ...]
    dtype: str
    writes: list = field(default_factory=list)
    stepped: bool = False  # a write combining elements of this array happened
    scalar: bool = False  # ``__shared__ float acc;`` (read and written by name)
    #: write-log positions of writes under a data-dependent condition (a compare-and-move)
    guarded: list = field(default_factory=list)


def _shared_1d(v: object) -> bool:
    return isinstance(v, SharedArr) and not v.scalar and len(v.dims) == 1


def _decayed(v: object) -> object:
    """``v`` as a pointer where it is a 1-D shared array (``*s`` is ``s[0]``, also through a
    pointer local holding it, as a shared-memory view struct's ``operator*`` lowers to)."""
    return PtrVal(v.name, af.ZERO, v.dtype, 1, True) if _shared_1d(v) else v


@dataclass
class ThreadProgram:
    kernel: A.Function
    tensors: dict  # pointer param name -> element dtype
    scalars: dict  # scalar param name -> dtype
    stores: list
    reads: set  # tensors read
    block: tuple  # concrete blockDim (x, y, z) when known
    shared: dict  # name -> SharedArr (write logs)
    templates: list  # per-thread values entering cooperative operations
    rerolled: bool = False  # stores of an unrolled loop were rolled back into a loop
    #: the epochs a ``__syncwarp`` (not a ``__syncthreads``) began: it orders a warp's threads only
    warp_epochs: frozenset = frozenset()


_UNSET = object()


def dtype_of(t: A.CType | None) -> str:
    if isinstance(t, A.ScalarType):
        return t.name
    if isinstance(t, A.VectorType):
        return t.base.name
    if isinstance(t, A.PointerType):
        return dtype_of(t.pointee)
    if isinstance(t, A.ArrayType):
        return dtype_of(t.elem)
    return "int32"


def is_float_dtype(d: str) -> bool:
    return d.startswith("float") or d == "bfloat16"


def _vec_width(t: A.CType | None) -> int:
    if isinstance(t, A.PointerType) and isinstance(t.pointee, A.VectorType):
        return t.pointee.width
    return 1


_MATH1 = {
    "exp": "exp",
    "__exp": "exp",
    "exp2": "exp2",
    "log": "log",
    "__log": "log",
    "log2": "log2",
    "log1p": "log1p",
    "expm1": "expm1",
    "sqrt": "sqrt",
    "__fsqrt_rn": "sqrt",
    "rsqrt": "rsqrt",
    "__frsqrt_rn": "rsqrt",
    "sin": "sin",
    "__sin": "sin",
    "cos": "cos",
    "__cos": "cos",
    "tan": "tan",
    "atan": "atan",
    "tanh": "tanh",
    "fabs": "abs",
    "abs": "abs",
    "erf": "erf",
    "floor": "floor",
    "ceil": "ceil",
    "trunc": "trunc",
    "round": "round",
    "rint": "rint",
    "nearbyint": "rint",
    "__frcp_rn": "reciprocal",
}
_MATH2 = {
    "pow": "pow",
    "__pow": "pow",
    "fmax": "max",
    "fmin": "min",
    "max": "max",
    "min": "min",
    "atan2": "atan2",
    "fmod": "mod",
    "__fdividef": "div",
    "__fdiv_rn": "div",
    "__fadd_rn": "add",
    "__fmul_rn": "mul",
    "__fsub_rn": "sub",
    "__hadd": "add",
    "__hsub": "sub",
    "__hmul": "mul",
    "__hdiv": "div",
    "__hmax": "max",
    "__hmin": "min",
}
_CONVERT = {
    "__float2half": "float16",
    "__float2half_rn": "float16",
    "__half2float": "float32",
    "__bfloat162float": "float32",
    "__float2bfloat16": "bfloat16",
    "__float2bfloat16_rn": "bfloat16",
    "__int2float_rn": "float32",
    "__float2int_rz": "int32",
    "__double2float_rn": "float32",
    "__float2double": "float64",
}
#: float-to-integer conversions with a rounding mode: (result type, rounding op before C's
#: truncating conversion; None: truncation itself)
_ROUNDED_CONVERT = {
    "__float2int_rn": ("int32", "rint"),
    "__float2int_rd": ("int32", "floor"),
    "__float2int_ru": ("int32", "ceil"),
    "__float2uint_rn": ("uint32", "rint"),
    "__float2uint_rz": ("uint32", None),
    "__float2uint_rd": ("uint32", "floor"),
    "__float2uint_ru": ("uint32", "ceil"),
}
_BINOPS = {
    "+": "add",
    "-": "sub",
    "*": "mul",
    "/": "div",
    "%": "mod",
    "<": "lt",
    "<=": "le",
    ">": "gt",
    ">=": "ge",
    "==": "eq",
    "!=": "ne",
    "&&": "land",
    "||": "lor",
    "&": "bitand",
    "|": "bitor",
    "^": "bitxor",
    "<<": "shl",
    ">>": "shr",
}
_COMBINE = {"add", "mul", "max", "min"}
#: packed pair intrinsics: (kind, lane or op)
_PACKED = {
    "__hadd2": ("op", "add"),
    "__hsub2": ("op", "sub"),
    "__hmul2": ("op", "mul"),
    "__h2div": ("op", "div"),
    "__hmax2": ("op", "max"),
    "__hmin2": ("op", "min"),
    "__hneg2": ("op", "neg"),
    "__habs2": ("op", "abs"),
    "__hfma2": ("fma", None),
    "__float2half2_rn": ("pair", None),
    "__half2half2": ("pair", None),
    "__halves2half2": ("pair", None),
    "__floats2half2_rn": ("pair", None),
    "make_half2": ("pair", None),
    "__low2float": ("lane", 0),
    "__high2float": ("lane", 1),
    "__low2half": ("lane", 0),
    "__high2half": ("lane", 1),
    "__half22float2": ("convert", None),
    "__float22half2_rn": ("convert", None),
}
_ATOMIC = {"atomicAdd": "add", "atomicMax": "max", "atomicMin": "min", "atomicSub": "add"}


def _composed(func: str, data: list, dt: str) -> V.DExpr | None:
    """A math function NKI has no instruction for, as its composition of those it has
    (see :mod:`cuda2nki.lift.mathcompose`); None: not one of them."""
    f = mathcompose.formula(func, len(data))
    if f is None or not is_float_dtype(dt):
        return None
    args = tuple(_cast_to(x, dt) for x in data)
    return mathcompose.build(f, args, lambda c: V.Const(dt, c), lambda op, xs: V.Op(dt, op, xs))


def _math_name(func: str) -> str:
    """``expf``/``__expf``/``exp`` -> ``exp`` (float and fast-math spellings)."""
    f = func
    if f.endswith("f") and f[:-1] in _MATH1.keys() | _MATH2.keys():
        return f[:-1]
    return f


def promote(a: str, b: str) -> str:
    order = list(A.SCALAR_NAMES[1:])  # bool, the integers by width, then the floats
    if is_float_dtype(a) or is_float_dtype(b):
        fa = a if is_float_dtype(a) else "float16"
        fb = b if is_float_dtype(b) else "float16"
        best = max(fa, fb, key=order.index)
        return "float32" if best in ("float16", "bfloat16") and fa != fb else best
    return max(a, b, key=lambda t: order.index(t) if t in order else 5) if a != b else a


# --------------------------------------------------------------------------- helpers


def _le0(p: Poly) -> Cond:
    """``p <= 0`` with the clamped indices in ``p`` expanded (``max(a, b) <= y`` is ``a <= y and
    b <= y``; ``p`` decreasing in the clamp swaps and/or)."""
    for m, c in p.terms:
        if len(m) == 1 and isinstance(m[0], af.OpaqueAtom) and m[0].key.startswith("clamp:"):
            a = m[0]
            f, x, y = a.payload
            both = (f == "max") == (c > 0)
            parts = [_le0(p.subs({a: x})), _le0(p.subs({a: y}))]
            return af.conj(parts) if both else af.disj(parts)
    return Cond.of(af.compare("<=", p, af.ZERO))


def _scaled_stop(cond: Cond, var: str) -> Poly | None:
    """``ceil(b / c)`` for the condition ``c * var - b < 0`` (``c`` a positive constant, ``b``
    free of ``var``): the loop runs while ``var < ceil(b / c)``."""
    if cond.kind != "cmp" or cond.cmp.op != "<":
        return None
    view = af.affine(cond.cmp.poly, {var})
    if view is None or set(view.coeffs) != {var}:
        return None
    c = view.coeff(var)
    if not c.is_const or c.const_value < 1:
        return None
    b = -view.const
    return b if c.const_value == 1 else af.floordiv(b + (c.const_value - 1), c.const_value)


def _int_fold(new: object, n: str) -> bool:
    """Whether the integer ``n`` carried across a loop ends as ``acc op f(k)`` over data (a sum
    or product of loaded values, exact in C's wrapping int arithmetic), which folds like a
    float accumulator; an index that follows an extremum is an argfold pair instead."""
    if not isinstance(new, V.DExpr) or new.dtype not in ("int32", "uint32"):
        return False
    op, term = _split_combine(new, V.Carried(new.dtype, n))
    return op in ("add", "mul", "max", "min") and not V.has_carried(term)


def _block_uniform(c: Cond) -> bool:
    """``c`` holds for every thread of a block alike: it reads no thread coordinate, loop
    variable or loaded value, only block indices, sizes and parameters (a barrier under it is
    reached by all of the block's threads or by none: one block per row, ``if (row < rows)``)."""
    if c.kind == "true":
        return True
    thread = frozenset(af.THREAD + af.GID)
    return not any(
        a in thread or isinstance(a, af.OpaqueAtom) or (isinstance(a, str) and a.startswith("%"))
        for a in c.atoms()
    )


def _varying(p: Poly) -> bool:
    """``p`` depends on the thread or on a variable of an enclosing loop."""
    return p.depends_on(af.THREAD_COORDS) or any(
        isinstance(a, str) and a.startswith("%") for a in p.atoms()
    )


def _const_elems(t: A.CType) -> bool:
    while isinstance(t, A.ArrayType):
        t = t.elem
    return isinstance(t, A.ScalarType) and t.const


def _data_index(v: V.DExpr) -> Poly:
    """An integer data value used as an element index: sums, differences and products of values
    read from memory (gather and scatter indices) and of indices, as an index over the values
    read (each an opaque atom).  Only addresses take this view: there a value that wrapped
    around 32 bits would address memory outside the tensor."""
    if isinstance(v, V.IntVal):
        return v.poly
    if isinstance(v, V.Const) and isinstance(v.value, int) and not isinstance(v.value, bool):
        return Poly.const(v.value)
    if (
        isinstance(v, V.Cast)
        and _int_data(v.operand)
        and _int_data(v)
        and not is_narrow_int(v.dtype)
    ):
        # a 32-bit wrap would address outside the tensor; a wrap to 8 or 16 bits would not
        return _data_index(v.operand)
    if isinstance(v, V.Op) and v.op in ("add", "sub", "mul") and len(v.args) == 2:
        if all(_int_data(x) for x in v.args):
            a, b = (_data_index(x) for x in v.args)
            return a + b if v.op == "add" else a - b if v.op == "sub" else a * b
    return Poly.atom(V.opaque_of(v))


def _int_data(v: object) -> bool:
    return isinstance(v, V.DExpr) and not is_float_dtype(v.dtype) and v.dtype != "bool"


def _lane(vec: VecVal, idx: list[Poly], loc: SourceLoc) -> int:
    """The lane ``vec[idx]`` names: a constant within the vector's width (a lane loop is
    unrolled, so its variable is a constant by the time it indexes a vector)."""
    if len(idx) != 1 or not idx[0].is_const:
        raise Refusal("C2N2013", loc, what="a vector lane indexed by a non-constant")
    k = idx[0].const_value
    if not 0 <= k < len(vec.lanes):
        raise Refusal("C2N2013", loc, what=f"lane {k} of a {len(vec.lanes)}-lane vector")
    return int(k)


def _vector_names(env: dict, body: A.Stmt) -> set[str]:
    """Locals holding short vectors (packed structs, ``float4``): those in scope and those the
    loop body declares.  A loop indexing one with its variable is a lane loop, unrolled."""
    names = {k for k, v in env.items() if isinstance(v, VecVal)}
    names |= {
        d.name
        for d in _walk_stmts(body)
        if isinstance(d, A.VarDecl) and isinstance(d.ty, A.VectorType)
    }
    return names


def _is_name(e: A.Expr, name: str) -> bool:
    return isinstance(e, A.Name) and e.name == name


def _cast_to(d: V.DExpr, dt: str) -> V.DExpr:
    if d.dtype == dt:
        return d
    if isinstance(d, V.Const):
        v = d.value
        return V.Const(dt, float(v) if is_float_dtype(dt) else int(v))
    return V.Cast(dt, d)


def _identity(op: str) -> float | int | None:
    return {"add": 0, "mul": 1, "max": float("-inf"), "min": float("inf")}.get(op)


def _floor_is_c(num: Poly, den: Poly) -> bool:
    """C's truncating ``num / den`` and ``num % den`` equal the floor division the index
    analysis models: the numerator is non-negative and the divisor positive over the known atom
    ranges.  A divisor that is only known non-negative (a size parameter) counts as positive,
    since dividing by zero is undefined in C."""
    return _positive(den) and af.provably_nonneg(num)


def _floor_mod_fixup(cond: object, then: object, else_: object) -> Poly | None:
    """``r < 0 ? r + n : r`` with ``r = a % n`` (C's remainder, the sign of ``a``): the floor
    remainder ``a mod n`` in ``[0, n)``, as an index (the wrap a circular shift spells by hand).
    ``cond`` may also read ``0 > r``; ``then`` may add ``n`` on either side."""
    if not (isinstance(cond, V.Op) and len(cond.args) == 2):
        return None
    x, y = cond.args
    if cond.op == "gt":
        x, y = y, x
    elif cond.op != "lt":
        return None
    if not (isinstance(y, V.Const) and y.value == 0) or x != else_:
        return None
    parts = _c_remainder(x)
    if parts is None or _minus(then, x) != parts[1]:
        return None
    return af.mod(*parts)


def _rewrapped(a: Poly, n: Poly) -> Poly | None:
    """``(r + k*n) % n`` with ``r = p % n`` (C's remainder, in ``(-n, n)``) and ``k >= 1``: the
    sum is non-negative, so the result is the floor remainder ``p mod n``."""
    for atom in a.top_atoms():
        parts = _c_remainder(atom.payload if isinstance(atom, af.OpaqueAtom) else None)
        if parts is None or parts[1] != n:
            continue
        rest = a - Poly.atom(atom)
        k = af.floordiv(rest, n) if rest != af.ZERO else af.ZERO
        if k.is_const and k.const_value >= 1 and rest == k * n:
            return af.mod(*parts)
    return None


def _positive(n: Poly) -> bool:
    """A divisor known positive (a size parameter counts: dividing by zero is undefined)."""
    return n.const_value > 0 if n.is_const else af.provably_nonneg(n)


def _address_remainder(index: Poly) -> Poly:
    """A flat element offset from a tensor's start that is exactly C's remainder ``a % n``
    (``n > 0``): a negative remainder would address memory before the tensor (undefined in C),
    so on every valid execution it is the floor remainder ``a mod n``, an index the analysis
    models."""
    if len(index.terms) != 1 or index.terms[0][1] != 1 or len(index.terms[0][0]) != 1:
        return index
    atom = index.terms[0][0][0]
    parts = _c_remainder(atom.payload if isinstance(atom, af.OpaqueAtom) else None)
    return index if parts is None else af.mod(*parts)


def _c_remainder(x: object) -> tuple[Poly, Poly] | None:
    """``(a, n)`` when ``x`` is C's remainder ``a % n`` of two indices with ``n`` positive."""
    if not (isinstance(x, V.Op) and x.op == "mod" and len(x.args) == 2):
        return None
    a, n = (_as_poly(v) for v in x.args)
    if a is None or n is None or not _positive(n):
        return None
    return a, n


def _minus(total: object, x: V.DExpr) -> Poly | None:
    """``total - x`` as an index when ``total`` is ``x`` plus an index, else None."""
    if not (_int_data(total) and _int_data(x)):
        return None
    rest = _data_index(total) - _data_index(x)
    return None if any(isinstance(t, af.OpaqueAtom) for t in rest.atoms()) else rest


def _as_poly(v: object) -> Poly | None:
    if isinstance(v, V.IntVal):
        return v.poly
    if isinstance(v, V.Const) and isinstance(v.value, int) and not isinstance(v.value, bool):
        return Poly.const(v.value)
    return None


def _poly_binop(op: str, a: Poly, b: Poly) -> object:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op in ("/", "%"):
        if not _floor_is_c(a, b):
            return None  # C truncates toward zero: kept as integer data (exact C semantics)
        return af.floordiv(a, b) if op == "/" else af.mod(a, b)
    if op == "<<" and b.is_const:
        return a * (1 << b.const_value)
    if op == ">>" and b.is_const:
        return af.floordiv(a, 1 << b.const_value)
    if op == "&" and b.is_const and b.const_value > 0 and (b.const_value + 1) & b.const_value == 0:
        return af.mod(a, b.const_value + 1)
    if op in ("<", "<=", ">", ">=", "==", "!="):
        return CondVal(Cond.of(af.compare(op, a, b)))
    return None


#: stands for the lanes' maximum inside a lane fold until the fold is built
_PLACE = V.Carried("float32", "%online-max")

#: work units for substituting deferred lanes at the end of a run (see Executor._undefer)
UNDEFER_UNITS = 200_000
#: work units (see :data:`cuda2nki.lift.values.WORK`) the rest of one symbolic execution may
#: spend: values that grow without bound (shuffles of shuffles in an unrolled loop) end in a
#: refusal, never a hang, and the same answer however loaded the machine.  The corpus's
#: largest kernel spends about 36,000.
EXECUTE_UNITS = 600_000


def _online_sum(env: dict, n: str, carried: dict) -> tuple | None:
    """``d = d * exp(m - m') + exp(v - m')`` with ``m' = max(m, v)`` (the online softmax
    normaliser, ``m`` another carried local updated to ``m'``): ``(m, v)``, else None."""
    new = env.get(n)
    if not (isinstance(new, V.Op) and new.op == "add" and len(new.args) == 2):
        return None
    car = V.Carried(new.dtype, n)
    for scaled, fresh in (new.args, new.args[::-1]):
        if not (isinstance(scaled, V.Op) and scaled.op == "mul" and car in scaled.args):
            continue
        rescale = scaled.args[1] if scaled.args[0] == car else scaled.args[0]
        x = _exp_of_sub(rescale)
        y = _exp_of_sub(fresh)
        if x is None or y is None or x[1] != y[1]:
            continue
        mcar, mnew = x
        v = y[0]
        if not isinstance(mcar, V.Carried) or mcar.name == n or mcar.name not in carried:
            continue
        if env.get(mcar.name) != mnew or V.has_carried(v):
            continue
        if isinstance(mnew, V.Op) and mnew.op == "max" and set(mnew.args) == {mcar, v}:
            return mcar.name, v
    return None


def _exp_of_sub(e: V.DExpr) -> tuple | None:
    """``(a, b)`` for ``exp(a - b)``."""
    if isinstance(e, V.Op) and e.op == "exp" and isinstance(e.args[0], V.Op):
        inner = e.args[0]
        if inner.op == "sub" and len(inner.args) == 2:
            return inner.args[0], inner.args[1]
    return None


def _split_combine(new: V.DExpr, car: V.Carried) -> tuple[str | None, V.DExpr | None]:
    """``new`` as ``car op term``: returns (op, term)."""
    if isinstance(new, V.Op) and new.op in _COMBINE and len(new.args) == 2:
        a, b = new.args
        if a == car:
            return new.op, b
        if b == car:
            return new.op, a
        # acc + x + y  ->  (acc + x) + y  ->  acc + (x + y) (reassociation of one op)
        if new.op in ("add", "mul") and isinstance(a, V.Op) and a.op == new.op:
            op, t = _split_combine(a, car)
            if op == new.op:
                return op, V.Op(new.dtype, op, (t, b))
    if isinstance(new, V.Op) and new.op == "sub" and new.args[0] == car:
        t = new.args[1]
        return "add", V.Op(t.dtype, "neg", (t,))
    if isinstance(new, V.Select) and isinstance(new.cond, V.Op) and new.else_ == car:
        # if (f > acc) acc = f;  /  acc = (f > acc) ? f : acc   ->  max (and the min forms)
        c, f = new.cond, new.then
        if c.op in ("gt", "ge", "lt", "le") and not V.has_carried(f):
            a, b = c.args
            if (a, b) == (f, car):
                return ("max" if c.op in ("gt", "ge") else "min"), f
            if (a, b) == (car, f):
                return ("min" if c.op in ("gt", "ge") else "max"), f
    if isinstance(new, V.Select):
        # acc = cond ? acc op f : acc   ->  acc op (cond ? f : identity)
        if new.else_ == car:
            op, t = _split_combine(new.then, car)
            if op is not None:
                return op, V.Select(t.dtype, new.cond, t, V.Const(t.dtype, _identity(op)))
    return None, None


def _flat_shared(arr: SharedArr, idx: tuple) -> Poly:
    if len(idx) == 1:
        return idx[0]
    flat = af.ZERO
    for k, i in enumerate(idx):
        stride = 1
        for d in arr.dims[k + 1 :]:
            stride *= d or 1
        flat = flat + i * stride
    return flat


def _walk_stmts(s: A.Stmt):
    yield s
    if isinstance(s, A.Block):
        for x in s.body:
            yield from _walk_stmts(x)
    elif isinstance(s, A.If):
        yield from _walk_stmts(s.then)
        if s.else_ is not None:
            yield from _walk_stmts(s.else_)
    elif isinstance(s, (A.For, A.While, A.DoWhile)):
        if isinstance(s, A.For):
            for i in s.init:
                yield from _walk_stmts(i)
        yield from _walk_stmts(s.body)
    elif isinstance(s, A.Switch):
        for c in s.cases:
            for x in c.body:
                yield from _walk_stmts(x)


def _walk_exprs(e: object):
    if isinstance(e, A.Expr):
        yield e
    if isinstance(e, (A.Node,)):
        for f in e.__dataclass_fields__:
            v = getattr(e, f)
            if isinstance(v, A.Node):
                yield from _walk_exprs(v)
            elif isinstance(v, tuple):
                for x in v:
                    if isinstance(x, A.Node):
                        yield from _walk_exprs(x)


def _has_return(s: A.Stmt) -> bool:
    return any(isinstance(x, A.Return) for x in _walk_stmts(s))


def _int_cast_keeps(p: Poly, to: str) -> bool:
    """Whether converting the index value ``p`` to the integer type ``to`` leaves it unchanged:
    a type of 32 bits or more (index arithmetic is assumed not to overflow int32; ``unsigned``
    needs the value non-negative), or a narrower one whose range provably holds it (C wraps the
    others: ``(unsigned char)(i - 500)``)."""
    if to == "uint32":
        return af.provably_nonneg(p)
    if not is_narrow_int(to):
        return True
    info = np.iinfo(NUMPY_DTYPES[to])
    return af.provably_nonneg(p - int(info.min)) and af.provably_nonneg(int(info.max) - p)


def _contains_sync(s: A.Stmt) -> bool:
    return any(isinstance(x, A.Call) and x.func == "__syncthreads" for x in _walk_exprs(s))


def _assigned_names(s: A.Stmt) -> set[str]:
    out: set[str] = set()
    for x in _walk_exprs(s):
        if isinstance(x, A.Assign):
            t = x.target
            while isinstance(t, (A.Member, A.Index)):  # a vector lane, a local array element
                t = t.base
            if isinstance(t, A.Name):
                out.add(t.name)
        elif (
            isinstance(x, A.Unary)
            and x.op in ("pre++", "post++", "pre--", "post--")
            and isinstance(x.operand, A.Name)
        ):
            out.add(x.operand.name)
    return out
