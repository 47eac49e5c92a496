"""``choose-layout``: pick each Compute's tile layout and partition axis (intent -> annotated intent).

Before::  y[i, j] = x[i, j] * g[j]        for i < R, j < C   [map]
After::   same, attrs layout=rows, p_axis=i, f_axis=j

Layouts: ``rows`` (partition = first parallel axis, free = the second parallel axis or the
reduced axis: maps, row reductions, softmax/norm compositions), ``matmul`` (contraction on
partitions), ``transpose`` (128x128 blocks through the tensor engine) and ``unsupported`` (with the
reason in attr ``why``; the lowering refuses those by name).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from cuda2nki.ir.nodes import (
    Add,
    Binary,
    Compute,
    Const,
    Dyn,
    IndexValue,
    Kernel,
    Max,
    Min,
    Read,
    Reduce,
    ScalarDecl,
    Scan,
    Sub,
    Sym,
)
from cuda2nki.ir.ops import Op
from cuda2nki.passes._analysis import (
    contractions,
    index_only,
    moves_along,
    outermost,
    reads,
    reductions,
    strip_cast,
    sym_names,
    transform,
    walk,
    with_attrs,
)
from cuda2nki.passes._data_mask import data_mask_ok
from cuda2nki.passes._dyn_sum import dyn_terms, has_dyn
from cuda2nki.passes._index import (
    BCAST,
    FLATROW,
    FULL,
    ROW,
    SCALAR,
    access_class,
    flat_guard,
    flat_ok,
    fmt,
)
from cuda2nki.passes._merge_axes import merge_thread_axes
from cuda2nki.passes._merged_rows import flat_merged, merged_class
from cuda2nki.passes._periodic import period_of
from cuda2nki.passes._scatter import scatter_shape
from cuda2nki.passes._tiles import REDUCE_OPS
from cuda2nki.passes.base import Pass, PassContext


@dataclass(frozen=True)
class ChooseLayoutPass(Pass):
    name: ClassVar[str] = "choose-layout"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        body = tuple(
            _annotate(s, kernel, ctx) if isinstance(s, Compute) else s for s in kernel.body
        )
        return kernel.replace(body=body)


def _annotate(c: Compute, kernel: Kernel, ctx: PassContext) -> Compute:
    c = _prefix_masks(c)
    c = c.replace(expr=merge_thread_axes(c.expr))
    layout, extra = classify(c, kernel)
    if layout in ("rows", "matmul") and extra.get("p_tensor"):
        ctx.note(
            "C2N2505",
            c.loc,
            tensor=extra["p_tensor"],
            axis=extra.get("p_axis", "?"),
            reason="parallel axis" if layout == "rows" else "contraction axis",
        )
    return with_attrs(c, layout=layout, **extra)


def classify(c: Compute, kernel: Kernel) -> tuple[str, dict[str, str]]:
    axes = c.domain.names
    tgt = sym_names(c.target.index)
    total = _reduce_all(c, kernel)
    if total is not None:
        return total
    if c.accumulate is not None and scatter_shape(c, kernel.tensors) is not None:
        return "scatter", {"p_tensor": c.target.tensor}  # a one-hot contraction (_scatter)
    if c.accumulate is not None:
        return "unsupported", {
            "why": f"accumulating writes ({c.accumulate.value}) into '{c.target.tensor}'"
        }
    red = reductions(c.expr)
    for r in red:
        if any(r.axes[0].extent.free_syms() & set(axes) for _ in (0,)):
            return "unsupported", {
                "why": f"a reduction whose extent depends on the index ({fmt(r.axes[0].extent)})"
            }
    scans = [x for x in walk(c.expr) if isinstance(x, Scan)]
    if scans:
        return _scan_layout(c, scans, kernel)
    products = contractions(c.expr)
    inner, batch = axes[-2:], axes[:-2]
    fixed = _fixed_dims(c, kernel)
    if (
        products
        and len(red) == len(products)
        and len(axes) >= 2
        and tgt is not None
        and tuple(n for n in tgt if n not in fixed) == axes
        and all(_matrix_operands(r, inner, batch, fixed) for r in products)
    ):
        # several products (``A B^T + B A^T``): each its own accumulator, summed by the epilogue
        extra = {"p_axis": products[0].axes[0].name, "p_tensor": c.target.tensor}
        if fixed:
            extra["fixed"] = ",".join(fixed)
        if batch:
            extra["outer"] = ",".join(batch)
        return "matmul", extra
    col = _column_reduction(c, red, kernel)
    if col is not None:
        return col
    src = strip_cast(c.expr)
    if (
        len(axes) == 2
        and not red
        and c.domain.guard is None
        and isinstance(src, Read)
        and tgt is not None
        and sym_names(src.index) == (tgt[1], tgt[0])
        and set(tgt) == set(axes)
    ):
        return "transpose", {"p_axis": axes[0], "f_axis": axes[1]}
    outer: tuple[str, ...] = ()
    if len(axes) > 2 and not red and c.domain.guard is None and isinstance(src, Read):
        # a permutation of more than two axes (NCHW -> NHWC): blocks of the source's last axis
        # by the target's last axis are transposed, the other axes are loops around them
        names = sym_names(src.index)
        if tgt is not None and names is not None and set(names) == set(tgt) == set(axes):
            a, b = tgt[-1], names[-1]
            if a != b and [n for n in names if n in (a, b)] == [a, b]:
                return "transpose", {
                    "p_axis": a,
                    "f_axis": b,
                    "outer": ",".join(n for n in axes if n not in (a, b)),
                }
    if len(axes) > 2:
        # leading axes become plain loops around a 2-D tiled nest; inside they are constants
        outer, axes = axes[:-2], axes[-2:]
        if any(len(r.axes) != 1 for r in red):
            return "unsupported", {"why": f"a reduction inside a {len(outer) + 2}-D domain"}
    if len(axes) == 2 and not red and _gathers_along(c.expr, axes[1]):
        # an element gather whose address moves along the second axis fetches one element per
        # partition: the first axis becomes a loop around partition tiles of the second
        outer, axes = (*outer, axes[0]), axes[1:]
    if not axes:
        return _scalar_layout(c)
    want = FULL if len(axes) == 2 else ROW
    got = access_class(c.target.index, axes[0], axes[1] if len(axes) == 2 else "")
    if got is None or (got[0] != want and not (want == FULL and got[0] == FLATROW)):
        return "unsupported", {"why": f"the write pattern {_spell(c.target)}"}
    if any(len(r.axes) != 1 for r in red):
        return "unsupported", {"why": "a reduction over several axes at once"}
    if len(axes) == 1 and _window(c, red, kernel):
        return "flat", {"p_tensor": c.target.tensor, "window": "1"}
    rowred = [r for r in red if not _along_loop(r, red)]
    if len(axes) == 1 and len({r.axes[0].extent for r in rowred}) > 1:
        return "unsupported", {"why": "reductions over different axes in one statement"}
    if len(axes) == 2 and red and all(_tap_loop(r, axes, kernel) for r in red):
        # a 2-D window (``sum_kl f[k, l] * x[i + k - 1, j + l - 1]``): loops over the taps
        # around the row tile, each tap a shifted (padded) read
        for rd in reads(c.expr):
            if access_class(rd.index, axes[0], axes[1]) is None:
                return "unsupported", {"why": f"the access pattern {_spell(rd)}"}
        return "rows", {"p_axis": axes[0], "f_axis": axes[1], "p_tensor": c.target.tensor}
    for r in red:
        if r.where is None or flat_guard(r.where, axes[0], r.axes[0].name) is not None:
            continue
        if not index_only(r.where) and not data_mask_ok(r):
            return "unsupported", {"why": "a reduction masked by a data-dependent condition"}
    free = axes[1] if len(axes) == 2 else (red[0].axes[0].name if red else "")
    inside: set[int] = set()
    for r in red:
        if len(axes) == 2:
            # a per-row value of a 2-D statement (softmax recomputed per element): its own tile
            if axes[1] in _mentioned(r):
                return "unsupported", {"why": "a reduction whose body moves along the result's row"}
        # a reduction along a loop around the row tile (a grid-stride loop's trips) reads one
        # row tile per step: its own axis is a constant there, the row's axis is the free one
        own = free if r not in rowred and free else r.axes[0].name
        for rd in reads(r.body):
            inside.add(id(rd))
            if not (
                _row_access(rd, axes[0], r.axes[0].name, kernel)
                or _row_access(rd, axes[0], own, kernel)
            ):
                return "unsupported", {"why": f"the access pattern {_spell(rd)}"}
    for rd in reads(c.expr):
        if id(rd) not in inside and not _row_access(rd, axes[0], free, kernel):
            return "unsupported", {"why": f"the access pattern {_spell(rd)}"}
    extra = {"p_axis": axes[0], "f_axis": free, "p_tensor": c.target.tensor}
    accesses = [rd for rd in reads(c.expr) if _plain(rd)] + [c.target]
    if any((access_class(a.index, axes[0], free) or ("",))[0] == FLATROW for a in accesses):
        extra["whole_row"] = "1"
    if outer:
        extra["outer"] = ",".join(outer)
    return "rows", extra


def _scalar_layout(c: Compute) -> tuple[str, dict[str, str]]:
    """A statement without an iteration domain (one element, e.g. an odd tail): a [1, 1] tile
    whose reads and write are fixed elements."""
    got = access_class(c.target.index, "", "")
    if reductions(c.expr) or got is None or got[0] != "scalar":
        return "unsupported", {"why": "a statement without an iteration domain"}
    for rd in reads(c.expr):
        acc = access_class(rd.index, "", "") if _plain(rd) else None
        if acc is None or acc[0] != "scalar":
            return "unsupported", {"why": f"the access pattern {_spell(rd)}"}
    return "scalar", {"p_tensor": c.target.tensor}


def _fixed_dims(c: Compute, kernel: Kernel) -> tuple[str, ...]:
    """Scalar parameters that fix a dim of the target (``sum[r, q, p]`` with ``r`` an argument:
    the launch computes one slice), in target order."""
    scalars = {p.name for p in kernel.params if isinstance(p, ScalarDecl)}
    axes = set(c.domain.names)
    return tuple(
        ix.name
        for ix in c.target.index
        if isinstance(ix, Sym) and ix.name in scalars and ix.name not in axes
    )


def _matrix_operands(
    r, axes: tuple[str, ...], batch: tuple[str, ...] = (), fixed: tuple[str, ...] = ()
) -> bool:
    """Both operands of ``sum_k L * R`` carry one output axis each: a real matrix product (batch
    axes, when present, index both operands; a fixed parameter may index either)."""
    body = strip_cast(r.body)
    ops = [strip_cast(body.a), strip_cast(body.b)]
    if ops[0] == ops[1] or any(sym_names(o.index) is None for o in ops):
        return False
    if any(not set(batch) <= set(sym_names(o.index)) for o in ops):
        return False
    have = [set(sym_names(o.index)) - {r.axes[0].name} - set(batch) - set(fixed) for o in ops]
    return sorted(len(h) for h in have) == [1, 1] and have[0] | have[1] == set(axes)


def _column_reduction(c: Compute, red: list, kernel: Kernel) -> tuple[str, dict[str, str]] | None:
    """``y[j] = reduce(op, i: f(x[i, j]))``: the reduced axis goes on partitions."""
    axes = c.domain.names
    if len(axes) != 1 or not red or any(len(r.axes) != 1 for r in red):
        return None
    first = red[0].axes[0]
    if len(red) > 1 and any(
        r.axes[0] != first or r.where is not None or r.op != Op.ADD for r in red
    ):
        return None  # several reductions: sums over the one axis, each evaluated on its own
    inner = {id(rd) for r in red for rd in reads(r.body)}
    i, j = first.name, axes[0]
    for rd in reads(c.expr):
        if id(rd) in inner:
            continue
        # an epilogue reading one value per column (``s + dbias[j]``): loaded beside the sums
        got = access_class(rd.index, j, "") if _plain(rd) else None
        if got is None or got[0] != ROW or i in _mentioned(rd):
            return None
    if access_class(c.target.index, j, "") is None or access_class(c.target.index, j, "")[0] != ROW:
        return None
    full = False
    for r in red:
        for rd in reads(r.body):
            got = access_class(rd.index, i, j) or _merged(rd, i, j, kernel)
            if (
                got is None
                or got[0] not in (FULL, ROW, BCAST)
                or not _plain(rd)
                or any(t.name == rd.tensor for t in kernel.temps)
            ):
                return None
            # x[i] factors (A^T x) ride along per partition; a per-column value inside the sum
            # (``(x[i, j] - mean[j])^2``) is broadcast over the row tile's partitions
            full = full or got[0] == FULL
    if not full:
        return None
    return "colreduce", {"p_axis": i, "f_axis": j, "p_tensor": c.target.tensor}


def _merged(rd, i: str, j: str, kernel: Kernel) -> tuple | None:
    """A read through merged rows (``dout[r // T, r % T, o]``), classed over its merged view."""
    decl = kernel.tensors.get(rd.tensor)
    got = merged_class(rd.index, decl.shape, i, j) if decl is not None else None
    return got[:2] if got is not None else None


def _scan_layout(c: Compute, scans: list, kernel: Kernel) -> tuple[str, dict[str, str]]:
    axes = c.domain.names
    scan_axes = [a.name for a in c.domain.axes if a.kind.value == "scan"]
    if len(axes) != 2 or scan_axes != [axes[1]] or c.expr != scans[0]:
        return "unsupported", {"why": "a prefix scan other than along the rows of a 2-D domain"}
    s = scans[0]
    if s.op not in REDUCE_OPS or s.axis != axes[1]:
        return "unsupported", {"why": f"a prefix scan with '{s.op.value}'"}
    for rd in reads(s.body):
        if not _row_access(rd, axes[0], axes[1], kernel):
            return "unsupported", {"why": f"the access pattern {_spell(rd)}"}
    return "rows", {"p_axis": axes[0], "f_axis": axes[1], "p_tensor": c.target.tensor, "scan": "1"}


def _reduce_all(c: Compute, kernel: Kernel) -> tuple[str, dict[str, str]] | None:
    """``out[c] (op)= reduce(op, k: f(x[k]))``: a reduction of a whole vector to one element."""
    got = access_class(c.target.index, "", "")
    if got is None or got[0] != "scalar":
        return None
    red = outermost(reductions(c.expr))
    if c.accumulate is not None and red and not c.domain.axes:
        # a total (or a function of it, ``sum / n``) added into the element: one reduction
        if len(red) != 1 or len(red[0].axes) != 1 or red[0].op not in REDUCE_OPS:
            return None
        k, body = red[0].axes[0].name, red[0].body
    elif c.accumulate is not None:
        if len(c.domain.axes) != 1 or red or c.accumulate not in REDUCE_OPS:
            return None
        k, body = c.domain.axes[0].name, c.expr
    else:
        if c.domain.axes or len(red) != 1 or len(red[0].axes) != 1 or red[0].op not in REDUCE_OPS:
            return None
        k, body = red[0].axes[0].name, red[0].body
    for rd in reads(body):
        acc = access_class(rd.index, k, "")
        if acc is None and _flat_merged(rd, k, kernel):
            continue  # the tensor's flat storage, taken apart along its dims
        if acc is None or (acc[0] != "scalar" and not flat_ok(acc[1])):
            return None
    return "reduce-all", {"r_axis": k, "p_tensor": c.target.tensor, "p_axis": k}


#: the longest window a 1-D stencil's reduction is unrolled over (one shifted load per tap)
WINDOW_MAX = 64


def _window(c: Compute, red: list, kernel: Kernel) -> bool:
    """``y[i] = sum_k w[k] * x[i + k - R]`` (a 1-D window): every reduction has a small constant
    extent and moves along ``i``; the domain is walked as a flat vector, the taps as a loop."""
    if not red or c.domain.guard is not None:
        return False
    i = c.domain.axes[0].name
    for r in red:
        ext = r.axes[0].extent
        if len(r.axes) != 1 or not _loop_extent(ext, kernel):
            return False
        if r.op not in REDUCE_OPS or i not in moves_along(r.body):
            return False
    temps = {t.name for t in kernel.temps}
    for acc in [*reads(c.expr), c.target]:
        got = access_class(acc.index, i, "")
        if acc.tensor in temps or got is None or (got[0] != SCALAR and not flat_ok(got[1])):
            return False
    tgt = access_class(c.target.index, i, "")
    return tgt is not None and tgt[0] != SCALAR


def _prefix_masks(c: Compute) -> Compute:
    """A reduction over a prefix of the row that grows with the partition index (a causal row:
    ``l < min(E, j + 1)``) runs over the whole row masked by ``l < j + 1`` (and ``l < E``),
    when the prefix never passes the row's end."""
    axes = c.domain.axes
    if len(axes) < 2:
        return c
    p, f = axes[-2], axes[-1]

    def fix(node):
        if not isinstance(node, Reduce) or len(node.axes) != 1 or node.where is not None:
            return node
        got = _prefix(node.axes[0].extent, p)
        if got is None:
            return node
        bound, cap = got
        if p.extent != f.extent:
            return node  # l < p + 1 <= the row's length: the prefix never passes the row's end
        ax = node.axes[0]
        mask = Binary(Op.LT, IndexValue(Sym(ax.name)), IndexValue(bound))
        if cap is not None:
            mask = Binary(Op.LAND, mask, Binary(Op.LT, IndexValue(Sym(ax.name)), IndexValue(cap)))
        return node.replace(axes=(ax.replace(extent=f.extent),), where=mask)

    return c.replace(expr=transform(c.expr, fix))


def _prefix(ext, p) -> tuple | None:
    """``max(min(E, p + k) - 0, 0)`` (or ``min(E, p + k)``, ``p + k``): (``p + k``, ``E`` or
    None)."""
    if isinstance(ext, Max) and ext.b == Const(0):
        ext = ext.a
    if isinstance(ext, Sub) and ext.b == Const(0):
        ext = ext.a
    cap = None
    if isinstance(ext, Min):
        for x, y in ((ext.a, ext.b), (ext.b, ext.a)):
            if p.name not in x.free_syms() and _grows(y, p):
                ext, cap = y, x
                break
    if not _grows(ext, p):
        return None
    return ext, cap


def _grows(e, p) -> bool:
    """``p + 1`` (a prefix through the partition's own position)."""
    if isinstance(e, Add):
        a, b = (e.a, e.b) if isinstance(e.b, Const) else (e.b, e.a)
        return a == Sym(p.name) and b == Const(1)
    return False


def _tap_loop(r, axes: tuple, kernel: Kernel) -> bool:
    """A reduction over a few taps (a small constant extent, or a count the launch passes in)
    moving along the tile's free axis: lowered as a loop around the tile (see
    ``_tiles.loop_reduce``)."""
    return (
        len(r.axes) == 1
        and _loop_extent(r.axes[0].extent, kernel)
        and r.op in REDUCE_OPS
        and axes[1] in moves_along(r.body)
    )


def _loop_extent(ext, kernel: Kernel) -> bool:
    """``ext`` bounds a sequential loop around a tile: a constant of at most ``WINDOW_MAX`` taps,
    or an expression of scalar parameters only (``steps``, ``n - 1``), fixed for the launch."""
    if isinstance(ext, Const):
        return ext.value <= WINDOW_MAX
    scalars = {p.name for p in kernel.params if isinstance(p, ScalarDecl)}
    syms = set(ext.free_syms())
    return bool(syms) and syms <= scalars


def _along_loop(r, red: list) -> bool:
    """``r`` runs inside a reduction along the row and moves along it too: a loop around the
    row tile (``sum_k (p[i, k] - c[j, k])^2`` inside a reduction over ``j``)."""
    return any(
        o is not r and o.axes[0].name != r.axes[0].name and o.axes[0].name in moves_along(r.body)
        for o in red
    )


def _mentioned(e) -> set[str]:
    """Symbols used by the indices of ``e``'s reads."""
    out: set[str] = set()
    for rd in reads(e):
        for ix in rd.index:
            out |= set(ix.free_syms())
    return out


def _gathers_along(e, axis: str) -> bool:
    """``e`` reads an element at a data-dependent position whose other indices move with
    ``axis`` (``x[i, j, t[i, j]]`` along ``j``; ``x[t[i, j], j]`` is a row gather)."""
    for rd in reads(e):
        if rd.index and not isinstance(rd.index[0], Dyn) and not _plain(rd):
            fixed = [dyn_terms(ix)[0] for ix in rd.index]
            if any(axis in ix.free_syms() for ix in fixed):
                return True
    return False


def _flat_merged(rd: Read, k: str, kernel: Kernel) -> bool:
    decl = kernel.tensors.get(rd.tensor)
    return decl is not None and flat_merged(rd.index, decl.shape, k) is not None


def _plain(rd: Read) -> bool:
    return not any(has_dyn(ix) for ix in rd.index)  # no row or element gather


def _row_access(rd: Read, p: str, f: str, kernel: Kernel) -> bool:
    if rd.index and isinstance(rd.index[0], Dyn) and access_class(rd.index[1:], p, f):
        return True  # a row gather: checked when lowered
    if any(has_dyn(ix) for ix in rd.index):  # an element gather: one element per row
        return not f or all(f not in dyn_terms(ix)[0].free_syms() for ix in rd.index)
    if any(t.name == rd.tensor for t in kernel.temps):
        return sym_names(rd.index) in ({(p, f), (p,)} if f else {(p,)})
    if not f and rd.tensor in kernel.tensors and period_of(rd, p, kernel.tensors[rd.tensor].shape):
        return True  # a periodic table read (g[i % C]): flat chunks of whole periods
    return access_class(rd.index, p, f) is not None


def _spell(acc) -> str:
    parts = [fmt(i) for i in acc.index]
    return f"{acc.tensor}[{', '.join(parts)}]"
