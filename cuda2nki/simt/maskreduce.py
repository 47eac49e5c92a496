"""``cg::reduce`` over a coalesced or labeled group (see :mod:`cuda2nki.frontend.coalesced`).

``__c2n_mask_reduce_<op>(v, mask)``: each active lane gets ``op`` over the active lanes of its
warp that hold the same ``mask`` (the lanes of its group), combined in ascending lane order in
``v``'s type (fp32 for half/bf16).
"""

from __future__ import annotations

import numpy as np

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.coalesced import MASK_REDUCE
from cuda2nki.simt.chunk import Chunk

_UFUNC = {
    "add": np.add,
    "max": np.fmax,
    "min": np.fmin,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
}
U32 = A.ScalarType(name="uint32")


def mask_reduce(c: Chunk, act, op: str, value, mask) -> np.ndarray:
    n = c.count(act)
    v = np.broadcast_to(np.asarray(value), (n,))
    dt = v.dtype
    calc = np.dtype(np.float32) if dt.kind == "f" and dt.itemsize < 4 else dt
    idx = np.arange(c.T) if act is None else act
    m = np.broadcast_to(np.asarray(mask).astype(np.int64), (n,))
    key = c.warp[idx].astype(np.int64) * (1 << 32) + m
    order = np.argsort(key, kind="stable")  # lanes ascending inside each group
    sk = key[order]
    starts = np.flatnonzero(np.r_[True, sk[1:] != sk[:-1]])
    sums = _UFUNC[op].reduceat(v[order].astype(calc), starts)
    group = np.cumsum(np.r_[True, sk[1:] != sk[:-1]]) - 1
    out = np.empty(n, calc)
    out[order] = sums[group]
    return out.astype(dt) if calc != dt else out


def _build(op: str):
    def build(fc, e: A.Call):
        vf, vt = fc.expr(e.args[0])
        mf = fc.rvalue(e.args[1], U32)
        rt = vt if not getattr(vt, "const", False) else type(vt)(**{**vt.__dict__, "const": False})

        def f(c, a):
            return mask_reduce(c, a, op, vf(c, a), mf(c, a))

        return f, rt

    return build


def register(reg) -> None:
    for op in _UFUNC:
        reg(
            MASK_REDUCE + op,
            _build(op),
            "exact",
            "cooperative_groups::reduce over a coalesced or labeled group; ascending lane order",
        )
