"""CUDA intrinsics and math functions known to the front end, with their result types.

Each entry maps a callee name to a rule computing the result type from the argument types (or
``None`` when the call is ill-typed).  Names not listed here and not user functions are C2N1021.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cuda2nki.frontend.ast import ArrayType, CType, PointerType, ScalarType, VectorType
from cuda2nki.frontend.typesys import (
    BF16,
    BOOL,
    DOUBLE,
    FLOAT,
    HALF,
    INT,
    LONG,
    UINT,
    ULONG,
    VECTOR_TYPES,
    VOID,
    S,
    arith_result,
    promote,
    unqualified,
)

Rule = Callable[[Sequence[CType | None]], CType | None]


def _const(t: CType) -> Rule:
    return lambda args: t


def _arg(i: int) -> Rule:
    def rule(args: Sequence[CType | None]) -> CType | None:
        return unqualified(args[i]) if len(args) > i else None

    return rule


def _pointee(args: Sequence[CType | None]) -> CType | None:
    t = args[0] if args else None
    if isinstance(t, PointerType):
        return unqualified(t.pointee)
    if isinstance(t, ArrayType):
        return unqualified(t.elem)
    return None


def _overloaded_math(args: Sequence[CType | None]) -> CType | None:
    """``exp(x)``, ``sqrt(x)``...: float for float/half arguments, double otherwise."""
    t = promote(args[0]) if args else None
    if isinstance(t, ScalarType) and t.name == "float32":
        if all(promote(a) == FLOAT or _is_int(a) for a in args):
            return FLOAT
    return DOUBLE


def _is_int(t: CType | None) -> bool:
    return isinstance(t, ScalarType) and not t.is_float


def _minmax(args: Sequence[CType | None]) -> CType | None:
    if len(args) != 2:
        return None
    return arith_result(args[0], args[1])


def _abs(args: Sequence[CType | None]) -> CType | None:
    return promote(args[0]) if args else None


ARITY: dict[str, tuple[int, int]] = {}  # name -> (min, max) argument count
RULES: dict[str, Rule] = {}


def _add(names: str, rule: Rule, arity: int | tuple[int, int]) -> None:
    lo, hi = (arity, arity) if isinstance(arity, int) else arity
    for n in names.split():
        RULES[n] = rule
        ARITY[n] = (lo, hi)


_F1 = (
    "exp exp2 exp10 expm1 log log2 log10 log1p sqrt rsqrt cbrt rcbrt sin cos tan asin acos atan "
    "sinh cosh tanh asinh acosh atanh fabs floor ceil trunc round rint nearbyint erf erfc erfinv "
    "erfcinv lgamma tgamma normcdf normcdfinv sinpi cospi logb j0 j1 y0 y1"
)
_F2 = "pow atan2 fmax fmin fmod remainder hypot copysign fdim nextafter"
_add(" ".join(n + "f" for n in _F1.split()), _const(FLOAT), 1)
_add(" ".join(n + "f" for n in _F2.split()), _const(FLOAT), 2)
_add("fmaf", _const(FLOAT), 3)
_add(_F1, _overloaded_math, 1)
_add(_F2, _overloaded_math, 2)
_add("fma", _overloaded_math, 3)
_add("ldexpf scalbnf", _const(FLOAT), 2)
# Euclidean norms of 2, 3 and 4 values and their reciprocals
_add("rhypotf", _const(FLOAT), 2)
_add("rhypot", _overloaded_math, 2)
_add("norm3df rnorm3df", _const(FLOAT), 3)
_add("norm3d rnorm3d", _overloaded_math, 3)
_add("norm4df rnorm4df", _const(FLOAT), 4)
_add("norm4d rnorm4d", _overloaded_math, 4)
_add("ldexp scalbn", _overloaded_math, 2)
_add("ilogbf ilogb", _const(INT), 1)
_add("lrintf lroundf llrintf llroundf lrint lround llrint llround", _const(LONG), 1)
_add(
    "__expf __exp10f __logf __log2f __log10f __sinf __cosf __tanf __tanhf __saturatef __frcp_rn __frcp_rz "
    "__frcp_rd __frcp_ru __fsqrt_rn __fsqrt_rz __fsqrt_rd __fsqrt_ru __frsqrt_rn",
    _const(FLOAT),
    1,
)
_add(
    "__powf __fdividef __fadd_rn __fadd_rz __fadd_rd __fadd_ru __fsub_rn __fsub_rz __fsub_rd "
    "__fsub_ru __fmul_rn __fmul_rz __fmul_rd __fmul_ru __fdiv_rn __fdiv_rz __fdiv_rd __fdiv_ru",
    _const(FLOAT),
    2,
)
_add("__fmaf_rn __fmaf_rz __fmaf_rd __fmaf_ru __fmaf_ieee_rn", _const(FLOAT), 3)
_add("__drcp_rn __dsqrt_rn", _const(DOUBLE), 1)
_add("__dadd_rn __dsub_rn __dmul_rn __ddiv_rn", _const(DOUBLE), 2)
_add("__fma_rn", _const(DOUBLE), 3)
_add("min max", _minmax, 2)
_add("umin umax", _const(UINT), 2)
_add("llmin llmax", _const(LONG), 2)
_add("ullmin ullmax", _const(ULONG), 2)
_add("abs labs llabs", _abs, 1)
_add("isnan isinf isfinite signbit __isnanf __isinff __finitef __signbitf", _const(BOOL), 1)
_add("__isnan __isinf", _const(BOOL), 1)

# conversions and bit reinterpretation
_add(
    "__float2half __float2half_rn __float2half_rz __float2half_rd __float2half_ru __double2half "
    "__int2half_rn __uint2half_rn __short2half_rn",
    _const(HALF),
    1,
)
_add(
    "__half2float __bfloat162float __low2float __high2float __int2float_rn __int2float_rz "
    "__uint2float_rn __uint2float_rz __ll2float_rn __ull2float_rn __int_as_float __uint_as_float "
    "__double2float_rn __double2float_rz __double2float_rd __double2float_ru",
    _const(FLOAT),
    1,
)
_add(
    "__float2bfloat16 __float2bfloat16_rn __float2bfloat16_rz __double2bfloat16 __int2bfloat16_rn",
    _const(BF16),
    1,
)
_add(
    "__float2int_rn __float2int_rz __float2int_rd __float2int_ru __float_as_int __half2int_rn "
    "__half2int_rz __double2int_rn __double2int_rz __bfloat162int_rn __double2hiint "
    "__double2loint",
    _const(INT),
    1,
)
_add(
    "__float2uint_rn __float2uint_rz __float2uint_rd __float2uint_ru __float_as_uint "
    "__double2uint_rn __double2uint_rz",
    _const(UINT),
    1,
)
_add(
    "__float2ll_rn __float2ll_rz __double2ll_rn __double2ll_rz __double_as_longlong",
    _const(LONG),
    1,
)
_add("__float2ull_rn __float2ull_rz", _const(ULONG), 1)
# the rounding conversions, every mode: __{float,double}2{int,uint,ll,ull}_{rn,rz,rd,ru},
# __{int,uint,ll,ull}2float_*, __{ll,ull}2double_*, __double2float_*
for _m in ("rn", "rz", "rd", "ru"):
    for _f, _fty in (("float", FLOAT), ("double", DOUBLE)):
        for _i, _ity in (("int", INT), ("uint", UINT), ("ll", LONG), ("ull", ULONG)):
            _add(f"__{_f}2{_i}_{_m}", _const(_ity), 1)
            if _f == "float" or _i in ("ll", "ull"):
                _add(f"__{_i}2{_f}_{_m}", _const(_fty), 1)
    _add(f"__double2float_{_m}", _const(FLOAT), 1)
_add(
    "__longlong_as_double __int2double_rn __uint2double_rn __ll2double_rn __float2double",
    _const(DOUBLE),
    1,
)
_add("__hiloint2double", _const(DOUBLE), 2)
_add("__half_as_short", _const(S["int16"]), 1)
_add("__half_as_ushort __bfloat16_as_ushort", _const(S["uint16"]), 1)
_add("__short_as_half __ushort_as_half", _const(HALF), 1)
_add("__ushort_as_bfloat16", _const(BF16), 1)

# half / bfloat16 arithmetic intrinsics (cuda_fp16.h, cuda_bf16.h)
_add(
    "__hneg __habs hexp hexp2 hexp10 hlog hlog2 hlog10 hsqrt hrsqrt hrcp hsin hcos hfloor hceil "
    "htrunc hrint",
    _arg(0),
    1,
)
_add(
    "__hadd __hsub __hmul __hdiv __hmax __hmin __hadd_sat __hsub_sat __hmul_sat __hmax_nan "
    "__hmin_nan",
    _arg(0),
    2,
)
_add("__hfma __hfma_sat __hfma_relu", _arg(0), 3)
_add(
    "__heq __hne __hlt __hle __hgt __hge __hequ __hneu __hltu __hleu __hgtu __hgeu", _const(BOOL), 2
)
_add("__hisnan __hisinf", _const(BOOL), 1)
_add("__hadd2 __hsub2 __hmul2 __h2div __hmax2 __hmin2", _arg(0), 2)
_add("__hfma2 __hfma2_relu", _arg(0), 3)
_add("__hneg2 __habs2 h2exp h2log h2sqrt h2rsqrt h2rcp", _arg(0), 1)
_add("__half2half2 __float2half2_rn", _const(VECTOR_TYPES["half2"]), 1)
_add(
    "__floats2half2_rn __halves2half2 __lows2half2 __highs2half2", _const(VECTOR_TYPES["half2"]), 2
)
_add("__float22half2_rn", _const(VECTOR_TYPES["half2"]), 1)
_add("__half22float2 __bfloat1622float2", _const(VECTOR_TYPES["float2"]), 1)
_add("__low2half __high2half", _const(HALF), 1)
_add(
    "__floats2bfloat162_rn __halves2bfloat162 __lows2bfloat162 __highs2bfloat162",
    _const(VECTOR_TYPES["__nv_bfloat162"]),
    2,
)
_add("__float22bfloat162_rn __bfloat162bfloat162", _const(VECTOR_TYPES["__nv_bfloat162"]), 1)
_add("__low2bfloat16 __high2bfloat16", _const(BF16), 1)

# integer bit operations
_add("__popc __clz __ffs", _const(INT), 1)
_add("__popcll __clzll __ffsll", _const(INT), 1)
_add("__brev", _const(UINT), 1)
_add("__brevll", _const(ULONG), 1)
_add("__mul24 __mulhi __hadd_i __rhadd", _const(INT), 2)
_add("__umul24 __umulhi __uhadd __urhadd", _const(UINT), 2)
_add("__mul64hi", _const(LONG), 2)
_add("__umul64hi", _const(ULONG), 2)
_add("__sad", _const(INT), 3)


def _dp4a_type(args: Sequence[CType | None]) -> CType:
    """``__dp4a``, ``__dp2a_lo``, ``__dp2a_hi``: ``unsigned int`` when the first operand is
    unsigned (or a vector of unsigned lanes: ``uchar4``, ``ushort2``), else ``int``."""
    t = unqualified(args[0]) if args else None
    t = t.base if isinstance(t, VectorType) else t
    return UINT if isinstance(t, ScalarType) and t.name.startswith("uint") else INT


_add("__dp4a __dp2a_lo __dp2a_hi", _dp4a_type, 3)
_add(
    "__usad __byte_perm __funnelshift_l __funnelshift_r __funnelshift_lc __funnelshift_rc",
    _const(UINT),
    3,
)

# synchronisation, fences, warp operations
_add("__syncthreads __syncwarp", _const(VOID), (0, 1))
_add("__syncthreads_count __syncthreads_and __syncthreads_or", _const(INT), 1)
_add("__threadfence __threadfence_block __threadfence_system __nanosleep", _const(VOID), (0, 1))
_add("__shfl_sync __shfl_up_sync __shfl_down_sync __shfl_xor_sync", _arg(1), (3, 4))
_add("__shfl __shfl_up __shfl_down __shfl_xor", _arg(0), (2, 3))
_add("__ballot_sync", _const(UINT), 2)
_add("__any_sync __all_sync __uni_sync", _const(INT), 2)
_add("__ballot", _const(UINT), 1)
_add("__any __all", _const(INT), 1)
_add(
    "__activemask __lanemask_lt __lanemask_le __lanemask_eq __lanemask_gt __lanemask_ge",
    _const(UINT),
    0,
)
_add("__match_any_sync", _const(UINT), 2)
_add(
    "__reduce_add_sync __reduce_min_sync __reduce_max_sync __reduce_and_sync __reduce_or_sync "
    "__reduce_xor_sync",
    _arg(1),
    2,
)
_add(
    "__c2n_warp_reduce_add __c2n_warp_reduce_max __c2n_warp_reduce_min __c2n_warp_reduce_and "
    "__c2n_warp_reduce_or __c2n_warp_reduce_xor",
    _arg(0),
    2,
)

# atomics
_ATOMICS = "atomicAdd atomicSub atomicExch atomicMax atomicMin atomicAnd atomicOr atomicXor atomicInc atomicDec"
_add(" ".join(f"{a} {a}_block {a}_system" for a in _ATOMICS.split()), _pointee, 2)
_add("atomicCAS atomicCAS_block atomicCAS_system", _pointee, 3)

# loads / stores with cache hints (the front end lowers a call through a pointer to ``*p`` /
# ``*p = v``: the hints mean nothing to Trainium nor to the interpreter)
CACHE_LOADS = frozenset("__ldg __ldcg __ldca __ldcs __ldlu __ldcv".split())
CACHE_STORES = frozenset("__stcg __stcs __stwb __stwt".split())
_add(" ".join(sorted(CACHE_LOADS)), _pointee, 1)
_add(" ".join(sorted(CACHE_STORES)), _const(VOID), 2)

# misc
_add("clock", _const(INT), 0)
_add("clock64", _const(LONG), 0)
_add("assert", _const(VOID), 1)
_add("__trap __brkpt", _const(VOID), 0)

# make_<vector>(...) constructors
for _vname, _vt in VECTOR_TYPES.items():
    if not _vname.startswith("_"):
        _add(f"make_{_vname}", _const(_vt), _vt.width)
_add("make_half2", _const(VECTOR_TYPES["half2"]), 2)
_add("make_bfloat162", _const(VECTOR_TYPES["__nv_bfloat162"]), 2)


def result_type(name: str, args: Sequence[CType | None]) -> CType | None:
    rule = RULES.get(name)
    return None if rule is None else rule(args)


# Calls that reject the kernel, by category: name -> (rule id, description)
TEXTURE_FUNCS = frozenset(
    "tex1Dfetch tex1D tex2D tex3D tex1DLayered tex2DLayered texCubemap tex2Dgather tex1DLod "
    "tex2DLod tex3DLod tex1DGrad tex2DGrad surf1Dread surf2Dread surf3Dread surf1Dwrite "
    "surf2Dwrite surf3Dwrite surf2DLayeredread surf2DLayeredwrite".split()
)
# refused asynchronous-copy wrappers (the copies the front end runs: frontend/asynccopy.py)
ASYNC_FUNCS = frozenset("cp_async_wait_all __cp_async".split())
TENSOR_CORE_FUNCS = frozenset(
    "load_matrix_sync store_matrix_sync mma_sync fill_fragment __float_to_tf32 __hmma_m16n16k16_ld_a "
    "__mma_sync".split()
)
DEVICE_RUNTIME_FUNCS = frozenset(
    "cudaLaunchCooperativeKernel cudaLaunchDevice cudaGetParameterBuffer cudaDeviceSynchronize".split()
)

# compiler hints: the value itself
_add("__builtin_assume_aligned", _arg(0), (2, 3))
_add("__builtin_expect", _arg(0), 2)

# math with out-parameters: frexpf(x, &e), modff(x, &ip), sincosf(x, &s, &c)
_add("frexpf modff", _const(FLOAT), 2)
_add("frexp modf", lambda args: _overloaded_math(args[:1]), 2)
_add("sincosf sincos __sincosf", _const(VOID), 3)

# cuRAND device API (curand_kernel.h): the generators run in the interpreter
# (cuda2nki.simt.curand); a state is passed by pointer, ``curand_init`` also takes the Sobol
# direction vectors instead of seed and subsequence
CURAND_FUNCS = frozenset(
    "curand_init curand curand_uniform curand_uniform_double curand_normal curand_normal_double "
    "curand_normal2 curand4 curand_uniform4 curand_normal4 skipahead skipahead_sequence".split()
)
_add("curand_init", _const(VOID), (3, 4))
_add("skipahead skipahead_sequence", _const(VOID), 2)
_add("curand", _const(UINT), 1)
_add("curand_uniform curand_normal", _const(FLOAT), 1)
_add("curand_uniform_double curand_normal_double", _const(DOUBLE), 1)
_add("curand_normal2", _const(VECTOR_TYPES["float2"]), 1)
_add("curand4", _const(VECTOR_TYPES["uint4"]), 1)
_add("curand_uniform4 curand_normal4", _const(VECTOR_TYPES["float4"]), 1)

# sets the condition of the CUDA graph conditional node the handle names
_add("cudaGraphSetConditional", _const(VOID), 2)

# an asynchronous copy of a size the front end cannot type as one assignment (asynccopy.py)
_add("__c2n_memcpy", _const(VOID), 3)
