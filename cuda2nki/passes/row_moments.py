"""``row-moments``: a row's mean and variance from one ``bn_stats``/``bn_aggr`` pass, and the
normalisation ``(x - mean) * rstd`` as one scalar-engine activation with scale and bias.

A layer norm lifted as written reduces the row for the mean, then subtracts the mean, squares
and reduces again for the variance: three passes over the row on the vector engine.  The
batch-norm instructions compute both in one pass (``bn_stats`` on chunks of at most
``bn_stats_fmax`` = 512 elements, ``bn_aggr`` to combine the chunks), with the variance from
centred sums (Chan's update), as accurate as the two-pass form.

Before::  red = reduce(add, x); mean = red / C
          d = x - mean; sq = d * d;  red2 = reduce(add, sq); var = red2 / C
          (or: sq = square(x + -mean) with reduce_dst red2)
          y = (x - mean) * rstd
After::   for c < ceildiv(C, 512): bn_stats(stats[:, 6c:6c+6], x[:, 512c:512c+min(512, C-512c)])
          bn_aggr(mv, stats)                      # mean = mv[:, 0:1], var = mv[:, 1:2]
          nb = mean * rstd * -1.0;  y = copy(x * rstd + nb)   # scalar engine

Matched within one block of statements, on tiles each written once, whole, with the divisor the
row length itself (a parameter or a constant equal to the tile's free size).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

from cuda2nki.ir.nodes import (
    Activation,
    Alloc,
    BnAggr,
    BnStats,
    CeilDiv,
    Const,
    Kernel,
    Lit,
    Loop,
    Min,
    Param,
    SizeExpr,
    Slice,
    Sym,
    TensorReduce,
    TensorScalar,
    TensorTensor,
    View,
)
from cuda2nki.ir.ops import Op
from cuda2nki.passes._analysis import transform
from cuda2nki.passes.base import Pass, PassContext
from cuda2nki.passes.common_tiles import _drop_dead, _reads, _stmts, _whole, _write_counts
from cuda2nki.rewrite import nodes

#: ``nl.tile_size.bn_stats_fmax``: the most free elements one ``bn_stats`` takes (NKI.md §3.2)
BN_STATS_FMAX = 512
#: elements ``bn_stats`` writes per partition per chunk, and ``bn_aggr`` per partition
STATS_PER_CHUNK, MOMENTS = 6, 2


@dataclass(frozen=True)
class RowMomentsPass(Pass):
    name: ClassVar[str] = "row-moments"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        names = _Names(kernel)
        # tiles some view reads other than as [rows, column slice] are left as they are
        odd = {
            v.tensor
            for v in nodes(kernel.body)
            if isinstance(v, View) and (len(v.dims) != 2 or not isinstance(v.dims[1], Slice))
        }
        writes = {t: n for t, n in _write_counts(kernel.body).items() if t not in odd}
        body, rename, gone = _blocks(kernel.body, writes, names)
        if not rename:
            return kernel
        body = _without(body, gone)
        body = transform(body, lambda x: _moved(x, rename))
        body = _normalise_tail(body, {mv for mv, _ in rename.values()}, names)
        return kernel.replace(body=_drop_dead(body, kernel))


@dataclass(frozen=True)
class _Match:
    """A row's mean and variance found in a block: the statements that compute them."""

    reduce: TensorReduce  # red = reduce(add, x)
    mean: TensorScalar  # mean = red / C
    var: TensorScalar  # var = red2 / C
    var_src: Any  # the statement writing red2


class _Names:
    """Fresh tile and loop-variable names, never clashing with a name in the kernel."""

    def __init__(self, kernel: Kernel) -> None:
        self.used = set(kernel.tensors) | {p.name for p in kernel.params}
        for x in nodes(kernel.body):
            if isinstance(x, Alloc):
                self.used.add(x.name)
            elif isinstance(x, Loop):
                self.used.add(x.var)
            elif isinstance(x, Sym):
                self.used.add(x.name)

    def fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self.used:
            name, k = f"{base}{k}", k + 1
        self.used.add(name)
        return name


def _blocks(body: tuple, writes: dict[str, int], names: _Names):
    """``body`` with every matched mean/variance computed by bn_stats/bn_aggr; the renames of
    the old mean and variance tiles to columns of the new tile; the tiles to delete."""
    rename: dict[str, tuple[str, int]] = {}
    gone: set[str] = set()
    out: list = []
    for s in body:
        if isinstance(s, Loop):
            inner, r, g = _blocks(s.body, writes, names)
            rename.update(r)
            gone |= g
            out.append(s.replace(body=inner))
        else:
            out.append(s)
    allocs = {s.name: s for s in out if isinstance(s, Alloc)}
    for m in _matches(out, writes, allocs):
        at = next(i for i, s in enumerate(out) if s is m.reduce)
        mv = names.fresh("mv")
        out[at:at] = _bn(m, allocs, mv, names)
        rename[m.mean.dst.tensor] = (mv, 0)
        rename[m.var.dst.tensor] = (mv, 1)
        gone |= {m.reduce.dst.tensor, m.mean.dst.tensor, m.var.dst.tensor}
        if isinstance(m.var_src, TensorReduce):
            gone.add(m.var.src.tensor)
        elif m.var_src.dst.tensor not in _read_elsewhere(out, m.var_src):
            gone |= {m.var.src.tensor, m.var_src.dst.tensor}
    return tuple(out), rename, gone


def _read_elsewhere(block: list, s: Any) -> set[str]:
    return set().union(*(_reads(x) for x in _stmts(tuple(block)) if x is not s))


def _matches(block: list, writes: dict[str, int], allocs: dict[str, Alloc]) -> list[_Match]:
    defs: dict[str, Any] = {}
    for s in block:
        for v in (getattr(s, "dst", None), getattr(s, "reduce_dst", None)):
            if (
                isinstance(v, View)
                and writes.get(v.tensor) == 1
                and v.tensor in allocs
                and _whole(v, allocs[v.tensor])
            ):
                defs[v.tensor] = s
    out = []
    for s in block:
        mean = _mean_of(s, defs)
        if mean is None:
            continue
        x, red = mean.src_x, mean.reduce
        var = next((v for v in block if _is_var(v, defs, x, mean.stmt, red)), None)
        if var is not None:
            out.append(_Match(red, mean.stmt, var, defs[var.src.tensor]))
    return out


@dataclass(frozen=True)
class _Mean:
    stmt: TensorScalar
    reduce: TensorReduce
    src_x: View


def _mean_of(s: Any, defs: dict[str, Any]) -> _Mean | None:
    """``s`` as ``mean = reduce(add, x) / C`` over a 2-D row tile ``x``."""
    red = _row_sum(s, defs)
    if red is None or not isinstance(red, TensorReduce):
        return None
    x = red.src
    if len(x.dims) != 2 or not isinstance(x.dims[1], Slice) or x.dims[1].step != 1:
        return None
    if not _divides_by(s, x.dims[1].size):
        return None
    return _Mean(s, red, x)


def _row_sum(s: Any, defs: dict[str, Any]) -> Any:
    """The statement writing the row sum ``s`` divides (``s = red / n``), if any."""
    if not (
        isinstance(s, TensorScalar)
        and s.op0 in (Op.DIV, Op.MUL)
        and not s.reverse0
        and s.op1 is None
        and s.src.tensor in defs
        and s.dst.tensor in defs
        and defs[s.dst.tensor] is s
    ):
        return None
    red = defs[s.src.tensor]
    if isinstance(red, TensorReduce):
        ok = red.op == Op.ADD and tuple(red.axes) == (1,) and not red.negate
        return red if ok else None
    if isinstance(red, Activation) and red.reduce_dst is not None:
        return red if red.reduce_dst.tensor == s.src.tensor else None
    return None


def _divides_by(s: TensorScalar, n: SizeExpr) -> bool:
    """``s`` divides by ``n``: ``/ n`` (a parameter or a constant) or ``* (1 / n)``."""
    o = s.operand0
    if isinstance(o, Param):
        return s.op0 == Op.DIV and n == Sym(o.name)
    if not isinstance(o, Lit) or not isinstance(n, Const) or not n.value:
        return False
    if s.op0 == Op.DIV:
        return float(o.value) == float(n.value)
    return math.isclose(float(o.value), 1.0 / n.value, rel_tol=1e-12)


def _is_var(s: Any, defs: dict[str, Any], x: View, mean: TensorScalar, red: TensorReduce) -> bool:
    """``s`` as ``var = sum((x - mean)^2) / C`` in one of its spellings."""
    r2 = _row_sum(s, defs)
    if r2 is None or r2 is red or not _divides_by(s, x.dims[1].size):
        return False
    m = mean.dst.tensor
    if isinstance(r2, TensorReduce):
        sq = defs.get(r2.src.tensor)
        if isinstance(sq, TensorTensor) and sq.op == Op.MUL and sq.a == sq.b:
            return _centred(defs.get(sq.a.tensor), x, m)
        return _square_of_centred(sq, x, m, defs)
    return _square_of_centred(r2, x, m, defs)


def _square_of_centred(a: Any, x: View, m: str, defs: dict[str, Any]) -> bool:
    """``a`` is ``square(x - mean)``: of a centred tile, or of ``x`` with the bias ``-mean``."""
    if not isinstance(a, Activation) or a.op != Op.SQUARE or not _unit_scale(a.scale):
        return False
    if a.bias is None:
        return _centred(defs.get(a.src.tensor), x, m)
    if a.src != x or not isinstance(a.bias, View):
        return False
    nm = defs.get(a.bias.tensor)
    return (
        isinstance(nm, TensorScalar)
        and nm.src.tensor == m
        and nm.op0 == Op.MUL
        and isinstance(nm.operand0, Lit)
        and float(nm.operand0.value) == -1.0
        and nm.op1 is None
    )


def _unit_scale(scale: Any) -> bool:
    return scale is None or (isinstance(scale, Lit) and float(scale.value) == 1.0)


def _centred(d: Any, x: View, m: str) -> bool:
    return (
        isinstance(d, TensorScalar)
        and d.src == x
        and d.op0 == Op.SUB
        and not d.reverse0
        and d.op1 is None
        and isinstance(d.operand0, View)
        and d.operand0.tensor == m
    )


def _bn(m: _Match, allocs: dict[str, Alloc], mv: str, names: _Names) -> list:
    """Statements computing ``mv[:, 0] = mean``, ``mv[:, 1] = var`` of the row tile."""
    x = m.reduce.src
    rows, cols = x.dims[0], x.dims[1]
    assert isinstance(rows, Slice) and isinstance(cols, Slice)
    p = allocs[m.reduce.dst.tensor].shape[0]
    chunks = _fold(CeilDiv(cols.size, Const(BN_STATS_FMAX)))
    stats = names.fresh("stats")
    loc = m.reduce.loc
    lead = Slice(Const(0), rows.size)

    def chunk(c: SizeExpr) -> BnStats:
        start = Const(BN_STATS_FMAX) * c
        size = _fold(Min(Const(BN_STATS_FMAX), cols.size - start))
        return BnStats(
            View(stats, (lead, Slice(Const(STATS_PER_CHUNK) * c, Const(STATS_PER_CHUNK)))),
            View(x.tensor, (rows, Slice(_fold(cols.start + start), size))),
            loc=loc,
        )

    if chunks == Const(1):
        fill: list = [chunk(Const(0))]
    else:
        c = names.fresh("c")
        fill = [Loop(c, Const(0), chunks, body=(chunk(Sym(c)),), loc=loc)]
    return [
        Alloc(stats, (p, _fold(chunks * Const(STATS_PER_CHUNK))), "float32", loc=loc),
        *fill,
        Alloc(mv, (p, Const(MOMENTS)), "float32", loc=loc),
        BnAggr(
            View(mv, (lead, Slice(Const(0), Const(MOMENTS)))),
            View(stats, (lead, Slice(Const(0), _fold(chunks * Const(STATS_PER_CHUNK))))),
            loc=loc,
        ),
    ]


def _fold(e: SizeExpr) -> SizeExpr:
    from cuda2nki.passes.fold_sizes import fold_size

    return fold_size(e)


def _moved(x: Any, rename: dict[str, tuple[str, int]]) -> Any:
    """A view of an old mean/variance tile as the matching column of the moments tile."""
    if not isinstance(x, View) or x.tensor not in rename or len(x.dims) != 2:
        return x
    mv, col = rename[x.tensor]
    d = x.dims[1]
    if not isinstance(d, Slice):
        return x
    return View(mv, (x.dims[0], d.replace(start=_fold(d.start + Const(col)))))


def _without(body: tuple, gone: set[str]) -> tuple:
    out = []
    for s in body:
        if isinstance(s, Loop):
            out.append(s.replace(body=_without(s.body, gone)))
        elif isinstance(s, Alloc) and s.name in gone:
            continue
        elif not isinstance(s, Alloc) and _writes_only(s, gone):
            continue
        else:
            out.append(s)
    return tuple(out)


def _writes_only(s: Any, gone: set[str]) -> bool:
    dsts = [v for v in (getattr(s, "dst", None), getattr(s, "reduce_dst", None)) if v is not None]
    return bool(dsts) and all(isinstance(v, View) and v.tensor in gone for v in dsts)


def _normalise_tail(body: tuple, moments: set[str], names: _Names) -> tuple:
    """``y = (x - mean) * rstd`` (mean from a moments tile) as ``copy(x * rstd + nb)`` on the
    scalar engine with ``nb = mean * rstd * -1``, freeing the vector engine for the rest."""
    out: list = []
    for s in body:
        if isinstance(s, Loop):
            out.append(s.replace(body=_normalise_tail(s.body, moments, names)))
            continue
        if not _is_tail(s, moments):
            out.append(s)
            continue
        nb = names.fresh("nb")
        mean, rstd = s.operand0, s.operand1
        rows = mean.dims[0]
        one = (rows, Slice(Const(0), Const(1)))
        out += [
            Alloc(nb, (rows.size, Const(1)), "float32", loc=s.loc),
            TensorScalar(View(nb, one), mean, Op.MUL, rstd, False, Op.MUL, Lit(-1.0), loc=s.loc),
            Activation(s.dst, Op.COPY, s.src, bias=View(nb, one), scale=rstd, loc=s.loc),
        ]
    return tuple(out)


def _is_tail(s: Any, moments: set[str]) -> bool:
    return (
        isinstance(s, TensorScalar)
        and s.op0 == Op.SUB
        and not s.reverse0
        and s.op1 == Op.MUL
        and not s.reverse1
        and isinstance(s.operand0, View)
        and s.operand0.tensor in moments
        and isinstance(s.operand1, View)
        and isinstance(s.operand0.dims[0], Slice)
    )
