"""64-bit integer buffers on NKI: carried as 32-bit limbs.

NKI has no 64-bit integer tensors or arithmetic.  A port of a kernel over ``long long`` /
``uint64_t`` buffers takes and returns each such buffer as a ``uint32`` tensor with a trailing
dimension of 2: the same bytes, low limb first (little-endian), so element ``i`` is
``(t[i, 0], t[i, 1])`` and its value ``t[i, 0] + 2**32 * t[i, 1]`` (two's complement for
``int64``).  The literal lowering computes on such pairs exactly
(:mod:`cuda2nki.lift.literal.wide`); callers convert on the way in and out (``check`` does).
"""

from __future__ import annotations

import numpy as np

#: the CUDA buffer dtypes a port carries as limbs
WIDE_INTS = frozenset({np.dtype(np.int64), np.dtype(np.uint64)})


def to_limbs(a: np.ndarray) -> np.ndarray:
    """A 64-bit integer array as its uint32 limbs (shape + (2,)); any other array unchanged."""
    if a.dtype not in WIDE_INTS:
        return a
    little = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<"))
    return little.view("<u4").reshape(a.shape + (2,)).astype(np.uint32)


def from_limbs(got: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A port's output for a buffer of ``dtype``: uint32 limbs joined into 64-bit integers where
    ``dtype`` is one and ``got`` holds limbs, else ``got`` unchanged."""
    got = np.asarray(got)
    if np.dtype(dtype) not in WIDE_INTS or not is_limbs(got):
        return got
    little = np.ascontiguousarray(got, dtype="<u4")
    return little.view("<u8").reshape(got.shape[:-1]).view(np.dtype(dtype).newbyteorder("<"))


def is_limbs(got: np.ndarray) -> bool:
    """Whether ``got`` is shaped and typed as the limbs of 64-bit integers."""
    return got.dtype == np.uint32 and got.ndim >= 1 and got.shape[-1] == 2


def joined(outs: dict[str, np.ndarray | None], resolved: object) -> dict[str, np.ndarray | None]:
    """A port's outputs by CUDA buffer name, the limbs of each 64-bit buffer joined."""
    return {
        name: None if got is None else from_limbs(got, resolved.dtype(name))  # type: ignore[attr-defined]
        for name, got in outs.items()
    }


def as_float_exactly(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """``actual`` as float64 for a comparison with ``expected``; for 64-bit integers, an element
    that differs from the expected one by less than float64 resolves is moved one float64 step
    away, so that no wrong bit of a 64-bit result compares equal."""
    a = np.asarray(actual)
    e = np.asarray(expected)
    out = a.astype(np.float64)
    if a.dtype not in WIDE_INTS or e.dtype not in WIDE_INTS or a.size != e.size:
        return out
    flat_a, flat_e, flat = a.ravel(), e.ravel(), out.ravel()
    hidden = (flat_a != flat_e) & (flat == flat_e.astype(np.float64))
    toward = np.where(flat_a > flat_e, np.inf, -np.inf)
    flat[hidden] = np.nextafter(flat[hidden], toward[hidden])
    return flat.reshape(a.shape)
