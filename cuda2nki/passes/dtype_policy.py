"""``dtype-policy``: decide accumulator and matmul-operand dtypes (annotates ``acc``/``mm_dtype``).

Before::  C[i, j] = reduce(add, k: A[i, k] * B[k, j])            A, B bfloat16; acc float32
After::   same, attrs acc=float32, mm_dtype=bfloat16              (PSUM fp32, bf16 operands)

Rules: accumulate in fp32 where CUDA did (PSUM for matmul, fp32 SBUF tiles otherwise); where CUDA
accumulated in a narrow type (a ``half`` running sum) the attribute keeps that type for the tiles
and outputs, but the engines still add in fp32 (PSUM; the vector engine rounds on its write), so
the port sums more precisely than the kernel (flagged C2N2511).  This is the faithful choice NKI
allows: check's tolerance is the kernel's own narrow-accumulation bound, infinite where its narrow
sums may overflow (:mod:`cuda2nki.ir.overflow`).  An fp64 accumulator is narrowed
to fp32, the widest type NKI computes in (flagged C2N2515); matmul operands stay in their HBM
dtype when both are the same narrow type, otherwise both are widened to fp32 on the DMA (the
tensor engine cannot mix fp32 with narrow inputs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from cuda2nki.diagnostics import error
from cuda2nki.ir.nodes import Compute, Kernel
from cuda2nki.passes._analysis import attrs, contractions, reductions, strip_cast, with_attrs
from cuda2nki.passes._index import fmt
from cuda2nki.passes.base import Pass, PassContext

NARROW = ("bfloat16", "float16", "float8_e4m3", "float8_e5m2")


@dataclass(frozen=True)
class DtypePolicyPass(Pass):
    name: ClassVar[str] = "dtype-policy"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        wide = [
            t.name for t in kernel.tensors.values() if t.dtype in ("float64", "int64", "uint64")
        ]
        if wide and not kernel.is_scheduled:
            raise error(
                "C2N2501",
                kernel.loc,
                kernel=kernel.name,
                construct=f"64-bit tensors ({', '.join(sorted(wide))}): NKI has no float64/int64",
            )
        body = []
        for s in kernel.body:
            if isinstance(s, Compute):
                s = self._annotate(s, kernel, ctx)
            body.append(s)
        return kernel.replace(body=tuple(body))

    def _annotate(self, c: Compute, kernel: Kernel, ctx: PassContext) -> Compute:
        red = reductions(c.expr)
        if not red:
            return c
        acc = red[0].acc_dtype or "float32"
        new = {"acc": "float32" if acc in ("float32", "float64", "tfloat32") else acc}
        if new["acc"] in NARROW:
            ctx.note("C2N2511", c.loc, tensor=c.target.tensor, dtype=new["acc"])
        else:
            where = "PSUM" if attrs(c).get("layout") == "matmul" else "SBUF"
            # narrowed: NKI has no fp64 arithmetic (any of the reductions: a softmax's max is
            # fp32 where its normaliser was summed in double)
            wide = next((r for r in red if r.acc_dtype == "float64"), None)
            if wide is not None:
                terms = " x ".join(fmt(a.extent) for a in wide.axes)
                ctx.note("C2N2515", c.loc, tensor=c.target.tensor, where=where, terms=terms)
            else:
                ctx.note("C2N2510", c.loc, tensor=c.target.tensor, where=where)
        products = contractions(c.expr)
        if products:
            ops = [strip_cast(o) for r in products for o in _operands(r)]
            dts = {kernel.tensors[o.tensor].dtype for o in ops if o.tensor in kernel.tensors}
            narrow = len(dts) == 1 and next(iter(dts)) in NARROW
            new["mm_dtype"] = next(iter(dts)) if narrow else "float32"
        return with_attrs(c, **new)


def _operands(r) -> tuple:
    body = strip_cast(r.body)
    return body.a, body.b
