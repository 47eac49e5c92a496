"""Lowering one thread's stores to intent IR: thread coordinates become iteration axes.

For each global store of the :class:`~cuda2nki.lift.symexec.ThreadProgram`:

1. guards that pin a thread coordinate (``if (threadIdx.x == 0)``, ``lane == 0 && warp == 0``) are
   solved and substituted; the value is finalised (shared reads resolved, trees folded);
2. ``blockIdx*blockDim + threadIdx`` pairs become global ids; the remaining thread coordinates and
   the loop variables around the store are the iteration variables, each with its extent
   (launch sizes, loop trip counts);
3. the flat store offset is split along the target tensor's shape (strides from the binding); the
   variables of each target dim must form a mixed-radix number -- they fuse into one axis -- and
   every variable must appear in exactly one dim (one writer per element), unless the store
   accumulates (atomics), where the left-over variables become reduction axes;
4. guards become axis extents (``i < N`` with a launch that covers ``N``) or a domain guard;
5. loads are split along their tensors' shapes the same way, with each inner index proven in
   range at every test point of the binding.

The output is one :class:`~cuda2nki.ir.nodes.Compute` per store, in program order.

Shapes, launch sizes and axes are in :mod:`.intent_shapes`; step 3 (and 4's extents) in
:mod:`.intent_axes`, mixed into :class:`Lowering`; step 5's expressions in :mod:`.intent_exprs`,
with the value ranges of indices in :mod:`.intent_ranges`.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping

from cuda2nki.ir import nodes as N
from cuda2nki.ir.ops import AxisKind, Idiom, Op, Role
from cuda2nki.lift import affine as af
from cuda2nki.lift import interleave
from cuda2nki.lift import lanes as lanes_mod
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Cond, Poly
from cuda2nki.lift.anywriter import any_writer, counted, raised
from cuda2nki.lift.delinear import delinearize, inside_split
from cuda2nki.lift.finalize import Finalizer
from cuda2nki.lift.intent_axes import _SCATTER, AxisSplitting, _data_atoms, _data_dims
from cuda2nki.lift.intent_exprs import ExprConverter
from cuda2nki.lift.intent_shapes import Axis, Namer, Shapes, _shape_str
from cuda2nki.lift.solve import invert_radix, radix_order, solve_writer
from cuda2nki.lift.symexec import Refusal, StoreRec, ThreadProgram


class Lowering(AxisSplitting):
    def __init__(self, prog: ThreadProgram, shapes: Shapes, kernel_name: str):
        self.prog = prog
        self.shapes = shapes
        self.kname = kernel_name
        self.fin = Finalizer(prog)
        self.fin.grant(len(prog.stores) - 1)
        self.namer = Namer(shapes)
        self.counter = itertools.count()
        self.block = shapes.block

    # ------------------------------------------------------------------ helpers
    def launch_subs(self) -> dict:
        m = {f"blockDim.{d}": Poly.const(b) for d, b in zip("xyz", self.block)}
        m.update({f"gridDim.{d}": g for d, g in zip("xyz", self.shapes.grid)})
        return m

    def canon(self, p: Poly) -> Poly:
        return af.canonical(
            p.subs({f"blockDim.{d}": b for d, b in zip("xyz", self.block)}), self.block
        )

    def canon_expr(self, e: V.DExpr) -> V.DExpr:
        from cuda2nki.lift.finalize import _map_polys

        return _map_polys(e, self.canon)

    # ------------------------------------------------------------------ per store
    def lower_stores(self, stores: list) -> list[N.Compute]:
        """Each store finalised, runs of block-scan lanes merged (:mod:`cuda2nki.lift.lanes`),
        each (merged) store built into a Compute."""
        recs = [self._budgeted(st, self._finalize_store, st) for st in stores]
        return [
            self._budgeted(rec[0], self._build, rec, lanes)
            for rec, lanes in lanes_mod.merge(recs, self.block)
        ]

    def _bounds(self, st: StoreRec, lanes: int = 1) -> dict:
        bounds = {f"threadIdx.{d}": b for d, b in zip("xyz", self.block)}
        bounds["threadIdx.x"] = self.block[0] * lanes
        return {**bounds, **{lc.var: lc.extent for lc in st.loops}}

    def _build(self, rec: tuple, lanes: int) -> N.Compute:
        with af.bounds(self._bounds(rec[0], lanes)):
            return self.build(*rec, lanes=lanes)

    def _budgeted(self, st: StoreRec, fn, *args):
        self.fin.enter_budget()
        try:
            return fn(*args)
        except V.BudgetExceeded:
            raise Refusal(
                "C2N2015",
                st.loc,
                what="cooperative code too large to analyse within the work budget",
            ) from None
        finally:
            self.fin.leave_budget()

    def _finalize_store(self, st: StoreRec) -> tuple:
        """``(store, index, value, guard, loops, extra)`` with the value finalised."""
        with af.bounds(self._bounds(st)):
            pins, extra = self.pins(st.guard)
            index = st.index.subs(pins)
            guard = V.simplify_cond(st.guard.subs(pins))
            value = st.value
            if st.accumulate is not None and _data_dims((st.index,)):
                # atomicOp(&t[idx(data)], v): the target's data indices travel with the value
                # (through the same rewrites of thread coordinates and the fusion of the free
                # variables, which then become the scatter's element axes)
                payloads = tuple(a.payload for a in _data_atoms((st.index,), {}))
                value = V.Op(value.dtype, _SCATTER, (value, *payloads))
            value = V.subs_poly(value, pins)
            value = self.fin.finalize(value, guard)
            # loop guards of the loops around the store hold inside them
            for lc in st.loops:
                guard = af.conj([guard, lc.guard.subs(pins)])
            grid = {f"gridDim.{d}": g for d, g in zip("xyz", self.shapes.grid)}
            index = self.canon(index).subs(grid)
            value = V.subs_poly(self.canon_expr(value), grid)
            guard = _map_cond(guard, self.canon).subs(grid)
        return st, index, value, guard, st.loops, extra

    def pins(self, guard: Cond) -> dict:
        """Thread coordinates fixed by equality guards (``threadIdx.x == 0``...)."""
        unknowns = {f"threadIdx.{d}": Poly.const(b) for d, b in zip("xyz", self.block) if b > 1}
        eqs = [c for c in (guard.conjuncts() or []) if c.op == "==" and c.poly.depends_on(unknowns)]
        if not eqs:
            return {}, {}
        sol = solve_writer((), (), unknowns, af.conj(Cond.of(c) for c in eqs))
        if sol is None:
            return {}, {}
        mapping, _ = sol
        pins, extra = {}, {}
        for k, v in mapping.items():
            if k not in unknowns or v.depends_on(unknowns):
                continue
            # a thread coordinate pinned up to a free digit (lane == 0: threadIdx.x = 32*q):
            # the digit becomes an iteration variable
            rest = [a for a in v.atoms() if isinstance(a, str) and a.startswith(k + "/")]
            if any(not a.endswith("/q") for a in rest):
                continue
            for a in rest:
                c = af.coefficient(v, a)
                if not c.is_const:
                    break
                extra[a] = Poly.const(unknowns[k].const_value // c.const_value)
            else:
                pins[k] = v
        return pins, extra

    def build(
        self,
        st: StoreRec,
        index: Poly,
        value: V.DExpr,
        guard: Cond,
        loops: tuple,
        extra: dict | None = None,
        lanes: int = 1,
    ) -> N.Compute:
        """``lanes``: the store covers ``lanes`` elements per thread (``threadIdx.x`` ranges
        over ``lanes`` times the block)."""
        scatter = isinstance(value, V.Op) and value.op == _SCATTER
        data_cond = None
        flag = any_writer(st, index, value, loops)
        if flag is not None:  # ``if (cond) flag = 1``: a count of the writers, then a select
            st, value = dataclasses.replace(st, accumulate="add"), counted(flag)
        # iteration variables and their extents
        iv: dict = dict(extra or {})
        for lc in loops:
            iv[lc.var] = lc.extent.subs(self.launch_subs())
        if _scan_bounds(value) & (af.THREAD_COORDS - set(af.GID)) or _split_gid(
            index, value, guard
        ):
            # a prefix bounded by the thread's own coordinate, or a value that uses the block
            # and the thread coordinates apart (``(off + threadIdx.x) / 4 + 32 * blockIdx.x``
            # after a division split the global index): keep block and thread apart
            bdim = {f"blockDim.{d}": Poly.const(b) for d, b in zip("xyz", self.block)}

            def expand(p: Poly) -> Poly:
                return af.expand_gid(p).subs(bdim)

            from cuda2nki.lift.finalize import _map_polys

            index, guard = expand(index), _map_cond(guard, expand)
            value = _map_polys(value, expand)
        atoms = index.atoms() | V.index_atoms(value) | guard.atoms()
        for k, d in enumerate("xyz"):
            g, t, b = f"gid.{d}", f"threadIdx.{d}", f"blockIdx.{d}"
            if g in atoms:
                iv[g] = self.shapes.grid[k] * self.block[k]
            if t in atoms:
                iv[t] = Poly.const(self.block[k] * (lanes if d == "x" else 1))
            if b in atoms:
                iv[b] = self.shapes.grid[k]
        if st.accumulate is not None:
            iv.update(self.silent_coords(st, atoms, extra or {}))
        one = [a for a, e in iv.items() if e == af.ONE]
        if one:
            sub = {a: 0 for a in one}
            index, value, guard = index.subs(sub), V.subs_poly(value, sub), guard.subs(sub)
            iv = {a: e for a, e in iv.items() if a not in one}
        shape = self.shapes.tensors[st.tensor]
        iv, index, value, guard = self.split_axes(iv, index, value, guard, shape, st)
        dims = delinearize(index, shape)
        if dims is not None:
            with af.bounds(iv):
                dims = inside_split(dims, shape)
        if dims is None:
            raise Refusal(
                "C2N2013",
                st.loc,
                what=f"the offset '{index}' of '{st.tensor}' does "
                f"not split along its shape {_shape_str(shape)}",
            )
        if scatter:
            stale = _data_atoms(dims, iv)
            if stale is None or len(stale) != len(value.args) - 1:
                raise Refusal("C2N2022", st.loc, what=f"a scatter into '{st.tensor}'")
            data = stale
        # fuse the variables of each target dim into one axis
        axes: list[Axis] = []
        used: set = set()
        sub: dict = {}
        new_dims = []
        with af.bounds(iv):
            for d in dims:
                if scatter and _data_dims((d,)):
                    new_dims.append(d)  # its data atoms come back from the packed value
                    continue
                aff = af.affine(d, set(iv))
                if aff is None or any(k not in iv for k in aff.coeffs):
                    raise Refusal(
                        "C2N2013",
                        st.loc,
                        what=f"store index '{d}' of '{st.tensor}' "
                        "is not affine in the thread coordinates",
                    )
                vs = list(aff.coeffs)
                if used & set(vs):
                    raise Refusal(
                        "C2N2017",
                        st.loc,
                        tensor=st.tensor,
                        why="one thread coordinate indexes two dims",
                    )
                used |= set(vs)
                if not vs:
                    new_dims.append(d)
                    continue
                if len(vs) == 1:
                    v = vs[0]
                    name = "ax" + str(next(self.counter))
                    axes.append(Axis(name, iv[v]))
                    sub[v] = af.sym(name)
                    new_dims.append(d.subs({v: af.sym(name)}))
                    continue
                order = radix_order(aff.coeffs, iv)
                if order is None:
                    raise Refusal(
                        "C2N2013",
                        st.loc,
                        what=f"store index '{d}' of '{st.tensor}' "
                        "is not a one-to-one combination of thread coordinates",
                    )
                if _scan_bounds(value) & set(vs):
                    # a block scan: the block and the position in it stay two axes
                    for v in reversed(order):
                        name = "ax" + str(next(self.counter))
                        axes.append(Axis(name, iv[v]))
                        sub[v] = af.sym(name)
                    new_dims.append(d.subs(sub))
                    continue
                name = "ax" + str(next(self.counter))
                ext = Poly.const(1)
                for v in order:
                    ext = ext * iv[v]
                axes.append(Axis(name, ext))
                c0 = aff.coeffs[order[0]]
                mapping, _ = invert_radix(
                    order, {v: aff.coeffs[v] for v in order}, iv, c0 * af.sym(name)
                )
                sub.update(mapping)
                combo = sum((aff.coeffs[v] * af.sym(v) for v in order), af.ZERO)
                new_dims.append(d - combo + c0 * af.sym(name))
        free = [v for v in iv if v not in used]
        reduce_axes: list[Axis] = []
        if free:
            if st.accumulate is None:
                raise Refusal(
                    "C2N2017",
                    st.loc,
                    tensor=st.tensor,
                    why="several threads write the same element "
                    f"(along {', '.join(map(str, free))})",
                )
            for v in free:
                name = "ax" + str(next(self.counter))
                reduce_axes.append(Axis(name, iv[v]))
                sub[v] = af.sym(name)
        all_ext = {a.atom: a.extent for a in axes + reduce_axes}
        with af.bounds(all_ext):
            value = V.simplify(V.subs_poly(value, sub))
            guard = V.simplify_cond(guard.subs(sub))
            axes, guard = self.tighten(axes, guard, st)
            axes, new_dims, value, guard = self.split_flat(axes, new_dims, value, guard, shape)
        all_ext = {a.atom: a.extent for a in axes + reduce_axes}
        with af.bounds(all_ext):
            value = V.simplify(value)
            if scatter:
                packed = V.Op(value.dtype, _SCATTER, (V.Pred("bool", guard), *value.args))
                value, guard, moved, data_cond = self.scatter_axes(st, packed, reduce_axes, axes)
                moved = {a: Poly.atom(b) for a, b in zip(data, moved)}
                new_dims = [d.subs(moved) if _data_dims((d,)) else d for d in new_dims]
                all_ext = {a.atom: a.extent for a in axes}
            elif reduce_axes:
                value, guard = self.accumulate_fold(st, value, guard, reduce_axes)
            if flag is not None:
                value, st = raised(flag, value), dataclasses.replace(st, accumulate=None)
            for a in axes:
                self.namer.axis(a.atom)
            conv = ExprConverter(self, all_ext, guard)
            expr = conv.expr(value)
            target = N.Access(
                st.tensor, tuple(self.namer.size(d, conv.expr) for d in new_dims), loc=st.loc
            )
            dom_guard = conv.cond(guard) if guard != af.TRUE else None
            if scatter and data_cond is not None:
                data_guard = conv.expr(data_cond)
                dom_guard = (
                    data_guard
                    if dom_guard is None
                    else N.Binary(Op.LAND, dom_guard, data_guard, loc=st.loc)
                )
            scanned = {x.axis for x in _ir_walk(expr) if isinstance(x, N.Scan)}
            domain = N.Domain(
                tuple(
                    N.Axis(
                        self.namer.names[a.atom],
                        self.namer.size(a.extent),
                        AxisKind.SCAN if self.namer.names[a.atom] in scanned else AxisKind.PARALLEL,
                    )
                    for a in axes
                ),
                dom_guard,
            )
        out = N.Compute(target, domain, expr, accumulate=st.accumulate, idiom=Idiom.MAP, loc=st.loc)
        from cuda2nki.lift.histogram import as_scatter

        return as_scatter(out) or out

    def silent_coords(self, st: StoreRec, atoms: set, extra: dict) -> dict:
        """The launch coordinates an atomic does not mention (``atomicAdd(counter, 1)``): every
        thread still contributes once, so each becomes a reduction variable -- except those
        pinned by an equality guard (``threadIdx.x == 0``)."""
        pinned = set(self.pins(st.guard)[0]) | {str(a).split("/")[0] for a in extra}
        out: dict = {}
        for k, d in enumerate("xyz"):
            g, t, b = f"gid.{d}", f"threadIdx.{d}", f"blockIdx.{d}"
            if g in atoms:
                continue
            if t not in atoms and t not in pinned:
                out[t] = Poly.const(self.block[k])
            if b not in atoms:
                out[b] = self.shapes.grid[k]
        return out


def _map_cond(c: Cond, fn) -> Cond:
    from cuda2nki.lift.finalize import _map_cond as mc

    return mc(c, fn)


def _split_gid(index: Poly, value: V.DExpr, guard: Cond) -> bool:
    """``gid.d`` and ``threadIdx.d`` or ``blockIdx.d`` both appear among the store's atoms."""
    atoms = index.atoms() | V.index_atoms(value) | guard.atoms()
    return any(
        f"gid.{d}" in atoms and (f"threadIdx.{d}" in atoms or f"blockIdx.{d}" in atoms)
        for d in af.DIMS
    )


def _scan_bounds(e: V.DExpr) -> set:
    """Atoms bounding a fold's range (``j < t + 1``: a prefix up to ``t``)."""
    return {a for n in V.walk(e) if isinstance(n, V.Fold) for a in n.stop.atoms()}


def _ir_walk(e: N.Expr):
    from cuda2nki.lift.idioms.common import walk

    return walk(e)


def lower_program(
    prog: ThreadProgram,
    shapes: Shapes,
    kernel_name: str,
    roles: Mapping,
    dtypes: Mapping,
    scalar_types: Mapping,
) -> N.Kernel:
    low = Lowering(prog, shapes, kernel_name)
    computes = interleave.merge(low.lower_stores(prog.stores))
    params = []
    for p in prog.kernel.params:
        if p.name in prog.tensors:
            shape = tuple(low.namer.size(s) for s in shapes.tensors[p.name])
            params.append(
                N.TensorDecl(p.name, shape, dtypes[p.name], Role(roles[p.name]), loc=p.loc)
            )
        else:
            params.append(N.ScalarDecl(p.name, scalar_types.get(p.name, "int32"), loc=p.loc))
    return N.Kernel(kernel_name, tuple(params), tuple(computes), loc=prog.kernel.loc)
