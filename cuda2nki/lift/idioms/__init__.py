"""Idiom recognisers over lifted intent IR.

The lifter's symbolic execution already derived *what* each store computes (index maps, folds,
resolved shared memory); each module here decides whether a :class:`~cuda2nki.ir.nodes.Compute`
belongs to its idiom family from that structure -- the axes its reads use, the reductions and
operations it contains -- never from names.  The first family that matches tags the Compute;
the kernel's idiom is the most specific family among its Computes.
"""

from __future__ import annotations

from cuda2nki.ir import nodes as N
from cuda2nki.ir.ops import Idiom
from cuda2nki.lift.idioms import (
    compose,
    contract,
    gather,
    mapping,
    reduce,
    scan,
    stencil,
    transpose,
)

#: most specific first
RECOGNISERS = (
    (Idiom.SCATTER, gather.is_scatter),
    (Idiom.GATHER, gather.is_gather),
    (Idiom.SOFTMAX, compose.is_softmax),
    (Idiom.NORM, compose.is_norm),
    (Idiom.CONTRACT, contract.is_contraction),
    (Idiom.STENCIL, stencil.is_window),
    (Idiom.SCAN, scan.is_scan),
    (Idiom.REDUCE, reduce.is_reduction),
    (Idiom.TRANSPOSE, transpose.is_transpose),
    (Idiom.STENCIL, stencil.is_stencil),
    (Idiom.MAP, mapping.is_map),
)
_RANK = list(dict.fromkeys(i for i, _ in RECOGNISERS))


def classify_compute(c: N.Compute, k: N.Kernel) -> Idiom:
    for idiom, match in RECOGNISERS:
        if match(c, k):
            return idiom
    return Idiom.MAP


def classify(k: N.Kernel) -> tuple[N.Kernel, str]:
    body = []
    tags = []
    for c in k.body:
        if isinstance(c, N.Compute):
            idiom = classify_compute(c, k)
            tags.append(idiom)
            c = c.replace(idiom=idiom)
        body.append(c)
    # a softmax/norm composition is tagged on every Compute of the kernel
    kernel_idiom = min(tags, key=_RANK.index) if tags else Idiom.MAP
    if kernel_idiom in (Idiom.SOFTMAX, Idiom.NORM):
        body = [c.replace(idiom=kernel_idiom) if isinstance(c, N.Compute) else c for c in body]
    return k.replace(body=tuple(body)), str(kernel_idiom)
