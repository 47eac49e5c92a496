"""Constants that kernels take from system headers (float.h, limits.h, math.h, math_constants.h).

The front end never reads system headers, so these names are lowered to literals directly.
"""

from __future__ import annotations

import math
import sys

from cuda2nki.frontend.typesys import FLT_EPSILON, FLT_MAX, FLT_MIN, to_float32

_F64 = sys.float_info
_INF = float("inf")

KNOWN_CONSTANTS: dict[str, tuple[int | float, str]] = {
    # float.h
    "FLT_MAX": (FLT_MAX, "float32"),
    "FLT_MIN": (FLT_MIN, "float32"),
    "FLT_EPSILON": (FLT_EPSILON, "float32"),
    "DBL_MAX": (_F64.max, "float64"),
    "DBL_MIN": (_F64.min, "float64"),
    "DBL_EPSILON": (_F64.epsilon, "float64"),
    # math.h
    "INFINITY": (_INF, "float32"),
    "HUGE_VALF": (_INF, "float32"),
    "HUGE_VAL": (_INF, "float64"),
    "NAN": (float("nan"), "float32"),
    "M_PI": (math.pi, "float64"),
    "M_PI_2": (math.pi / 2, "float64"),
    "M_PI_4": (math.pi / 4, "float64"),
    "M_1_PI": (1 / math.pi, "float64"),
    "M_2_PI": (2 / math.pi, "float64"),
    "M_2_SQRTPI": (2 / math.sqrt(math.pi), "float64"),
    "M_E": (math.e, "float64"),
    "M_LN2": (math.log(2), "float64"),
    "M_LN10": (math.log(10), "float64"),
    "M_LOG2E": (math.log2(math.e), "float64"),
    "M_LOG10E": (math.log10(math.e), "float64"),
    "M_SQRT2": (math.sqrt(2), "float64"),
    "M_SQRT1_2": (math.sqrt(0.5), "float64"),
    # limits.h / stdint.h
    "INT_MAX": (2**31 - 1, "int32"),
    "INT_MIN": (-(2**31), "int32"),
    "UINT_MAX": (2**32 - 1, "uint32"),
    "LLONG_MAX": (2**63 - 1, "int64"),
    "LLONG_MIN": (-(2**63), "int64"),
    "ULLONG_MAX": (2**64 - 1, "uint64"),
    "SHRT_MAX": (2**15 - 1, "int32"),
    "SHRT_MIN": (-(2**15), "int32"),
    "CHAR_BIT": (8, "int32"),
    "INT32_MAX": (2**31 - 1, "int32"),
    "INT32_MIN": (-(2**31), "int32"),
    "UINT32_MAX": (2**32 - 1, "uint32"),
    "INT64_MAX": (2**63 - 1, "int64"),
    "SIZE_MAX": (2**64 - 1, "uint64"),
    # cuda_runtime_api.h: device-runtime flags (see devlaunch)
    "cudaStreamNonBlocking": (1, "uint32"),
    "cudaStreamDefault": (0, "uint32"),
    "cudaEventDisableTiming": (2, "uint32"),
    "cudaEventDefault": (0, "uint32"),
    "cudaSuccess": (0, "int32"),
    # math_constants.h
    "CUDART_INF_F": (_INF, "float32"),
    "CUDART_NAN_F": (float("nan"), "float32"),
    "CUDART_INF": (_INF, "float64"),
    "CUDART_NAN": (float("nan"), "float64"),
    "CUDART_PI_F": (to_float32(math.pi), "float32"),
    "CUDART_PI": (math.pi, "float64"),
    "CUDART_PIO2_F": (to_float32(math.pi / 2), "float32"),
    "CUDART_2_OVER_PI_F": (to_float32(2 / math.pi), "float32"),
    "CUDART_SQRT_HALF_F": (to_float32(math.sqrt(0.5)), "float32"),
    "CUDART_SQRT_2_OVER_PI_F": (to_float32(math.sqrt(2 / math.pi)), "float32"),
    "CUDART_L2E_F": (to_float32(math.log2(math.e)), "float32"),
    "CUDART_LN2_F": (to_float32(math.log(2)), "float32"),
    "CUDART_MAX_NORMAL_F": (FLT_MAX, "float32"),
    "CUDART_MIN_DENORM_F": (to_float32(1.4e-45), "float32"),
    "CUDART_ZERO_F": (0.0, "float32"),
    "CUDART_ONE_F": (1.0, "float32"),
}
