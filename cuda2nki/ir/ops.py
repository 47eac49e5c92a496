"""Operator and kind enums of the tile IR, with the metadata later stages need.

:class:`Op` names every scalar operation that appears in the intent layer (``Unary``, ``Binary``,
``Reduce``, ``Scan``, ``Compute.accumulate``) and in the scheduled layer (engine op ``op`` fields).
Its value is the spelling used by the textual IR.  :data:`OP_INFO` says how many operands an op
takes, which class it belongs to, whether it may be used as a reduction / scan combiner (with its
identity), whether it is transcendental (the error bound adds a few ulp for those) and which NKI
function implements it (``nl.<name>``; ``None`` where NKI has none and the pass must expand it).

Semantics (what the evaluator does -- C/CUDA semantics where they differ from NumPy):

* ``div``: true division on floats; C truncating division on integers.
* ``mod``: C remainder (sign of the dividend; ``fmod`` on floats).
* ``shr``: arithmetic shift on signed integers, logical on unsigned (C semantics).
* comparisons and ``land``/``lor``/``lnot`` yield ``bool``.
* ``max``/``min`` propagate NaN like ``fmaxf`` does *not*: they follow NumPy ``maximum``/``minimum``.
* ``rsqrt(x) = 1/sqrt(x)``, ``sigmoid(x) = 1/(1+exp(-x))``, ``gelu`` exact (erf) form,
  ``gelu_tanh`` the tanh approximation, ``silu(x) = x*sigmoid(x)``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Op(str, enum.Enum):
    # ---- unary
    NEG = "neg"
    ABS = "abs"
    SIGN = "sign"
    EXP = "exp"
    EXP2 = "exp2"
    LOG = "log"
    LOG2 = "log2"
    LOG1P = "log1p"
    EXPM1 = "expm1"
    SQRT = "sqrt"
    RSQRT = "rsqrt"
    RECIPROCAL = "reciprocal"
    SQUARE = "square"
    SIN = "sin"
    COS = "cos"
    TAN = "tan"
    ATAN = "atan"
    TANH = "tanh"
    SIGMOID = "sigmoid"
    RELU = "relu"
    GELU = "gelu"
    GELU_TANH = "gelu_tanh"
    SILU = "silu"
    ERF = "erf"
    FLOOR = "floor"
    CEIL = "ceil"
    TRUNC = "trunc"
    ROUND = "round"
    RINT = "rint"
    LNOT = "lnot"
    BITNOT = "bitnot"
    COPY = "copy"
    # ---- binary arithmetic
    ADD = "add"
    SUB = "sub"
    MUL = "mul"
    DIV = "div"
    MOD = "mod"
    POW = "pow"
    MAX = "max"
    MIN = "min"
    ATAN2 = "atan2"
    # ---- comparisons
    EQ = "eq"
    NE = "ne"
    LT = "lt"
    LE = "le"
    GT = "gt"
    GE = "ge"
    # ---- logical / bitwise
    LAND = "land"
    LOR = "lor"
    BITAND = "bitand"
    BITOR = "bitor"
    BITXOR = "bitxor"
    SHL = "shl"
    SHR = "shr"

    def __str__(self) -> str:
        return self.value

    @property
    def info(self) -> OpInfo:
        return OP_INFO[self]

    @property
    def arity(self) -> int:
        return OP_INFO[self].arity


@dataclass(frozen=True)
class OpInfo:
    arity: int
    kind: str  # "arith" | "math" | "compare" | "logical" | "bitwise" | "round"
    identity: float | int | bool | None = None  # reduction/scan identity; None: not a combiner
    transcendental: bool = False
    nki: str | None = None  # nl.<nki> implements it (None: expand in a pass)

    @property
    def combiner(self) -> bool:
        return self.identity is not None


_INF = float("inf")

OP_INFO: dict[Op, OpInfo] = {
    Op.NEG: OpInfo(1, "arith", nki="negative"),
    Op.ABS: OpInfo(1, "arith", nki="abs"),
    Op.SIGN: OpInfo(1, "arith", nki="sign"),
    Op.EXP: OpInfo(1, "math", transcendental=True, nki="exp"),
    Op.EXP2: OpInfo(1, "math", transcendental=True),
    Op.LOG: OpInfo(1, "math", transcendental=True, nki="log"),
    Op.LOG2: OpInfo(1, "math", transcendental=True),
    Op.LOG1P: OpInfo(1, "math", transcendental=True),
    Op.EXPM1: OpInfo(1, "math", transcendental=True),
    Op.SQRT: OpInfo(1, "math", transcendental=True, nki="sqrt"),
    Op.RSQRT: OpInfo(1, "math", transcendental=True, nki="rsqrt"),
    Op.RECIPROCAL: OpInfo(1, "arith", nki="reciprocal"),
    Op.SQUARE: OpInfo(1, "arith", nki="square"),
    Op.SIN: OpInfo(1, "math", transcendental=True, nki="sin"),
    Op.COS: OpInfo(1, "math", transcendental=True, nki="cos"),
    Op.TAN: OpInfo(1, "math", transcendental=True, nki="tan"),
    Op.ATAN: OpInfo(1, "math", transcendental=True, nki="arctan"),
    Op.TANH: OpInfo(1, "math", transcendental=True, nki="tanh"),
    Op.SIGMOID: OpInfo(1, "math", transcendental=True, nki="sigmoid"),
    Op.RELU: OpInfo(1, "arith", nki="relu"),
    Op.GELU: OpInfo(1, "math", transcendental=True, nki="gelu"),
    Op.GELU_TANH: OpInfo(1, "math", transcendental=True, nki="gelu_apprx_tanh"),
    Op.SILU: OpInfo(1, "math", transcendental=True, nki="silu"),
    Op.ERF: OpInfo(1, "math", transcendental=True, nki="erf"),
    Op.FLOOR: OpInfo(1, "round", nki="floor"),
    Op.CEIL: OpInfo(1, "round", nki="ceil"),
    Op.TRUNC: OpInfo(1, "round", nki="trunc"),
    Op.ROUND: OpInfo(1, "round"),  # roundf: halfway cases away from zero
    Op.RINT: OpInfo(1, "round"),  # rintf: halfway cases to even
    Op.LNOT: OpInfo(1, "logical", nki="logical_not"),
    Op.BITNOT: OpInfo(1, "bitwise", nki="invert"),
    Op.COPY: OpInfo(1, "arith", nki="copy"),
    Op.ADD: OpInfo(2, "arith", identity=0, nki="add"),
    Op.SUB: OpInfo(2, "arith", nki="subtract"),
    Op.MUL: OpInfo(2, "arith", identity=1, nki="multiply"),
    Op.DIV: OpInfo(2, "arith", nki="divide"),
    Op.MOD: OpInfo(2, "arith", nki="mod"),
    Op.POW: OpInfo(2, "math", transcendental=True, nki="power"),
    Op.MAX: OpInfo(2, "arith", identity=-_INF, nki="maximum"),
    Op.MIN: OpInfo(2, "arith", identity=_INF, nki="minimum"),
    Op.ATAN2: OpInfo(2, "math", transcendental=True),
    Op.EQ: OpInfo(2, "compare", nki="equal"),
    Op.NE: OpInfo(2, "compare", nki="not_equal"),
    Op.LT: OpInfo(2, "compare", nki="less"),
    Op.LE: OpInfo(2, "compare", nki="less_equal"),
    Op.GT: OpInfo(2, "compare", nki="greater"),
    Op.GE: OpInfo(2, "compare", nki="greater_equal"),
    Op.LAND: OpInfo(2, "logical", identity=True, nki="logical_and"),
    Op.LOR: OpInfo(2, "logical", identity=False, nki="logical_or"),
    Op.BITAND: OpInfo(2, "bitwise", identity=-1, nki="bitwise_and"),
    Op.BITOR: OpInfo(2, "bitwise", identity=0, nki="bitwise_or"),
    Op.BITXOR: OpInfo(2, "bitwise", identity=0, nki="bitwise_xor"),
    Op.SHL: OpInfo(2, "bitwise", nki="left_shift"),
    Op.SHR: OpInfo(2, "bitwise", nki="right_shift"),
}

UNARY_OPS = frozenset(op for op, i in OP_INFO.items() if i.arity == 1)
BINARY_OPS = frozenset(op for op, i in OP_INFO.items() if i.arity == 2)
COMBINER_OPS = frozenset(op for op, i in OP_INFO.items() if i.combiner)  # reduce/scan/accumulate
#: operators of an exact 32-bit integer instruction (IntArith): those whose fp32 engine form is
#: not exact on 32-bit values, and the bitwise ones between integer types of another signedness
#: than the result (a conversion that keeps the bit pattern)
INT_ARITH_OPS = frozenset(
    {
        Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.MOD, Op.SHR, Op.MAX, Op.MIN,
        Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE, Op.BITAND, Op.BITOR, Op.BITXOR, Op.SHL,
    }
)  # fmt: skip


class Idiom(str, enum.Enum):
    """Which recogniser produced a :class:`~cuda2nki.ir.nodes.Compute` (later stages key on it)."""

    MAP = "map"
    REDUCE = "reduce"
    CONTRACT = "contract"
    TRANSPOSE = "transpose"
    STENCIL = "stencil"
    SCAN = "scan"
    GATHER = "gather"
    SCATTER = "scatter"
    SOFTMAX = "softmax"
    NORM = "norm"
    LITERAL = "literal"

    def __str__(self) -> str:
        return self.value


class AxisKind(str, enum.Enum):
    PARALLEL = "parallel"
    REDUCTION = "reduction"
    SCAN = "scan"

    def __str__(self) -> str:
        return self.value


class Role(str, enum.Enum):
    IN = "in"
    OUT = "out"
    INOUT = "inout"
    TEMP = "temp"

    def __str__(self) -> str:
        return self.value


class Buffer(str, enum.Enum):
    SBUF = "sbuf"
    PSUM = "psum"

    def __str__(self) -> str:
        return self.value


class LoopKind(str, enum.Enum):
    AFFINE = "affine"  # iterations independent (nl.affine_range)
    SEQUENTIAL = "sequential"  # loop-carried dependency (accumulation, scan carry)

    def __str__(self) -> str:
        return self.value


# --------------------------------------------------------------------------- dtypes

FLOAT_DTYPES = (
    "float8_e4m3",
    "float8_e5m2",
    "bfloat16",
    "float16",
    "tfloat32",
    "float32",
    "float64",
)
INT_DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")
DTYPES = ("bool",) + INT_DTYPES + FLOAT_DTYPES

#: bytes per element
DTYPE_BYTES = {
    "bool": 1,
    "int8": 1,
    "uint8": 1,
    "int16": 2,
    "uint16": 2,
    "int32": 4,
    "uint32": 4,
    "int64": 8,
    "uint64": 8,
    "float8_e4m3": 1,
    "float8_e5m2": 1,
    "bfloat16": 2,
    "float16": 2,
    "tfloat32": 4,
    "float32": 4,
    "float64": 8,
}

#: unit roundoff u = 2^-p (p = significand bits incl. the implicit one, round to nearest)
UNIT_ROUNDOFF = {
    "float8_e4m3": 2.0**-4,
    "float8_e5m2": 2.0**-3,
    "bfloat16": 2.0**-8,
    "float16": 2.0**-11,
    "tfloat32": 2.0**-11,
    "float32": 2.0**-24,
    "float64": 2.0**-53,
}


def is_float(dtype: str) -> bool:
    return dtype in FLOAT_DTYPES


def is_int(dtype: str) -> bool:
    return dtype in INT_DTYPES


def is_narrow_int(dtype: str) -> bool:
    """An integer type narrower than 32 bits (C wraps a conversion to it modulo 2**bits)."""
    return dtype in INT_DTYPES and DTYPE_BYTES[dtype] < 4


def is_dtype(dtype: str) -> bool:
    return dtype in DTYPE_BYTES
