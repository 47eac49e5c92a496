"""``coalesce-dma``: view 1-D maps as ``[128, F]`` tiles so each DMA moves >= 2 KiB per partition.

Before::  y[i] = a * x[i] + y[i] for i < N        layout=rows (one element per partition)
After::   same, layout=flat, f_tile=512            (fp32: 512 x 4 B = 2 KiB per partition)

A flat map walks the vector in chunks of ``128 * F`` contiguous elements, each chunk reshaped to
``[128, F]``; the remainder becomes one ``[q, F]`` tile and a final one-partition tail.  Only maps
whose every access is the identity ``v[i]`` (or a scalar) are coalesced: the element order within a
chunk is then irrelevant.  A read may also be a field of records (``p[i, 0]`` of ``[N, 2]`` pairs,
``q[3 * i + 1]``): the chunk's DMA moves that field of its records, with the record's stride.
A field read only where a select picks it is coalesced when an unguarded read takes another field
of the same record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from cuda2nki.ir.nodes import Compute, Kernel, Read, Select
from cuda2nki.ir.ops import DTYPE_BYTES
from cuda2nki.passes._analysis import attrs, reads, reductions, walk, with_attrs
from cuda2nki.passes._index import SCALAR, access_class, flat_ok, flat_record_ok
from cuda2nki.passes._periodic import period_of
from cuda2nki.passes._record_fields import field_statements, flat_members, own_record
from cuda2nki.passes.base import Pass, PassContext


@dataclass(frozen=True)
class CoalesceDmaPass(Pass):
    name: ClassVar[str] = "coalesce-dma"
    bytes: int = 2048

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        body = []
        for at, s in enumerate(kernel.body):
            fields = None
            if isinstance(s, Compute):  # records: a member's sum, or whole records field by field
                s = flat_members(s, kernel, self._eligible) if reductions(s.expr) else s
                fields = field_statements(s, kernel.body[at + 1 :], kernel, self._eligible)
            for one in [s] if fields is None else fields:
                if isinstance(one, Compute) and self._eligible(one, kernel):
                    one = self._flat(one, kernel)
                body.append(one)
        return kernel.replace(body=tuple(body))

    def _flat(self, c: Compute, kernel: Kernel) -> Compute:
        itemsize = max(DTYPE_BYTES.get(_dtype(c, kernel), 4), 1)
        return with_attrs(c, layout="flat", f_tile=str(max(1, self.bytes // itemsize)))

    @staticmethod
    def _eligible(c: Compute, kernel: Kernel) -> bool:
        a = attrs(c)
        if a.get("layout") != "rows" or len(c.domain.axes) != 1 or reductions(c.expr):
            return False
        i = c.domain.axes[0].name
        temps = {t.name for t in kernel.temps}
        guarded = {id(r) for s in walk(c.expr) if isinstance(s, Select) for r in _branch_reads(s)}
        guarded -= _same_records(reads(c.expr), guarded)
        for acc in [*reads(c.expr), c.target]:
            got = access_class(acc.index, i, "")
            if got is None and acc is not c.target and _periodic(acc, i, kernel):
                continue  # a table read at the index modulo its period (see _periodic)
            if acc.tensor in temps or got is None:
                return False
            # a field of records is read unguarded only (a select may pick a record past the
            # end); the target may be a field: it is written where the domain runs
            record = acc is c.target or id(acc) not in guarded or own_record(acc, c, kernel)
            if got[0] != SCALAR and not (flat_record_ok if record else flat_ok)(got[1]):
                return False
        tgt = access_class(c.target.index, i, "")
        return tgt is not None and tgt[0] != SCALAR


def _periodic(rd: Read, i: str, kernel: Kernel) -> bool:
    decl = kernel.tensors.get(rd.tensor)
    return decl is not None and period_of(rd, i, decl.shape) is not None


def _same_records(found: list[Read], guarded: set[int]) -> set[int]:
    """The guarded reads of a field of a record (``p[i, 1]``) that an unguarded read also reads
    (``p[i, 0]``): where one is in bounds, so is the other."""
    sure = {(r.tensor, r.index[:-1]) for r in found if id(r) not in guarded and len(r.index) > 1}
    return {id(r) for r in found if id(r) in guarded and (r.tensor, r.index[:-1]) in sure}


def _branch_reads(s: Select) -> list[Read]:
    """The reads a select guards (those of its branches, not of its condition)."""
    return reads(s.a) + reads(s.b)


def _dtype(c: Compute, kernel: Kernel) -> str:
    decl = kernel.tensors.get(c.target.tensor)
    return decl.dtype if decl is not None else "float32"
