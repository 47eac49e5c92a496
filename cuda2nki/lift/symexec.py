"""Symbolic execution of one CUDA kernel for a generic thread.

The kernel body is executed once with ``threadIdx``/``blockIdx``/sizes/scalar parameters as symbols.
Integer locals fold to :class:`~cuda2nki.lift.affine.Poly`; data values become
:mod:`~cuda2nki.lift.values` trees over loads of the pointer parameters.  Control flow on indices
becomes guards (:class:`~cuda2nki.lift.affine.Cond`), early returns guard what follows, loops
become parallel axes (when they write) or folds (when they carry a local: ``acc = acc op f(k)``),
and shared memory is resolved by inverting the writing thread's index (``tile[ty][tx] = A[...]``;
``tile[k][tx]`` read later is the value thread ``(k, tx)`` wrote).  Anything the analysis cannot
prove ends in :class:`Refusal` naming the construct.

The result, :class:`ThreadProgram`, lists every global write with its index, value, guard and the
loops around it: the recognisers turn that into intent IR.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from cuda2nki.diagnostics import UNKNOWN_LOC, SourceLoc
from cuda2nki.dtypes import NUMPY_DTYPES
from cuda2nki.frontend import ast as A
from cuda2nki.ir.ops import is_narrow_int
from cuda2nki.lift import affine as af
from cuda2nki.lift import argfold, control, iterate, mathcompose, online, reroll, shortcirc
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Cond, Poly
from cuda2nki.lift.collective import collective_reason
from cuda2nki.lift.forwarding import MISS, LoopCtx, StoreRec, disjoint, forward_store, implies
from cuda2nki.lift.gaps import stride_gap
from cuda2nki.lift.legacyshfl import LEGACY_SHUFFLES as _LEGACY_SHUFFLES
from cuda2nki.lift.legacyshfl import legacy_shuffle
from cuda2nki.lift.lockstep import split_lockstep
from cuda2nki.lift.online_branch import canonical_online

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


def _shared_1d(v: object) -> bool:
    return isinstance(v, SharedArr) and not v.scalar and len(v.dims) == 1


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
    "rint": "round",
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
    order = [
        "bool",
        "int8",
        "uint8",
        "int16",
        "uint16",
        "int32",
        "uint32",
        "int64",
        "uint64",
        "float16",
        "bfloat16",
        "float32",
        "float64",
    ]
    if is_float_dtype(a) or is_float_dtype(b):
        fa = a if is_float_dtype(a) else "float16"
        fb = b if is_float_dtype(b) else "float16"
        best = max(fa, fb, key=order.index)
        return "float32" if best in ("float16", "bfloat16") and fa != fb else best
    return max(a, b, key=lambda t: order.index(t) if t in order else 5) if a != b else a


# --------------------------------------------------------------------------- executor


class Executor:
    def __init__(
        self,
        tu: A.TranslationUnit,
        fn: A.Function,
        block: tuple | None = None,
        reroll: bool = True,
        ties: Mapping[str, af.Poly] | None = None,
    ):
        self.tu, self.fn = tu, fn
        self.ties = dict(ties or {})  # tied sizes (binding ``M = { tie = "K" }``) -> their value
        self.reroll, self.rerolled = reroll, False
        self.block = block
        self.env: dict[str, object] = {}
        self.decl_depth: dict[str, int] = {}
        self.guards: list[Cond] = []  # enclosing index-level conditions
        self.dguards: list[V.DExpr] = []  # enclosing data-level conditions
        self.returned: list[Cond] = []
        self.loops: list[LoopCtx] = []
        self.stores: list[StoreRec] = []
        self.reads: set[str] = set()
        self.shared: dict[str, SharedArr] = {}
        self.epoch = 0
        self.warp_epochs: set = set()
        self.counter = itertools.count()
        self.tensors: dict[str, str] = {}
        self.scalars: dict[str, str] = {}
        self.carry_scope: list[dict[str, object]] = []  # locals visible to a loop being folded
        self.ret_value: list = []
        self.templates: list = []
        self.promoted: dict = {}  # (tensor, index) -> local carrying the element in a loop
        self.promoted_init: dict = {}  # that local's value before the loop
        self.shfl_info: dict = {}  # id(shuffle result) -> (kind, offset, source, result, width)
        self.deferred: dict = {}  # lane symbol -> the source lane it stands for (see _shifted)
        self.atoms_memo: dict = {}
        V.reset_memos()  # work charged for this kernel must not depend on earlier kernels
        self.ladder: dict = {}  # id(value) -> (op, kind, offsets, base, width, value)
        self.arg_ladders: dict = {}  # id(value) -> argfold.Ladder (argmax across lanes)
        self.online_ladders: dict = {}  # id(value) -> online.Online (softmax across lanes)
        for p in fn.params:
            if isinstance(p.ty, A.PointerType):
                self.tensors[p.name] = dtype_of(p.ty)
                self.env[p.name] = PtrVal(p.name, af.ZERO, dtype_of(p.ty), _vec_width(p.ty))
            elif isinstance(p.ty, A.ScalarType):
                self.scalars[p.name] = p.ty.name
                self.env[p.name] = (
                    self.ties[p.name]
                    if p.name in self.ties
                    else af.sym(p.name)
                    if not p.ty.is_float
                    else V.Scalar(p.ty.name, p.name)
                )
            else:
                raise Refusal("C2N2010", p.loc, what=f"parameter '{p.name}' of this type")
        for g in tu.globals:
            if g.init is not None and isinstance(g.ty, A.ScalarType) and g.space != "device":
                v = self.eval(g.init)
                self.env[g.name] = v
            elif isinstance(g.ty, A.ArrayType):
                if g.init is None or not (g.space != "device" or _const_elems(g.ty)):
                    raise Refusal(
                        "C2N2010",
                        g.loc,
                        what=f"global array '{g.name}' (only statically initialised "
                        "__constant__ tables are lifted)",
                    )
                self.init_array(g.name, g.ty, g.init, g.loc)  # a table of literal constants
                for k in [k for k in self.env if k.startswith(g.name + "[")]:
                    if not isinstance(self.env[k], V.Const):
                        raise Refusal(
                            "C2N2010", g.loc, what=f"global array '{g.name}' of non-constants"
                        )
        # file-scope names (and table elements) stay visible in inlined device functions
        names = tuple(g.name for g in tu.globals)
        self.globals = {k: v for k, v in self.env.items() if k in names or k.split("[")[0] in names}

    # ------------------------------------------------------------------ helpers
    def fresh(self, base: str) -> str:
        return f"%{base}#{next(self.counter)}"

    def guard(self) -> Cond:
        return af.conj(self.guards)

    def live(self) -> Cond:
        return af.conj([self.guard()] + [r.negate() for r in self.returned])

    def run(self) -> ThreadProgram:
        known = {f"threadIdx.{d}": b for d, b in zip("xyz", self.block or ())}
        with af.bounds(known):
            self.exec_block(self.fn.body, new_scope=True)
            self._undefer()
        return ThreadProgram(
            self.fn,
            self.tensors,
            self.scalars,
            self.stores,
            self.reads,
            self.block or (),
            self.shared,
            self.templates,
            self.rerolled,
            frozenset(self.warp_epochs),
        )

    # ------------------------------------------------------------------ conversions
    def as_poly(self, v: object, loc: SourceLoc) -> Poly:
        if isinstance(v, Poly):
            return v
        if isinstance(v, V.IntVal):
            return v.poly
        if (
            isinstance(v, V.Cast)
            and isinstance(v.operand, V.IntVal)
            and _int_cast_keeps(v.operand.poly, v.dtype)
        ):
            return v.operand.poly
        if isinstance(v, V.DExpr) and not is_float_dtype(v.dtype):
            return _data_index(v)
        raise Refusal("C2N2013", loc, what="a non-integer value used as an index")

    def as_data(self, v: object, loc: SourceLoc, dtype: str = "int32") -> V.DExpr:
        if isinstance(v, V.DExpr):
            return v
        if isinstance(v, Poly):
            if v.is_const:
                return V.Const(dtype, v.const_value)
            return V.IntVal(dtype, v)
        if isinstance(v, CondVal):
            return V.Pred("bool", v.cond)
        raise Refusal("C2N2010", loc, what="a pointer or vector used as a scalar value")

    def as_cond(self, v: object, loc: SourceLoc) -> Cond | V.DExpr:
        if isinstance(v, CondVal):
            return v.cond
        if isinstance(v, Poly):
            return Cond.of(af.Cmp(v, "!="))
        if isinstance(v, V.DExpr):
            if v.dtype == "bool":
                return v
            return V.Op("bool", "ne", (v, V.Const(v.dtype, 0)))
        raise Refusal("C2N2010", loc, what="a pointer used as a condition")

    # ------------------------------------------------------------------ statements
    def exec_block(self, b: A.Stmt, new_scope: bool = True) -> None:
        stmts = b.body if isinstance(b, A.Block) else (b,)
        saved = dict(self.env) if new_scope else None
        declared: list[str] = []
        nguards = len(self.guards)
        for s in stmts:
            if isinstance(s, A.VarDecl):
                declared.append(s.name)
            self.exec_stmt(s)
        del self.guards[nguards:]
        if saved is not None:
            for n in declared:  # end of scope: restore shadowed outer bindings
                if n in saved:
                    self.env[n] = saved[n]
                else:
                    self.env.pop(n, None)

    def exec_stmt(self, s: A.Stmt) -> None:
        if isinstance(s, A.Block):
            self.exec_block(s)
        elif isinstance(s, A.VarDecl):
            self.exec_decl(s)
        elif isinstance(s, A.ExprStmt):
            self.eval(s.expr, stmt=True)
        elif isinstance(s, A.If):
            self.exec_if(s)
        elif isinstance(s, A.For):
            self.exec_for(s)
        elif isinstance(s, A.Return):
            self.exec_return(s)
        elif isinstance(s, A.Empty):
            pass
        elif isinstance(s, (A.While, A.DoWhile)) and iterate.exec_bounded(self, s):
            pass  # an elementwise iteration with a data-dependent exit a counter bounds
        elif isinstance(s, A.While) and control.while_to_for(s) is not None:
            loop, name = control.while_to_for(s)
            self.exec_for(loop)
            if name in self.env:  # its value after the loop is not tracked
                self.env[name] = None
        elif isinstance(s, (A.While, A.DoWhile)):
            raise Refusal(
                "C2N2019",
                s.loc,
                what="a while loop whose body does not end by stepping a variable of its condition"
                if isinstance(s, A.While)
                else "a do-while loop (trip count decided by the data)",
            )
        elif isinstance(s, (A.Break, A.Continue)):
            raise Refusal("C2N2019", s.loc, what="break/continue inside a loop")
        elif isinstance(s, A.Switch):
            try:
                chain = control.switch_to_ifs(s, self.fresh("switch"))
            except control.SwitchShape as exc:
                raise Refusal("C2N2010", s.loc, what=f"switch statement with {exc}") from None
            self.exec_block(chain)
        else:
            raise Refusal("C2N2010", s.loc, what=type(s).__name__)

    def exec_decl(self, d: A.VarDecl) -> None:
        if d.storage in ("shared", "extern_shared"):
            dims = d.ty.dims if isinstance(d.ty, A.ArrayType) else (1,)
            scalar = not isinstance(d.ty, A.ArrayType)
            self.shared[d.name] = SharedArr(d.name, dims, dtype_of(d.ty), scalar=scalar)
            self.env[d.name] = self.shared[d.name]
            return
        if isinstance(d.ty, A.ArrayType):
            if d.init is not None:
                self.init_array(d.name, d.ty, d.init, d.loc)
                return
            self.env[d.name] = ("localarr", d.ty.dims, dtype_of(d.ty))
            return
        self.decl_depth[d.name] = len(self.guards)
        if d.init is None:
            if isinstance(d.ty, A.VectorType):
                self.env[d.name] = VecVal(
                    tuple(V.Const(d.ty.base.name, 0) for _ in range(d.ty.width)), d.ty.base.name
                )
            else:
                self.env[d.name] = None
            return
        v = self.eval(d.init)
        self.env[d.name] = self.convert(v, d.ty, d.loc)

    def init_array(self, name: str, ty: A.ArrayType, init: A.Expr, loc: SourceLoc) -> None:
        """A local array (or constant table) with an initialiser list: one local per element,
        the elements the list leaves out zero, as in C."""
        dims = ty.dims
        if not isinstance(init, A.InitList) or any(d is None for d in dims):
            raise Refusal("C2N2010", loc, what="array initialiser of this form")
        arr = ("localarr", dims, dtype_of(ty))
        self.env[name] = arr
        items = control.flatten_init(init, dims)
        if items is None:
            raise Refusal("C2N2010", loc, what="array initialiser of this form")
        dt = dtype_of(ty)
        for flat, item in enumerate(items):
            idx, rest = [], flat
            for d in reversed(dims):
                idx.insert(0, rest % d)
                rest //= d
            key = name + "".join(f"[{i}]" for i in idx)
            v = self.eval(item) if item is not None else Poly.const(0)
            self.decl_depth[key] = len(self.guards)
            d = self.as_data(v, loc, dt)
            if isinstance(d, V.Op) and d.op == "neg" and isinstance(d.args[0], V.Const):
                d = V.Const(d.dtype, -d.args[0].value)  # a negative literal
            self.env[key] = _cast_to(d, dt)

    def convert(self, v: object, ty: A.CType, loc: SourceLoc) -> object:
        """Value of ``v`` stored in a local of type ``ty`` (implicit conversions)."""
        if isinstance(ty, A.ScalarType):
            if ty.is_float:
                if isinstance(v, (Poly, CondVal)):
                    return V.Cast(ty.name, self.as_data(v, loc))
                if isinstance(v, V.DExpr) and v.dtype != ty.name:
                    return V.Cast(ty.name, v)
                return v
            if isinstance(v, V.DExpr) and is_float_dtype(v.dtype):
                return V.Cast(ty.name, v)
            if isinstance(v, CondVal):
                return v if ty.name == "bool" else V.Cast(ty.name, V.Pred("bool", v.cond))
            return v
        return v

    def exec_if(self, s: A.If) -> None:
        split = shortcirc.rewrite_if(s)
        if split is not None:  # C's short-circuit: the index part guards the memory reads
            for part in split:
                self.exec_if(part)
            return
        c = self.as_cond(self.eval(s.cond), s.cond.loc)
        if isinstance(c, Cond):
            self.guards.append(c)
            self.exec_block(s.then)
            self.guards.pop()
            if s.else_ is not None:
                self.guards.append(c.negate())
                self.exec_block(s.else_)
                self.guards.pop()
            return
        if self._data_return(s, c):
            return
        # data-dependent branch: only assignments/stores, no returns inside
        if _has_return(s.then) or (s.else_ is not None and _has_return(s.else_)):
            raise Refusal("C2N2018", s.loc, what="return under a data-dependent condition")
        self.dguards.append(c)
        before = dict(self.env)
        facts = shortcirc.implied_index(c)  # the index part of ``c``: a guard of the branch
        self.guards.append(facts if facts is not None else af.TRUE)
        self.exec_block(s.then)
        self.guards.pop()
        self.dguards.pop()
        if s.else_ is None:
            self._arg_ladder(before)
        else:
            self.dguards.append(V.Op("bool", "lnot", (c,)))
            self.exec_block(s.else_)
            self.dguards.pop()

    def _data_return(self, s: A.If, c: V.DExpr) -> bool:
        """``if (data) return;`` at the top level of the kernel (no loop, no enclosing data
        condition): everything after it runs only where the condition is false -- a data-level
        guard for the rest of the kernel."""
        body = s.then.body if isinstance(s.then, A.Block) else (s.then,)
        if s.else_ is not None or len(body) != 1 or not isinstance(body[0], A.Return):
            return False
        if body[0].value is not None or self.loops or self.carry_scope or self.dguards:
            return False
        if self.ret_value:  # inside an inlined device function
            return False
        self.dguards.append(V.Op("bool", "lnot", (c,)))
        return True

    def exec_return(self, s: A.Return) -> None:
        if self.ret_value is not None and self.ret_value and self.ret_value[-1] is not None:
            # inside an inlined device function
            frame = self.ret_value[-1]
            v = self.eval(s.value) if s.value is not None else None
            frame.append((self.guard(), v))
            return
        if self.loops or self.carry_scope:
            raise Refusal("C2N2019", s.loc, what="return inside a loop")
        if self.dguards:
            raise Refusal("C2N2018", s.loc, what="return under a data-dependent condition")
        self.returned.append(self.guard())

    # ------------------------------------------------------------------ loops
    def exec_for(self, s: A.For) -> None:
        if len(s.init) > 1:  # variables stepped in lockstep: one counted loop (lift.lockstep)
            single = split_lockstep(s, _assigned_names(s.body))
            if single is not None:
                self.exec_stmt(single)
                return
        if len(s.init) != 1 or s.cond is None or s.step is None:
            raise Refusal("C2N2019", s.loc, what="a for loop without one init, condition and step")
        init = s.init[0]
        if isinstance(init, A.VarDecl):
            name, start_e = init.name, init.init
        elif (
            isinstance(init, A.ExprStmt)
            and isinstance(init.expr, A.Assign)
            and isinstance(init.expr.target, A.Name)
            and init.expr.op == "="
        ):
            name, start_e = init.expr.target.name, init.expr.value
        else:
            raise Refusal("C2N2019", s.loc, what="loop initialisation")
        if start_e is None:
            raise Refusal("C2N2019", s.loc, what="uninitialised loop variable")
        if name in _assigned_names(s.body):
            raise Refusal("C2N2019", s.loc, what=f"loop variable '{name}' assigned in the body")
        start = self.as_poly(self.eval(start_e), start_e.loc)
        saved = self.env.get(name, _UNSET)
        saved_depth = self.decl_depth.get(name)
        self.decl_depth[name] = len(self.guards)
        step = self._loop_step(s.step, name)
        arrays = {k for k, v in self.env.items() if isinstance(v, tuple) and v[0] == "localarr"}
        arrays |= _vector_names(self.env, s.body)
        if step is None:
            self.exec_unrolled(s, name, start)
        elif arrays and control.indexes_with(s.body, name, arrays):
            self.exec_unrolled(s, name, start, arrays=True)
        elif (
            step.is_const
            and start.is_const
            and control.constant_bound(s.cond, name)
            and control.shuffles_in(s.body)
        ):
            # a shuffle ladder counted by an additive variable (offset ``32 >> k``, k = 1..5):
            # its steps are known, each exchanges the value the previous one produced
            self.exec_unrolled(s, name, start)
        elif step.is_const and step.const_value < 0:
            self.exec_countdown(s, name, start, step)
        else:
            self.exec_counted(s, name, start, step)
        if saved is _UNSET:
            self.env.pop(name, None)
        else:
            self.env[name] = saved
        if saved_depth is not None:
            self.decl_depth[name] = saved_depth

    def exec_counted(self, s: A.For, name: str, start: Poly, step: Poly) -> None:
        """``for (v = start; v < stop; v += step)`` as ``v = start + step*k``, ``0 <= k < trips``
        (plus the guard ``v < stop`` where ``start`` depends on the thread)."""
        raw = self.fresh(name)
        self.env[name] = af.sym(raw)
        cond = self.as_cond(self.eval(s.cond), s.cond.loc)
        stop = self._loop_stop(cond, raw, s)
        bound = stop
        if _varying(stop):
            # a triangular loop (``s <= t``): run to the largest stop, guarded by its own
            bound = af.upper(stop)
            if bound is None or _varying(bound):
                bound = self._guard_bound(stop)
            if bound is None or _varying(bound):
                raise Refusal(
                    "C2N2019",
                    s.loc,
                    what="a loop whose trip count depends on the thread or an outer loop "
                    "without a known bound",
                )
        if (
            step.depends_on(af.THREAD_COORDS - set(af.GID))
            or step == af.ZERO
            or (step.is_const and step.const_value < 0)
        ):
            raise Refusal(
                "C2N2019", s.loc, what="a loop step that is not a positive constant or launch size"
            )
        thread_start = start.depends_on(af.THREAD_COORDS)
        lo = start.subs({a: 0 for a in af.THREAD + af.BLOCK}) if thread_start else start
        trips = af.floordiv(bound - lo + step - 1, step) if step != af.ONE else bound - lo
        var = raw
        self.env[name] = start + step * af.sym(var)
        guard = af.TRUE
        if thread_start or bound != stop:
            guard = Cond.of(af.compare("<", start + step * af.sym(var), stop))
        ctx = LoopCtx(var, trips, guard, s.loc)
        with af.bounds({var: trips}):
            self.exec_loop_body(s.body, ctx, name)

    def exec_countdown(self, s: A.For, name: str, start: Poly, step: Poly) -> None:
        """``for (v = start; v >= lo; v -= d)`` as ``v = start - d*k``, ``0 <= k < trips``: the
        condition, read in ``k``, gives the trip count (``k < start - lo + 1`` for ``d = 1``).
        The steps run in the CUDA order (``k = 0`` is ``v = start``)."""
        raw = self.fresh(name)
        self.env[name] = start + step * af.sym(raw)
        cond = self.as_cond(self.eval(s.cond), s.cond.loc)
        trips = self._loop_stop(cond, raw, s)
        if _varying(trips):
            raise Refusal(
                "C2N2019",
                s.loc,
                what="a count-down loop whose trip count depends on the thread or an outer loop",
            )
        ctx = LoopCtx(raw, trips, af.TRUE, s.loc)
        with af.bounds({raw: trips}):
            self.exec_loop_body(s.body, ctx, name)

    def _guard_bound(self, stop: Poly) -> Poly | None:
        """A bound of ``stop`` free of the thread from a guard around the loop: under
        ``P < 0`` it is at most ``stop - P - 1`` (``j <= i`` under ``i < n``: ``n``)."""
        for c in self.live().conjuncts() or []:
            if c.op != "<":
                continue
            b = stop - c.poly - 1
            if not _varying(b):
                return b
        return None

    def exec_unrolled(self, s: A.For, name: str, start: Poly, arrays: bool = False) -> None:
        """A loop with a multiplicative/shift step (tree levels, shuffle offsets): its trip values
        are fixed by the block size, so it is unrolled.  So is a loop indexing a local array or
        constant table with its variable (``arrays``); the stores of its iterations are rolled
        back into one store in a loop where they differ by a constant step."""
        kind = "a loop indexing a local array" if arrays else "a loop with a multiplicative step"
        if not start.is_const:
            raise Refusal(
                "C2N2015" if not arrays else "C2N2019",
                s.loc,
                what=f"{kind} whose start '{start}' is not known"
                + ("" if arrays else " (needs the launch block size)"),
            )
        self.env[name] = start
        marks: list[int] = []
        nshared = sum(len(a.writes) for a in self.shared.values())
        for _ in range(64):
            c = self.as_cond(self.eval(s.cond), s.cond.loc)
            c = V.simplify_cond(c) if isinstance(c, Cond) else c
            if not isinstance(c, Cond) or c.kind not in ("true", "false"):
                raise Refusal(
                    "C2N2015" if not arrays else "C2N2019",
                    s.loc,
                    what=f"{kind} and a condition that is not decided"
                    + ("" if arrays else " for the block size"),
                )
            if c.kind == "false":
                if arrays and nshared == sum(len(a.writes) for a in self.shared.values()):
                    self._reroll(marks, s)
                return
            marks.append(len(self.stores))
            self.exec_block(s.body)
            self.eval(s.step, stmt=True)
            v = self.env[name]
            if not isinstance(v, Poly) or not v.is_const:
                raise Refusal("C2N2015", s.loc, what="a loop step that is not a constant")
        raise Refusal("C2N2019", s.loc, what="a loop with more than 64 unrolled iterations")

    def _reroll(self, marks: list[int], s: A.For) -> None:
        if len(marks) < 2 or not self.reroll:
            return
        bounds = marks + [len(self.stores)]
        groups = [self.stores[a:b] for a, b in zip(bounds, bounds[1:])]
        var = self.fresh("unrolled")
        tmpl = reroll.reroll(groups, var)
        if tmpl is None:
            return
        ctx = LoopCtx(var, Poly.const(len(groups)), af.TRUE, s.loc)
        self.rerolled = True
        del self.stores[marks[0] :]
        for first, t in zip(groups[0], tmpl):
            self.stores.append(
                StoreRec(
                    first.tensor,
                    t["index"],
                    t["value"],
                    t["guard"],
                    (ctx,) + first.loops,
                    first.accumulate,
                    first.loc,
                    len(self.stores),
                )
            )

    def _loop_step(self, e: A.Expr, name: str) -> Poly | None:
        """Additive step (Poly), or None for multiplicative / shifting steps."""
        if isinstance(e, A.Unary) and e.op in ("pre++", "post++") and _is_name(e.operand, name):
            return af.ONE
        if isinstance(e, A.Unary) and e.op in ("pre--", "post--") and _is_name(e.operand, name):
            return Poly.const(-1)
        if isinstance(e, A.Assign) and _is_name(e.target, name):
            if e.op == "+=":
                return self.as_poly(self.eval(e.value), e.loc)
            if e.op == "-=":
                return -self.as_poly(self.eval(e.value), e.loc)
            if (
                e.op == "="
                and isinstance(e.value, A.Binary)
                and _is_name(e.value.left, name)
                and e.value.op in ("+", "-")
            ):
                d = self.as_poly(self.eval(e.value.right), e.loc)
                return d if e.value.op == "+" else -d
            return None
        raise Refusal("C2N2019", e.loc, what="loop step")

    def _loop_stop(self, cond: object, var: str, s: A.For) -> Poly:
        if not isinstance(cond, Cond):
            raise Refusal("C2N2019", s.loc, what="a data-dependent loop condition")
        dom = af.domain_of(cond, {var})
        scaled = _scaled_stop(cond, var)
        if scaled is not None and (dom is None or dom.residual or var not in dom.bounds):
            return scaled  # ``c * var < b`` (a counter stepping a stride-c variable)
        if (
            dom is None
            or dom.residual
            or var not in dom.bounds
            or len(dom.bounds[var].hi) != 1
            or dom.bounds[var].lo
        ):
            raise Refusal("C2N2019", s.loc, what=f"loop condition '{cond}' (need 'var < bound')")
        return dom.bounds[var].hi[0]

    def exec_loop_body(self, body: A.Stmt, ctx: LoopCtx, name: str) -> None:
        """Run the body once with the symbolic loop variable; carried locals become folds."""
        promoted = self._promote(body, name, ctx)
        before = dict(self.env)
        visible = {
            k
            for k, v in before.items()
            if not isinstance(v, (PtrVal, SharedArr, tuple)) and v is not None and k != name
        }
        names = _assigned_names(body)
        assigned = names & visible
        # elements of local arrays the body writes are carried like scalar locals
        arrays = {
            n for n in names if isinstance(before.get(n), tuple) and before[n][0] == "localarr"
        }
        assigned |= {k for k in visible if k.split("[")[0] in arrays and "[" in k}
        assigned |= set(promoted.values())
        carried = {}
        ints = {n for n in assigned if argfold.int_init(before[n])}
        for n in assigned:
            old = before[n]
            if n in ints:  # an index that may follow a running extremum (argmax)
                old = self.as_data(old, ctx.loc)
            elif isinstance(old, (CondVal, VecVal)):
                raise Refusal(
                    "C2N2011",
                    ctx.loc,
                    var=n,
                    why="an integer, condition or vector carried across iterations",
                )
            carried[n] = old
            self.env[n] = V.Carried(old.dtype, n)
            self.decl_depth[n + "#carry"] = self.decl_depth.get(n, 0)
        saved_depths = {n: self.decl_depth.get(n, 0) for n in carried}
        for n in carried:  # selects inside the body are relative to the iteration start
            self.decl_depth[n] = len(self.guards) + 1
        nstores = len(self.stores)
        self.loops.append(ctx)
        self.carry_scope.append(carried)
        self.guards.append(ctx.guard)
        self.exec_block(body)
        self.guards.pop()
        self.carry_scope.pop()
        self.loops.pop()
        self.decl_depth.update(saved_depths)
        for st in self.stores[nstores:]:
            if V.has_carried(st.value, set(carried)):
                raise Refusal(
                    "C2N2011",
                    st.loc,
                    var=name,
                    why="a running value stored inside the loop (prefix scan)",
                )
        for arr in self.shared.values():
            for w in arr.writes:
                if ctx in w.loops and V.has_carried(w.value, set(carried)):
                    raise Refusal(
                        "C2N2011",
                        ctx.loc,
                        var=name,
                        why="a running value written to shared memory inside the loop",
                    )
        args = argfold.pairs(self.env, carried, ints, ctx.var)
        keys = {p.value for p in args.values()}  # an integer key's running extremum folds
        for n in ints - args.keys() - keys:
            if not _int_fold(self.env[n], n):  # an integer sum (acc += a[k] * w[k]) folds
                raise Refusal(
                    "C2N2011",
                    ctx.loc,
                    var=n,
                    why="an integer, condition or vector carried across iterations",
                )
        canonical_online(self.env, carried)
        online = {n: got for n in carried if (got := _online_sum(self.env, n, carried))}
        for n, old in carried.items():
            if n not in online and n not in args:
                self.env[n] = self._fold(n, old, self.env[n], ctx)
        for n, p in args.items():
            init = self.as_data(carried[p.value], ctx.loc, p.term.dtype)
            self.env[n] = argfold.index_fold(p, self.env[p.value], init, carried[n], ctx)
        for n, (m, v) in online.items():
            acc = self.env[n].dtype  # a double normaliser stays double (C2N2515 when narrowed)
            self.env[n] = self._online_fold(carried[n], carried[m], self.env[m], v, ctx, acc)
        for (tensor, index, dtype), key in promoted.items():  # the element's value after the loop
            del self.promoted[(tensor, index)]
            value = self.env.pop(key)
            if value is not self.promoted_init.pop(key):  # the loop wrote the element
                self._store1(tensor, index, value, dtype, ctx.loc, None)

    def _promote(self, body: A.Stmt, name: str, ctx: LoopCtx) -> dict:
        """Global elements the loop body updates in place at an index that does not change over
        the loop (``y[j] += A[i][j] * x[i]``) are carried like locals and stored after it."""
        out: dict = {}
        declared = {d.name for d in _walk_stmts(body) if isinstance(d, A.VarDecl)}
        assigned = _assigned_names(body) | {name} | declared  # names that change in the body
        for x in _walk_exprs(body):
            if not (isinstance(x, A.Assign) and isinstance(x.target, A.Index)):
                continue
            if x.op == "=" and not control.reads_target(x):
                continue
            t = x.target
            if isinstance(t.base, A.Index) or control.names_in(t.index) & assigned:
                continue
            try:
                base, idx = self._index_path(t)
            except Refusal:
                continue
            if not isinstance(base, PtrVal) or base.shared or base.width != 1:
                continue
            index = base.offset + idx[0]
            k = (base.tensor, index, base.dtype)
            if k in out or (base.tensor, index) in self.promoted:
                continue
            key = self.fresh(f"{base.tensor}[{index}]")
            self.env[key] = self.load(base.tensor, index, base.dtype, x.loc)
            self.promoted_init[key] = self.env[key]
            self.decl_depth[key] = len(self.guards)
            self.promoted[(base.tensor, index)] = key
            out[k] = key
        return out

    def _online_fold(
        self, d0: object, m0: object, m: V.DExpr, v: V.DExpr, ctx: LoopCtx, acc: str
    ) -> V.DExpr:
        """The online sum ``d`` after the loop: ``sum_k exp(v_k - m) + d0 * exp(m0 - m)`` with
        ``m`` the running maximum's final value (the rescalings telescope), summed in ``acc``
        (the normaliser's own type)."""
        term: V.DExpr = V.Op(v.dtype, "exp", (V.Op(v.dtype, "sub", (v, m)),))
        term = _cast_to(term, acc)
        if ctx.guard != af.TRUE:
            term = V.Select(term.dtype, V.Pred("bool", ctx.guard), term, V.Const(term.dtype, 0.0))
        fold = V.Fold(term.dtype, "add", ctx.var, af.ZERO, ctx.extent, af.ONE, term)
        d0 = _cast_to(self.as_data(d0, ctx.loc, term.dtype), term.dtype)
        if isinstance(d0, V.Const) and d0.value == 0:
            return fold
        m0 = _cast_to(self.as_data(m0, ctx.loc, term.dtype), term.dtype)
        scale = V.Op(term.dtype, "exp", (V.Op(term.dtype, "sub", (m0, m)),))
        return V.Op(term.dtype, "add", (V.Op(term.dtype, "mul", (d0, scale)), fold))

    def _fold(self, n: str, init: object, new: object, ctx: LoopCtx) -> object:
        if not isinstance(new, V.DExpr):
            raise Refusal("C2N2011", ctx.loc, var=n, why="not a scalar value")
        car = V.Carried(new.dtype, n)
        if new == car:
            return init
        if not V.has_carried(new, {n}):
            raise Refusal(
                "C2N2011",
                ctx.loc,
                var=n,
                why="the value is overwritten each iteration (last-iteration value)",
            )
        op, term = _split_combine(new, car)
        if op is None or V.has_carried(term):
            raise Refusal(
                "C2N2011",
                ctx.loc,
                var=n,
                why=f"update '{V.short(new)[:120]}' is not 'acc = acc op f(k)'",
            )
        if ctx.guard != af.TRUE:
            term = V.Select(
                term.dtype, V.Pred("bool", ctx.guard), term, V.Const(term.dtype, _identity(op))
            )
        fold = V.Fold(new.dtype, op, ctx.var, af.ZERO, ctx.extent, af.ONE, term)
        init_d = _cast_to(self.as_data(init, ctx.loc, new.dtype), new.dtype)
        if isinstance(init_d, V.Const) and init_d.value == _identity(op):
            return fold
        return V.Op(new.dtype, op, (init_d, fold))

    # ------------------------------------------------------------------ expressions
    def eval(self, e: A.Expr, stmt: bool = False) -> object:
        m = getattr(self, "e_" + type(e).__name__, None)
        if m is None:
            why = collective_reason(e) or f"expression {type(e).__name__}"
            raise Refusal("C2N2010", e.loc, what=why)
        return m(e) if not stmt else m(e, stmt=True) if isinstance(e, (A.Unary,)) else m(e)

    def e_IntLit(self, e: A.IntLit) -> Poly:
        return Poly.const(e.value)

    def e_FloatLit(self, e: A.FloatLit) -> V.DExpr:
        return V.Const(dtype_of(e.ty) if e.ty else "float32", float(e.value))

    def e_BoolLit(self, e: A.BoolLit) -> CondVal:
        return CondVal(af.TRUE if e.value else af.FALSE)

    def e_Name(self, e: A.Name) -> object:
        if e.name not in self.env:
            raise Refusal("C2N2010", e.loc, what=f"name '{e.name}'")
        v = self.env[e.name]
        if v is None:
            raise Refusal("C2N2010", e.loc, what=f"read of uninitialised '{e.name}'")
        if isinstance(v, SharedArr) and v.scalar:
            return self.read_shared(v, (af.ZERO,), e.loc)
        return v

    def e_Builtin(self, e: A.Builtin) -> Poly:
        if e.name == "warpSize":
            return Poly.const(32)
        if e.name == "blockDim" and self.block:
            return Poly.const(self.block["xyz".index(e.dim)])
        if e.name == "threadIdx" and self.block and self.block["xyz".index(e.dim)] == 1:
            return af.ZERO
        return af.sym(f"{e.name}.{e.dim}")

    def e_Cast(self, e: A.Cast) -> object:
        v = self.eval(e.operand)
        if isinstance(e.to, A.PointerType):
            if isinstance(v, PtrVal):
                w = _vec_width(e.to)
                if w != v.width:
                    if v.width != 1:
                        raise Refusal("C2N2010", e.loc, what="re-casting a vector pointer")
                    return PtrVal(v.tensor, v.offset, dtype_of(e.to), w, v.shared)
                return v
            raise Refusal("C2N2010", e.loc, what="cast of a non-pointer to a pointer")
        if isinstance(e.to, A.ScalarType):
            if e.to.is_float:
                d = self.as_data(v, e.loc)
                return d if d.dtype == e.to.name else V.Cast(e.to.name, d)
            if isinstance(v, Poly):
                if _int_cast_keeps(v, e.to.name):
                    return v
                return V.Cast(e.to.name, self.as_data(v, e.loc))  # C wraps: data, not an index
            if isinstance(v, V.DExpr):
                return V.Cast(e.to.name, v)
        return v

    def e_Unary(self, e: A.Unary, stmt: bool = False) -> object:
        if e.op in ("pre++", "post++", "pre--", "post--"):
            one = A.IntLit(loc=e.loc, value=1)
            op = "+=" if "++" in e.op else "-="
            return self.e_Assign(A.Assign(loc=e.loc, op=op, target=e.operand, value=one))
        if e.op == "&":
            return self.address_of(e.operand)
        if e.op == "*":
            return self.deref(self.eval(e.operand), af.ZERO, e.loc)
        v = self.eval(e.operand)
        if e.op == "+":
            return v
        if e.op == "-":
            if isinstance(v, Poly):
                return -v
            d = self.as_data(v, e.loc)
            return V.Op(d.dtype, "neg", (d,))
        if e.op == "!":
            c = self.as_cond(v, e.loc)
            return CondVal(c.negate()) if isinstance(c, Cond) else V.Op("bool", "lnot", (c,))
        if e.op == "~":
            d = self.as_data(v, e.loc)
            return V.Op(d.dtype, "bitnot", (d,))
        raise Refusal("C2N2010", e.loc, what=f"unary '{e.op}'")

    def e_Binary(self, e: A.Binary) -> object:
        a, b = self.eval(e.left), self.eval(e.right)
        op = e.op
        if op in "+-" and _shared_1d(a):  # ``s + k``: the address of s[k]
            a = PtrVal(a.name, af.ZERO, a.dtype, 1, True)
        if op == "+" and _shared_1d(b):
            b = PtrVal(b.name, af.ZERO, b.dtype, 1, True)
        if isinstance(a, PtrVal) and op in "+-" and _int_data(b):
            b = _data_index(b)  # an offset computed from memory (scatter, gather)
        if isinstance(b, PtrVal) and op == "+" and _int_data(a):
            a = _data_index(a)
        # the offset counts scalars: a step of a float4 pointer moves it by 4
        if isinstance(a, PtrVal) and op in "+-" and isinstance(b, Poly):
            step = (b if op == "+" else -b) * a.width
            return PtrVal(a.tensor, a.offset + step, a.dtype, a.width, a.shared)
        if isinstance(b, PtrVal) and op == "+" and isinstance(a, Poly):
            return PtrVal(b.tensor, b.offset + a * b.width, b.dtype, b.width, b.shared)
        if op in ("&&", "||"):
            ca, cb = self.as_cond(a, e.loc), self.as_cond(b, e.loc)
            if isinstance(ca, Cond) and isinstance(cb, Cond):
                return CondVal(ca & cb if op == "&&" else af.disj([ca, cb]))
            if isinstance(ca, Cond):  # C evaluates the right side only where the left decides
                cb = shortcirc.guard_loads(cb, ca if op == "&&" else ca.negate())
            da = ca if isinstance(ca, V.DExpr) else V.Pred("bool", ca)
            db = cb if isinstance(cb, V.DExpr) else V.Pred("bool", cb)
            return V.Op("bool", _BINOPS[op], (da, db))
        # integer data combined with an index stays data (C's wraparound); where it addresses
        # memory, _data_index turns it into an index over the values read
        if op == "%" and _int_data(a) and isinstance(b, Poly):
            wrapped = _rewrapped(_data_index(a), b)
            if wrapped is not None:
                return wrapped
        if isinstance(a, Poly) and isinstance(b, Poly):
            r = _poly_binop(op, a, b)
            if r is not None:
                return r
        da = self.as_data(a, e.left.loc, dtype_of(e.left.ty))
        db = self.as_data(b, e.right.loc, dtype_of(e.right.ty))
        if op not in _BINOPS:
            raise Refusal("C2N2010", e.loc, what=f"operator '{op}'")
        if op in ("<", "<=", ">", ">=", "==", "!="):
            return V.Op("bool", _BINOPS[op], (da, db))
        dt = dtype_of(e.ty) if e.ty is not None else promote(da.dtype, db.dtype)
        return self.combine(_BINOPS[op], dt, _cast_to(da, dt), _cast_to(db, dt))

    def e_Ternary(self, e: A.Ternary) -> object:
        c = self.as_cond(self.eval(e.cond), e.cond.loc)
        a, b = self.eval(e.then), self.eval(e.else_)
        if isinstance(c, Cond) and isinstance(a, Poly) and isinstance(b, Poly) and a == b:
            return a
        dt = dtype_of(e.ty) if e.ty is not None else "float32"
        da, db = self.as_data(a, e.loc, dt), self.as_data(b, e.loc, dt)
        wrapped = _floor_mod_fixup(c, da, db)
        if wrapped is not None:
            return wrapped
        cd = V.Pred("bool", c) if isinstance(c, Cond) else c
        return V.Select(dt, cd, _cast_to(da, dt), _cast_to(db, dt))

    def e_Comma(self, e: A.Comma) -> object:
        v = None
        for x in e.exprs:
            v = self.eval(x)
        return v

    def e_SizeOf(self, e: A.SizeOf) -> Poly:
        t = e.of
        if isinstance(t, A.ScalarType):
            return Poly.const(max(t.bits // 8, 1))
        if isinstance(t, A.VectorType):
            return Poly.const(t.base.bits // 8 * t.width)
        raise Refusal("C2N2010", e.loc, what="sizeof of this type")

    def e_Member(self, e: A.Member) -> object:
        v = self.eval(e.base)
        if isinstance(v, VecVal) and e.field in LANES:
            return v.lanes[LANES.index(e.field)]
        raise Refusal("C2N2010", e.loc, what=f"member access '.{e.field}'")

    def e_Index(self, e: A.Index) -> object:
        base, idx = self._index_path(e)
        return self.read_indexed(base, idx, e.loc)

    def _index_path(self, e: A.Expr) -> tuple[object, list[Poly]]:
        idx: list[Poly] = []
        while isinstance(e, A.Index):
            idx.insert(0, self.as_poly(self.eval(e.index), e.index.loc))
            e = e.base
        return self.eval(e), idx

    def read_indexed(self, base: object, idx: list[Poly], loc: SourceLoc) -> object:
        if isinstance(base, PtrVal):
            if len(idx) != 1:
                raise Refusal("C2N2010", loc, what="multi-level pointer indexing")
            return self.deref(base, idx[0], loc)
        if isinstance(base, SharedArr):
            return self.read_shared(base, tuple(idx), loc)
        if isinstance(base, tuple) and base[0] == "localarr":
            key = self._local_key(base, idx, loc)
            if key not in self.env:
                raise Refusal("C2N2010", loc, what="read of an unwritten local array element")
            return self.env[key]
        if isinstance(base, VecVal):
            return base.lanes[_lane(base, idx, loc)]
        raise Refusal("C2N2010", loc, what="indexing a non-array value")

    def _local_key(self, arr: tuple, idx: list[Poly], loc: SourceLoc) -> str:
        if not all(i.is_const for i in idx):
            raise Refusal("C2N2013", loc, what="a local array indexed by a non-constant")
        name = next(k for k, v in self.env.items() if v is arr)
        return name + "".join(f"[{i.const_value}]" for i in idx)

    def deref(self, p: object, off: Poly, loc: SourceLoc) -> object:
        if not isinstance(p, PtrVal):
            raise Refusal("C2N2010", loc, what="dereference of a non-pointer")
        if p.shared:
            return self.read_shared(self.shared[p.tensor], (p.offset + off,), loc)
        flat = p.offset * 1 + off * p.width if p.width > 1 else p.offset + off
        if p.width > 1:
            lanes = tuple(self.load(p.tensor, flat + k, p.dtype, loc) for k in range(p.width))
            return VecVal(lanes, p.dtype)
        return self.load(p.tensor, flat, p.dtype, loc)

    def load(self, tensor: str, index: Poly, dtype: str, loc: SourceLoc) -> V.DExpr:
        index = _address_remainder(index)
        if (tensor, index) in self.promoted:
            return self.env[self.promoted[(tensor, index)]]
        for a in index.top_atoms():
            if isinstance(a, af.OpaqueAtom) and a.key.startswith("clamp:"):
                f, x, y = a.payload  # min(x, y) / max(x, y): the load of whichever is taken
                take_x = _le0(x - y) if f == "min" else _le0(y - x)
                lx = self.load(tensor, index.subs({a: x}), dtype, loc)
                ly = self.load(tensor, index.subs({a: y}), dtype, loc)
                return V.Select(dtype, V.Pred("bool", take_x), lx, ly)
        return self._forwarded(tensor, index, dtype, loc, len(self.stores))

    def _forwarded(self, tensor: str, index: Poly, dtype: str, loc: SourceLoc, upto: int):
        """This thread's own earlier store to the element (among the first ``upto`` stores), else
        the element's value in memory.  A store that may or may not have written the element
        (``data[2*t + 1]`` then ``data[n - 1]``) is selected by that condition."""
        for k in range(upto - 1, -1, -1):
            st = self.stores[k]
            if st.tensor != tensor:
                continue
            fwd = forward_store(st, index, self.loops)
            if fwd is MISS:
                continue
            if fwd is None and st.accumulate is None and stride_gap(st.index, index, self.sizes()):
                continue  # `C[r * N + c]` then `C[(r + 1) * N + c]`: apart unless C is empty
            if fwd is None:
                maybe = st.accumulate is None and all(lc in self.loops for lc in st.loops)
                if not maybe:
                    raise Refusal(
                        "C2N2017",
                        loc,
                        tensor=tensor,
                        why="it reads an element written earlier that cannot be matched to one "
                        "store",
                    )
                hit = af.conj([Cond.of(af.Cmp(st.index - index, "==")), st.guard])
                hit = V.simplify_cond(hit)
                rest = self._forwarded(tensor, index, dtype, loc, k)
                if hit.kind == "false":
                    return rest
                return V.Select(dtype, V.Pred("bool", hit), st.value, rest)
            value, wrote = fwd
            now = self.live()
            if implies(now, wrote):
                return value
            if disjoint(now, wrote):  # the other arm of a branch: this thread never stored
                continue
            rest = self._forwarded(tensor, index, dtype, loc, k)
            return V.Select(dtype, V.Pred("bool", wrote), value, rest)
        self.reads.add(tensor)
        return V.Load(dtype, tensor, index)

    def sizes(self) -> set[str]:
        """The integer scalar parameters (candidate sizes)."""
        return {n for n, d in self.scalars.items() if not is_float_dtype(d) and n not in self.ties}

    def address_of(self, e: A.Expr) -> PtrVal:
        if isinstance(e, A.Name) and isinstance(self.env.get(e.name), SharedArr):
            arr = self.env[e.name]
            if arr.scalar:
                return PtrVal(arr.name, af.ZERO, arr.dtype, 1, True)
        if isinstance(e, A.Index):
            base, idx = self._index_path(e)
            if isinstance(base, PtrVal) and len(idx) == 1:
                return PtrVal(
                    base.tensor,
                    base.offset + idx[0] * base.width,
                    base.dtype,
                    base.width,
                    base.shared,
                )
            if isinstance(base, SharedArr):
                return PtrVal(base.name, _flat_shared(base, tuple(idx)), base.dtype, 1, True)
        raise Refusal("C2N2010", e.loc, what="address-of this expression")

    # ------------------------------------------------------------------ assignment / stores
    def e_Assign(self, e: A.Assign) -> object:
        value = self.eval(e.value)
        t = e.target
        if e.op != "=":
            old = self.eval(t)
            bop = e.op[:-1]
            got = None
            if isinstance(old, Poly) and isinstance(value, Poly):
                got = _poly_binop(bop, old, value)
                if got is None and bop not in ("/", "%"):
                    raise Refusal("C2N2013", e.loc, what=f"integer '{e.op}'")
            if got is not None:
                value = got
            else:
                if isinstance(old, VecVal):
                    raise Refusal("C2N2010", e.loc, what="compound assignment on a vector")
                od = self.as_data(old, e.loc, dtype_of(t.ty))
                vd = self.as_data(value, e.loc, dtype_of(e.value.ty))
                dt = od.dtype
                value = self.combine(_BINOPS[bop], dt, od, _cast_to(vd, dt))
        self.assign(t, value, e.loc)
        return value

    def assign(self, t: A.Expr, value: object, loc: SourceLoc) -> None:
        if isinstance(t, A.Name):
            self.assign_local(t.name, value, t.ty, loc)
        elif isinstance(t, A.Index):
            base, idx = self._index_path(t)
            if isinstance(base, PtrVal):
                self.store(base, idx[0], value, loc)
            elif isinstance(base, SharedArr):
                self.write_shared(base, tuple(idx), value, loc)
            elif isinstance(base, tuple) and base[0] == "localarr":
                key = self._local_key(base, idx, loc)
                if key not in self.env:
                    self.decl_depth[key] = len(self.guards)
                    self.env[key] = None
                self.assign_local(key, value, None, loc, dtype=base[2])
            elif isinstance(base, VecVal) and isinstance(t.base, A.Name):
                self.set_lane(t.base.name, base, _lane(base, idx, loc), value, loc)
            else:
                raise Refusal("C2N2010", loc, what="assignment through this expression")
        elif isinstance(t, A.Unary) and t.op == "*":
            self.store(self.eval(t.operand), af.ZERO, value, loc)
        elif isinstance(t, A.Member) and isinstance(t.base, A.Name):
            vec = self.eval(t.base)
            if not isinstance(vec, VecVal) or t.field not in LANES:
                raise Refusal("C2N2010", loc, what=f"member store '.{t.field}'")
            self.set_lane(t.base.name, vec, LANES.index(t.field), value, loc)
        else:
            raise Refusal("C2N2010", loc, what="assignment target")

    def set_lane(self, name: str, vec: VecVal, k: int, value: object, loc: SourceLoc) -> None:
        """Lane ``k`` of the vector local ``name`` becomes ``value`` (where the guards since its
        declaration hold)."""
        lanes = list(vec.lanes)
        nv = _cast_to(self.as_data(value, loc, vec.dtype), vec.dtype)
        lanes[k] = self._guarded(name, nv, lanes[k], loc)
        self.env[name] = VecVal(tuple(lanes), vec.dtype)

    def _guard_since(self, name: str) -> Cond:
        depth = self.decl_depth.get(name, 0)
        return af.conj(self.guards[depth:])

    def _guarded(self, name: str, new: object, old: object, loc: SourceLoc) -> object:
        g = self._guard_since(name)
        dg = self.dguards[:]
        if g == af.TRUE and not dg:
            return new
        if old is None:
            return new
        if isinstance(new, Poly) and isinstance(old, Poly) and new == old:
            return new
        nd, od = self.as_data(new, loc), self.as_data(old, loc)
        if g == af.TRUE and len(dg) == 1:
            wrapped = _floor_mod_fixup(dg[0], nd, od)
            if wrapped is not None:
                return wrapped
        dt = od.dtype
        cond: V.DExpr | None = None if g == af.TRUE else V.Pred("bool", g)
        for d in dg:
            cond = d if cond is None else V.Op("bool", "land", (cond, d))
        return V.Select(dt, cond, _cast_to(nd, dt), od)

    def assign_local(
        self, name: str, value: object, ty: A.CType | None, loc: SourceLoc, dtype: str | None = None
    ) -> None:
        if name not in self.env:
            raise Refusal("C2N2010", loc, what=f"assignment to unknown '{name}'")
        old = self.env[name]
        if isinstance(old, SharedArr) and old.scalar:
            self.write_shared(old, (af.ZERO,), value, loc)
            return
        if isinstance(old, (PtrVal, SharedArr)):
            raise Refusal("C2N2010", loc, what="pointer reassignment")
        if ty is not None:
            value = self.convert(value, ty, loc)
        elif dtype is not None and isinstance(value, V.DExpr):
            value = _cast_to(value, dtype)
        if isinstance(value, VecVal):
            self.env[name] = value
            return
        self.env[name] = self._guarded(name, value, old, loc)

    def store(
        self, p: object, off: Poly, value: object, loc: SourceLoc, accumulate: str | None = None
    ) -> None:
        if not isinstance(p, PtrVal):
            raise Refusal("C2N2010", loc, what="store through a non-pointer")
        if p.shared:
            self.write_shared(self.shared[p.tensor], (p.offset + off,), value, loc)
            return
        if p.width > 1:
            if not isinstance(value, VecVal):
                raise Refusal("C2N2010", loc, what="vector store of a non-vector")
            base = p.offset + off * p.width
            for k, lane in enumerate(value.lanes):
                self._store1(p.tensor, base + k, lane, p.dtype, loc, accumulate)
            return
        self._store1(p.tensor, p.offset + off, value, p.dtype, loc, accumulate)

    def _store1(
        self,
        tensor: str,
        index: Poly,
        value: object,
        dtype: str,
        loc: SourceLoc,
        accumulate: str | None,
    ) -> None:
        d = _cast_to(self.as_data(value, loc, dtype), dtype)
        index = _address_remainder(index)
        if (tensor, index) in self.promoted and accumulate is None:
            self.assign_local(self.promoted[(tensor, index)], d, None, loc, dtype=dtype)
            return
        if self.dguards:
            if accumulate not in (None, "add"):
                raise Refusal("C2N2018", loc, what="an atomic under a data-dependent condition")
            cond = self.dguards[0]
            for g in self.dguards[1:]:
                cond = V.Op("bool", "land", (cond, g))
            # an atomic add where the condition is false adds nothing
            old = V.Const(dtype, 0) if accumulate else self.load(tensor, index, dtype, loc)
            d = V.Select(dtype, cond, d, old)
        self.stores.append(
            StoreRec(
                tensor, index, d, self.live(), tuple(self.loops), accumulate, loc, len(self.stores)
            )
        )

    # ------------------------------------------------------------------ shared memory
    def write_shared(
        self,
        arr: SharedArr,
        idx: tuple,
        value: object,
        loc: SourceLoc,
        accumulate: str | None = None,
    ) -> None:
        if self.dguards:
            raise Refusal(
                "C2N2018", loc, what="a shared-memory write under a data-dependent condition"
            )
        idx = self._shared_index(arr, idx, loc)
        d = _cast_to(self.as_data(value, loc, arr.dtype), arr.dtype)
        own = [n for n in V.walk(d) if isinstance(n, V.SRead) and n.array == arr.name]
        if own and not arr.stepped:
            # the first combination step reads the array as the threads filled it: that
            # per-thread value is what a tree over the block combines
            self.templates.extend(own)
            arr.stepped = True
        arr.writes.append(
            SharedWrite(idx, d, self.live(), self.epoch, tuple(self.loops), loc, accumulate)
        )
        self.templates.append(d)

    def _shared_index(self, arr: SharedArr, idx: tuple, loc: SourceLoc) -> tuple:
        if len(idx) == len(arr.dims):
            return tuple(idx)
        if len(idx) == 1:  # flat access to a multi-dim array (through a pointer)
            return (idx[0],) if len(arr.dims) == 1 else self._unflatten(arr, idx[0], loc)
        raise Refusal("C2N2012", loc, array=arr.name, why="partial indexing")

    def _unflatten(self, arr: SharedArr, flat: Poly, loc: SourceLoc) -> tuple:
        raise Refusal("C2N2012", loc, array=arr.name, why="flat access to a multi-dim array")

    def read_shared(self, arr: SharedArr, idx: tuple, loc: SourceLoc) -> V.DExpr:
        idx = self._shared_index(arr, idx, loc)
        return V.SRead(
            arr.dtype,
            arr.name,
            idx,
            len(arr.writes),
            self.epoch,
            tuple(lc.var for lc in self.loops),
            self.live(),
        )

    # ------------------------------------------------------------------ calls
    def e_Call(self, e: A.Call) -> object:
        f = e.func
        if f.startswith("__c2n_") and (why := collective_reason(e)) is not None:
            raise Refusal("C2N2010", e.loc, what=why)
        if f in ("__syncthreads", "__syncwarp"):
            if f == "__syncthreads" and not _block_uniform(self.guard()):
                raise Refusal(
                    "C2N2015", e.loc, what="__syncthreads under a thread-dependent condition"
                )
            self.epoch += 1
            if f == "__syncwarp":
                self.warp_epochs.add(self.epoch)
            return None
        if f in ("__threadfence", "__threadfence_block"):
            return None
        if f == "assert":  # a check of the CUDA run (the SIMT interpreter makes it): no value
            return None
        if f in _LEGACY_SHUFFLES and len(e.args) in (2, 3):
            e = legacy_shuffle(e)  # pre-CUDA 9 ``__shfl_down(v, d)``: the whole warp's mask
            f = e.func
        if f in ("__shfl_down_sync", "__shfl_up_sync", "__shfl_xor_sync", "__shfl_sync"):
            return self.shuffle(e)
        if f.startswith("__c2n_warp_reduce_") and f[18:] in ("add", "max", "min"):
            return self.warp_reduce(e, f[18:])
        if (
            f.startswith("__shfl")
            or f.startswith("__c2n_warp_reduce")
            or f in ("__ballot_sync", "__any_sync", "__all_sync", "__reduce_add_sync")
        ):
            raise Refusal("C2N2015", e.loc, what=f"warp-cooperative '{f}'")
        if f.removesuffix("_block").removesuffix("_system") in _ATOMIC:
            return self.atomic(e)
        if f.removesuffix("_block").removesuffix("_system") == "atomicInc" and len(e.args) == 2:
            return self.atomic_inc(e)
        if f.startswith("atomic"):
            raise Refusal("C2N2022", e.loc, what=f)
        if f in ("__ldg", "__ldcg", "__ldca", "__ldcs", "__ldlu", "__ldcv"):
            return self.deref(self.eval(e.args[0]), af.ZERO, e.loc)
        if e.target is not None:
            return self.inline(e)
        args = [self.eval(a) for a in e.args]
        if f.startswith("make_"):
            dt = dtype_of(e.ty)
            return VecVal(tuple(_cast_to(self.as_data(a, e.loc, dt), dt) for a in args), dt)
        if f in _PACKED:
            return self.packed(e, args)
        if f in ("min", "max") and all(isinstance(a, Poly) for a in args):
            a, b = args
            if (a - b).is_const:
                return a if ((a - b).const_value <= 0) == (f == "min") else b
            c = V.simplify_cond(Cond.of(af.compare("<=", a, b)))
            if c.kind in ("true", "false"):  # decided over the known ranges
                return a if (c.kind == "true") == (f == "min") else b
            # a clamped index (``max(r - 1, 0)``): a load through it becomes a select between
            # the two loads (see ``load``)
            return Poly.atom(af.OpaqueAtom(f"clamp:{f}({a}, {b})", (f, a, b)))
        dt = dtype_of(e.ty)
        data = [self.as_data(a, e.loc, dt) for a in args]
        if f in _CONVERT:
            return V.Cast(_CONVERT[f], data[0])
        composed = _composed(f, data, dt)
        if composed is not None:
            return composed
        name = _math_name(f.lstrip("_") if f.startswith("__") and f not in _MATH2 else f)
        if f in _MATH2:
            name = f
        if name in _MATH1 and len(data) == 1:
            return V.Op(dt, _MATH1[name], (_cast_to(data[0], dt),))
        if name in _MATH2 and len(data) == 2:
            return self.combine(_MATH2[name], dt, *(_cast_to(x, dt) for x in data))
        if name in ("fma", "__fmaf_rn", "fmaf") and len(data) == 3:
            a, b, c = (_cast_to(x, dt) for x in data)
            return V.Op(dt, "add", (V.Op(dt, "mul", (a, b)), c))
        if name == "__saturate" or f == "__saturatef":
            x = data[0]
            return V.Op(dt, "min", (V.Op(dt, "max", (x, V.Const(dt, 0.0))), V.Const(dt, 1.0)))
        raise Refusal("C2N2010", e.loc, what=f"call to '{f}'")

    def packed(self, e: A.Call, args: list) -> object:
        """Packed two-lane intrinsics (``__hmul2``, ``__float2half2_rn``, ``__low2float``...):
        lane by lane, in the lanes' own dtype."""
        kind, arg = _PACKED[e.func]
        dt = dtype_of(e.ty)
        if kind == "lane":  # one lane of a pair, converted to float
            v = args[0]
            if not isinstance(v, VecVal):
                raise Refusal("C2N2010", e.loc, what=f"'{e.func}' of a non-vector")
            return _cast_to(v.lanes[arg], dt)
        if kind == "pair":  # two scalars (or one, broadcast) into a pair
            xs = [self.as_data(a, e.loc, dt) for a in args]
            xs = xs * 2 if len(xs) == 1 else xs
            return VecVal(tuple(_cast_to(x, dt) for x in xs), dt)
        if kind == "convert":  # float2 <-> half2
            v = args[0]
            if not isinstance(v, VecVal):
                raise Refusal("C2N2010", e.loc, what=f"'{e.func}' of a non-vector")
            return VecVal(tuple(_cast_to(x, dt) for x in v.lanes), dt)
        vecs = [a if isinstance(a, VecVal) else None for a in args]
        if any(v is None or len(v.lanes) != 2 for v in vecs):
            raise Refusal("C2N2010", e.loc, what=f"'{e.func}' of a non-pair")
        if kind == "fma":
            a, b, c = vecs
            lanes = tuple(
                V.Op(dt, "add", (V.Op(dt, "mul", (a.lanes[k], b.lanes[k])), c.lanes[k]))
                for k in range(2)
            )
        elif len(vecs) == 1:
            lanes = tuple(V.Op(dt, arg, (vecs[0].lanes[k],)) for k in range(2))
        else:
            lanes = tuple(V.Op(dt, arg, (vecs[0].lanes[k], vecs[1].lanes[k])) for k in range(2))
        return VecVal(lanes, dt)

    def combine(self, op: str, dt: str, a: V.DExpr, b: V.DExpr) -> V.DExpr:
        """``op(a, b)``; ``v op shfl(v, o)`` steps are tracked as a ladder and, once the offsets
        cover the warp (xor: every lane; down: lane 0), replaced by a fold over the lanes."""
        generic = V.Op(dt, op, (a, b))
        if op not in ("add", "max", "min"):
            return generic
        if op == "add":
            merged = self._online_ladder(a, b, generic)
            if merged is not None:
                return merged
        for x, y in ((a, b), (b, a)):
            info = self.shfl_info.get(id(y))
            if info is None or info[3] is not y or not (info[2] is x or info[2] == x):
                continue
            kind, o, _, _, width = info
            st = self.ladder.get(id(x))
            if st is not None and st[5] is x and st[0] == op and st[1] == kind and st[4] == width:
                offsets, base = st[2] | {o}, st[3]
            else:
                offsets, base = frozenset({o}), x
            full = frozenset(1 << k for k in range(width.bit_length() - 1))
            result = generic
            if offsets == full:
                result = self._lane_fold(op, kind, base, width, dt)
            self.ladder[id(result)] = (op, kind, offsets, base, width, result)
            return result
        return generic

    def _online_ladder(self, a: V.DExpr, b: V.DExpr, generic: V.DExpr) -> V.DExpr | None:
        """One step of online-softmax normalisers merged across lanes (see
        :mod:`cuda2nki.lift.online`); once complete, the sum over the lanes."""
        st = online.step(self.shfl_info, self.ladder, self.online_ladders, a, b)
        if st is None:
            return None
        result = generic
        if online.complete(st):
            d, m = st.base
            total = self._lane_fold("max", st.kind, m, st.width, m.dtype)
            big = total.then if isinstance(total, V.Select) else total
            scaled = V.Op(
                d.dtype, "mul", (d, V.Op(d.dtype, "exp", (V.Op(d.dtype, "sub", (m, _PLACE)),)))
            )
            result = self._lane_fold("add", st.kind, scaled, st.width, d.dtype)
            result = V.transform(result, lambda x: big if x == _PLACE else None)
        self.online_ladders[id(result)] = online.Online(
            st.kind, st.width, st.offsets, st.base, result
        )
        return result

    def _lane_fold(self, op: str, kind: str, base: V.DExpr, width: int, dt: str) -> V.DExpr:
        tid = af.sym("threadIdx.x")
        t = self.fresh("lane")
        lane = af.mod(tid, width)
        if kind == "__shfl_xor_sync":  # every lane of the group gets the whole group
            group = width * af.floordiv(tid, width)
            body = V.subs_poly(base, {"threadIdx.x": group + af.sym(t)})
            return V.Fold(dt, op, t, af.ZERO, Poly.const(width), af.ONE, body)
        body = V.subs_poly(base, {"threadIdx.x": tid + af.sym(t)})
        fold = V.Fold(dt, op, t, af.ZERO, Poly.const(width), af.ONE, body)
        # only the group's first lane holds the whole group; other lanes hold partial sums
        return V.Select(dt, V.Pred("bool", Cond.of(af.Cmp(lane, "=="))), fold, V.Undef(dt))

    def _arg_ladder(self, before: dict) -> None:
        """``if (lex(other, mine)) { mine = other; mine_i = other_i; }`` over shuffled pairs:
        once the offsets cover the warp, the value is a lane fold and the index the matching
        index fold (see :mod:`cuda2nki.lift.argfold`)."""
        changed = [n for n, v in self.env.items() if n in before and v is not before[n]]
        if len(changed) != 2:
            return
        for a, b in (changed, changed[::-1]):
            new_a, new_b = self.env[a], self.env[b]
            st = argfold.ladder_step(
                self.shfl_info, self.arg_ladders, new_a, before[a], new_b, before[b]
            )
            if st is None:
                continue
            if not argfold.complete(st):
                self.arg_ladders[id(new_a)] = st
                return
            base = st.base[0]
            value = self._lane_fold(st.op, st.kind, base, st.width, base.dtype)
            total = value.then if isinstance(value, V.Select) else value
            self.env[a] = value
            self.env[b] = self._lane_index(st, total, new_b.dtype)
            return

    def _lane_index(self, st: argfold.Ladder, total: V.DExpr, dt: str) -> V.DExpr:
        tid = af.sym("threadIdx.x")
        t = self.fresh("lane")
        down = st.kind != "__shfl_xor_sync"
        origin = tid if down else st.width * af.floordiv(tid, st.width)

        def subs(e: V.DExpr) -> V.DExpr:
            return V.subs_poly(e, {"threadIdx.x": origin + af.sym(t)})

        def fold_lanes(op: str, body: V.DExpr) -> V.DExpr:
            return V.Fold(body.dtype, op, t, af.ZERO, Poly.const(st.width), af.ONE, body)

        idx = argfold.lane_index(st, subs, fold_lanes, total, dt)
        if not down:
            return idx
        first = V.Pred("bool", Cond.of(af.Cmp(af.mod(tid, st.width), "==")))
        return V.Select(dt, first, idx, V.Undef(dt))

    def _warp_lanes(self, e: A.Call) -> Poly:
        b = self.block
        if not b or not (b[0] % 32 == 0 or (b[1] == 1 and b[2] == 1)):
            raise Refusal(
                "C2N2015",
                e.loc,
                what=f"'{e.func}' needs a launch block whose warps "
                "run along threadIdx.x (block size unknown or x not a multiple of 32)",
            )
        return af.sym("threadIdx.x")

    def shuffle(self, e: A.Call) -> V.DExpr:
        """The value another lane holds, as this thread's value at a shifted threadIdx.x."""
        tid = self._warp_lanes(e)
        v = self.as_data(self.eval(e.args[1]), e.loc, dtype_of(e.ty))
        if V.has_carried(v):
            raise Refusal("C2N2015", e.loc, what="a shuffle of a loop-carried value")
        d = self.as_poly(self.eval(e.args[2]), e.args[2].loc)
        width = self.as_poly(self.eval(e.args[3]), e.loc) if len(e.args) > 3 else Poly.const(32)
        if not width.is_const:
            raise Refusal("C2N2015", e.loc, what="a shuffle width that is not a constant")
        lane = af.mod(tid, width)
        self.templates.append(v)
        f = e.func
        if f == "__shfl_sync":
            group = width * af.floordiv(tid, width)
            return V.subs_poly(v, {"threadIdx.x": group + af.mod(d, width)})
        if not d.is_const:
            raise Refusal("C2N2015", e.loc, what="a shuffle offset that is not a constant")
        if f == "__shfl_xor_sync":
            k = d.const_value
            if k <= 0 or k & (k - 1) or k >= width.const_value:
                raise Refusal("C2N2015", e.loc, what="a xor shuffle with a non-power-of-two mask")
            bit = af.mod(af.floordiv(tid, k), 2)
            out = self._shifted(v, tid + k - 2 * k * bit)
        else:
            if f == "__shfl_down_sync":
                ok, src = af.compare("<", lane + d, width), tid + d
            else:
                ok, src = af.compare(">=", lane, d), tid - d
            moved = self._shifted(v, src)
            out = V.Select(v.dtype, V.Pred("bool", Cond.of(ok)), moved, v)
        if f in ("__shfl_xor_sync", "__shfl_down_sync"):
            self.shfl_info[id(out)] = (f, d.const_value, v, out, width.const_value)
        return out

    def _shifted(self, v: V.DExpr, src: Poly) -> V.DExpr:
        """``v`` as lane ``src`` holds it.  The lane is a fresh symbol standing for ``src``
        (substituted in :meth:`_undefer`): a shuffle ladder usually ends in a lane fold that
        never uses the shifted values, and composing the lane formulas of five ladder steps
        costs seconds.  Lane symbols already in ``v`` are re-based on the new lane."""
        lane = self.fresh("lane@")
        mapping = {"threadIdx.x": af.sym(lane)}
        for a in sorted(V.index_atoms_dag(v, self.atoms_memo) & self.deferred.keys()):
            again = self.fresh("lane@")
            self.deferred[again] = self.deferred[a].subs(mapping)
            mapping[a] = af.sym(again)
        self.deferred[lane] = src
        return V.subs_poly_dag(v, mapping)

    def _undefer(self) -> None:
        """Replace the lane symbols left in stores and shared writes by their lanes (within a
        work budget: values merged across lanes step by step can grow without bound)."""
        if not self.deferred:
            return
        saved = V.WORK[0]
        V.WORK[0] = UNDEFER_UNITS
        try:
            self._undefer_all()
        except V.BudgetExceeded:
            raise Refusal(
                "C2N2015",
                self.fn.loc,
                what="values exchanged between lanes too large to analyse within the work budget",
            ) from None
        finally:
            V.WORK[0] = saved

    def _undefer_all(self) -> None:
        full: dict = {}
        for k in sorted(self.deferred, key=lambda a: int(a.rsplit("#", 1)[1])):
            full[k] = self.deferred[k].subs(full)

        def used(*polys) -> bool:
            return any(p.atoms() & full.keys() for p in polys)

        memo: dict = {}

        def fix(e: V.DExpr) -> V.DExpr:
            has = V.index_atoms_dag(e, self.atoms_memo) & full.keys()
            return V.subs_poly_dag(e, full, memo) if has else e

        for k, st in enumerate(self.stores):
            if used(st.index) or used(*[c.poly for c in st.guard.conjuncts() or []]):
                st = dataclasses.replace(st, index=st.index.subs(full), guard=st.guard.subs(full))
            self.stores[k] = dataclasses.replace(st, value=fix(st.value))
        for arr in self.shared.values():
            for w in arr.writes:
                w.index = tuple(p.subs(full) for p in w.index)
                w.guard = w.guard.subs(full)
                w.value = fix(w.value)
        # a template holding a lane symbol is a partial ladder sum: a hint for tree folding that
        # no leaf is an instance of once the ladder folded; dropped rather than re-based
        self.templates = [
            t for t in self.templates if not (V.index_atoms_dag(t, self.atoms_memo) & full.keys())
        ]

    def warp_reduce(self, e: A.Call, op: str) -> V.DExpr:
        tid = self._warp_lanes(e)
        v = self.as_data(self.eval(e.args[0]), e.loc, dtype_of(e.ty))
        n = self.as_poly(self.eval(e.args[1]), e.loc) if len(e.args) > 1 else Poly.const(32)
        if not n.is_const or V.has_carried(v):
            raise Refusal("C2N2015", e.loc, what="a group reduction of unknown size")
        t = self.fresh("lane")
        body = V.subs_poly(v, {"threadIdx.x": n * af.floordiv(tid, n) + af.sym(t)})
        return V.Fold(v.dtype, op, t, af.ZERO, n, af.ONE, body)

    def atomic(self, e: A.Call) -> object:
        f = e.func.removesuffix("_block").removesuffix("_system")
        op = _ATOMIC[f]
        ptr = self.eval(e.args[0])
        val = self.eval(e.args[1])
        if not isinstance(ptr, PtrVal):
            raise Refusal("C2N2022", e.loc, what="atomic on a non-pointer")
        d = self.as_data(val, e.loc, ptr.dtype)
        if f == "atomicSub":
            d = V.Op(d.dtype, "neg", (d,))
        if ptr.shared:
            if any(
                isinstance(a, af.OpaqueAtom) and not isinstance(a.payload, V.DExpr)
                for a in ptr.offset.atoms()
            ):
                raise Refusal(
                    "C2N2022",
                    e.loc,
                    what=f"{e.func} on shared memory at an index read from data (a histogram)",
                )
            self.write_shared(self.shared[ptr.tensor], (ptr.offset,), d, e.loc, accumulate=op)
            return None
        self.store(ptr, af.ZERO, d, e.loc, accumulate=op)
        return None

    def atomic_inc(self, e: A.Call) -> object:
        """``atomicInc(p, limit)`` stores ``old >= limit ? 0 : old + 1``: with the limit
        ``0xffffffff`` that is ``old + 1`` modulo 2**32, an ``atomicAdd(p, 1u)``; other limits
        (a counter modulo limit + 1) are refused."""
        limit = self.eval(e.args[1])
        if not (
            isinstance(limit, Poly) and limit.is_const and limit.const_value % 2**32 == 2**32 - 1
        ):
            raise Refusal("C2N2022", e.loc, what="atomicInc below the 32-bit limit")
        ptr = self.eval(e.args[0])
        if not isinstance(ptr, PtrVal) or ptr.shared:
            raise Refusal("C2N2022", e.loc, what="atomicInc on shared memory")
        self.store(ptr, af.ZERO, V.Const(ptr.dtype, 1), e.loc, accumulate="add")
        return None

    def inline(self, e: A.Call) -> object:
        fn = self.tu.function(e.target)
        if fn is None or fn.kind == "global":
            raise Refusal("C2N2010", e.loc, what=f"call to '{e.func}'")
        args = [self.eval(a) for a in e.args]
        saved_env, saved_depth = self.env, dict(self.decl_depth)
        env = dict(self.globals)
        for p, a in zip(fn.params, args):
            env[p.name] = self.convert(a, p.ty, e.loc) if isinstance(p.ty, A.ScalarType) else a
        self.env = env
        nguards = len(self.guards)
        for p in fn.params:
            self.decl_depth[p.name] = nguards
        frame: list = []
        self.ret_value.append(frame)
        self.exec_block(fn.body)
        self.ret_value.pop()
        self.env, self.decl_depth = saved_env, saved_depth
        if not frame:
            return None
        (g, v), *rest = frame[::-1]
        if rest or g != af.conj(self.guards):
            # a single final return is all we inline without control flow
            if len(frame) == 1 and g == af.conj(self.guards):
                return v
            raise Refusal(
                "C2N2010", e.loc, what=f"device function '{fn.name}' with several returns"
            )
        return v


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


def execute(
    tu: A.TranslationUnit,
    fn: A.Function,
    block: tuple | None = None,
    reroll: bool = True,
    ties: Mapping[str, af.Poly] | None = None,
) -> ThreadProgram:
    """``reroll=False`` keeps the stores of loops unrolled for local arrays one per iteration;
    ``ties`` gives size parameters tied to others their value (a polynomial in the others)."""
    return Executor(tu, fn, block, reroll, ties).run()
