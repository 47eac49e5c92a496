"""Contractions: ``out[...] = sum_k A[.., k, ..] * B[.., k, ..]`` (naive and shared-tiled
matmul, GEMV, batched products, attention scores with a scale or mask around the sum, and
sums of such products per step: ``A B^T + B A^T``)."""

from __future__ import annotations

from cuda2nki.ir import nodes as N
from cuda2nki.lift.idioms.common import reads, reduces, strip_casts, syms


def _product_reads(body: N.Expr) -> tuple[N.Expr, N.Expr] | None:
    b = strip_casts(body)
    if isinstance(b, N.Binary) and str(b.op) == "mul":
        return b.a, b.b
    return None


def _terms(body: N.Expr) -> list[N.Expr]:
    """The terms of a sum (``A[i, k] * B[j, k] + B[i, k] * A[j, k]``: two products)."""
    b = strip_casts(body)
    if isinstance(b, N.Binary) and str(b.op) in ("add", "sub"):
        return _terms(b.a) + _terms(b.b)
    return [body]


def is_contraction(c: N.Compute, k: N.Kernel) -> bool:
    out_axes = {a.name for a in c.domain.axes}
    for r in reduces(c.expr):
        if str(r.op) != "add":
            continue
        red = {a.name for a in r.axes}
        if all(_product_term(t, red, out_axes) for t in _terms(r.body)):
            return True
    return False


def _product_term(term: N.Expr, red: set, out_axes: set) -> bool:
    pr = _product_reads(term)
    if pr is None:
        return False
    ra, rb = reads(pr[0]), reads(pr[1])
    if len(ra) != 1 or len(rb) != 1:
        return False
    # both factors walk the reduction axis; together they use the output's axes
    if not (red & syms(ra[0].index) and red & syms(rb[0].index)):
        return False
    # a dim mixing an output axis with the reduction axis is a sliding window: convolution
    window = any(syms(x) & out_axes and syms(x) & red for r in (ra[0], rb[0]) for x in r.index)
    return bool(out_axes) and out_axes <= syms(ra[0].index) | syms(rb[0].index) and not window
