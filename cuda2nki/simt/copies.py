"""``__c2n_memcpy(dst, src, n)``: the byte copy an asynchronous copy (``cuda::memcpy_async``,
``__pipeline_memcpy_async``) becomes when its size is not one typed assignment (see
:mod:`cuda2nki.frontend.asynccopy`).  The copy completes at once; ``n`` must be the same for
the threads that copy."""

from __future__ import annotations

import numpy as np

from cuda2nki.frontend import ast as A
from cuda2nki.simt import access
from cuda2nki.simt.intrinsics import U64, VOID, _arity, _reg
from cuda2nki.simt.memory import Vec

_U8 = A.ScalarType(name="uint8")


def _unsupported(loc, what: str):
    from cuda2nki.simt.compiler import unsupported

    return unsupported(loc, what)


def _memcpy(fc, e: A.Call):
    _arity(e, 3)
    dst, src = fc.rvalue(e.args[0]), fc.rvalue(e.args[1])
    size = fc.rvalue(e.args[2], U64)

    def run(c, a):
        n = np.unique(np.asarray(size(c, a)))
        if n.size > 1:
            raise _unsupported(e.loc, "an asynchronous copy whose size differs between threads")
        if n.size == 0 or int(n[0]) == 0:
            return a
        t = A.VectorType(name=f"bytes{int(n[0])}", base=_U8, width=int(n[0]), align=1)
        v = access.load(c, a, src(c, a), t, e.loc)
        access.store(c, a, dst(c, a), t, Vec(tuple(v.lanes)), e.loc)
        return a

    return run, VOID


_reg("__c2n_memcpy", _memcpy, "exact", "an asynchronous copy, completed at once (byte copy)")
