"""Overflow in the error bound: where a float operation may leave its dtype's range.

The first-order bound of :mod:`cuda2nki.ir.evaluate` holds only while no rounded value overflows.
A kernel that computes in a narrow type (a ``half`` product, a ``half`` running sum) overflows
to infinity as soon as one intermediate passes the type's largest finite value (65504 for
float16), and what follows (``inf - inf`` is NaN, ``inf`` plus anything stays ``inf``) depends on
the order of the operations, not on the exact result.  Another implementation that is just as
faithful -- a port whose matmul sums the same ``half`` products in fp32 PSUM, or one that adds in
another order -- can then be finite where the kernel is not.  Neither value is wrong: the result
is not determined by the kernel's arithmetic there.

Rule: an operation whose result dtype is ``D`` may overflow where its value can reach beyond
``D``'s largest finite value, that is where ``|v| + e`` (the exact value plus the error already
bounded) exceeds it; its error bound is infinite there.  For a reduction every partial sum (or
product) is bounded by the sum of the magnitudes of its terms (``Σ|x| + Σe``; ``Π(|x| + e)``), so
the accumulator may overflow only where that reach exceeds the accumulator's largest value.  An
infinite bound makes the element *unknowable*: check accepts any value there, and judges the
elements whose reach stays in range as before.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from cuda2nki.ir.ops import Op, is_float


@cache
def largest(dtype: str) -> float:
    """The largest finite value of a float dtype (infinite for others: they do not overflow to
    infinity -- integer wraparound is bounded elsewhere)."""
    if not is_float(dtype):
        return float("inf")
    from cuda2nki.dtypes import NUMPY_DTYPES

    np_dt = NUMPY_DTYPES.get(dtype)
    if np_dt is None:  # tfloat32 keeps fp32's exponent range
        return float(np.finfo(np.float32).max)
    try:
        return float(np.finfo(np_dt).max)
    except ValueError:  # ml_dtypes' bf16/fp8
        import ml_dtypes

        return float(ml_dtypes.finfo(np_dt).max)


def guard(err: Any, reach: Any, dtype: str) -> Any:
    """``err`` made infinite where a value of magnitude up to ``reach + err`` overflows ``dtype``."""
    top = largest(dtype)
    if not np.isfinite(top):
        return err
    e = np.asarray(err, dtype=np.float64)
    r = np.abs(np.asarray(reach, dtype=np.float64))
    with np.errstate(invalid="ignore", over="ignore"):
        over = (r + e) > top
    if not np.any(over):
        return err
    return np.where(over, np.inf, e)


def guard_reduction(op: Op, err: Any, sums: tuple, acc: str) -> Any:
    """The bound of a reduction in ``acc`` whose partial results may overflow: ``sums`` are the
    order-independent ingredients of :meth:`_Evaluator._reduce_block` (``(Σe, Σ|x|)`` for a sum,
    ``(Π(|x|+e), Π|x|)`` for a product); max/min never leave the range of their terms."""
    if op is Op.ADD:
        s_e, s_abs = sums
        return guard(err, np.asarray(s_abs, np.float64) + np.asarray(s_e, np.float64), acc)
    if op is Op.MUL:
        return guard(err, sums[0], acc)
    return err
