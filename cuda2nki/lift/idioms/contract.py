"""Contractions: ``out[...] = sum_k A[.., k, ..] * B[.., k, ..]`` (naive and shared-tiled
matmul, GEMV, batched products, attention scores with a scale or mask around the sum)."""

from __future__ import annotations

from cuda2nki.ir import nodes as N
from cuda2nki.lift.idioms.common import reads, reduces, strip_casts, syms


def _product_reads(body: N.Expr) -> tuple[N.Expr, N.Expr] | None:
    b = strip_casts(body)
    if isinstance(b, N.Binary) and str(b.op) == "mul":
        return b.a, b.b
    return None


def is_contraction(c: N.Compute, k: N.Kernel) -> bool:
    for r in reduces(c.expr):
        if str(r.op) != "add":
            continue
        pr = _product_reads(r.body)
        if pr is None:
            continue
        red = {a.name for a in r.axes}
        ra, rb = reads(pr[0]), reads(pr[1])
        if len(ra) != 1 or len(rb) != 1:
            continue
        # both factors walk the reduction axis; together they use the output's axes
        if not (red & syms(ra[0].index) and red & syms(rb[0].index)):
            continue
        out_axes = {a.name for a in c.domain.axes}
        # a dim mixing an output axis with the reduction axis is a sliding window: convolution
        window = any(syms(x) & out_axes and syms(x) & red for r in (ra[0], rb[0]) for x in r.index)
        if out_axes and out_axes <= syms(ra[0].index) | syms(rb[0].index) and not window:
            return True
    return False
