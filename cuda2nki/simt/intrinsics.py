"""The interpreter's table of CUDA intrinsics: name -> implementation, support level and note.

:data:`TABLE` is the single source of truth for what the SIMT interpreter executes; it can be
exported as the "supported subset" document (:func:`supported_subset`).  Levels: ``exact`` (bit-
faithful to CUDA), ``ideal`` (correctly rounded; the GPU may differ by a few ulp or uses a fast
approximation), ``partial`` (see note).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from cuda2nki.diagnostics import error
from cuda2nki.frontend import ast as A
from cuda2nki.simt import access, atomics, mathfns, recipdiv, warp
from cuda2nki.simt.affine import Aff
from cuda2nki.simt.chunk import Chunk
from cuda2nki.simt.memory import Ptr, Vec
from cuda2nki.simt.numeric import DTYPES, common_type, compute_type, convert, np_dtype, scalar

S = {n: A.ScalarType(name=n) for n in DTYPES}
F32, F64, I32, U32, I64, U64 = (
    S["float32"],
    S["float64"],
    S["int32"],
    S["uint32"],
    S["int64"],
    S["uint64"],
)
H16, BF16, BOOL = S["float16"], S["bfloat16"], S["bool"]
VOID = A.ScalarType(name="void")

Builder = Callable  # (fc, call) -> (fn, type)


@dataclass(frozen=True)
class Intrinsic:
    name: str
    build: Builder
    level: str  # exact | ideal | partial
    note: str = ""


TABLE: dict[str, Intrinsic] = {}


def _reg(names: str, build: Builder, level: str = "exact", note: str = "") -> None:
    for n in names.split():
        TABLE[n] = Intrinsic(n, build, level, note)


def supported_subset() -> list[dict[str, str]]:
    """The table as rows (name, level, note), sorted by name."""
    return [{"name": k, "level": v.level, "note": v.note} for k, v in sorted(TABLE.items())]


def supported_subset_markdown() -> str:
    """The table as a Markdown document (for the generated docs)."""
    lines = [
        "# CUDA intrinsics executed by the SIMT interpreter",
        "",
        "Levels: **exact** (bit-faithful to CUDA), **ideal** (correctly rounded; a GPU may differ by "
        "a few ulp or uses a fast approximation), **partial** (see the note).  Names not listed are "
        "refused with C2N1505.",
        "",
        "| name | level | note |",
        "|---|---|---|",
    ]
    for r in supported_subset():
        lines.append(f"| `{r['name']}` | {r['level']} | {r['note']} |")
    return "\n".join(lines) + "\n"


def _unq(t):
    if isinstance(t, A.ScalarType | A.VectorType | A.PointerType) and t.const:
        return type(t)(**{**t.__dict__, "const": False})
    return t


def result_type(call: A.Call, arg_types: list):
    if call.ty is not None:
        return _unq(call.ty)
    try:
        from cuda2nki.frontend.intrinsics import RULES
    except ImportError:  # pragma: no cover
        RULES = {}
    rule = RULES.get(call.func)
    if rule is not None:
        t = rule(arg_types)
        if t is not None:
            return _unq(t)
    return F32


def compile_call(fc, e: A.Call):
    ent = TABLE.get(e.func)
    if ent is None and e.func.startswith("make_") and isinstance(e.ty, A.VectorType):
        # the constructor of a record struct or packed vector (typed by the front end)
        return _make_vec(e.ty)(_Materialising(fc), e)
    if ent is None:
        from cuda2nki.simt.compiler import unsupported

        raise unsupported(e.loc, f"the function '{e.func}'")
    return ent.build(_Materialising(fc), e)


class _Materialising:
    """The function compiler, with every argument value materialised (no affine values)."""

    def __init__(self, fc):
        self._fc = fc

    def __getattr__(self, name):
        return getattr(self._fc, name)

    def rvalue(self, e, want=None):
        f = self._fc.rvalue(e, want)
        return lambda c, a: _mat(f(c, a))

    def expr(self, e):
        f, t = self._fc.expr(e)
        return (lambda c, a: _mat(f(c, a))), t


def _mat(v):
    if isinstance(v, Aff):
        return v.values()
    if isinstance(v, Ptr) and isinstance(v.off, Aff):
        return v  # addresses keep their affine form (loads through them become strided views)
    return v


def _args(fc, e: A.Call, want=None):
    ts = [fc.type_of(a) for a in e.args]
    if want is None:
        fs = [fc.rvalue(a) for a in e.args]
    else:
        fs = [fc.rvalue(a, w) if w is not None else fc.rvalue(a) for a, w in zip(e.args, want)]
    return fs, ts


def _arity(e: A.Call, lo: int, hi: int | None = None) -> None:
    hi = lo if hi is None else hi
    if not lo <= len(e.args) <= hi:
        from cuda2nki.simt.compiler import unsupported

        raise unsupported(e.loc, f"'{e.func}' with {len(e.args)} arguments")


# --------------------------------------------------------------------------- math


def _math_type(e: A.Call, fc, base: str) -> A.ScalarType:
    name = e.func
    if name.startswith("__") or name == base + "f":
        return F32
    ts = [fc.type_of(a) for a in e.args]
    rt = result_type(e, ts)
    return rt if isinstance(rt, A.ScalarType) and rt.name in ("float32", "float64") else F64


def _math(base: str):
    m = mathfns.MATH[base]

    def build(fc, e):
        _arity(e, m.arity)
        rt = _math_type(e, fc, base)
        fs, _ = _args(fc, e, [rt] * len(e.args) if base != "ldexp" else [rt, I32])
        dt = np_dtype(rt)
        if base == "ldexp":
            return (
                lambda c, a: mathfns._as(
                    np.ldexp(fs[0](c, a), np.asarray(fs[1](c, a), np.int32)), dt
                )
            ), rt
        if m.arity == 1:
            f0 = fs[0]
            return (lambda c, a: mathfns.compute(m, [f0(c, a)], dt)), rt
        return (lambda c, a: mathfns.compute(m, [f(c, a) for f in fs], dt)), rt

    return build


for _b, _m in mathfns.MATH.items():
    _lvl = "exact" if _m.exact else "ideal"
    _reg(
        f"{_b} {_b}f",
        _math(_b),
        _lvl,
        _m.note
        or (
            ""
            if _m.exact
            else "computed in float64 and rounded once (correctly rounded; CUDA allows 1-4 ulp)"
        ),
    )
for _fast, _b in mathfns.FAST.items():
    _reg(_fast, _math(_b), "ideal", mathfns.FAST_NOTE)


def _to_int_math(kind: str):
    def build(fc, e):
        _arity(e, 1)
        src = F32 if e.func.endswith("f") else F64
        if fc.type_of(e.args[0]) == F32 and not e.func.endswith("f"):
            src = F32
        rt = I32 if kind == "ilogb" else I64
        fs, _ = _args(fc, e, [src])

        def f(c, a):
            x = np.asarray(fs[0](c, a), np.float64)
            if kind == "ilogb":
                r = mathfns._ilogb(x)
            elif kind == "rint":
                r = np.rint(x)
            else:
                r = mathfns._round_half_away(x)
            return convert(mathfns._as(r, np.dtype(np.float64)), F64, rt)

        return f, rt

    return build


_reg("ilogb ilogbf", _to_int_math("ilogb"))
_reg("lrint lrintf llrint llrintf", _to_int_math("rint"))
_reg("lround lroundf llround llroundf", _to_int_math("round"))


def _nextafter(fc, e):
    _arity(e, 2)
    rt = _math_type(e, fc, "nextafter")
    fs, _ = _args(fc, e, [rt, rt])
    dt = np_dtype(rt)
    return (
        lambda c, a: mathfns._as(
            np.nextafter(np.asarray(fs[0](c, a), dt), np.asarray(fs[1](c, a), dt)), dt
        )
    ), rt


_reg("nextafter nextafterf", _nextafter)


def _fdividef(fc, e):
    _arity(e, 2)
    fs, _ = _args(fc, e, [F32, F32])
    exact = lambda c, a: np.divide(fs[0](c, a), fs[1](c, a), dtype=np.float32)  # noqa: E731
    # a port's x * (1 / y), when the check asks (see recipdiv)
    return recipdiv.divide_fn(exact, fs[0], fs[1], np.dtype(np.float32), e.loc), F32


_reg(
    "__fdividef",
    _fdividef,
    "ideal",
    "IEEE division (the GPU's __fdividef is approximate and returns 0 for |b| > 2**126)",
)


def _rounded(op: str):
    def build(fc, e):
        rt = F64 if e.func.startswith("__d") or e.func == "__fma_rn" else F32
        fs, _ = _args(fc, e, [rt] * len(e.args))
        dt = np_dtype(rt)
        if op == "fma":
            m = mathfns.MATH["fma"]
            return (lambda c, a: mathfns.compute(m, [f(c, a) for f in fs], dt)), rt
        if op == "rcp":
            return (lambda c, a: np.divide(dt.type(1), fs[0](c, a), dtype=dt)), rt
        if op == "sqrt":
            return (lambda c, a: np.sqrt(fs[0](c, a), dtype=dt)), rt
        ufunc = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[op]
        return (lambda c, a: ufunc(fs[0](c, a), fs[1](c, a), dtype=dt)), rt

    return build


for _op in ("add", "sub", "mul", "div"):
    _reg(f"__f{_op}_rn __d{_op}_rn", _rounded(_op))
    _reg(
        f"__f{_op}_rz __f{_op}_rd __f{_op}_ru",
        _rounded(_op),
        "partial",
        "directed rounding not modelled: rounds to nearest",
    )
_reg("__fmaf_rn __fmaf_ieee_rn __fma_rn", _rounded("fma"), "ideal", mathfns.MATH["fma"].note)
_reg("__fmaf_rz __fmaf_rd __fmaf_ru", _rounded("fma"), "partial", "directed rounding not modelled")
_reg("__frcp_rn __drcp_rn", _rounded("rcp"))
_reg("__frcp_rz __frcp_rd __frcp_ru", _rounded("rcp"), "partial", "directed rounding not modelled")
_reg(
    "__fsqrt_rz __fsqrt_rd __fsqrt_ru",
    _rounded("sqrt"),
    "partial",
    "directed rounding not modelled",
)
_reg("__dsqrt_rn", _rounded("sqrt"))


def _saturate(fc, e):
    fs, _ = _args(fc, e, [F32])
    return (
        lambda c, a: mathfns._as(
            np.clip(np.nan_to_num(fs[0](c, a), nan=0.0), 0.0, 1.0), np.dtype(np.float32)
        )
    ), F32


_reg("__saturatef", _saturate)


def _minmax(kind: str, fixed=None):
    def build(fc, e):
        _arity(e, 2)
        ts = [fc.type_of(x) for x in e.args]
        rt = fixed or (_unq(e.ty) if isinstance(e.ty, A.ScalarType) else common_type(*ts))
        fs, _ = _args(fc, e, [rt, rt])
        if rt.is_float:
            uf = np.fmin if kind == "min" else np.fmax
        else:
            uf = np.minimum if kind == "min" else np.maximum
        dt = np_dtype(rt)
        return (lambda c, a: mathfns._as(uf(fs[0](c, a), fs[1](c, a)), dt)), rt

    return build


_reg("min", _minmax("min"))
_reg("max", _minmax("max"))
_reg("umin", _minmax("min", U32))
_reg("umax", _minmax("max", U32))
_reg("llmin", _minmax("min", I64))
_reg("llmax", _minmax("max", I64))
_reg("ullmin", _minmax("min", U64))
_reg("ullmax", _minmax("max", U64))


def _abs(fc, e):
    _arity(e, 1)
    t = compute_type(fc.type_of(e.args[0]))
    if e.func == "labs" or e.func == "llabs":
        t = I64
    fs, _ = _args(fc, e, [t])
    dt = np_dtype(t)
    return (lambda c, a: mathfns._as(np.abs(fs[0](c, a)), dt)), t


_reg("abs labs llabs", _abs)


def _classify(kind: str):
    def build(fc, e):
        t = fc.type_of(e.args[0])
        t = t if isinstance(t, A.ScalarType) and t.is_float and t.name == "float64" else F32
        if e.func.startswith("__") and e.func.endswith("f"):
            t = F32
        fs, _ = _args(fc, e, [t])
        fn = {"nan": np.isnan, "inf": np.isinf, "finite": np.isfinite, "sign": np.signbit}[kind]
        rt = _unq(e.ty) if isinstance(e.ty, A.ScalarType) else BOOL
        return (lambda c, a: convert(fn(fs[0](c, a)), BOOL, rt)), rt

    return build


_reg("isnan __isnanf __isnan", _classify("nan"))
_reg("isinf __isinff __isinf", _classify("inf"))
_reg("isfinite __finitef", _classify("finite"))
_reg("signbit __signbitf", _classify("sign"))

# --------------------------------------------------------------------------- conversions


def _cvt(src, dst, mode: str = "rn"):
    def build(fc, e):
        _arity(e, 1)
        fs, _ = _args(fc, e, [src])
        f0 = fs[0]
        if dst.is_float or mode == "rz":
            return (lambda c, a: convert(f0(c, a), src, dst)), dst
        rnd = {"rn": np.rint, "rd": np.floor, "ru": np.ceil}[mode]

        def cv(c, a):
            x = f0(c, a)
            return convert(
                mathfns._as(rnd(np.asarray(x, np.float64)), np.dtype(np.float64)), F64, dst
            )

        return cv, dst

    return build


_NOTE_DIR = "directed rounding modes of float conversions are modelled as round-to-nearest"
_reg(
    "__float2half __float2half_rn __float2half_rz __float2half_rd __float2half_ru",
    _cvt(F32, H16),
    "exact",
    "",
)
TABLE["__float2half_rz"] = Intrinsic("__float2half_rz", _cvt(F32, H16), "partial", _NOTE_DIR)
_reg("__double2half", _cvt(F64, H16))
_reg("__half2float __low2float", _cvt(H16, F32))
_reg("__bfloat162float", _cvt(BF16, F32))
_reg("__float2bfloat16 __float2bfloat16_rn", _cvt(F32, BF16))
_reg("__float2bfloat16_rz", _cvt(F32, BF16), "partial", _NOTE_DIR)
_reg("__double2bfloat16", _cvt(F64, BF16))
_reg("__int2half_rn __short2half_rn", _cvt(I32, H16))
_reg("__uint2half_rn", _cvt(U32, H16))
_reg("__int2bfloat16_rn", _cvt(I32, BF16))
_reg("__int2float_rn __int2float_rz", _cvt(I32, F32))
_reg("__uint2float_rn __uint2float_rz", _cvt(U32, F32))
_reg("__ll2float_rn", _cvt(I64, F32))
_reg("__ull2float_rn", _cvt(U64, F32))
_reg("__int2double_rn", _cvt(I32, F64))
_reg("__uint2double_rn", _cvt(U32, F64))
_reg("__ll2double_rn", _cvt(I64, F64))
_reg("__float2double", _cvt(F32, F64))
_reg("__double2float_rn", _cvt(F64, F32))
_reg("__double2float_rz __double2float_rd __double2float_ru", _cvt(F64, F32), "partial", _NOTE_DIR)
for _mode in ("rn", "rz", "rd", "ru"):
    _reg(f"__float2int_{_mode}", _cvt(F32, I32, _mode))
    _reg(f"__float2uint_{_mode}", _cvt(F32, U32, _mode))
_reg("__float2ll_rn", _cvt(F32, I64, "rn"))
_reg("__float2ll_rz", _cvt(F32, I64, "rz"))
_reg("__float2ull_rn", _cvt(F32, U64, "rn"))
_reg("__float2ull_rz", _cvt(F32, U64, "rz"))
_reg("__double2int_rn", _cvt(F64, I32, "rn"))
_reg("__double2int_rz", _cvt(F64, I32, "rz"))
_reg("__double2uint_rn", _cvt(F64, U32, "rn"))
_reg("__double2uint_rz", _cvt(F64, U32, "rz"))
_reg("__double2ll_rn", _cvt(F64, I64, "rn"))
_reg("__double2ll_rz", _cvt(F64, I64, "rz"))
_reg("__half2int_rn", _cvt(H16, I32, "rn"))
_reg("__half2int_rz", _cvt(H16, I32, "rz"))
_reg("__bfloat162int_rn", _cvt(BF16, I32, "rn"))


def _bits(src, dst):
    def build(fc, e):
        _arity(e, 1)
        fs, _ = _args(fc, e, [src])
        f0, sd, dd = fs[0], np_dtype(src), np_dtype(dst)

        def cast(c, a):
            x = f0(c, a)
            if isinstance(x, np.ndarray):
                return x.astype(sd, copy=False).view(dd)
            return np.asarray(x, sd).reshape(1).view(dd)[0]

        return cast, dst

    return build


_reg("__float_as_int", _bits(F32, I32))
_reg("__float_as_uint", _bits(F32, U32))
_reg("__int_as_float", _bits(I32, F32))
_reg("__uint_as_float", _bits(U32, F32))
_reg("__double_as_longlong", _bits(F64, I64))
_reg("__longlong_as_double", _bits(I64, F64))
_reg("__half_as_short", _bits(H16, S["int16"]))
_reg("__half_as_ushort", _bits(H16, S["uint16"]))
_reg("__short_as_half", _bits(S["int16"], H16))
_reg("__ushort_as_half", _bits(S["uint16"], H16))
_reg("__bfloat16_as_ushort", _bits(BF16, S["uint16"]))
_reg("__ushort_as_bfloat16", _bits(S["uint16"], BF16))


def _double_words(part: str):
    def build(fc, e):
        fs, _ = _args(fc, e, [F64])

        def f(c, a):
            x = np.asarray(fs[0](c, a), np.float64)
            w = x.reshape(-1).view(np.int32).reshape(-1, 2)[:, 1 if part == "hi" else 0]
            return w if np.ndim(fs[0](c, a)) else w[0]

        return f, I32

    return build


_reg("__double2hiint", _double_words("hi"))
_reg("__double2loint", _double_words("lo"))


def _hiloint2double(fc, e):
    fs, _ = _args(fc, e, [I32, I32])

    def f(c, a):
        hi, lo = fs[0](c, a), fs[1](c, a)
        n = max(np.size(hi), np.size(lo))
        w = np.empty((n, 2), np.int32)
        w[:, 0], w[:, 1] = lo, hi
        r = w.reshape(-1).view(np.float64)
        return r if isinstance(hi, np.ndarray) or isinstance(lo, np.ndarray) else r[0]

    return f, F64


_reg("__hiloint2double", _hiloint2double)

# --------------------------------------------------------------------------- half / bfloat16


def _half_arith(op: str):
    def build(fc, e):
        t = _unq(fc.type_of(e.args[0]))
        vec = isinstance(t, A.VectorType)
        base = (
            t.base
            if vec
            else (t if isinstance(t, A.ScalarType) and t.name in ("float16", "bfloat16") else H16)
        )
        fs, _ = _args(fc, e, [t if vec else base] * len(e.args))
        dt = np_dtype(base)
        f32 = np.dtype(np.float32)

        def one(*xs):
            xs = [np.asarray(x, f32) for x in xs]
            if op in ("add", "sub", "mul", "div"):
                r = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[op](
                    *xs
                )
            elif op == "fma":  # one rounding, from the (nearly always exact) fp64 value
                r = xs[0].astype(np.float64) * xs[1] + xs[2]
            elif op == "fma_relu":
                r = np.maximum(xs[0].astype(np.float64) * xs[1] + xs[2], 0)
            elif op == "max":
                r = np.fmax(*xs)
            elif op == "min":
                r = np.fmin(*xs)
            elif op == "neg":
                r = -xs[0]
            elif op == "abs":
                r = np.abs(xs[0])
            else:
                r = (
                    mathfns.compute(mathfns.MATH[op], [xs[0]], np.dtype(np.float64))
                    if op in mathfns.MATH
                    else {"rcp": lambda x: 1.0 / x}[op](xs[0].astype(np.float64))
                )
            out = np.asarray(r).astype(dt)
            return out if out.ndim else out[()]

        if vec:
            return (
                lambda c, a: Vec(tuple(one(*ls) for ls in zip(*[f(c, a).lanes for f in fs])))
            ), t
        return (lambda c, a: one(*[f(c, a) for f in fs])), base

    return build


for _n, _op in (
    ("__hadd __hadd2 __hadd_sat", "add"),
    ("__hsub __hsub2 __hsub_sat", "sub"),
    ("__hmul __hmul2 __hmul_sat", "mul"),
    ("__hdiv __h2div", "div"),
    ("__hfma __hfma2 __hfma_sat", "fma"),
    ("__hfma_relu __hfma2_relu", "fma_relu"),
    ("__hmax __hmax2 __hmax_nan", "max"),
    ("__hmin __hmin2 __hmin_nan", "min"),
    ("__hneg __hneg2", "neg"),
    ("__habs __habs2", "abs"),
    ("hexp h2exp", "exp"),
    ("hexp2", "exp2"),
    ("hexp10", "exp10"),
    ("hlog h2log", "log"),
    ("hlog2", "log2"),
    ("hlog10", "log10"),
    ("hsqrt h2sqrt", "sqrt"),
    ("hrsqrt h2rsqrt", "rsqrt"),
    ("hrcp h2rcp", "rcp"),
    ("hsin", "sin"),
    ("hcos", "cos"),
    ("hfloor", "floor"),
    ("hceil", "ceil"),
    ("htrunc", "trunc"),
    ("hrint", "rint"),
):
    _reg(
        _n,
        _half_arith(_op),
        "exact" if _op in ("add", "sub", "mul", "max", "min", "neg", "abs") else "ideal",
        "computed in float32, rounded to the half type"
        + ("; _sat variants do not clamp" if "sat" in _n else ""),
    )


def _half_cmp(op: str):
    def build(fc, e):
        t = _unq(fc.type_of(e.args[0]))
        fs, _ = _args(fc, e)
        from cuda2nki.simt.numeric import compare

        def f(c, a):
            x = np.asarray(fs[0](c, a), np.float32)
            y = np.asarray(fs[1](c, a), np.float32)
            r = compare(op, x, y)
            if e.func.endswith("u") and e.func != "__hneu":
                r = r | np.isnan(x) | np.isnan(y)
            return r

        del t
        return f, BOOL

    return build


for _n, _op in (
    ("__heq __hequ", "=="),
    ("__hne __hneu", "!="),
    ("__hlt __hltu", "<"),
    ("__hle __hleu", "<="),
    ("__hgt __hgtu", ">"),
    ("__hge __hgeu", ">="),
):
    _reg(_n, _half_cmp(_op))


def _hclass(fn):
    def build(fc, e):
        fs, _ = _args(fc, e)
        return (lambda c, a: fn(np.asarray(fs[0](c, a), np.float32))), BOOL

    return build


_reg("__hisnan", _hclass(np.isnan))
_reg("__hisinf", _hclass(np.isinf))


def _pack2(vt_name: str, base, from_float: bool, dup: bool = False, which=None):
    vt = A.VectorType(name=vt_name, base=base, width=2)

    def build(fc, e):
        if which is not None:  # lows/highs of two half2
            fs, _ = _args(fc, e)
            i = 0 if which == "low" else 1
            return (lambda c, a: Vec((fs[0](c, a).lanes[i], fs[1](c, a).lanes[i]))), vt
        want = F32 if from_float else base
        fs, _ = _args(fc, e, [want] * len(e.args))
        if dup:
            return (lambda c, a: Vec((convert(fs[0](c, a), want, base),) * 2)), vt
        return (lambda c, a: Vec(tuple(convert(f(c, a), want, base) for f in fs))), vt

    return build


_reg("__floats2half2_rn", _pack2("half2", H16, True))
_reg("__halves2half2", _pack2("half2", H16, False))
_reg("__float2half2_rn", _pack2("half2", H16, True, dup=True))
_reg("__half2half2", _pack2("half2", H16, False, dup=True))
_reg("__lows2half2", _pack2("half2", H16, False, which="low"))
_reg("__highs2half2", _pack2("half2", H16, False, which="high"))
_reg("__floats2bfloat162_rn", _pack2("__nv_bfloat162", BF16, True))
_reg("__bfloat162bfloat162", _pack2("__nv_bfloat162", BF16, False, dup=True))
_reg("__halves2bfloat162", _pack2("__nv_bfloat162", BF16, False))
_reg("__lows2bfloat162", _pack2("__nv_bfloat162", BF16, False, which="low"))
_reg("__highs2bfloat162", _pack2("__nv_bfloat162", BF16, False, which="high"))


def _first_arg(fc, e):
    """``__builtin_assume_aligned(p, n)``, ``__builtin_expect(v, c)``: the value itself."""
    _arity(e, 2, 3)
    f, t = fc.expr(e.args[0])
    return f, t


_reg("__builtin_assume_aligned __builtin_expect", _first_arg, "exact", "a compiler hint: the value")


def _float22(vt_name: str, base):
    def build(fc, e):
        fs, _ = _args(fc, e)
        vt = A.VectorType(name=vt_name, base=base, width=2)
        return (lambda c, a: Vec(tuple(convert(x, F32, base) for x in fs[0](c, a).lanes))), vt

    return build


_reg("__float22half2_rn", _float22("half2", H16))
_reg("__float22bfloat162_rn", _float22("__nv_bfloat162", BF16))


def _unpack2(lane: int, to_float: bool):
    def build(fc, e):
        t = _unq(fc.type_of(e.args[0]))
        base = t.base if isinstance(t, A.VectorType) else H16
        fs, _ = _args(fc, e)
        rt = F32 if to_float else base
        return (lambda c, a: convert(fs[0](c, a).lanes[lane], base, rt)), rt

    return build


_reg("__low2half __low2bfloat16", _unpack2(0, False))
_reg("__high2half __high2bfloat16", _unpack2(1, False))
_reg("__high2float", _unpack2(1, True))


def _to_float2(fc, e):
    fs, ts = _args(fc, e)
    base = ts[0].base if isinstance(ts[0], A.VectorType) else H16
    vt = A.VectorType(name="float2", base=F32, width=2)
    return (lambda c, a: Vec(tuple(convert(x, base, F32) for x in fs[0](c, a).lanes))), vt


_reg("__half22float2 __bfloat1622float2", _to_float2)


def _low2float(fc, e):
    t = _unq(fc.type_of(e.args[0]))
    if isinstance(t, A.VectorType):
        return _unpack2(0, True)(fc, e)
    return _cvt(H16, F32)(fc, e)


_reg("__low2float", _low2float)

# --------------------------------------------------------------------------- integer intrinsics


def _popc(fc, e):
    t = U64 if e.func.endswith("ll") else U32
    fs, _ = _args(fc, e, [t])
    nb = 64 if t is U64 else 32

    def f(c, a):
        x = np.asarray(fs[0](c, a), np.uint64)
        cnt = np.zeros(x.shape, np.int32)
        for b in range(nb):
            cnt += ((x >> np.uint64(b)) & np.uint64(1)).astype(np.int32)
        return cnt if cnt.ndim else cnt[()]

    return f, I32


def _clz(fc, e):
    t = U64 if e.func.endswith("ll") else U32
    fs, _ = _args(fc, e, [t])
    nb = 64 if t is U64 else 32

    def f(c, a):
        x = np.asarray(fs[0](c, a), np.uint64)
        r = np.full(x.shape, nb, np.int32)
        for b in range(nb):
            hit = ((x >> np.uint64(b)) & np.uint64(1)).astype(bool)
            r = np.where(hit, nb - 1 - b, r).astype(np.int32)
        return r if r.ndim else r[()]

    return f, I32


def _ffs(fc, e):
    t = U64 if e.func.endswith("ll") else U32
    fs, _ = _args(fc, e, [t])
    nb = 64 if t is U64 else 32

    def f(c, a):
        x = np.asarray(fs[0](c, a), np.uint64)
        r = np.zeros(x.shape, np.int32)
        for b in reversed(range(nb)):
            hit = ((x >> np.uint64(b)) & np.uint64(1)).astype(bool)
            r = np.where(hit, b + 1, r).astype(np.int32)
        return r if r.ndim else r[()]

    return f, I32


def _brev(fc, e):
    t = U64 if e.func.endswith("ll") else U32
    fs, _ = _args(fc, e, [t])
    nb = 64 if t is U64 else 32
    dt = np_dtype(t)

    def f(c, a):
        x = np.asarray(fs[0](c, a), np.uint64)
        r = np.zeros(x.shape, np.uint64)
        for b in range(nb):
            r |= ((x >> np.uint64(b)) & np.uint64(1)) << np.uint64(nb - 1 - b)
        r = r.astype(dt)
        return r if r.ndim else r[()]

    return f, t


_reg("__popc __popcll", _popc)
_reg("__clz __clzll", _clz)
_reg("__ffs __ffsll", _ffs)
_reg("__brev __brevll", _brev)


def _intop(kind: str, t):
    def build(fc, e):
        fs, _ = _args(fc, e, [t] * len(e.args))
        dt = np_dtype(t)

        def f(c, a):
            xs = [np.asarray(g(c, a)).astype(np.int64 if dt.kind == "i" else np.uint64) for g in fs]
            if kind == "mul24":
                m = (1 << 24) - 1
                if dt.kind == "i":
                    x, y = [((v & m) ^ (1 << 23)) - (1 << 23) for v in xs]
                else:
                    x, y = [v & np.uint64(m) for v in xs]
                r = x * y
            elif kind == "mulhi":
                r = (xs[0] * xs[1]) >> (32 if dt.kind == "i" else np.uint64(32))
            elif kind == "hadd":
                r = (xs[0] + xs[1]) >> (1 if dt.kind == "i" else np.uint64(1))
            elif kind == "rhadd":
                r = (xs[0] + xs[1] + (1 if dt.kind == "i" else np.uint64(1))) >> (
                    1 if dt.kind == "i" else np.uint64(1)
                )
            elif kind == "sad":
                d = np.abs(xs[0].astype(np.int64) - xs[1].astype(np.int64))
                r = d.astype(xs[2].dtype) + xs[2]
            else:
                raise AssertionError(kind)
            out = np.asarray(r).astype(dt)
            return out if out.ndim else out[()]

        return f, t

    return build


_reg("__mul24", _intop("mul24", I32))
_reg("__umul24", _intop("mul24", U32))
_reg("__mulhi", _intop("mulhi", I32))
_reg("__umulhi", _intop("mulhi", U32))
_reg("__hadd_i", _intop("hadd", I32))
_reg("__uhadd", _intop("hadd", U32))
_reg("__rhadd", _intop("rhadd", I32))
_reg("__urhadd", _intop("rhadd", U32))
_reg("__sad", _intop("sad", I32))
_reg("__usad", _intop("sad", U32))


def _dp4a(fc, e):
    """``__dp4a(a, b, c)``: ``c`` plus the dot product of the four bytes of ``a`` and ``b``
    (signed bytes for ``int`` operands, unsigned for ``unsigned int``), wrapping in 32 bits."""
    signed = not str(getattr(fc.type_of(e.args[0]), "name", "")).startswith("uint")
    t = I32 if signed else U32
    fs, _ = _args(fc, e, [t, t, t])
    dt = np.int8 if signed else np.uint8

    def f(c, a):
        x, y, acc = (np.asarray(g(c, a)) for g in fs)
        bx = np.ascontiguousarray(x.astype(np.uint32 if not signed else np.int32))
        by = np.ascontiguousarray(y.astype(np.uint32 if not signed else np.int32))
        px = bx.reshape(*bx.shape, 1).view(dt).astype(np.int64)  # 4 bytes, little-endian
        py = by.reshape(*by.shape, 1).view(dt).astype(np.int64)
        px, py = np.broadcast_arrays(px, py)
        r = (px * py).sum(-1) + acc.astype(np.int64)
        out = (r & 0xFFFFFFFF).astype(np.uint32).astype(np_dtype(t))
        return out if out.ndim else out[()]

    return f, t


_reg("__dp4a", _dp4a)


def _mul64hi(fc, e):
    t = U64 if e.func.startswith("__u") else I64
    fs, _ = _args(fc, e, [t, t])
    dt = np_dtype(t)

    def f(c, a):
        x, y = np.broadcast_arrays(np.asarray(fs[0](c, a)), np.asarray(fs[1](c, a)))
        r = np.array(
            [(int(p) * int(q)) >> 64 for p, q in zip(x.reshape(-1), y.reshape(-1))], dtype=object
        )
        out = (
            np.array([int(v) & ((1 << 64) - 1) for v in r], dtype=np.uint64).astype(dt)
            if len(r)
            else np.zeros(0, dt)
        )
        return out.reshape(x.shape) if x.ndim else out[0]

    return f, t


_reg("__mul64hi __umul64hi", _mul64hi, "exact", "per-element Python integer arithmetic (slow)")


def _byte_perm(fc, e):
    fs, _ = _args(fc, e, [U32, U32, U32])

    def f(c, a):
        x, y, s = (np.asarray(g(c, a), np.uint64) for g in fs)
        word = x | (y << np.uint64(32))
        r = np.zeros(np.broadcast(x, y, s).shape, np.uint64)
        for i in range(4):
            sel_ = (s >> np.uint64(4 * i)) & np.uint64(7)
            byte = (word >> (sel_ * np.uint64(8))) & np.uint64(0xFF)
            r |= byte << np.uint64(8 * i)
        out = r.astype(np.uint32)
        return out if out.ndim else out[()]

    return f, U32


_reg("__byte_perm", _byte_perm)


def _funnel(left: bool, clamp: bool):
    def build(fc, e):
        fs, _ = _args(fc, e, [U32, U32, U32])

        def f(c, a):
            lo, hi, s = (np.asarray(g(c, a), np.uint64) for g in fs)
            sh = np.minimum(s, np.uint64(32)) if clamp else (s & np.uint64(31))
            word = lo | (hi << np.uint64(32))
            if left:
                r = ((word << sh) >> np.uint64(32)) & np.uint64(0xFFFFFFFF)
            else:
                r = (word >> sh) & np.uint64(0xFFFFFFFF)
            out = r.astype(np.uint32)
            return out if out.ndim else out[()]

        return f, U32

    return build


_reg("__funnelshift_l", _funnel(True, False))
_reg("__funnelshift_lc", _funnel(True, True))
_reg("__funnelshift_r", _funnel(False, False))
_reg("__funnelshift_rc", _funnel(False, True))

# --------------------------------------------------------------------------- synchronisation


def _check_sync(c: Chunk, act, loc) -> None:
    if act is None:
        return
    live = (
        c.tpb - np.bincount(c.blk[c.exited], minlength=c.nb)
        if c._exited is not None
        else np.full(c.nb, c.tpb)
    )
    got = np.bincount(c.blk[act], minlength=c.nb)
    bad = np.flatnonzero((got > 0) & (got != live))
    if len(bad):
        b = int(bad[0])
        w = c.where(b * c.tpb)
        c.launch.warn(
            "C2N1504",
            loc,
            active=int(got[b]),
            live=int(live[b]),
            kernel=c.launch.kernel,
            bx=w["bx"],
            by=w["by"],
            bz=w["bz"],
        )


def _syncthreads(fc, e):
    loc = e.loc

    def f(c, a):
        _check_sync(c, a, loc)
        return None

    return f, VOID


def _noop(fc, e):
    fs, _ = _args(fc, e)

    def f(c, a):
        for g in fs:
            g(c, a)
        return None

    return f, VOID


_reg(
    "__syncthreads",
    _syncthreads,
    "exact",
    "lockstep execution makes every statement a barrier; "
    "a barrier reached by part of a block is reported (C2N1504)",
)
_reg(
    "__syncwarp __threadfence __threadfence_block __threadfence_system __nanosleep",
    _noop,
    "exact",
    "no-op under lockstep execution",
)

_reg(
    "cudaGraphSetConditional",
    _noop,
    "partial",
    "sets the condition of the CUDA graph node the kernel belongs to; graphs are not modelled: "
    "the arguments are evaluated, the kernel's own memory effects are unaffected",
)


def _sync_reduce(kind: str):
    def build(fc, e):
        pf = fc.cond(e.args[0])
        loc = e.loc

        def f(c, a):
            _check_sync(c, a, loc)
            p = pf(c, a)
            full = np.zeros(c.T, np.int64)
            idx = np.arange(c.T) if a is None else a
            full[idx] = np.broadcast_to(np.asarray(p, bool), (len(idx),))
            cnt = np.bincount(c.blk, weights=full, minlength=c.nb).astype(np.int64)
            alive = np.bincount(c.blk[idx], minlength=c.nb)
            per = {"count": cnt, "and": (cnt == alive), "or": cnt > 0}[kind].astype(np.int32)
            out = per[c.blk]
            return out if a is None else out[a]

        return f, I32

    return build


_reg("__syncthreads_count", _sync_reduce("count"))
_reg("__syncthreads_and", _sync_reduce("and"))
_reg("__syncthreads_or", _sync_reduce("or"))

# --------------------------------------------------------------------------- warp operations


def _shfl(kind: str, legacy: bool = False):
    def build(fc, e):
        args = list(e.args)
        if legacy:
            _arity(e, 2, 3)
        else:
            _arity(e, 3, 4)
            fc.rvalue(args[0])  # the mask is evaluated for its side effects only
        vi = 0 if legacy else 1
        vt = _unq(fc.type_of(args[vi]))
        vf = fc.rvalue(args[vi])
        af = fc.rvalue(args[vi + 1], U32 if kind == "xor" else I32)
        wf = fc.rvalue(args[vi + 2], I32) if len(args) > vi + 2 else (lambda c, a: np.int32(32))
        loc = e.loc
        if isinstance(vt, A.ScalarType) and vt.name == "bool":
            vt = I32
            vf = fc.rvalue(args[vi], I32)
        rt = vt

        def f(c, a):
            return warp.shuffle(c, a, kind, vf(c, a), af(c, a), wf(c, a), loc, e.func)

        return f, rt

    return build


_reg("__shfl_sync", _shfl("idx"))
_reg("__shfl_up_sync", _shfl("up"))
_reg("__shfl_down_sync", _shfl("down"))
_reg("__shfl_xor_sync", _shfl("xor"))
_reg("__shfl", _shfl("idx", True), "exact", "pre-CUDA 9 form (implicit full mask)")
_reg("__shfl_up", _shfl("up", True), "exact", "pre-CUDA 9 form")
_reg("__shfl_down", _shfl("down", True), "exact", "pre-CUDA 9 form")
_reg("__shfl_xor", _shfl("xor", True), "exact", "pre-CUDA 9 form")


def _vote(kind: str, legacy: bool = False):
    def build(fc, e):
        if legacy:
            mf, pf = (lambda c, a: np.uint32(0xFFFFFFFF)), fc.cond(e.args[0])
        else:
            mf, pf = fc.rvalue(e.args[0], U32), fc.cond(e.args[1])
        if kind == "ballot":
            return (lambda c, a: warp.ballot(c, a, mf(c, a), pf(c, a))), U32
        if kind == "uni":

            def uni(c, a):
                p = pf(c, a)
                return (
                    warp.vote(c, a, "all", mf(c, a), p) | (1 - warp.vote(c, a, "any", mf(c, a), p))
                ).astype(np.int32)

            return uni, I32
        return (lambda c, a: warp.vote(c, a, kind, mf(c, a), pf(c, a))), I32

    return build


_reg("__ballot_sync", _vote("ballot"))
_reg("__any_sync", _vote("any"))
_reg("__all_sync", _vote("all"))
_reg("__uni_sync", _vote("uni"))
_reg("__ballot", _vote("ballot", True), "exact", "pre-CUDA 9 form")
_reg("__any", _vote("any", True), "exact", "pre-CUDA 9 form")
_reg("__all", _vote("all", True), "exact", "pre-CUDA 9 form")


def _activemask(fc, e):
    return (lambda c, a: warp.active_bits(c, a)), U32


_reg("__activemask", _activemask)


def _lanemask(kind: str):
    def build(fc, e):
        def f(c, a):
            lane = (c.lane if a is None else c.lane[a]).astype(np.uint64)
            one = np.uint64(1)
            bit = one << lane
            m = {
                "lt": bit - one,
                "le": (bit << one) - one,
                "eq": bit,
                "gt": ~((bit << one) - one),
                "ge": ~(bit - one),
            }[kind]
            return (m & np.uint64(0xFFFFFFFF)).astype(np.uint32)

        return f, U32

    return build


for _k in ("lt", "le", "eq", "gt", "ge"):
    _reg(f"__lanemask_{_k}", _lanemask(_k))


def _match_any(fc, e):
    mf = fc.rvalue(e.args[0], U32)
    vf, vt = fc.expr(e.args[1])

    def f(c, a):
        m = np.asarray(mf(c, a)).astype(np.uint32)
        v = np.broadcast_to(np.asarray(vf(c, a)), (c.count(a),))
        idx = np.arange(c.T) if a is None else a
        w = c.warp[idx]
        lane = c.lane[idx].astype(np.uint64)
        # key = (warp, value): lanes with equal keys match
        key_v = np.unique(v, return_inverse=True)[1].reshape(-1)
        key = w.astype(np.int64) * (int(key_v.max()) + 1 if len(key_v) else 1) + key_v
        _, inv = np.unique(key, return_inverse=True)
        bits = np.zeros(inv.max() + 1 if len(inv) else 0, np.uint64)
        np.bitwise_or.at(bits, inv, np.uint64(1) << lane)
        return (bits[inv] & m.astype(np.uint64)).astype(np.uint32)

    del vt
    return f, U32


_reg("__match_any_sync", _match_any)


def _warp_reduce(op: str, cg: bool):
    def build(fc, e):
        if cg:
            vf, vt = fc.expr(e.args[0])
            gf = fc.rvalue(e.args[1], I32)
        else:
            fc.rvalue(e.args[0])
            vf, vt = fc.expr(e.args[1])
            gf = lambda c, a: np.int32(32)  # noqa: E731
        vt = _unq(vt)
        rt = vt
        if not cg:  # __reduce_*_sync works on (unsigned) int
            rt = U32 if isinstance(vt, A.ScalarType) and vt.name.startswith("u") else I32
            vf = fc.rvalue(e.args[1], rt)

        def f(c, a):
            g = int(np.asarray(gf(c, a)).reshape(-1)[0])
            v = vf(c, a)
            if not isinstance(v, np.ndarray):
                v = np.full(c.count(a), v)
            return warp.group_reduce(c, a, op, v, g)

        return f, rt

    return build


for _op in ("add", "max", "min", "and", "or", "xor"):
    _reg(
        f"__c2n_warp_reduce_{_op}",
        _warp_reduce(_op, True),
        "exact",
        "cooperative_groups::reduce over a tile; butterfly combination order",
    )
    _reg(f"__reduce_{_op}_sync", _warp_reduce(_op, False))

# --------------------------------------------------------------------------- atomics


def _atomic(kind: str):
    def build(fc, e):
        nargs = 3 if kind == "cas" else 2
        _arity(e, nargs)
        pt = fc.type_of(e.args[0])
        from cuda2nki.simt.compiler import decay, unsupported

        pt = decay(pt)
        if not isinstance(pt, A.PointerType) or not isinstance(
            pt.pointee, A.ScalarType | A.VectorType
        ):
            raise unsupported(e.loc, f"'{e.func}' on a non-pointer")
        et = _unq(pt.pointee)
        if isinstance(et, A.VectorType):
            raise unsupported(e.loc, f"'{e.func}' on {et.name}")
        pf = fc.rvalue(e.args[0])
        vfs = [fc.rvalue(x, et) for x in e.args[1:]]
        loc = e.loc
        dt = np_dtype(et)

        def f(c, a):
            p = pf(c, a)
            vals = [v(c, a) for v in vfs]
            n = c.count(a)
            idx, edt, _ = access.element_index(c, a, p, et, loc, "atomic")
            if p.buf.kind == "constant":
                raise error(
                    "C2N1511",
                    loc,
                    space="__constant__ memory",
                    buffer=p.buf.name,
                    kernel=c.launch.kernel,
                )
            idx = np.broadcast_to(np.asarray(idx, np.int64), (n,))
            vv = [np.broadcast_to(np.asarray(v).astype(dt), (n,)) for v in vals]
            p.buf.for_write()
            view = p.buf.view(edt)
            return _apply_atomic(kind, view, idx, vv, dt)

        return f, et

    return build


def _apply_atomic(kind: str, view, idx, vv, dt):
    if kind in ("add", "sub") and dt.kind in "iu":
        return atomics.add_int(view, idx, vv[0], -1 if kind == "sub" else 1)
    if kind == "add":
        if dt in (np.dtype(np.float32), np.dtype(np.float64)):
            return atomics.rmw(
                view,
                idx,
                vv[0],
                lambda cur, v: np.add(cur, v, dtype=dt),
                lambda s: np.add.accumulate(s, dtype=dt),
            )
        f32 = np.dtype(np.float32)
        return atomics.rmw(
            view, idx, vv[0], lambda cur, v: (cur.astype(f32) + v.astype(f32)).astype(dt)
        )
    if kind == "sub":
        return atomics.rmw(view, idx, vv[0], lambda cur, v: np.subtract(cur, v, dtype=dt))
    if kind == "exch":
        return atomics.exchange(view, idx, vv[0])
    if kind == "cas":
        return atomics.cas(view, idx, vv[0], vv[1])
    if kind in ("inc", "dec"):
        return atomics.inc(view, idx, vv[0], dec=kind == "dec")
    uf = {
        "max": np.fmax if dt.kind == "f" else np.maximum,
        "min": np.fmin if dt.kind == "f" else np.minimum,
        "and": np.bitwise_and,
        "or": np.bitwise_or,
        "xor": np.bitwise_xor,
    }[kind]
    return atomics.rmw(
        view,
        idx,
        vv[0],
        lambda cur, v: uf(cur, v).astype(dt),
        lambda s: uf.accumulate(s).astype(dt),
    )


for _k in ("Add", "Sub", "Exch", "Max", "Min", "And", "Or", "Xor", "Inc", "Dec", "CAS"):
    _reg(
        f"atomic{_k} atomic{_k}_block atomic{_k}_system",
        _atomic(_k.lower()),
        "exact",
        "serialised per address in ascending thread order within a chunk of blocks (one "
        "block per chunk where an atomicAdd/atomicSub's old value is used in a loop or at "
        "several sites: simt/atomicorder.py)",
    )

# --------------------------------------------------------------------------- loads, stores, vectors


def _ldg(fc, e):
    from cuda2nki.simt.compiler import decay

    _arity(e, 1)
    pt = decay(fc.type_of(e.args[0]))
    et = _unq(pt.pointee)
    pf = fc.rvalue(e.args[0])
    loc = e.loc
    return (lambda c, a: access.load(c, a, pf(c, a), et, loc)), et


def _st(fc, e):
    from cuda2nki.simt.compiler import decay

    _arity(e, 2)
    pt = decay(fc.type_of(e.args[0]))
    et = _unq(pt.pointee)
    pf = fc.rvalue(e.args[0])
    vf = fc.rvalue(e.args[1], et)
    loc = e.loc

    def f(c, a):
        access.store(c, a, pf(c, a), et, vf(c, a), loc)

    return f, VOID


_reg("__ldg __ldcg __ldca __ldcs __ldlu __ldcv", _ldg, "exact", "cache hints have no effect")
_reg("__stcg __stcs __stwb __stwt", _st, "exact", "cache hints have no effect")


def _make_vec(vt: A.VectorType):
    def build(fc, e):
        _arity(e, vt.width)
        fs, _ = _args(fc, e, [vt.base] * vt.width)
        return (lambda c, a: Vec(tuple(f(c, a) for f in fs))), vt

    return build


def _register_make() -> None:
    from cuda2nki.frontend.typesys import VECTOR_TYPES

    for name, vt in VECTOR_TYPES.items():
        if not name.startswith("_"):
            _reg(f"make_{name}", _make_vec(vt))
    _reg("make_half2", _make_vec(VECTOR_TYPES["half2"]))
    _reg("make_bfloat162", _make_vec(VECTOR_TYPES["__nv_bfloat162"]))


_register_make()


def _clock(fc, e):
    t = I64 if e.func == "clock64" else I32
    return (lambda c, a: scalar(c.steps, t)), t


_reg("clock clock64", _clock, "partial", "returns the interpreter's step counter")


def _assert(fc, e):
    pf = fc.cond(e.args[0])
    loc = e.loc

    def f(c, a):
        p = pf(c, a)
        bad = ~np.broadcast_to(np.asarray(p, bool), (c.count(a),))
        if np.any(bad):
            raise c.fault("C2N1513", loc, a, int(np.flatnonzero(bad)[0]))
        return None

    return f, VOID


def _trap(fc, e):
    loc = e.loc

    def f(c, a):
        if c.count(a):
            raise c.fault("C2N1513", loc, a, 0)
        return None

    return f, VOID


_reg("assert", _assert)
_reg("__trap __brkpt", _trap)


def _ptr_of(p) -> Ptr:
    return p


# --------------------------------------------------------------------------- out-parameter math


def _out_lv(fc, arg: A.Expr):
    """Where a math function's out-parameter (``&e``, ``p``, ``p + i``) writes."""
    from cuda2nki.simt.compiler import MemLV, unsupported

    if isinstance(arg, A.Unary) and arg.op == "&":
        return fc.lvalue(arg.operand)
    pt = _unq(fc.type_of(arg))
    if not isinstance(pt, A.PointerType):
        raise unsupported(arg.loc, "an out-parameter that is not a pointer")
    return MemLV(fc.rvalue(arg), _unq(pt.pointee), arg.loc)


def _float_arg(fc, e: A.Call):
    t = _unq(fc.type_of(e.args[0]))
    rt = F64 if e.func in ("frexp", "modf", "sincos") and t == F64 else F32
    if e.func in ("frexp", "modf", "sincos") and isinstance(t, A.ScalarType) and not t.is_float:
        rt = F64  # an integer argument picks the double overload
    f, _ = _args(fc, e, [rt] + [None] * (len(e.args) - 1))
    return f[0], rt


def _frexp(fc, e: A.Call):
    """``m = frexpf(x, &e)``: mantissa in [0.5, 1) (or 0, inf, nan) and a power of two."""
    _arity(e, 2)
    xf, rt = _float_arg(fc, e)
    out = _out_lv(fc, e.args[1])
    dt = np_dtype(rt)

    def run(c, a):
        x = np.asarray(xf(c, a), dt)
        m, ex = np.frexp(x)
        out.store(c, a, convert(ex.astype(np.int32), I32, out.ty))
        return m.astype(dt) if np.ndim(m) else dt.type(m)

    return run, rt


def _modf(fc, e: A.Call):
    """``f = modff(x, &ip)``: fractional part, the integral part stored (both with x's sign)."""
    _arity(e, 2)
    xf, rt = _float_arg(fc, e)
    out = _out_lv(fc, e.args[1])
    dt = np_dtype(rt)

    def run(c, a):
        x = np.asarray(xf(c, a), dt)
        frac, whole = np.modf(x)
        out.store(c, a, convert(whole.astype(dt), rt, out.ty))
        return frac.astype(dt) if np.ndim(frac) else dt.type(frac)

    return run, rt


def _sincos(fc, e: A.Call):
    """``sincosf(x, &s, &c)``: sinf(x) and cosf(x), each rounded as those functions are."""
    _arity(e, 3)
    xf, rt = _float_arg(fc, e)
    s_out, c_out = _out_lv(fc, e.args[1]), _out_lv(fc, e.args[2])
    dt = np_dtype(rt)
    sin_m, cos_m = mathfns.MATH["sin"], mathfns.MATH["cos"]
    if e.func == "__sincosf":
        sin_m, cos_m = mathfns.MATH[mathfns.FAST["__sinf"]], mathfns.MATH[mathfns.FAST["__cosf"]]

    def run(c, a):
        x = np.asarray(xf(c, a), dt)
        s_out.store(c, a, convert(mathfns.compute(sin_m, [x], dt), rt, s_out.ty))
        c_out.store(c, a, convert(mathfns.compute(cos_m, [x], dt), rt, c_out.ty))
        return a

    return run, VOID


_reg("frexpf frexp", _frexp, "exact", "the exponent is stored through the pointer")
_reg("modff modf", _modf, "exact", "the integral part is stored through the pointer")
_reg("sincosf sincos __sincosf", _sincos, "exact", "as sinf and cosf, stored through the pointers")

# --------------------------------------------------------------------------- grid-wide barriers

from cuda2nki.simt import cubblock, devlaunch, gridsync, maskreduce, wmma  # noqa: E402

cubblock.register(_reg)
devlaunch.register(_reg)
maskreduce.register(_reg)
gridsync.register(_reg)
wmma.register(_reg)

# the cuRAND device API registers itself (its module needs the helpers above)
from cuda2nki.simt import bytedots as _bytedots  # noqa: E402,F401
from cuda2nki.simt import copies as _copies  # noqa: E402,F401
from cuda2nki.simt import curand as _curand  # noqa: E402,F401
from cuda2nki.simt import roundcvt as _roundcvt  # noqa: E402,F401
