"""The dtype names every package speaks (NumPy-style strings) and their NumPy dtypes.

One table for the binding, the SIMT interpreter and the IR: ``bfloat16`` and the fp8 formats come
from ``ml_dtypes``; ``tfloat32`` is stored as float32 (its rounding is modelled by unit roundoff)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

#: integer, bool and the IEEE / bfloat16 formats: what C scalar types map onto
STANDARD_DTYPES: dict[str, np.dtype] = {
    "bool": np.dtype(np.bool_),
    "int8": np.dtype(np.int8),
    "uint8": np.dtype(np.uint8),
    "int16": np.dtype(np.int16),
    "uint16": np.dtype(np.uint16),
    "int32": np.dtype(np.int32),
    "uint32": np.dtype(np.uint32),
    "int64": np.dtype(np.int64),
    "uint64": np.dtype(np.uint64),
    "float16": np.dtype(np.float16),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "float32": np.dtype(np.float32),
    "float64": np.dtype(np.float64),
}

#: the 8-bit float formats (Trainium's matmul and storage types)
FP8_DTYPES: dict[str, np.dtype] = {
    "float8_e4m3": np.dtype(ml_dtypes.float8_e4m3),
    "float8_e4m3fn": np.dtype(ml_dtypes.float8_e4m3fn),
    "float8_e5m2": np.dtype(ml_dtypes.float8_e5m2),
}

#: every dtype name the IR accepts; float32 precedes tfloat32 so reverse lookups say float32
NUMPY_DTYPES: dict[str, np.dtype] = {
    **STANDARD_DTYPES,
    **FP8_DTYPES,
    "tfloat32": np.dtype(np.float32),
}
