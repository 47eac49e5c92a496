"""``lower-tiles``: intent Computes -> scheduled tiles (loops, SBUF/PSUM tiles, DMAs, engine ops).

Before::  y[i, j] = x[i, j] * g[j]   for i < R, j < C      layout=rows p_tile=128 f_tile=4096
After::   for t in range(ceil(R/128)):                       # CUDA's grid becomes this loop
              for u in range(ceil(C/4096)):
                  x_t: sbuf[min(128, R-128t), min(4096, C-4096u)] <- dma x[...]
                  g_t: sbuf[same] <- dma g[...] broadcast over partitions
                  mul = x_t * g_t ; dma y[...] <- mul

CUDA's thread/block indexing disappears: each layout walks its domain in partition-major tiles
(rows of 128 on partitions), ragged tails are ``Min(tile, extent - start)`` sizes, intent
temporaries (CUDA shared memory, per-row statistics) live in SBUF tiles, accumulators in PSUM
(fp32).  Consecutive ``rows`` Computes over the same rows are fused into one loop nest so their
temporaries never leave the chip.  A Load/Store whose HBM view has another rank than its tile
reshapes row-major (equal element counts) or, for a ``[P, F]`` tile fed by an ``F``-element view,
broadcasts over partitions.

The layouts are lowered by families, each a module of its own mixed into the lowering: ``rows``
(:mod:`._lower_rows`), ``flat`` (:mod:`._lower_flat`), the reductions (:mod:`._lower_reduce`),
``transpose`` (:mod:`._lower_transpose`) and ``matmul`` (:mod:`._lower_matmul`, blocked by
:mod:`._matmul_blocks`); what they share is in :mod:`._lower_common`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from cuda2nki.diagnostics import SourceLoc
from cuda2nki.ir import uniform
from cuda2nki.ir.nodes import (
    Compute,
    Const,
    Expr,
    Iterate,
    Kernel,
    Loop,
    Note,
    ScalarDecl,
    Sym,
    TensorDecl,
)
from cuda2nki.ir.ops import Idiom
from cuda2nki.ir.types import TypeEnv
from cuda2nki.passes import _tiles as T
from cuda2nki.passes._analysis import alpha_key, attrs, transform
from cuda2nki.passes._lower_common import _free_extent, _outer, _p_axis, size_params
from cuda2nki.passes._lower_flat import _FlatLowering
from cuda2nki.passes._lower_matmul import _Matmul
from cuda2nki.passes._lower_reduce import _ReduceLowering
from cuda2nki.passes._lower_rows import _RowsLowering
from cuda2nki.passes._lower_transpose import _TransposeLowering
from cuda2nki.passes.base import Pass, PassContext


@dataclass(frozen=True)
class LowerTilesPass(Pass):
    name: ClassVar[str] = "lower-tiles"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        if kernel.is_scheduled:
            return kernel
        lw = _Lowering(kernel, ctx)
        reserved = [p.name for p in kernel.params] + [t.name for t in kernel.temps]
        reserved += [a.name for c in kernel.body if isinstance(c, Compute) for a in c.domain.axes]
        reserved += ["nki", "nl", "nisa", "np", "min", "max", "range"]
        lw.b.used.update({name: 1 for name in reserved})
        lw.b.used.update({f"{name}_out": 1 for name in reserved})
        body, conds = _split_uniform(kernel)
        for group in _groups(kernel.replace(body=body), conds):
            mark = len(lw.b.stmts)
            lw.lower_group(group)
            cond = conds.get(id(group[0]))
            if cond is not None:  # decided when the kernel is traced: one Python `if`
                inner = tuple(lw.b.stmts[mark:])
                del lw.b.stmts[mark:]
                lw.b.stmts.append(
                    Loop("_when", Const(0), Const(1), 1, body=inner, loc=group[0].loc, cond=cond)
                )
        idioms = sorted({c.idiom.value for c in kernel.body if isinstance(c, Compute)})
        extra = (("idiom", ",".join(idioms)),) if idioms else ()
        return Kernel(
            kernel.name,
            kernel.params,
            body=tuple(lw.b.stmts),
            attrs=tuple(dict(kernel.attrs + extra).items()),
            loc=kernel.loc,
        )


def _split_uniform(kernel: Kernel) -> tuple[tuple, dict[int, Expr]]:
    """The body with each statement's guard conjuncts on scalar parameters alone taken out, and
    those conditions by statement (``id``): a flag the CUDA kernel tests in every thread is one
    branch of the port, taken when the kernel is traced."""
    scalars = set(kernel.scalars)
    body: list = []
    conds: dict[int, Expr] = {}
    for c in kernel.body:
        uni, rest = uniform.split(c.domain.guard if isinstance(c, Compute) else None, scalars)
        if uni is not None:
            c = c.replace(domain=c.domain.replace(guard=rest))
            conds[id(c)] = uni
        body.append(c)
    return tuple(body), conds


def _groups(kernel: Kernel, conds: dict[int, Expr] | None = None) -> list[list[Compute]]:
    conds = conds or {}
    groups: list[list[Compute]] = []
    for c in kernel.body:
        if not isinstance(c, Compute):
            continue
        a = attrs(c)
        prev = groups[-1] if groups else None
        if prev is not None and conds.get(id(prev[0])) != conds.get(id(c)):
            groups.append([c])
        elif (
            prev is not None
            and a.get("layout") == "rows"
            and attrs(prev[0]).get("layout") == "rows"
            and _rows_extent(prev[0]) == _rows_extent(c)
        ):
            prev.append(c)
        elif prev is not None and _shares_iteration(prev[0], c):
            prev.append(_renamed(c, prev[0].domain.axes[0].name))
        else:
            groups.append([c])
    return groups


def _flat_loops(c: Compute) -> set:
    """The iterations (results aside, the axis renamed) a flat statement computes."""
    from cuda2nki.passes._analysis import walk

    if attrs(c).get("layout") != "flat" or c.domain.guard is not None:
        return set()
    e = _renamed(c, "%flat").expr
    return {alpha_key(x.with_result("")) for x in walk(e) if isinstance(x, Iterate)}


def _shares_iteration(first: Compute, c: Compute) -> bool:
    """Flat statements over one domain that read the same iteration (its variables' results):
    one chunk loop computes them together, so the iteration runs once."""
    if len(c.domain.axes) != 1 or len(first.domain.axes) != 1:
        return False
    same = (c.domain.axes[0].extent, attrs(c).get("p_tile"), attrs(c).get("f_tile")) == (
        first.domain.axes[0].extent,
        attrs(first).get("p_tile"),
        attrs(first).get("f_tile"),
    )
    return same and bool(_flat_loops(first) & _flat_loops(c))


def _renamed(c: Compute, axis: str) -> Compute:
    """``c`` with its (single) domain axis called ``axis``."""
    old = c.domain.axes[0].name
    if old == axis:
        return c

    def fn(x):  # noqa: ANN001, ANN202
        return Sym(axis) if isinstance(x, Sym) and x.name == old else x

    return c.replace(
        target=transform(c.target, fn),
        domain=c.domain.replace(axes=(c.domain.axes[0].replace(name=axis),)),
        expr=transform(c.expr, fn),
    )


def _rows_extent(c: Compute):
    """Statements fuse into one row loop nest when rows, outer loops and row length agree."""
    return (_p_axis(c).extent, tuple((a.name, a.extent) for a in _outer(c)), _free_extent([c]))


@dataclass
class _Lowering(_RowsLowering, _FlatLowering, _ReduceLowering, _TransposeLowering):
    kernel: Kernel
    ctx: PassContext
    b: T.Builder = field(default_factory=T.Builder)

    @property
    def params(self) -> dict[str, str]:
        return {p.name: p.dtype for p in self.kernel.params if isinstance(p, ScalarDecl)}

    def decl(self, name: str) -> TensorDecl:
        return self.kernel.tensors[name]

    def typed(self, comp: T.TileExprCompiler) -> T.TileExprCompiler:
        """``comp`` told the kernel's types and size parameters (exact integer operations)."""
        comp.types = TypeEnv(self.kernel)
        comp.sizes = size_params(self.kernel)
        return comp

    def is_temp(self, name: str) -> bool:
        return any(t.name == name for t in self.kernel.temps)

    def lower_group(self, group: list[Compute]) -> None:
        layout = attrs(group[0]).get("layout", "")
        if any(c.idiom == Idiom.LITERAL for c in group):
            reason = "no idiom recogniser claimed this statement; check the port by hand"
            self.ctx.note("C2N2500", group[0].loc, kernel=self.kernel.name, reason=reason)
            self.b.emit(
                Note("C2N2500", f"literal translation of CUDA threads ({reason})", loc=group[0].loc)
            )
        try:
            if layout == "rows":
                self.lower_rows(group)
            elif layout == "flat":
                self.lower_flat(group)
            elif layout == "matmul":
                self.lower_matmul(group[0])
            elif layout == "transpose":
                self.lower_transpose(group[0])
            elif layout == "reduce-all":
                self.lower_reduce_all(group[0])
            elif layout == "colreduce":
                self.lower_colreduce(group[0])
            elif layout == "scalar":
                self.lower_scalar(group[0])
            elif layout == "scatter":
                from cuda2nki.passes._scatter import lower_scatter

                lower_scatter(self, group[0])
            else:
                why = attrs(group[0]).get("why", "no layout chosen (run choose-layout first)")
                raise T.Unsupported(why, group[0].loc)
        except T.Unsupported as exc:
            raise T.unsupported_error(self.kernel.name, exc, group[0].loc) from None

    # ------------------------------------------------------------------ matmul
    def lower_matmul(self, c: Compute) -> None:
        _Matmul(self, c).lower()


_ = SourceLoc
