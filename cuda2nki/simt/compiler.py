"""Compile the typed CUDA AST into Python closures that execute over a chunk of threads.

Every expression becomes ``f(c, act) -> value`` and every statement ``s(c, act) -> act'``:
``c`` is the :class:`~cuda2nki.simt.chunk.Chunk`, ``act`` the active threads, and ``act'`` the
threads that leave the statement normally (the others left through ``break``/``continue``/
``return`` and were recorded in the chunk's loop/function frames).  Values are NumPy scalars
(uniform over the active threads), arrays with one element per active thread, :class:`Vec` for
vector types and :class:`Ptr` for pointers.  Variables live in the frame ``c.env`` as full-width
(``T``) arrays or uniform scalars.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from cuda2nki.diagnostics import DiagnosticError, SourceLoc, error
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.typesys import sizeof
from cuda2nki.simt import access, recipdiv
from cuda2nki.simt.affine import Aff, add_offsets, arith, compare, convert, mat, scale, truthy
from cuda2nki.simt.chunk import EMPTY, Box, Chunk, LoopFrame, is_empty, sel, split, union
from cuda2nki.simt.memory import (
    Buffer,
    PointerDivergence,
    Ptr,
    VarBuffer,
    Vec,
    gather,
    make_buffer,
    scatter,
)
from cuda2nki.simt.numeric import (
    ARITH_OPS,
    CMP_OPS,
    DTYPES,
    IntDivByZero,
    UnsupportedType,
    common_type,
    compute_type,
    np_dtype,
    scalar,
)

BOOL_T = A.ScalarType(name="bool")
INT_T = A.ScalarType(name="int32")
UINT_T = A.ScalarType(name="uint32")
I64_T = A.ScalarType(name="int64")
F32_T = A.ScalarType(name="float32")
F64_T = A.ScalarType(name="float64")

Fn = Callable[[Chunk, object], object]


def unsupported(loc: SourceLoc, what: str) -> DiagnosticError:
    return error("C2N1505", loc, what=what)


def unq(t):
    if t is None or isinstance(t, A.ArrayType) or not getattr(t, "const", False):
        return t
    return type(t)(**{**t.__dict__, "const": False})


def same_type(a, b) -> bool:
    return unq(a) == unq(b)


def decay(t):
    """Array-to-pointer decay of a type."""
    if isinstance(t, A.ArrayType):
        inner = t.elem if len(t.dims) == 1 else A.ArrayType(elem=t.elem, dims=t.dims[1:])
        return A.PointerType(pointee=inner)
    return t


def elem_size(t, loc: SourceLoc) -> int:
    s = sizeof(t)
    if s is None:
        raise unsupported(loc, f"pointer arithmetic on an element of unknown size ({t})")
    return s


POISON = {
    "float32": np.array([np.nan], np.float32).tobytes(),
    "float64": np.array([np.nan], np.float64).tobytes(),
    "float16": np.array([np.nan], np.float16).tobytes(),
    "bfloat16": bytes.fromhex("c07f"),  # float32's quiet NaN, truncated (no ml_dtypes import)
}
INT_POISON = bytes.fromhex("efbeadde")


def poison_for(t) -> bytes:
    while isinstance(t, A.ArrayType):
        t = t.elem
    if isinstance(t, A.VectorType):
        t = t.base
    name = getattr(t, "name", "")
    if name in ("int8", "uint8"):  # raw byte storage (extern __shared__ char[]) is mostly floats
        return POISON["float32"]
    return POISON.get(name, INT_POISON)


# --------------------------------------------------------------------------- symbols


@dataclass
class Sym:
    kind: str  # "var": frame slot; "mem": lives in a buffer
    ty: object
    slot: int = -1
    buf: Callable[[Chunk], Buffer] | None = None


class Scope:
    def __init__(self, parent: Scope | None = None):
        self.parent = parent
        self.names: dict[str, Sym] = {}

    def lookup(self, name: str) -> Sym | None:
        s: Scope | None = self
        while s is not None:
            if name in s.names:
                return s.names[name]
            s = s.parent
        return None


# --------------------------------------------------------------------------- lvalues


class LV:
    ty: object

    def load(self, c: Chunk, act):
        raise NotImplementedError

    def store(self, c: Chunk, act, v) -> None:
        raise NotImplementedError

    def addr(self, c: Chunk, act) -> Ptr:
        raise NotImplementedError


class VarLV(LV):
    def __init__(self, slot: int, ty, loc: SourceLoc, name: str):
        self.slot, self.ty, self.loc, self.name = slot, ty, loc, name

    def load(self, c, act):
        return var_load(c.env, c.owned, self.slot, self.ty, act)

    def store(self, c, act, v):
        var_store(c, c.env, c.owned, self.slot, act, v, self.loc)

    def addr(self, c, act):
        """A pointer to the variable in the current frame (C++ references, ``&x``)."""
        key = (id(c.env), self.slot)
        buf = c.varbufs.get(key)
        if buf is None:
            size = sizeof(self.ty) or 8
            buf = VarBuffer(self.name, "local", np.zeros(16, np.uint8), limit=size)
            buf.frame, buf.owned_flags, buf.slot, buf.ty = c.env, c.owned, self.slot, self.ty
            c.varbufs[key] = buf
        return Ptr(buf, np.int64(0))


def var_load(env: list, owned: list, slot: int, ty, act):
    v = env[slot]
    if v is None:
        v = _zero(ty)
    if act is None:
        owned[slot] = False
        return v
    return gather(v, act)


def var_store(c: Chunk, env: list, owned: list, slot: int, act, v, loc: SourceLoc) -> None:
    if act is None:
        env[slot] = v
        owned[slot] = False
        return
    try:
        env[slot], owned[slot] = scatter(env[slot], v, act, c.T, owned[slot])
    except PointerDivergence:
        raise error(
            "C2N1510", loc, kernel=c.launch.kernel, a=env[slot].buf.name, b=v.buf.name
        ) from None


class MemLV(LV):
    def __init__(self, addr_fn: Fn, ty, loc: SourceLoc):
        self.addr_fn, self.ty, self.loc = addr_fn, ty, loc

    def load(self, c, act):
        p = self.addr_fn(c, act)
        if isinstance(self.ty, A.ArrayType):
            return p
        if isinstance(self.ty, A.PointerType) and not isinstance(p.buf, VarBuffer):
            raise unsupported(self.loc, "a pointer read from memory")
        return access.load(c, act, p, self.ty, self.loc)

    def store(self, c, act, v):
        p = self.addr_fn(c, act)
        if isinstance(self.ty, A.PointerType) and not isinstance(p.buf, VarBuffer):
            raise unsupported(self.loc, "a pointer stored in memory")
        access.store(c, act, p, self.ty, v, self.loc)

    def addr(self, c, act):
        return self.addr_fn(c, act)


class LaneLV(LV):
    """One lane (``.x``) of a vector held in a variable."""

    def __init__(self, base: LV, lane: int, ty):
        self.base, self.lane, self.ty = base, lane, ty

    def load(self, c, act):
        return self.base.load(c, act).lanes[self.lane]

    def store(self, c, act, v):
        cur = self.base.load(c, act)
        lanes = list(cur.lanes)
        lanes[self.lane] = v
        self.base.store(c, act, Vec(tuple(lanes)))

    def addr(self, c, act):
        raise unsupported(getattr(self.base, "loc", None), "the address of a vector lane")


def _lane_of(c, vec: Vec, idx, ty, loc):
    """``vec[idx]`` with a per-thread (or uniform) lane index (a packed vector's operator[])."""
    idx = mat(idx)
    if not isinstance(idx, np.ndarray):
        return vec.lanes[_lane_checked(int(idx), len(vec.lanes), loc)]
    for i in np.unique(idx):
        _lane_checked(int(i), len(vec.lanes), loc)
    out = vec.lanes[0]
    for j in range(1, len(vec.lanes)):
        out = _select(idx == j, vec.lanes[j], out, ty)
    return out


def _select(cond: np.ndarray, a, b, ty):
    """Per-thread ``cond ? a : b`` of scalar values (uniform or per-thread) of type ``ty``."""
    a, b = mat(a), mat(b)
    dt = np_dtype(ty) if isinstance(ty, A.ScalarType) and ty.name in DTYPES else None
    return np.where(cond, a, b).astype(dt if dt is not None else np.result_type(a, b), copy=False)


def _lane_checked(i: int, width: int, loc) -> int:
    if not 0 <= i < width:
        raise unsupported(loc, f"lane {i} of a {width}-lane vector (out of bounds)")
    return i


class DynLaneLV(LV):
    """``v[k]`` of a packed vector held in a variable; ``k`` may differ between threads."""

    def __init__(self, base: LV, idx: Fn, ty, loc):
        self.base, self.idx, self.ty, self.loc = base, idx, ty, loc

    def load(self, c, act):
        return _lane_of(c, self.base.load(c, act), self.idx(c, act), self.ty, self.loc)

    def store(self, c, act, v):
        cur = self.base.load(c, act)
        idx = mat(self.idx(c, act))
        if not isinstance(idx, np.ndarray):
            lanes = list(cur.lanes)
            lanes[_lane_checked(int(idx), len(lanes), self.loc)] = v
        else:
            v = mat(v)
            lanes = [_select(idx == j, v, x, self.ty) for j, x in enumerate(cur.lanes)]
        self.base.store(c, act, Vec(tuple(lanes)))

    def addr(self, c, act):
        raise unsupported(self.loc, "the address of a vector lane")


def _poison_value(t, fill: bytes | None):
    """The value a never-written element of type ``t`` reads as (poison pattern or zero)."""
    if fill is None:
        return _zero(t)
    base = t.base if isinstance(t, A.VectorType) else t
    dt = np_dtype(base)
    raw = np.frombuffer((fill * 8)[: max(dt.itemsize, len(fill))], np.uint8)
    v = raw[: dt.itemsize].copy().view(dt)[0]
    if isinstance(t, A.VectorType):
        return Vec((v,) * t.width)
    return v


def _zero(t):
    if isinstance(t, A.VectorType):
        z = scalar(0, t.base)
        return Vec((z,) * t.width)
    if isinstance(t, A.PointerType):
        return Ptr(None, np.int64(0))
    if isinstance(t, A.ScalarType) and t.name in DTYPES:
        return scalar(0, t)
    return np.int32(0)


def _ptr_add(p: Ptr, i, size: int) -> Ptr:
    return Ptr(p.buf, add_offsets(p.off, scale(i, size)))


def _neg64(i):
    return arith("-", np.int64(0), convert(i, None, I64_T), I64_T)


def _n(c: Chunk, act) -> int:
    return c.T if act is None else len(act)


def _merge(c: Chunk, cond: np.ndarray, a, b, t, loc):
    """Per-thread select between values ``a`` (where cond) and ``b`` (else), both of type ``t``."""
    if isinstance(t, A.VectorType) or isinstance(a, Vec):
        return Vec(
            tuple(
                _merge(c, cond, x, y, t.base if isinstance(t, A.VectorType) else None, loc)
                for x, y in zip(a.lanes, b.lanes)
            )
        )
    if isinstance(a, Ptr) or isinstance(b, Ptr):
        if a.buf is not None and b.buf is not None and a.buf is not b.buf:
            raise error("C2N1510", loc, kernel=c.launch.kernel, a=a.buf.name, b=b.buf.name)
        buf = a.buf if a.buf is not None else b.buf
        return Ptr(buf, _merge(c, cond, a.off, b.off, I64_T, loc))
    n = len(cond)
    dt = np_dtype(t) if isinstance(t, A.ScalarType) and t.name in DTYPES else np.result_type(a, b)
    out = np.empty(n, dt)
    if isinstance(a, np.ndarray):
        out[cond] = a
    else:
        out[cond] = a
    if isinstance(b, np.ndarray):
        out[~cond] = b
    else:
        out[~cond] = b
    return out


# --------------------------------------------------------------------------- the compiler


@dataclass
class CompiledFunction:
    fn: A.Function
    body: Callable
    nslots: int
    param_slots: list[int]
    ret_ty: object


class Program:
    """All compiled functions of one translation unit for one launch configuration."""

    def __init__(self, tu: A.TranslationUnit, options: dict):
        self.tu = tu
        self.options = options
        self.funcs: dict[str, CompiledFunction] = {}
        self.compiling: set[str] = set()
        self.globals_scope = Scope()
        self.global_inits: list[tuple[str, object, object, SourceLoc]] = []
        for g in tu.globals:
            self._declare_global(g)
        for d in tu.file_shared:  # named by device functions too (see frontend.fileshared)
            self.globals_scope.names[d.name] = shared_symbol(self, d)

    def _declare_global(self, g: A.GlobalVar) -> None:
        kind = "constant" if g.space in ("constant", "host_const") else "global"
        name = g.name

        def get(c: Chunk, name=name) -> Buffer:
            return c.launch.globals[name]

        self.globals_scope.names[name] = Sym("mem", g.ty, buf=get)
        self.global_inits.append((name, g.ty, g.init, g.loc, kind))

    def function(self, name: str, loc: SourceLoc) -> CompiledFunction:
        if name in self.funcs:
            return self.funcs[name]
        if name in self.compiling:
            raise unsupported(loc, f"recursive call of '{name}'")
        fn = self.tu.function(name)
        if fn is None:
            raise unsupported(loc, f"a call of '{name}' (no definition in the translation unit)")
        if fn.kind == "global":  # moved pointers as fixed ones: threads may move them apart
            from cuda2nki.frontend.pointers import fix_pointers

            fn = fix_pointers(fn)
        self.compiling.add(name)
        try:
            cf = FunctionCompiler(self, fn).compile()
        finally:
            self.compiling.discard(name)
        self.funcs[name] = cf
        return cf


class FunctionCompiler:
    def __init__(self, prog: Program, fn: A.Function):
        self.prog = prog
        self.fn = fn
        self.nslots = 0
        self.scope = Scope(prog.globals_scope)
        self.loop_depth = 0
        self.is_kernel = fn.kind == "global"

    # ------------------------------------------------------------------ entry
    def compile(self) -> CompiledFunction:
        slots = []
        for p in self.fn.params:
            s = self.new_slot()
            self.scope.names[p.name] = Sym("var", decay(p.ty), slot=s)
            slots.append(s)
        body = self.stmt(self.fn.body)
        return CompiledFunction(self.fn, body, self.nslots, slots, self.fn.return_type)

    def new_slot(self) -> int:
        self.nslots += 1
        return self.nslots - 1

    # ------------------------------------------------------------------ types
    def type_of(self, e: A.Expr):
        if isinstance(e, A.Name):
            s = self.scope.lookup(e.name)
            if s is not None:
                return s.ty
        if e.ty is not None:
            return e.ty
        return self._infer(e)

    def _infer(self, e: A.Expr):
        if isinstance(e, A.IntLit):
            return INT_T
        if isinstance(e, A.FloatLit):
            return F64_T
        if isinstance(e, A.BoolLit):
            return BOOL_T
        if isinstance(e, A.Builtin):
            return UINT_T if e.name != "warpSize" else INT_T
        if isinstance(e, A.Cast):
            return e.to
        if isinstance(e, A.Binary):
            if e.op in CMP_OPS or e.op in ("&&", "||"):
                return BOOL_T
            lt, rt = self.type_of(e.left), self.type_of(e.right)
            if isinstance(decay(lt), A.PointerType):
                return I64_T if isinstance(decay(rt), A.PointerType) else decay(lt)
            if isinstance(decay(rt), A.PointerType):
                return decay(rt)
            if e.op in ("<<", ">>"):
                return compute_type(lt)
            return common_type(lt, rt)
        if isinstance(e, A.Unary):
            t = self.type_of(e.operand)
            if e.op == "!":
                return BOOL_T
            if e.op == "*":
                return decay(t).pointee
            if e.op == "&":
                return A.PointerType(pointee=t)
            if e.op in ("-", "+", "~"):
                return compute_type(t)
            return t
        if isinstance(e, A.Assign):
            return self.type_of(e.target)
        if isinstance(e, A.Index):
            return decay(self.type_of(e.base)).pointee
        if isinstance(e, A.Member):
            t = self.type_of(e.base)
            if e.arrow:
                t = decay(t).pointee
            if isinstance(t, A.VectorType):
                return t.base
        if isinstance(e, A.Ternary):
            a, b = self.type_of(e.then), self.type_of(e.else_)
            if isinstance(a, A.ScalarType) and isinstance(b, A.ScalarType):
                return common_type(a, b)
            return a
        if isinstance(e, A.Comma):
            return self.type_of(e.exprs[-1])
        if isinstance(e, A.SizeOf):
            return A.ScalarType(name="uint64")
        if isinstance(e, A.Call):
            from cuda2nki.simt.intrinsics import result_type

            return result_type(e, [self.type_of(a) for a in e.args])
        raise unsupported(e.loc, f"an expression of unknown type ({type(e).__name__})")

    # ------------------------------------------------------------------ conversions
    def conv(self, f: Fn, src, dst, loc: SourceLoc) -> Fn:
        src, dst = decay(unq(src)), decay(unq(dst))
        if dst is None or src == dst:
            return f
        if isinstance(dst, A.ScalarType):
            if dst.name == "void":
                return f
            if isinstance(src, A.ScalarType):
                return lambda c, a: convert(f(c, a), src, dst)
            if isinstance(src, A.PointerType) and dst.name == "bool":
                return lambda c, a: _ptr_truth(f(c, a))
            raise unsupported(loc, f"a conversion from {_tn(src)} to {_tn(dst)}")
        if isinstance(dst, A.PointerType):
            if isinstance(src, A.PointerType):
                return f
            if isinstance(src, A.ScalarType) and not src.is_float:
                return lambda c, a: _int_to_ptr(f(c, a), loc)
            raise unsupported(loc, f"a conversion from {_tn(src)} to {_tn(dst)}")
        if isinstance(dst, A.VectorType):
            if isinstance(src, A.VectorType) and src.width == dst.width:
                return lambda c, a: Vec(
                    tuple(convert(x, src.base, dst.base) for x in f(c, a).lanes)
                )
            if isinstance(src, A.ScalarType):
                return lambda c, a: Vec((convert(f(c, a), src, dst.base),) * dst.width)
        raise unsupported(loc, f"a conversion from {_tn(src)} to {_tn(dst)}")

    def rvalue(self, e: A.Expr, want=None) -> Fn:
        if isinstance(e, A.InitList) and want is not None:  # `return {a, b};`, `f({a, b})`
            return self._init_list_value(e, unq(want))
        f, t = self.expr(e)
        if want is None:
            return f
        return self.conv(f, t, want, e.loc)

    # ------------------------------------------------------------------ expressions
    def expr(self, e: A.Expr) -> tuple[Fn, object]:
        m = getattr(self, "_e_" + type(e).__name__, None)
        if m is None:
            raise unsupported(e.loc, f"the expression kind {type(e).__name__}")
        try:
            return m(e)
        except UnsupportedType as exc:  # e.g. arithmetic on float4 (no operator in CUDA either)
            raise unsupported(e.loc, str(exc)) from None
        except (KeyError, TypeError, AttributeError) as exc:
            raise unsupported(e.loc, f"this expression ({type(exc).__name__}: {exc})") from None

    def _e_IntLit(self, e: A.IntLit):
        t = unq(e.ty) if isinstance(e.ty, A.ScalarType) else INT_T
        v = scalar(e.value, t)
        return (lambda c, a: v), t

    def _e_FloatLit(self, e: A.FloatLit):
        t = unq(e.ty) if isinstance(e.ty, A.ScalarType) else F64_T
        v = scalar(e.value, t)
        return (lambda c, a: v), t

    def _e_BoolLit(self, e: A.BoolLit):
        v = np.bool_(e.value)
        return (lambda c, a: v), BOOL_T

    def _e_SizeOf(self, e: A.SizeOf):
        n = sizeof(e.of)
        if n is None:
            raise unsupported(e.loc, "sizeof of a type of unknown size")
        v = np.uint64(n)
        return (lambda c, a: v), A.ScalarType(name="uint64")

    def _e_Builtin(self, e: A.Builtin):
        t = (
            unq(e.ty)
            if isinstance(e.ty, A.ScalarType)
            else (INT_T if e.name == "warpSize" else UINT_T)
        )
        dt = np_dtype(t)
        if e.name == "warpSize":
            v = dt.type(32)
            return (lambda c, a: v), t
        axis = "xyz".index(e.dim or "x")
        if e.name in ("blockDim", "gridDim"):

            def dim(c, a, name=e.name, axis=axis):
                src = c.launch.block if name == "blockDim" else c.launch.grid
                return dt.type(src[axis])

            return dim, t

        def coord(c, a, name=e.name, axis=axis):
            ext = c.builtin_extent(name, axis)
            if ext == 1:  # uniform over the chunk
                base = 0 if name == "threadIdx" else (c.x0, c.y0, c.z0)[axis]
                return dt.type(base)
            if (a is None or isinstance(a, Box)) and c.launch.fast:
                co = [0] * 6
                co[(5 - axis) if name == "threadIdx" else (2 - axis)] = 1
                r = Aff(c, 0, tuple(co), t)
                return r if a is None else r.on(a)
            arr = (c.tid if name == "threadIdx" else c.bid)[axis]
            if arr.dtype != dt:
                arr = arr.astype(dt)
            return arr if a is None else arr[a]

        return coord, t

    def _e_Name(self, e: A.Name):
        lv = self.lvalue(e)
        if isinstance(lv.ty, A.ArrayType):
            return lv.addr, decay(lv.ty)
        return lv.load, lv.ty

    def _e_Index(self, e: A.Index):
        bt = self.type_of(e.base)
        if isinstance(bt, A.VectorType) and not _is_lvalue_expr(e.base):
            bf, xf = self.rvalue(e.base), self.rvalue(e.index)
            return (lambda c, a: _lane_of(c, bf(c, a), xf(c, a), bt.base, e.loc)), bt.base
        lv = self.lvalue(e)
        if isinstance(lv.ty, A.ArrayType):
            return lv.addr, decay(lv.ty)
        return lv.load, lv.ty

    def _e_Member(self, e: A.Member):
        bt = self.type_of(e.base)
        if e.arrow:
            bt = decay(bt).pointee if isinstance(decay(bt), A.PointerType) else bt
        if not isinstance(bt, A.VectorType) or e.field not in "xyzw" or len(e.field) != 1:
            raise unsupported(e.loc, f"member access '.{e.field}' on {_tn(bt)}")
        lane = "xyzw".index(e.field)
        if lane >= bt.width:
            raise unsupported(e.loc, f"lane '.{e.field}' of {_tn(bt)}")
        if not e.arrow and not _is_lvalue_expr(e.base):
            bf, _ = self.expr(e.base)
            return (lambda c, a: bf(c, a).lanes[lane]), bt.base
        lv = self.lvalue(e)
        return lv.load, lv.ty

    def _e_Cast(self, e: A.Cast):
        f, t = self.expr(e.operand)
        to = unq(e.to)
        if isinstance(to, A.ScalarType) and to.name == "void":
            return f, to
        st = unq(decay(t))
        if (
            e.kind == "reinterpret"
            and isinstance(to, A.ScalarType)
            and isinstance(st, A.ScalarType)
            and st.name in DTYPES
            and to.name in DTYPES
            and sizeof(st) == sizeof(to)
        ):
            sd, dd = DTYPES[st.name], DTYPES[to.name]

            def bits(c, a):  # reinterpret_cast<unsigned&>(f): the same bits, another type
                x = mat(f(c, a))
                if isinstance(x, np.ndarray):
                    return x.astype(sd, copy=False).view(dd)
                return np.asarray(x, sd).reshape(1).view(dd)[0]

            return bits, to
        return self.conv(f, t, to, e.loc), decay(to)

    def _e_Comma(self, e: A.Comma):
        fs = [self.expr(x) for x in e.exprs]

        def comma(c, a):
            r = None
            for f, _ in fs:
                r = f(c, a)
            return r

        return comma, fs[-1][1]

    def _e_InitList(self, e: A.InitList):
        raise unsupported(e.loc, "an initializer list outside a declaration")

    def _e_Ternary(self, e: A.Ternary):
        cf = self.cond(e.cond)
        tt, et = self.type_of(e.then), self.type_of(e.else_)
        if isinstance(decay(tt), A.PointerType) or isinstance(tt, A.VectorType):
            rt = decay(tt)
        else:
            rt = unq(e.ty) if isinstance(e.ty, A.ScalarType) else common_type(tt, et)
        tf = self.rvalue(e.then, rt)
        ef = self.rvalue(e.else_, rt)
        if _pure(e.then) and _pure(e.else_) and isinstance(rt, A.ScalarType):

            def sel_pure(c, a):
                cv = cf(c, a)
                if not isinstance(cv, np.ndarray):
                    return tf(c, a) if cv else ef(c, a)
                return np.where(cv, tf(c, a), ef(c, a)).astype(np_dtype(rt), copy=False)

            return sel_pure, rt

        def ternary(c, a):
            cv = cf(c, a)
            if not isinstance(cv, np.ndarray):
                return tf(c, a) if cv else ef(c, a)
            ta, ea = split(a, cv, c.T)
            if is_empty(ea):
                return tf(c, a)
            if is_empty(ta):
                return ef(c, a)
            return _merge(c, cv, tf(c, ta), ef(c, ea), rt, e.loc)

        return ternary, rt

    def splitter(self, e: A.Expr):
        """``f(c, act) -> (threads where e holds, threads where it does not)``.

        A comparison of an affine index along one thread axis with a uniform value splits a box
        of threads into boxes (``if (tid < s)``), keeping the hot paths on strided views.
        """
        cf = self.cond(e)
        if not (isinstance(e, A.Binary) and e.op in ("<", "<=", ">", ">=", "==")):
            return lambda c, a: split(a, cf(c, a), c.T)
        lt, rt = decay(self.type_of(e.left)), decay(self.type_of(e.right))
        if not (isinstance(lt, A.ScalarType) and isinstance(rt, A.ScalarType)):
            return lambda c, a: split(a, cf(c, a), c.T)
        if lt.is_float or rt.is_float or not (_pure(e.left) and _pure(e.right)):
            return lambda c, a: split(a, cf(c, a), c.T)
        ct = common_type(lt, rt)
        lf = self.conv(self.rvalue(e.left), lt, ct, e.loc)
        rf = self.conv(self.rvalue(e.right), rt, ct, e.loc)
        op = e.op

        def split_(c, a):
            if (a is None or isinstance(a, Box)) and c.launch.fast:
                x, y = lf(c, a), rf(c, a)
                r = _box_split(c, a, op, x, y)
                if r is not None:
                    return r
                return split(a, compare(op, x, y), c.T)
            return split(a, cf(c, a), c.T)

        return split_

    def cond(self, e: A.Expr) -> Fn:
        f, t = self.expr(e)
        t = decay(t)
        if isinstance(t, A.PointerType):
            return lambda c, a: _ptr_truth(f(c, a))
        if isinstance(t, A.ScalarType) and t.name == "bool":
            return f
        return lambda c, a: truthy(f(c, a))

    def _e_Binary(self, e: A.Binary):
        op = e.op
        if op in ("&&", "||"):
            return self._logical(e)
        lt, rt = decay(self.type_of(e.left)), decay(self.type_of(e.right))
        lf, rf = self.rvalue(e.left), self.rvalue(e.right)
        if isinstance(lt, A.PointerType) or isinstance(rt, A.PointerType):
            return self._pointer_binary(e, lf, lt, rf, rt)
        if op in CMP_OPS:
            ct = common_type(lt, rt)
            a_, b_ = self.conv(lf, lt, ct, e.loc), self.conv(rf, rt, ct, e.loc)
            res = lambda c, a: compare(op, a_(c, a), b_(c, a))  # noqa: E731
            out_t = unq(e.ty) if isinstance(e.ty, A.ScalarType) else BOOL_T
            return self.conv(res, BOOL_T, out_t, e.loc), out_t
        if op not in ARITH_OPS:
            raise unsupported(e.loc, f"the operator '{op}'")
        if op in ("<<", ">>"):
            ct = compute_type(lt)
            a_ = self.conv(lf, lt, ct, e.loc)
            b_ = self.conv(rf, rt, compute_type(rt), e.loc)
        else:
            ct = common_type(lt, rt)
            a_, b_ = self.conv(lf, lt, ct, e.loc), self.conv(rf, rt, ct, e.loc)
        f = self._contracted(op, e.left, e.right, a_, b_, ct) or self._arith_fn(
            op, a_, b_, ct, e.loc
        )
        out_t = unq(e.ty) if isinstance(e.ty, A.ScalarType) else ct
        return self.conv(f, ct, out_t, e.loc), out_t

    def _fma_operands(self, e: A.Expr, ct) -> tuple[Fn, Fn] | None:
        """The float32 factors of ``e`` if it is a float32 product (a candidate for contraction)."""
        if not (isinstance(e, A.Binary) and e.op == "*"):
            return None
        lt, rt = decay(self.type_of(e.left)), decay(self.type_of(e.right))
        if not (isinstance(lt, A.ScalarType) and isinstance(rt, A.ScalarType)):
            return None
        if common_type(lt, rt) != ct:
            return None
        return self.rvalue(e.left, ct), self.rvalue(e.right, ct)

    def _contracted(self, op: str, left: A.Expr, right: A.Expr, a_: Fn, b_: Fn, ct) -> Fn | None:
        """``x * y + z`` as one fused multiply-add (nvcc's default ``-fmad=true``), when enabled."""
        if not self.prog.options.get("fmad") or op not in ("+", "-") or ct.name != "float32":
            return None
        mul = self._fma_operands(left, ct)
        if mul is not None:
            m1, m2 = mul
            other, sm, so = b_, 1.0, (1.0 if op == "+" else -1.0)
        else:
            mul = self._fma_operands(right, ct)
            if mul is None:
                return None
            m1, m2 = mul
            other, sm, so = a_, (1.0 if op == "+" else -1.0), 1.0

        def fma(c, a):
            x = np.asarray(m1(c, a), np.float64)
            y = np.asarray(m2(c, a), np.float64)
            z = np.asarray(mat(other(c, a)), np.float64)
            r = (sm * (x * y) + so * z).astype(np.float32)
            return r if r.ndim else r[()]

        return fma

    def _arith_fn(self, op: str, a_: Fn, b_: Fn, ct, loc: SourceLoc) -> Fn:
        if op in ("/", "%") and not ct.is_float:

            def div(c, a):
                x, y = a_(c, a), b_(c, a)
                try:
                    return arith(op, x, y, ct)
                except IntDivByZero:
                    j = int(np.flatnonzero(np.broadcast_to(np.equal(y, 0), (_n(c, a),)))[0])
                    raise c.fault(
                        "C2N1503", loc, a, j, op="division" if op == "/" else "remainder"
                    ) from None

            return div
        exact = lambda c, a: arith(op, a_(c, a), b_(c, a), ct)  # noqa: E731
        if op == "/":  # a port's x * (1 / y), when the check asks (see recipdiv)
            return recipdiv.divide_fn(exact, a_, b_, DTYPES[ct.name], loc)
        return exact

    def _pointer_binary(self, e: A.Binary, lf, lt, rf, rt):
        op = e.op
        if op in ("+", "-") and isinstance(lt, A.PointerType) and not isinstance(rt, A.PointerType):
            size = elem_size(lt.pointee, e.loc)
            sign = 1 if op == "+" else -1

            def padd(c, a):
                i = rf(c, a)
                return _ptr_add(lf(c, a), _neg64(i) if sign < 0 else i, size)

            return padd, lt
        if op == "+" and isinstance(rt, A.PointerType):
            size = elem_size(rt.pointee, e.loc)
            return (lambda c, a: _ptr_add(rf(c, a), lf(c, a), size)), rt
        if op == "-" and isinstance(lt, A.PointerType) and isinstance(rt, A.PointerType):
            size = elem_size(lt.pointee, e.loc)

            def pdiff(c, a):
                x = np.asarray(mat(lf(c, a).off), np.int64)
                y = np.asarray(mat(rf(c, a).off), np.int64)
                return ((x - y) // size).astype(np.int64)[()]

            return pdiff, I64_T
        if op in CMP_OPS:

            def pcmp(c, a):
                x, y = lf(c, a), rf(c, a)
                xb = x.buf if isinstance(x, Ptr) else None  # an integer operand is a null pointer
                yb = y.buf if isinstance(y, Ptr) else None
                if xb is not yb:  # different allocations (or one is null): never equal
                    if op in ("==", "!="):
                        return np.bool_(op == "!=")
                    if xb is None or yb is None:
                        return compare(
                            op, np.int64(0 if xb is None else 1), np.int64(0 if yb is None else 1)
                        )
                    return compare(op, np.int64(id(xb)), np.int64(id(yb)))
                xo = x.off if isinstance(x, Ptr) else np.int64(0)
                yo = y.off if isinstance(y, Ptr) else np.int64(0)
                return compare(op, xo, yo)

            return pcmp, BOOL_T
        raise unsupported(e.loc, f"the operator '{op}' on pointers")

    def _logical(self, e: A.Binary):
        lf, rf = self.cond(e.left), self.cond(e.right)
        is_and = e.op == "&&"
        if _pure(e.right):
            comb = np.logical_and if is_and else np.logical_or

            def fast(c, a):
                x = lf(c, a)
                if not isinstance(x, np.ndarray):
                    if bool(x) != is_and:
                        return np.bool_(not is_and)
                    return rf(c, a)
                return comb(x, rf(c, a))

            return fast, BOOL_T

        def logical(c, a):
            x = lf(c, a)
            if not isinstance(x, np.ndarray):
                if bool(x) != is_and:  # short-circuit for every thread
                    return np.bool_(not is_and)
                return rf(c, a)
            need = x if is_and else ~x
            sub = sel(a, need)
            out = x.copy() if is_and else x.copy()
            if len(sub):
                y = rf(c, sub if len(sub) < _n(c, a) else a)
                out[need] = y
            return out

        return logical, BOOL_T

    def _e_Unary(self, e: A.Unary):
        op = e.op
        if op in ("pre++", "pre--", "post++", "post--"):
            return self._incdec(e)
        if op == "*":
            lv = self.lvalue(e)
            if isinstance(lv.ty, A.ArrayType):
                return lv.addr, decay(lv.ty)
            return lv.load, lv.ty
        if op == "&":
            lv = self.lvalue(e.operand)
            return lv.addr, A.PointerType(pointee=lv.ty)
        f, t = self.expr(e.operand)
        t = decay(t)
        if op == "!":
            cf = self.cond(e.operand)
            res = lambda c, a: np.logical_not(cf(c, a))  # noqa: E731
            out_t = unq(e.ty) if isinstance(e.ty, A.ScalarType) else BOOL_T
            return self.conv(res, BOOL_T, out_t, e.loc), out_t
        if not isinstance(t, A.ScalarType):
            raise unsupported(e.loc, f"the operator '{op}' on {_tn(t)}")
        ct = compute_type(t)
        g = self.conv(f, t, ct, e.loc)
        dt = np_dtype(ct)
        if op == "+":
            return g, ct
        if op == "-":
            if ct.is_float:
                return (lambda c, a: np.negative(g(c, a), dtype=dt)), ct
            zero = scalar(0, ct)
            return (lambda c, a: arith("-", zero, g(c, a), ct)), ct
        if op == "~":
            return (lambda c, a: np.invert(g(c, a), dtype=dt)), ct
        raise unsupported(e.loc, f"the operator '{op}'")

    def _incdec(self, e: A.Unary):
        lv = self.lvalue(e.operand)
        t = decay(lv.ty)
        delta = 1 if "++" in e.op else -1
        post = e.op.startswith("post")
        if isinstance(t, A.PointerType):
            size = elem_size(t.pointee, e.loc)

            def pinc(c, a):
                old = lv.load(c, a)
                if post and isinstance(old, np.ndarray):  # a view of the variable
                    old = old.copy()
                new = _ptr_add(old, delta, size)
                lv.store(c, a, new)
                return old if post else new

            return pinc, t
        if not isinstance(t, A.ScalarType):
            raise unsupported(e.loc, f"++/-- on {_tn(t)}")
        ct = compute_type(t)
        one = scalar(1, ct)
        op = "+" if delta > 0 else "-"

        same = unq(t) == ct

        def inc(c, a):
            old = lv.load(c, a)
            if post and isinstance(old, np.ndarray):  # a view of the variable: keep the value
                old = old.copy()
            if same:
                new = arith(op, old, one, ct)
            else:
                new = convert(arith(op, convert(old, t, ct), one, ct), ct, t)
            lv.store(c, a, new)
            return old if post else new

        return inc, unq(t)

    def _e_Assign(self, e: A.Assign):
        lv = self.lvalue(e.target)
        t = decay(unq(lv.ty))
        if e.op == "=":
            vf = self.rvalue(e.value, t)

            def assign(c, a):
                v = vf(c, a)
                lv.store(c, a, v)
                return v

            return assign, t
        op = e.op[:-1]
        vt = decay(self.type_of(e.value))
        vf = self.rvalue(e.value)
        if isinstance(t, A.PointerType):
            size = elem_size(t.pointee, e.loc)
            sign = 1 if op == "+" else -1

            def padd(c, a):
                i = vf(c, a)
                new = _ptr_add(lv.load(c, a), i if sign > 0 else _neg64(i), size)
                lv.store(c, a, new)
                return new

            return padd, t
        if not isinstance(t, A.ScalarType) or not isinstance(vt, A.ScalarType):
            raise unsupported(e.loc, f"compound assignment on {_tn(t)}")
        if op in ("<<", ">>"):
            ct = compute_type(t)
            b_ = self.conv(vf, vt, compute_type(vt), e.loc)
        else:
            ct = common_type(t, vt)
            b_ = self.conv(vf, vt, ct, e.loc)
        cache: dict = {}

        same = unq(t) == ct

        def load_conv(c, a):
            return cache["old"] if same else convert(cache["old"], t, ct)

        f = self._contracted(op, e.target, e.value, load_conv, b_, ct)
        f = f or self._arith_fn(op, load_conv, b_, ct, e.loc)

        def compound(c, a):
            cache["old"] = lv.load(c, a)
            new = f(c, a) if same else convert(f(c, a), ct, t)
            lv.store(c, a, new)
            return new

        return compound, t

    def _e_Launch(self, e: A.Launch):
        from cuda2nki.simt.devlaunch import compile_launch

        return compile_launch(self, e)

    def _e_Call(self, e: A.Call):
        if e.target is not None:
            return self._device_call(e)
        from cuda2nki.simt.intrinsics import compile_call

        return compile_call(self, e)

    def _device_call(self, e: A.Call):
        cf = self.prog.function(e.target, e.loc)
        params = cf.fn.params
        if len(params) != len(e.args):
            raise unsupported(
                e.loc,
                f"a call of '{e.target}' with {len(e.args)} arguments ({len(params)} declared)",
            )
        argfs = [self.rvalue(a, decay(p.ty)) for a, p in zip(e.args, params)]
        ret_t = unq(cf.ret_ty)
        loc = e.loc

        def call(c, a):
            vals = [f(c, a) for f in argfs]
            c.step(loc)
            frame: list = [None] * cf.nslots
            owned = [False] * cf.nslots
            for s, v in zip(cf.param_slots, vals):
                if a is None or _uniform(v):
                    frame[s] = v
                else:
                    frame[s], owned[s] = scatter(None, v, a, c.T, False)
            saved = (c.env, c.owned, c.loops)
            c.env, c.owned, c.loops = frame, owned, []
            c.rets.append([None, False])
            try:
                cf.body(c, a)
            finally:
                ret = c.rets.pop()[0]
                c.env, c.owned, c.loops = saved
            if isinstance(ret_t, A.ScalarType) and ret_t.name == "void":
                return None
            if ret is None:
                return _zero(ret_t)
            return gather(ret, a)

        return call, ret_t

    # ------------------------------------------------------------------ lvalues
    def lvalue(self, e: A.Expr) -> LV:
        if isinstance(e, A.Name):
            s = self.scope.lookup(e.name)
            if s is None:
                raise unsupported(e.loc, f"the name '{e.name}' (not declared in this kernel)")
            if s.kind == "var":
                return VarLV(s.slot, s.ty, e.loc, e.name)
            get = s.buf

            def base(c, a, get=get):
                return Ptr(get(c), np.int64(0))

            return MemLV(base, s.ty, e.loc)
        if isinstance(e, A.Index):
            reg = self._reg_chain(e)
            if reg is not None:
                return reg
            bt = decay(self.type_of(e.base))
            if isinstance(bt, A.VectorType):
                return DynLaneLV(self.lvalue(e.base), self.rvalue(e.index), bt.base, e.loc)
            if not isinstance(bt, A.PointerType):
                raise unsupported(e.loc, f"subscript of {_tn(bt)}")
            pointee = bt.pointee
            size = elem_size(pointee, e.loc)
            bf = self.rvalue(e.base)
            it = self.type_of(e.index)
            if not isinstance(it, A.ScalarType) or it.is_float:
                raise unsupported(e.loc, f"an array index of type {_tn(it)}")
            xf = self.rvalue(e.index)

            def addr(c, a):
                return _ptr_add(bf(c, a), xf(c, a), size)

            return MemLV(addr, pointee, e.loc)
        if isinstance(e, A.Unary) and e.op == "*":
            pt = decay(self.type_of(e.operand))
            if not isinstance(pt, A.PointerType):
                raise unsupported(e.loc, f"dereference of {_tn(pt)}")
            return MemLV(self.rvalue(e.operand), pt.pointee, e.loc)
        if isinstance(e, A.Member):
            bt = self.type_of(e.base)
            if e.arrow:
                pt = decay(bt)
                if not isinstance(pt, A.PointerType) or not isinstance(pt.pointee, A.VectorType):
                    raise unsupported(e.loc, f"'->{e.field}' on {_tn(bt)}")
                base_lv: LV = MemLV(self.rvalue(e.base), pt.pointee, e.loc)
                bt = pt.pointee
            else:
                base_lv = self.lvalue(e.base)
            if not isinstance(bt, A.VectorType) or e.field not in ("x", "y", "z", "w"):
                raise unsupported(e.loc, f"member '{e.field}' of {_tn(bt)}")
            lane = "xyzw".index(e.field)
            if isinstance(base_lv, MemLV):
                esz = sizeof(bt.base)
                af = base_lv.addr_fn
                return MemLV(lambda c, a: _ptr_add(af(c, a), lane, esz), bt.base, e.loc)
            return LaneLV(base_lv, lane, bt.base)
        if isinstance(e, A.Cast):
            return self.lvalue(e.operand)
        raise unsupported(e.loc, f"assignment to a {type(e).__name__} expression")

    def _reg_chain(self, e: A.Index):
        """A full-depth subscript of a register-promoted local array, else None."""
        idx = []
        base: A.Expr = e
        while isinstance(base, A.Index):
            idx.append(base.index)
            base = base.base
        if not isinstance(base, A.Name):
            return None
        sym = self.scope.lookup(base.name)
        if sym is None or sym.kind != "regs" or len(idx) != len(sym.ty.dims):
            return None
        fns = []
        for x in reversed(idx):
            it = self.type_of(x)
            if not isinstance(it, A.ScalarType) or it.is_float:
                raise unsupported(x.loc, f"an array index of type {_tn(it)}")
            fns.append(self.rvalue(x))
        return self._reg_lv(base.name, sym.ty, sym.slot, fns, e.loc)

    # ------------------------------------------------------------------ statements
    def stmt(self, s: A.Stmt) -> Callable:
        m = getattr(self, "_s_" + type(s).__name__, None)
        if m is None:
            raise unsupported(s.loc, f"the statement kind {type(s).__name__}")
        try:
            return m(s)
        except UnsupportedType as exc:
            raise unsupported(s.loc, str(exc)) from None
        except (KeyError, TypeError, AttributeError) as exc:
            raise unsupported(s.loc, f"this statement ({type(exc).__name__}: {exc})") from None

    def _s_Empty(self, s):
        return lambda c, a: a

    def _s_Block(self, s: A.Block):
        saved = self.scope
        self.scope = Scope(saved)
        try:
            body = [self.stmt(x) for x in s.body]
        finally:
            self.scope = saved
        if len(body) == 1:
            return body[0]

        def block(c, a):
            for f in body:
                a = f(c, a)
                if a is not None and len(a) == 0:
                    return a
            return a

        return block

    def _s_ExprStmt(self, s: A.ExprStmt):
        f, _ = self.expr(s.expr)

        def run(c, a):
            f(c, a)
            return a

        return run

    def _s_VarDecl(self, s: A.VarDecl):
        t = s.ty
        if s.storage in ("shared", "extern_shared"):
            return self._shared_decl(s)
        if isinstance(t, A.ArrayType):
            return self._local_array(s)
        slot = self.new_slot()
        t = unq(t)
        sym = Sym("var", t, slot=slot)
        if s.init is None:
            self.scope.names[s.name] = sym
            return lambda c, a: a
        if isinstance(s.init, A.InitList):
            f = self._init_list_value(s.init, t)
        else:
            f = self.rvalue(s.init, t)
        self.scope.names[s.name] = sym  # the initializer cannot see the new name
        lv = VarLV(slot, t, s.loc, s.name)

        def decl(c, a):
            lv.store(c, a, f(c, a))
            return a

        return decl

    def _init_list_value(self, il: A.InitList, t) -> Fn:
        if isinstance(t, A.VectorType):
            fs = [self.rvalue(x, t.base) for x in il.items]
            zero = scalar(0, t.base)
            while len(fs) < t.width:
                fs.append(lambda c, a: zero)
            return lambda c, a: Vec(tuple(f(c, a) for f in fs[: t.width]))
        if isinstance(t, A.ScalarType) and len(il.items) == 1:
            return self.rvalue(il.items[0], t)
        if isinstance(t, A.ScalarType) and not il.items:
            z = scalar(0, t)
            return lambda c, a: z
        raise unsupported(il.loc, f"an initializer list for {_tn(t)}")

    def _shared_decl(self, s: A.VarDecl):
        self.scope.names[s.name] = shared_symbol(self.prog, s)
        return lambda c, a: a

    def _local_array(self, s: A.VarDecl):
        t = s.ty
        n = sizeof(t)
        if n is None:
            raise unsupported(s.loc, f"a local array of unknown size '{s.name}'")
        if self._can_promote(s):
            return self._register_array(s)
        key = ("local", id(s))
        name = s.name
        fill = poison_for(t) if self.prog.options.get("poison_shared", True) else None

        def get(c: Chunk) -> Buffer:
            b = c.bufs.get(key)
            if b is None:
                seg = (n + 15) // 16 * 16
                b = _chunk_buffer(c, key, name, "local", c.T * seg, seg, n, fill)
            return b

        self.scope.names[s.name] = Sym("mem", t, buf=get)
        if s.init is None:
            return lambda c, a: a
        stores = self._array_init_stores(s.init, t, get, s.loc)

        def init(c, a):
            for f in stores:
                f(c, a)
            return a

        return init

    def _can_promote(self, s: A.VarDecl) -> bool:
        from cuda2nki.simt import registers

        t = s.ty
        if not self.prog.options.get("fast", True) or not isinstance(t, A.ArrayType):
            return False
        if not isinstance(t.elem, A.ScalarType | A.VectorType) or any(d is None for d in t.dims):
            return False
        count = 1
        for d in t.dims:
            count *= d
        if count > registers.MAX_ELEMS:
            return False
        return registers.promotable(self.fn.body, s.name, len(t.dims))

    def _register_array(self, s: A.VarDecl):
        t = s.ty
        slot = self.new_slot()
        self.scope.names[s.name] = Sym("regs", t, slot=slot)
        if s.init is None:
            return lambda c, a: a
        count = 1
        for d in t.dims:
            count *= d
        flat: list[A.Expr] = []

        def flatten(x):
            if isinstance(x, A.InitList):
                for y in x.items:
                    flatten(y)
            else:
                flat.append(x)

        flatten(s.init)
        fs = [self.rvalue(x, t.elem) for x in flat[:count]]
        zero = _zero(t.elem)
        lv = self._reg_lv(s.name, t, slot, [], s.loc)

        def init(c, a):
            from cuda2nki.simt.compiler import var_store

            ra = lv._array(c)
            for i in range(count):
                v = fs[i](c, a) if i < len(fs) else zero
                var_store(c, ra.vals, ra.owned, i, a, v, s.loc)
            return a

        return init

    def _reg_lv(self, name: str, t: A.ArrayType, slot: int, idx_fns: list, loc: SourceLoc):
        from cuda2nki.simt import registers

        strides = []
        acc = 1
        for d in reversed(t.dims):
            strides.append(acc)
            acc *= d
        strides.reverse()
        poison = poison_for(t) if self.prog.options.get("poison_shared", True) else None
        return registers.RegLV(
            slot, tuple(strides), acc, idx_fns, t.elem, _poison_value(t.elem, poison), loc, name
        )

    def _array_init_stores(self, init: A.Expr, t: A.ArrayType, get, loc) -> list[Callable]:
        """Stores for ``T a[N] = {...}``; elements not listed are zero."""
        elem = t.elem
        dims = t.dims
        total = 1
        for d in dims:
            total *= d
        esz = sizeof(elem)
        flat: list[A.Expr] = []

        def flatten(x):
            if isinstance(x, A.InitList):
                for y in x.items:
                    flatten(y)
            else:
                flat.append(x)

        flatten(init)
        fs = [self.rvalue(x, elem) for x in flat[:total]]
        zero = _zero(elem)
        out = []
        for i in range(total):
            f = fs[i] if i < len(fs) else (lambda c, a: zero)

            def st(c, a, f=f, i=i):
                access.store(c, a, Ptr(get(c), np.int64(i * esz)), elem, f(c, a), loc)

            out.append(st)
        return out

    def _s_If(self, s: A.If):
        splitter = self.splitter(s.cond)
        tf = self.stmt(s.then)
        ef = self.stmt(s.else_) if s.else_ is not None else None

        def if_(c, a):
            ta, ea = splitter(c, a)
            r1 = tf(c, ta) if not is_empty(ta) else ta
            if ef is None:
                if is_empty(ea):
                    return r1
                if r1 is ta or _same_size(r1, ta, c.T):
                    return a  # every thread of the branch came back
                return union([r1, ea], c.T)
            r2 = ef(c, ea) if not is_empty(ea) else ea
            if _same_size(r1, ta, c.T) and _same_size(r2, ea, c.T):
                return a
            if is_empty(r2):
                return r1
            if is_empty(r1):
                return r2
            return union([r1, r2], c.T)

        return if_

    def _loop(self, loc, cond: Fn | None, body: Callable, step: Fn | None, check_first: bool):
        def loop(c, a):
            a0 = a
            exits = []
            frame = LoopFrame()
            c.loops.append(frame)
            first = True
            try:
                while not is_empty(a):
                    c.step(loc)
                    if cond is not None and (check_first or not first):
                        ta, fa = split(a, cond(c, a), c.T)
                        if not is_empty(fa):
                            exits.append(fa)
                        a = ta
                        if is_empty(a):
                            break
                    first = False
                    a = body(c, a)
                    if frame.cont:
                        a = union([a, *frame.cont], c.T)
                        frame.cont = []
                    if frame.brk:
                        exits.extend(frame.brk)
                        frame.brk = []
                    if step is not None and not is_empty(a):
                        step(c, a)
            finally:
                c.loops.pop()
            if sum(c.T if x is None else len(x) for x in exits) == _n(c, a0):
                return a0  # nobody returned from inside the loop
            return union(exits, c.T)

        return loop

    def _s_For(self, s: A.For):
        saved = self.scope
        self.scope = Scope(saved)
        try:
            inits = [self.stmt(x) for x in s.init]
            cond = self.cond(s.cond) if s.cond is not None else None
            step = self.expr(s.step)[0] if s.step is not None else None
            body = self.stmt(s.body)
        finally:
            self.scope = saved
        loop = self._loop(s.loc, cond, body, step, True)

        def for_(c, a):
            for f in inits:
                a = f(c, a)
            return loop(c, a)

        return for_

    def _s_While(self, s: A.While):
        return self._loop(s.loc, self.cond(s.cond), self.stmt(s.body), None, True)

    def _s_DoWhile(self, s: A.DoWhile):
        return self._loop(s.loc, self.cond(s.cond), self.stmt(s.body), None, False)

    def _s_Break(self, s: A.Break):
        def brk(c, a):
            c.loops[-1].brk.append(a if a is not None else np.arange(c.T, dtype=np.int64))
            return EMPTY

        return brk

    def _s_Continue(self, s: A.Continue):
        def cont(c, a):
            frame = None
            for f in reversed(c.loops):
                if not isinstance(f, _SwitchFrame):
                    frame = f
                    break
            frame.cont.append(a if a is not None else np.arange(c.T, dtype=np.int64))
            return EMPTY

        return cont

    def _s_Return(self, s: A.Return):
        if self.is_kernel:

            def kret(c, a):
                if a is None:
                    c.exited[:] = True
                else:
                    c.exited[a] = True
                return EMPTY

            return kret
        rt = unq(self.fn.return_type)
        vf = self.rvalue(s.value, rt) if s.value is not None else None

        def ret(c, a):
            frame = c.rets[-1]
            if vf is not None:
                v = vf(c, a)
                if a is None:
                    frame[0], frame[1] = v, False
                else:
                    frame[0], frame[1] = scatter(frame[0], v, a, c.T, frame[1])
            return EMPTY

        return ret

    def _s_Switch(self, s: A.Switch):
        cf, ct = self.expr(s.cond)
        ct = compute_type(ct)
        cf = self.conv(cf, self.type_of(s.cond), ct, s.loc)
        cases = []
        saved = self.scope
        self.scope = Scope(saved)
        try:
            for case in s.cases:
                body = [self.stmt(x) for x in case.body]
                cases.append((case.values, body))
        finally:
            self.scope = saved
        all_values = [v for vals, _ in cases for v in vals]

        def switch(c, a):
            v = cf(c, a)
            frame = _SwitchFrame()
            c.loops.append(frame)
            try:
                n = _n(c, a)
                vv = np.broadcast_to(v, (n,))
                unmatched = ~np.isin(vv, all_values) if all_values else np.ones(n, bool)
                flowing = EMPTY
                for vals, body in cases:
                    hit = np.isin(vv, vals) if vals else unmatched
                    enter = sel(a, hit) if np.any(hit) else EMPTY
                    cur = union([flowing, enter], c.T) if len(enter) else flowing
                    for f in body:
                        if is_empty(cur):
                            break
                        cur = f(c, cur)
                    flowing = cur
                has_default = any(not vals for vals, _ in cases)
                rest = [flowing, *frame.brk]
                if not has_default and np.any(unmatched):
                    rest.append(sel(a, unmatched))
                return union(rest, c.T)
            finally:
                c.loops.pop()

        return switch


class _SwitchFrame(LoopFrame):
    """A ``break`` target that is not a ``continue`` target."""


# --------------------------------------------------------------------------- helpers


def shared_symbol(prog: Program, s: A.VarDecl) -> Sym:
    """The symbol of the ``__shared__`` declaration ``s``: one buffer per block, keyed by the
    declaration, so every function naming it (a file-scope variable) addresses the same one."""
    t = s.ty
    poison = prog.options.get("poison_shared", True)
    key = ("extern_shared",) if s.storage == "extern_shared" else ("shared", id(s))
    if s.storage == "extern_shared":
        size_fn = lambda c: prog.options.get("shared_bytes", 0)  # noqa: E731
        if isinstance(t, A.ArrayType):
            t = A.ArrayType(elem=t.elem, dims=(None,) + t.dims[1:])
    else:
        n = sizeof(t)
        if n is None:
            raise unsupported(s.loc, f"a __shared__ array of unknown size '{s.name}'")
        size_fn = lambda c, n=n: n  # noqa: E731
    name = s.name
    fill = poison_for(t) if poison else None

    def get(c: Chunk) -> Buffer:
        b = c.bufs.get(key)
        if b is None:
            seg = max(int(size_fn(c)), 0)
            seg_al = (seg + 15) // 16 * 16 if seg else 16
            b = _chunk_buffer(c, key, name, "shared", c.nb * seg_al, seg_al, seg, fill)
        return b

    if isinstance(t, A.ArrayType) and t.dims and t.dims[0] is None:
        t = A.ArrayType(elem=t.elem, dims=(1 << 40,) + t.dims[1:])
    return Sym("mem", t, buf=get)


def _chunk_buffer(c: Chunk, key, name: str, kind: str, nbytes: int, seg: int, limit: int, fill):
    """A fresh (poisoned or zeroed) segmented buffer for this chunk, reusing the launch's memory."""
    cache = c.launch.buffers
    b = cache.get(key)
    if b is not None and b.data.size >= nbytes and b.seg == seg:
        if fill:
            word = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[len(fill)]
            b.data.view(word)[:] = np.frombuffer(fill, word)[0]
        else:
            b.data[:] = 0
    else:
        b = make_buffer(name, kind, nbytes, seg=seg, fill=fill)
        cache[key] = b
    b.limit = limit
    c.bufs[key] = b
    return b


def _box_split(c: Chunk, a, op: str, x, y):
    """Split ``a`` (None or a Box) by ``x op y`` when one side is single-axis affine, else None."""
    if isinstance(y, Aff) and not isinstance(x, Aff):
        x, y = y, x
        op = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "=="}[op]
    if not isinstance(x, Aff) or isinstance(y, np.ndarray | Aff):
        return None
    axes = [k for k, v in enumerate(x.co) if v]
    if len(axes) != 1 or not isinstance(y, np.integer):
        return None
    ax = axes[0]
    k, b, s = x.co[ax], x.base(), int(y)
    n = x.shape[ax]
    # value at position p (0 <= p < n) along the axis is b + k * p; find the p where op holds
    import math

    if op in ("<", "<=", ">", ">="):
        lim = s - b
        if op == "<":
            lim_le = lim - 1  # k*p <= lim - 1
        elif op == "<=":
            lim_le = lim
        else:
            lim_le = None
        if lim_le is not None:  # k*p <= lim_le
            if k > 0:
                lo, hi = 0, min(n, math.floor(lim_le / k) + 1)
            else:
                lo, hi = max(0, math.ceil(lim_le / k)), n
        else:
            lim_ge = lim + 1 if op == ">" else lim  # k*p >= lim_ge
            if k > 0:
                lo, hi = max(0, math.ceil(lim_ge / k)), n
            else:
                lo, hi = 0, min(n, math.floor(lim_ge / k) + 1)
    else:  # ==
        if (s - b) % k:
            lo, hi = 0, 0
        else:
            p = (s - b) // k
            lo, hi = (p, p + 1) if 0 <= p < n else (0, 0)
    lo, hi = max(lo, 0), min(hi, n)
    if hi <= lo:
        return EMPTY, a
    if lo == 0 and hi == n:
        return a, EMPTY
    if lo != 0 and hi != n:
        return None  # the complement is not a box
    box = a if isinstance(a, Box) else Box.full(c)
    inside = box.restrict(ax, lo, hi)
    outside = box.restrict(ax, hi, n) if lo == 0 else box.restrict(ax, 0, lo)
    return inside, outside


def _same_size(x, y, T: int) -> bool:
    """Two active sets, ``x`` a subset of ``y``, are equal when they have the same size."""
    return (T if x is None else len(x)) == (T if y is None else len(y))


def _tn(t) -> str:
    from cuda2nki.frontend.typesys import type_str

    return type_str(t)


def _uniform(v) -> bool:
    from cuda2nki.simt.memory import is_uniform

    return is_uniform(v)


def _ptr_truth(p):
    if isinstance(p, Ptr):
        return np.bool_(p.buf is not None)
    return truthy(p)


def _int_to_ptr(v, loc):
    if np.all(np.asarray(v) == 0):
        return Ptr(None, np.int64(0))
    raise unsupported(loc, "a conversion of a non-zero integer to a pointer")


def _is_lvalue_expr(e: A.Expr) -> bool:
    return isinstance(e, A.Name | A.Index | A.Member) or (isinstance(e, A.Unary) and e.op == "*")


_PURE_CALLS = frozenset(
    "fmaxf fminf fabsf fmax fmin fabs max min abs expf exp logf log sqrtf sqrt tanhf tanh "
    "__expf __logf floorf ceilf truncf roundf rintf floor ceil trunc round".split()
)


def _pure(e: A.Expr) -> bool:
    """No side effects, no memory access, cannot fault: safe to evaluate for inactive threads."""
    if isinstance(e, A.IntLit | A.FloatLit | A.BoolLit | A.Builtin | A.SizeOf):
        return True
    if isinstance(e, A.Name):
        return True
    if isinstance(e, A.Cast):
        return _pure(e.operand)
    if isinstance(e, A.Unary):
        return e.op in ("-", "+", "!", "~") and _pure(e.operand)
    if isinstance(e, A.Binary):
        if e.op in ("/", "%") and not (isinstance(e.ty, A.ScalarType) and e.ty.is_float):
            return False
        return _pure(e.left) and _pure(e.right)
    if isinstance(e, A.Ternary):
        return _pure(e.cond) and _pure(e.then) and _pure(e.else_)
    if isinstance(e, A.Member):
        return not e.arrow and _pure(e.base)
    if isinstance(e, A.Call):
        return e.target is None and e.func in _PURE_CALLS and all(_pure(x) for x in e.args)
    return False
