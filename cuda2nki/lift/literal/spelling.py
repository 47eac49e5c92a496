"""Tables of the literal lowering: NKI spellings of dtypes, math functions and operators."""

from __future__ import annotations

_FLOAT_DT = {"float32": "nl.float32", "float16": "nl.float16", "bfloat16": "nl.bfloat16"}
_INT_DT = {
    "int32": "nl.int32",
    "uint32": "nl.uint32",
    "int16": "nl.int16",
    "uint16": "nl.uint16",
    "int8": "nl.int8",
    "uint8": "nl.uint8",
    "bool": "nl.uint8",
}
_MATH1 = {
    "expf": "exp", "__expf": "exp", "exp": "exp", "logf": "log", "__logf": "log", "log": "log",
    "sqrtf": "sqrt", "sqrt": "sqrt", "rsqrtf": "rsqrt", "tanhf": "tanh", "tanh": "tanh",
    "fabsf": "abs", "fabs": "abs", "abs": "abs", "sinf": "sin", "__sinf": "sin", "cosf": "cos",
    "__cosf": "cos", "erff": "erf", "floorf": "floor", "ceilf": "ceil", "expf_": "exp",
    "exp2f": "exp2", "log2f": "log2", "truncf": "trunc", "tanf": "tan", "__tanf": "tan",
    "tan": "tan",
}  # fmt: skip
_MATH2 = {
    "fmaxf": "maximum", "fminf": "minimum", "max": "maximum", "min": "minimum",
    "fmax": "maximum", "fmin": "minimum", "powf": "power", "__fdividef": "divide",
    "fdividef": "divide",
}  # fmt: skip
_NP1 = {
    "exp": "np.exp", "log": "np.log", "sqrt": "np.sqrt", "tanh": "np.tanh", "abs": "abs",
    "sin": "np.sin", "cos": "np.cos", "floor": "np.floor", "ceil": "np.ceil", "trunc": "np.trunc",
    "tan": "np.tan",
}  # fmt: skip
_BIN = {
    "+": "add", "-": "subtract", "*": "multiply", "/": "divide", "<": "less",
    "<=": "less_equal", ">": "greater", ">=": "greater_equal", "==": "equal",
    "!=": "not_equal", "&": "bitwise_and", "|": "bitwise_or", "^": "bitwise_xor",
    "<<": "left_shift", ">>": "right_shift",
}  # fmt: skip
_CMP = {"<", "<=", ">", ">=", "==", "!="}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_NOOP_CALLS = {"__syncthreads", "__syncwarp", "__threadfence", "__threadfence_block", "assert"}
_CONVERT = {
    "__float2half", "__half2float", "__float2bfloat16", "__bfloat162float", "__float2half_rn",
    "__float2bfloat16_rn", "__int2float_rn", "__uint2float_rn",
}  # fmt: skip
_RESERVED = {"nl", "nisa", "np", "nki", "range", "min", "max", "abs", "len"}


def dtype_spelling(name: str) -> str:
    if name in _FLOAT_DT:
        return _FLOAT_DT[name]
    if name in _INT_DT:
        return _INT_DT[name]
    raise KeyError(name)


_ATOMICS = {"atomicAdd": "add", "atomicSub": "subtract", "atomicMax": "maximum",
            "atomicMin": "minimum"}  # fmt: skip
# the block- and system-scoped spellings serialise as the device-scoped ones do
_ATOMICS = {f"{f}{scope}": op for f, op in _ATOMICS.items() for scope in ("", "_block", "_system")}
_SHUFFLES = ("__shfl_down_sync", "__shfl_up_sync", "__shfl_xor_sync", "__shfl_sync")
_BIN_CMP = {"less", "less_equal", "greater", "greater_equal", "equal", "not_equal"}
_EXACT_INT = {"+", "-", "*", "/", "%", ">>", *_CMP}
