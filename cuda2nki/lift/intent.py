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
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass

from cuda2nki.ir import nodes as N
from cuda2nki.ir.ops import AxisKind, Idiom, Op, Role
from cuda2nki.lift import affine as af
from cuda2nki.lift import interleave
from cuda2nki.lift import lanes as lanes_mod
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Cond, Poly
from cuda2nki.lift.capped import capped_args, capped_text, is_capped
from cuda2nki.lift.delinear import borrows, delinearize, inside_split
from cuda2nki.lift.finalize import Finalizer
from cuda2nki.lift.invariant import collapse
from cuda2nki.lift.solve import invert_radix, radix_order, solve_writer
from cuda2nki.lift.symexec import Refusal, StoreRec, ThreadProgram
from cuda2nki.lift.views import split_by_view
from cuda2nki.rewrite import strip_locs

_AXIS_NAMES = "ijklmnpqrs"


# --------------------------------------------------------------------------- launch/shape info


@dataclass
class Shapes:
    """What the lowering needs from a binding: tensor shapes (as polynomials in the scalar
    parameters), the launch grid (polynomials) and block (ints), and numeric test points."""

    tensors: dict  # name -> tuple[Poly, ...]
    grid: tuple  # (Poly, Poly, Poly)
    block: tuple  # (int, int, int)
    points: list  # list of {param: number}
    ranges: dict = dataclasses.field(default_factory=dict)  # index tensor -> (lo, hi) Polys


def poly_of_text(text: str | int) -> Poly:
    """A binding size expression (C integer semantics: ``/`` truncates; ``ceil_div``) as Poly."""
    if isinstance(text, int):
        return Poly.const(text)
    try:
        tree = ast.parse(str(text).strip(), mode="eval").body
    except SyntaxError as exc:
        raise ValueError(f"bad size expression {text!r}") from exc
    return _poly_ast(tree)


def _poly_ast(n: ast.AST) -> Poly:
    if isinstance(n, ast.Constant) and isinstance(n.value, int):
        return Poly.const(n.value)
    if isinstance(n, ast.Name):
        return af.sym(n.id)
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
        return -_poly_ast(n.operand)
    if isinstance(n, ast.BinOp):
        a, b = _poly_ast(n.left), _poly_ast(n.right)
        if isinstance(n.op, ast.Add):
            return a + b
        if isinstance(n.op, ast.Sub):
            return a - b
        if isinstance(n.op, ast.Mult):
            return a * b
        if isinstance(n.op, (ast.Div, ast.FloorDiv)):
            return af.floordiv(a, b)
        if isinstance(n.op, ast.Mod):
            return af.mod(a, b)
    if (
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and n.func.id == "ceil_div"
        and len(n.args) == 2
    ):
        a, b = _poly_ast(n.args[0]), _poly_ast(n.args[1])
        return af.floordiv(a + b - 1, b)
    capped = capped_text(n) if isinstance(n, ast.expr) else None
    if capped is not None:  # `min(cap, ceil_div(n, b))` blocks: one size atom (lift.capped)
        a, b = (_poly_ast(x) for x in n.args)  # type: ignore[attr-defined]
        return a if a == b else Poly.atom(capped)
    raise ValueError(f"unsupported size expression {ast.unparse(n)!r}")


# --------------------------------------------------------------------------- Poly -> SizeExpr


class Namer:
    """Maps analysis atoms to IR symbol names."""

    def __init__(self, shapes: Shapes):
        self.shapes = shapes
        self.names: dict = {}

    def axis(self, atom: str) -> str:
        if atom not in self.names:
            used = set(self.names.values())
            for n in itertools.chain(_AXIS_NAMES, (f"a{k}" for k in itertools.count())):
                if n not in used and n not in self.shapes.points[0]:
                    self.names[atom] = n
                    break
        return self.names[atom]

    def size(self, p: Poly, conv=None) -> N.SizeExpr:
        out: N.SizeExpr | None = None
        for m, c in p.terms:
            t: N.SizeExpr | None = None
            for a in m:
                x = self.atom(a, conv)
                t = x if t is None else N.Mul(t, x)
            if t is None:
                t = N.Const(c)
            elif c == -1 and out is not None:
                out = N.Sub(out, t)
                continue
            elif c != 1:
                if c < 0 and out is not None:
                    out = N.Sub(out, N.Mul(N.Const(-c), t))
                    continue
                t = N.Mul(N.Const(c), t)
            out = t if out is None else N.Add(out, t)
        return out if out is not None else N.Const(0)

    def atom(self, a: af.Atom, conv) -> N.SizeExpr:
        if isinstance(a, af.DivAtom):
            return N.FloorDiv(self.size(a.num, conv), self.size(a.den, conv))
        if isinstance(a, af.ModAtom):
            return N.Mod(self.size(a.num, conv), self.size(a.den, conv))
        if isinstance(a, af.OpaqueAtom):
            if conv is None or not isinstance(a.payload, V.DExpr):
                raise Refusal("C2N2013", None, what=f"index value {a.key}")
            return N.Dyn(conv(a.payload))
        if a in self.names:
            return N.Sym(self.names[a])
        if is_capped(a):  # a capped grid: the port computes min(cap, count) from its sizes
            x, y = (self.size(_poly_ast(e), conv) for e in capped_args(a))
            return N.Min(x, y)
        if a.startswith(("threadIdx.", "blockIdx.", "gid.", "%", "w:")):
            raise Refusal("C2N2013", None, what=f"'{a}' left in an index after lowering")
        return N.Sym(a)


# --------------------------------------------------------------------------- the lowering


@dataclass
class Axis:
    atom: str
    extent: Poly


class Lowering:
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

    def split_axes(
        self, iv: dict, index: Poly, value: V.DExpr, guard: Cond, shape: tuple, st: StoreRec
    ):
        """A variable used as ``v / D`` and ``v % D`` (or as a flat offset into a 2-D target)
        ranges over ``[0, X)`` with ``X`` a multiple of ``D``: it is two variables,
        ``v = D*q + m`` with ``q < X/D`` and ``m < D`` (a row and a column)."""
        from cuda2nki.lift.finalize import _all_polys, _map_polys

        for _ in range(4):
            changed = False
            polys = (
                [index]
                + [p for _, p in _all_polys(value)]
                + [c.poly for c in (guard.conjuncts() or [])]
            )
            for v in list(iv):
                dens = {
                    a.den
                    for p in polys
                    for a in p.atoms()
                    if isinstance(a, (af.DivAtom, af.ModAtom)) and a.num == af.sym(v)
                }
                bound, cmp = self._guard_bound(v, guard)
                if (
                    not dens
                    and len(shape) >= 2
                    and af.coefficient(index, v) == af.ONE
                    and bound is not None
                    and bound != shape[-1]
                ):
                    dens = {shape[-1]}
                if len(dens) > 1:  # v / D and v / (D*H): split by the factor of the others
                    dens = {d for d in dens if all(af._exact_div(o, d) is not None for o in dens)}
                if len(dens) != 1:
                    continue
                d = dens.pop()
                x = bound if bound is not None else iv[v]
                q_ext = af._exact_div(x, d)
                if q_ext is None:
                    continue
                if bound is not None and not self.covers(iv[v], x, st, None):
                    continue
                q, m = f"{v}/row", f"{v}/col"
                sub = {v: d * af.sym(q) + af.sym(m)}
                ext = {q: q_ext, m: d}
                with af.bounds(ext):
                    index = index.subs(sub)
                    value = _map_polys(value, lambda p, sub=sub: p.subs(sub))
                    keep = [c for c in (guard.conjuncts() or []) if c is not cmp]
                    guard = (
                        af.conj(Cond.of(af.Cmp(c.poly.subs(sub), c.op)) for c in keep)
                        if guard.conjuncts() is not None
                        else guard.subs(sub)
                    )
                iv = {k: e for k, e in iv.items() if k != v}
                iv.update(ext)
                changed = True
                break
            if not changed:
                break
        return iv, index, value, guard

    def split_flat(self, axes: list, dims: list, value: V.DExpr, guard: Cond, shape: tuple):
        """An axis running over several rows of a multi-dim target (a flat grid-stride index
        into ``[rows, C]``) becomes a row and a column axis."""
        from cuda2nki.lift.finalize import _map_polys

        if len(shape) < 2:
            return axes, dims, value, guard
        for k in range(len(shape) - 1, 0, -1):
            d = dims[k]
            aff = af.affine(d, {a.atom for a in axes})
            if aff is None or len(aff.coeffs) != 1:
                continue
            ((v, c),) = aff.coeffs.items()
            ax = next(a for a in axes if a.atom == v)
            if c != af.ONE or ax.extent == shape[k]:
                continue
            q_ext = af._exact_div(ax.extent, shape[k])
            if q_ext is None:
                continue
            q, m = "ax" + str(next(self.counter)), "ax" + str(next(self.counter))
            sub = {v: shape[k] * af.sym(q) + af.sym(m)}
            strides = [af.ONE] * len(shape)
            for j in range(len(shape) - 2, -1, -1):
                strides[j] = strides[j + 1] * shape[j + 1]
            flat = sum((x * st for x, st in zip(dims, strides)), af.ZERO)
            with af.bounds({q: q_ext, m: shape[k]}):
                flat = flat.subs(sub)
                value = V.simplify(_map_polys(value, lambda p, sub=sub: p.subs(sub)))
                guard = V.simplify_cond(guard.subs(sub))
            new = delinearize(flat, shape)
            if new is None:
                return axes, dims, value, guard
            i = axes.index(ax)
            axes = axes[:i] + [Axis(q, q_ext), Axis(m, shape[k])] + axes[i + 1 :]
            dims = new
        return axes, dims, value, guard

    def _guard_bound(self, v: str, guard: Cond):
        for c in guard.conjuncts() or []:
            if c.op == "<" and af.coefficient(c.poly, v) == af.ONE:
                x = -(c.poly - af.sym(v))
                if not x.depends_on(af.THREAD_COORDS) and not any(
                    isinstance(a, str) and a.startswith("%") for a in x.atoms()
                ):
                    return x, c
        return None, None

    def scatter_axes(self, st: StoreRec, packed: V.DExpr, free: list, axes: list):
        """A scatter (``atomicAdd(&t[idx[e]], v)``): the free variables fuse into element axes
        of the domain (appended to ``axes``), not reduction axes -- duplicate target positions
        are combined by the Compute's ``accumulate``.  Returns the value, guard and target dims."""
        body = packed
        for a in reversed(free):
            body = V.Fold(packed.dtype, st.accumulate, a.atom, af.ZERO, a.extent, af.ONE, body)
        with af.bounds({a.atom: a.extent for a in free}):
            body = self.fin.fuse(body) if free else body
        while isinstance(body, V.Fold):
            if body.start != af.ZERO or body.step != af.ONE:
                break
            axes.append(Axis(body.var, body.stop))
            body = body.body
        if not (isinstance(body, V.Op) and body.op == _SCATTER):
            raise Refusal("C2N2022", st.loc, what=f"a scatter into '{st.tensor}' over a range")
        pred, value, *payloads = body.args
        if not isinstance(pred, V.Pred):
            raise Refusal("C2N2022", st.loc, what=f"a scatter into '{st.tensor}'")
        with af.bounds({a.atom: a.extent for a in axes}):
            guard = V.simplify_cond(pred.cond)
        dcond = None
        if (
            isinstance(value, V.Select)
            and isinstance(value.else_, V.Const)
            and value.else_.value == _ident(st.accumulate)
        ):
            # only where the data condition holds: out-of-range keys are skipped, not indexed
            dcond, value = value.cond, value.then
        return value, guard, [V.opaque_of(p) for p in payloads], dcond

    def accumulate_fold(self, st: StoreRec, value: V.DExpr, guard: Cond, red: list):
        """``atomicOp(&t[idx], v)`` over free variables: ``t[idx] op= fold(v)``; the fold absorbs
        the guard, and nested folds fuse (block ids, lanes and grid-stride trips become one
        reduction over the flattened input)."""
        op = st.accumulate
        body = value
        if guard != af.TRUE:
            body = V.Select(
                value.dtype, V.Pred("bool", guard), value, V.Const(value.dtype, _ident(op))
            )
        for a in reversed(red):
            body = V.Fold(value.dtype, op, a.atom, af.ZERO, a.extent, af.ONE, body)
        with af.bounds({a.atom: a.extent for a in red}):
            body = self.fin.fuse(body)
        return V.simplify(collapse(V.simplify(body))), af.TRUE

    def tighten(self, axes: list, guard: Cond, st: StoreRec) -> tuple[list, Cond]:
        """A guard ``ax < X`` becomes the extent when the launch covers X at every test point."""
        parts = list(guard.args) if guard.kind == "and" else [guard]
        cmps = [p.cmp for p in parts if p.kind == "cmp"]
        other = [p for p in parts if p.kind != "cmp"]  # a disjunction stays in the guard
        keep = [_undivided(c, {a.atom for a in axes}) for c in cmps]
        out = []
        for a in axes:
            ext = a.extent
            for c in list(keep):
                if c.op != "<" or af.coefficient(c.poly, a.atom) != af.ONE:
                    continue
                x = -(c.poly - af.sym(a.atom))
                if x.depends_on({b.atom for b in axes}) or x.atoms() & af.THREAD_COORDS:
                    continue
                if self.covers(ext, x, st, a):
                    ext = x
                    keep.remove(c)
            out.append(Axis(a.atom, ext))
        return out, af.conj([*(Cond.of(c) for c in keep), *other])

    def covers(self, ext: Poly, x: Poly, st: StoreRec, a: Axis) -> bool:
        for env in self.shapes.points:
            try:
                e, xv = ext.evaluate(env), x.evaluate(env)
            except (KeyError, ZeroDivisionError):
                return False
            if xv > e:
                raise Refusal(
                    "C2N2021",
                    st.loc,
                    covered=str(e),
                    needed=str(xv),
                    axis=f"'{x}' (at {_point_str(env)})",
                )
        return True


_SCATTER = "scatter"  # the packed (guard, value, *target dims) of a scatter while it is fused


def _data_dims(dims) -> bool:
    """A target dim holds an index read from data (a histogram or scatter-add)."""
    return any(
        isinstance(a, af.OpaqueAtom) and isinstance(a.payload, V.DExpr)
        for d in dims
        for a in d.atoms()
    )


def _data_atoms(dims, iv) -> list | None:
    """The data atoms of a scatter's target dims, in order; None where a data dim also moves
    with a thread coordinate outside its data (``t[idx[i] + j]``)."""
    out: list = []
    for d in dims:
        atoms = d.atoms()
        if not _data_dims((d,)):
            continue
        if any(a in iv for a in atoms if isinstance(a, str)):
            return None
        for a in sorted(atoms, key=af.atom_key):
            if isinstance(a, af.OpaqueAtom) and isinstance(a.payload, V.DExpr) and a not in out:
                out.append(a)
    return out


class ExprConverter:
    """Values to IR expressions; loads split along their tensors' shapes."""

    def __init__(self, low: Lowering, extents: Mapping, guard: Cond):
        self.low = low
        self.extents = dict(extents)
        self.guard = guard
        self.active_folds: set[str] = set()  # loop variables of the folds being converted
        self.carrying: set[str] = set()  # variables of the iterations being converted

    @contextlib.contextmanager
    def assuming(self, c: Cond | None):
        """Inside a select branch or a masked reduction its condition holds (halo guards keep
        neighbour reads in range)."""
        if c is None or c.conjuncts() is None:
            yield
            return
        saved = self.guard
        self.guard = af.conj([self.guard, c])
        try:
            yield
        finally:
            self.guard = saved

    def expr(self, e: V.DExpr) -> N.Expr:
        if isinstance(e, V.Const):
            v = e.value
            if e.dtype == "bool":
                v = bool(v)
            elif e.dtype.startswith("float") or e.dtype == "bfloat16":
                v = float(v)
            elif v != v:  # an element no thread wrote, on a path the guards keep away: an
                v = 0  # integer has no NaN to stand for it, and the value is never used
            else:
                v = int(v)
            return N.Lit(v, e.dtype)
        if isinstance(e, V.Scalar):
            return N.Param(e.name)
        if isinstance(e, V.IntVal):
            return N.IndexValue(self.low.namer.size(e.poly, self.expr), e.dtype)
        if isinstance(e, V.Pred):
            return self.cond(e.cond)
        if isinstance(e, V.Load):
            return self.load(e)
        if isinstance(e, V.Op):
            closed = self.closed_scan(e)
            if closed is not None:
                return closed
            args = tuple(self.expr(a) for a in e.args)
            if len(args) == 1:
                return N.Unary(e.op, args[0])
            if len(args) == 2:
                return N.Binary(e.op, args[0], args[1])
            raise Refusal("C2N2010", None, kernel=self.low.kname, what=f"{e.op} arity")
        if isinstance(e, V.Select):
            pc = e.cond.cond if isinstance(e.cond, V.Pred) else None
            decided = self.decided(pc)
            if decided is not None:  # a branch the enclosing guard rules out
                return self.expr(e.then if decided else e.else_)
            c = self.expr(e.cond)
            with self.assuming(pc):
                a = self.expr(e.then)
            with self.assuming(pc.negate() if pc is not None else None):
                b = self.expr(e.else_)
            return N.Select(c, a, b)
        if isinstance(e, V.Cast):
            return N.Cast(e.dtype, self.expr(e.operand))
        if isinstance(e, V.Fold):
            return self.fold(e)
        if isinstance(e, V.SRead):
            raise Refusal("C2N2012", None, array=e.array, why="unresolved read")
        if isinstance(e, V.Iterate):
            return self.iterate(e)
        if isinstance(e, V.Carried) and e.name in self.carrying:
            return N.Carry(e.name, e.dtype)
        if isinstance(e, V.Carried):
            raise Refusal("C2N2011", None, var=e.name, why="value escaped its loop")
        if isinstance(e, V.Undef):
            raise Refusal("C2N2015", None, what="a lane's partial shuffle result reaches memory")
        raise Refusal("C2N2010", None, what=type(e).__name__)

    def iterate(self, e: V.Iterate) -> N.Iterate:
        """A loop with a data-dependent exit (see :mod:`cuda2nki.lift.iterate`)."""
        init = tuple(self.expr(x) for x in e.init)
        enter = None if e.enter is None else self.expr(e.enter)
        saved = self.carrying
        self.carrying = saved | set(e.names)
        try:
            update = tuple(self.expr(x) for x in e.update)
            cond = self.expr(e.cond)
        finally:
            self.carrying = saved
        dtypes = tuple(x.dtype for x in e.init)
        trips = self.low.namer.size(e.trips, self.expr)
        return N.Iterate(e.names, dtypes, init, update, cond, trips, e.names[e.result], enter)

    def decided(self, c: Cond | None) -> bool | None:
        """True (False) when the guard in force implies ``c`` (its negation): every comparison
        of ``c`` is one of the guard's (syntactically)."""
        if c is None:
            return None
        have = self.guard.conjuncts() or []
        cmps = c.conjuncts()
        if cmps and all(x in have for x in cmps):
            return True
        neg = c.negate().conjuncts()
        if neg and all(x in have for x in neg):
            return False
        return None

    def scan(self, f: V.Fold) -> N.Scan | None:
        """``fold(op, j < a + 1: g(j))`` over a domain axis ``a``: the inclusive prefix scan of
        ``g`` along ``a``; ``fold(op, j < a: g(j))`` the exclusive one."""
        exclusive = len(f.stop.terms) == 1
        top = f.stop if exclusive else f.stop - 1
        if f.start != af.ZERO or f.step != af.ONE or len(top.terms) != 1:
            return None
        ((mono, c),) = top.terms
        if c != 1 or len(mono) != 1 or mono[0] not in self.low.namer.names:
            return None
        a = mono[0]
        if a not in self.extents or a == f.var or a in V.index_atoms(f.body):
            return None  # (a body that depends on the position itself is no scan)
        body = V.subs_poly(f.body, {f.var: af.sym(a)})
        acc = f.dtype if f.dtype.startswith("float") or f.dtype == "bfloat16" else None
        with self.prefix_guard(a):
            conv = self.expr(body)
        return N.Scan(f.op, self.low.namer.names[a], conv, exclusive=exclusive, acc_dtype=acc)

    @contextlib.contextmanager
    def prefix_guard(self, a: str):
        """The body of a scan along ``a`` is evaluated at every ``a' <= a``: of the guard in force
        only what holds there too (bounds ``a < X`` and conditions free of ``a``)."""
        saved = self.guard
        keep = [c for c in saved.conjuncts() or [] if _holds_below(c, a)]
        self.guard = af.conj(Cond.of(c) for c in keep)
        try:
            yield
        finally:
            self.guard = saved

    def closed_scan(self, e: V.Op) -> N.Scan | None:
        """``fold(op, j < a: g(j)) op g(a)`` (an exclusive scan and the element itself: a
        Blelloch scan made inclusive): the inclusive scan of ``g`` along ``a``."""
        if len(e.args) != 2:
            return None
        for f, y in (e.args, e.args[::-1]):
            if not (isinstance(f, V.Fold) and f.op == e.op and len(f.stop.terms) == 1):
                continue
            scanned = self.scan(f)
            if scanned is None or not scanned.exclusive:
                continue
            if strip_locs(scanned.body) == strip_locs(self.expr(y)):
                return dataclasses.replace(scanned, exclusive=False)
        return None

    def fold(self, f: V.Fold) -> N.Reduce:
        scanned = self.scan(f)
        if scanned is not None:
            return scanned
        active = self.active_folds
        if f.var in active:  # the same loop folded again inside its own fold (an argmin's
            # extremum inside the position reduction): a variable of its own, no shadowing
            fresh = f"{f.var}'"
            while fresh in active:
                fresh += "'"
            body = V.subs_poly(f.body, {f.var: af.sym(fresh)})
            f = V.Fold(f.dtype, f.op, fresh, f.start, f.stop, f.step, body)
        active.add(f.var)
        try:
            return self._fold(f)
        finally:
            active.discard(f.var)

    def _fold(self, f: V.Fold) -> N.Reduce:
        name = self.low.namer.axis(f.var)
        ext = f.stop
        self.extents[f.var] = ext
        with af.bounds({f.var: ext}):
            body = f.body
            where = None
            pc = None
            if isinstance(body, V.Select) and _identity_else(body, f.op):
                where = self.expr(body.cond)
                pc = body.cond.cond if isinstance(body.cond, V.Pred) else None
                body = body.then
            with self.assuming(pc):
                b = self.expr(body)
        acc = f.dtype if f.dtype.startswith("float") or f.dtype == "bfloat16" else None
        return N.Reduce(
            f.op,
            (N.Axis(name, self.low.namer.size(ext), AxisKind.REDUCTION),),
            b,
            acc_dtype=acc,
            where=where,
        )

    def cond(self, c: Cond) -> N.Expr:
        if c.kind == "true":
            return N.Lit(True, "bool")
        if c.kind == "false":
            return N.Lit(False, "bool")
        if c.kind == "cmp":
            p, op = c.cmp.poly, c.cmp.op
            lhs, rhs = _split_cmp(p)
            a = N.IndexValue(self.low.namer.size(lhs, self.expr))
            b = N.IndexValue(self.low.namer.size(rhs, self.expr))
            return N.Binary({"<": "lt", "==": "eq", "!=": "ne"}[op], a, b)
        args = [self.cond(x) for x in c.args]
        out = args[0]
        for x in args[1:]:
            out = N.Binary("land" if c.kind == "and" else "lor", out, x)
        return out

    def load(self, e: V.Load) -> N.Read:
        shape = self.low.shapes.tensors.get(e.tensor)
        if shape is None:
            raise Refusal("C2N2023", None, what=f"no shape for '{e.tensor}'")
        dims = self.split_offset(e.index, shape)
        if dims is None:
            # a flat walk over merged dims (``t[i]`` with ``i < B*T`` into ``[B, T]``)
            dims = split_by_view(e.index, shape, self.split_offset)
        if dims is None:
            raise Refusal(
                "C2N2013",
                None,
                what=f"the offset '{e.index}' of '{e.tensor}' does not "
                f"split along its shape {_shape_str(shape)}",
            )
        return N.Read(e.tensor, tuple(self.low.namer.size(d, self.expr) for d in dims))

    def split_offset(self, flat: Poly, shape: tuple) -> list | None:
        """``flat`` split along ``shape`` with every inner index in its dim, or None."""
        dims = delinearize(flat, shape)
        if dims is not None and not self.in_range(dims, shape):
            # ``r*cols + cols - 1`` is row r, column cols - 1: borrow one from the outer dim
            dims = next((b for b in borrows(dims, shape) if self.in_range(b, shape)), dims)
        if dims is None or not self.in_range(dims, shape):
            return None
        return dims

    def _ranged(self, d: Poly, s: Poly) -> bool:
        if len(d.terms) != 1 or d.terms[0][1] != 1 or len(d.terms[0][0]) != 1:
            return False
        a = d.terms[0][0][0]
        if not isinstance(a, af.OpaqueAtom) or not isinstance(a.payload, V.Load):
            return False
        rng = self.low.shapes.ranges.get(a.payload.tensor)
        return rng is not None and rng[0] == af.ZERO and rng[1] == s

    def _data_range(self, d: Poly, env: dict) -> tuple | None:
        """Bounds of an index read from data plus a constant (``min(max(t[i], 0), V - 1)``,
        ``t[i] + 1``): the values of an index tensor lie in its binding's range, and ``min``,
        ``max``, ``+`` and ``-`` combine bounds; anything else is unbounded."""
        lo = hi = 0
        for m, c in d.terms:
            if not m:
                lo, hi = lo + c, hi + c
                continue
            if c != 1 or len(m) != 1 or not isinstance(m[0], af.OpaqueAtom):
                return None
            got = _value_range(m[0].payload, env, self.low.shapes.ranges)
            lo, hi = lo + got[0], hi + got[1]
        return None if math.isinf(lo) or math.isinf(hi) else (lo, hi)

    def in_range(self, dims: list, shape: tuple) -> bool:
        """Every inner index within its dim at every test point (over the axis boxes narrowed
        by the domain guard)."""
        facts = {c.poly for c in (self.guard.conjuncts() or []) if c.op == "<"}
        checked = [
            (d, s)
            for d, s in list(zip(dims, shape))[1:]
            if not (d - s in facts and -d - 1 in facts) and not self._ranged(d, s)
        ]  # guarded: 0 <= d < s, or an index read from a tensor whose values lie in [0, s)
        for env in self.low.shapes.points:
            for d, s in checked:
                rng = _range(d, self.extents, env, self.guard)
                if rng is None:
                    rng = self._data_range(d, env)
                try:
                    sv = s.evaluate(env)
                except (KeyError, ZeroDivisionError):
                    return False
                # a guard may prove one side (``k0 + kk < K``) while the box proves the other
                low_ok = -d - 1 in facts or (rng is not None and rng[0] >= 0)
                high_ok = d - s in facts or (rng is not None and rng[1] < sv)
                if not (low_ok and high_ok):
                    return False
        return True


def _value_range(e: V.DExpr, env: dict, ranges: Mapping) -> tuple:
    """Interval of an integer data value at the test point ``env`` (``-inf, inf``: unknown)."""
    inf = math.inf
    if isinstance(e, V.Const) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return (e.value, e.value)
    if isinstance(e, V.IntVal):
        try:
            v = e.poly.evaluate(env)
        except (KeyError, ZeroDivisionError):
            return (-inf, inf)
        return (v, v)
    if isinstance(e, V.Cast):
        return _value_range(e.operand, env, ranges)
    if isinstance(e, V.Load) and e.tensor in ranges:
        lo, hi = ranges[e.tensor]
        try:
            return (lo.evaluate(env), hi.evaluate(env) - 1)
        except (KeyError, ZeroDivisionError):
            return (-inf, inf)
    if isinstance(e, V.Op) and e.op in ("min", "max", "add", "sub") and len(e.args) == 2:
        (alo, ahi), (blo, bhi) = (_value_range(x, env, ranges) for x in e.args)
        if e.op == "min":
            return (min(alo, blo), min(ahi, bhi))
        if e.op == "max":
            return (max(alo, blo), max(ahi, bhi))
        if e.op == "add":
            return (alo + blo, ahi + bhi)
        return (alo - bhi, ahi - blo)
    return (-inf, inf)


def _narrow_by_residual(box: dict, residual: list, extents: Mapping, env: dict) -> None:
    """``v < f(w)`` with ``f`` moving with another axis ``w`` (``s < t % T + 1``): ``v`` stays
    below the largest value of ``f`` over the box."""
    for c in residual:
        if c.op != "<":
            continue
        for v in box:
            if af.coefficient(c.poly, v) != af.ONE:
                continue
            rest = c.poly - af.sym(v)
            if v in rest.atoms():
                continue
            with af.bounds(extents):
                top = af.upper(-rest - 1)  # v <= -rest - 1
            if top is None or top.depends_on(set(extents)):
                continue
            try:
                box[v][1] = min(box[v][1], top.evaluate(env))
            except (KeyError, ZeroDivisionError):
                pass


def _split_cmp(p: Poly) -> tuple[Poly, Poly]:
    """``p < 0`` as ``lhs < rhs`` with positive terms on the left."""
    lhs = Poly(tuple((m, c) for m, c in p.terms if c > 0))
    rhs = Poly(tuple((m, -c) for m, c in p.terms if c < 0))
    return lhs, rhs


def _range(d: Poly, extents: Mapping, env: dict, guard: Cond | None = None):
    """Min/max of an affine index over the axis boxes (and simple guard bounds)."""
    box = {}
    for v, e in extents.items():
        try:
            box[v] = [0, e.evaluate(env) - 1]
        except (KeyError, ZeroDivisionError):
            return None
    if guard is not None:
        dom = af.domain_of(guard, set(extents))
        if dom is not None:
            for v, b in dom.bounds.items():
                if v not in box:
                    continue
                for lo in b.lo:
                    try:
                        box[v][0] = max(box[v][0], lo.evaluate(env))
                    except (KeyError, ZeroDivisionError):
                        pass
                for hi in b.hi:
                    try:
                        box[v][1] = min(box[v][1], hi.evaluate(env) - 1)
                    except (KeyError, ZeroDivisionError):
                        pass
        if dom is not None:
            _narrow_by_residual(box, dom.residual, extents, env)
        _narrow_by_scaled(box, guard, env)
    return _box_range(d, box, env)


def _narrow_by_scaled(box: dict, guard: Cond, env: dict) -> None:
    """``K * v + r < 0`` with a constant ``K`` (a vector of ``K`` lanes starting at ``K * v``
    below a bound): ``v <= (-r - 1) // K`` (``K > 0``) or ``v >= r // -K + 1`` (``K < 0``)."""
    for c in guard.conjuncts() or []:
        if c.op != "<":
            continue
        aff = af.affine(c.poly, set(box))
        if aff is None or len(aff.coeffs) != 1:
            continue
        ((v, k),) = aff.coeffs.items()
        if v not in box or not k.is_const or abs(k.const_value) < 2:
            continue
        try:
            r = aff.const.evaluate(env)
        except (KeyError, ZeroDivisionError):
            continue
        kv = k.const_value
        lo, hi = box[v]
        if kv > 0:  # never past the other end: an empty box proves nothing either way
            box[v][1] = max(lo, min(hi, (-r - 1) // kv))
        else:
            box[v][0] = min(hi, max(lo, r // -kv + 1))


def _box_range(d: Poly, box: dict, env: dict, depth: int = 0) -> tuple[int, int] | None:
    """Min/max of ``d``, affine in the box's axes and in quotients and remainders of such
    non-negative expressions by positive constants (``y / 2 * W + x / 2``: a quotient ranges
    over the quotients of its numerator's range, division being monotone)."""
    aff = af.affine(d, set(box))
    if aff is None:
        return None
    try:
        lo = hi = aff.const.evaluate(env)
        for v, c in aff.coeffs.items():
            got = box.get(v) if v in box else _atom_range(v, box, env, depth)
            if got is None:
                return None
            cv = c.evaluate(env)
            a, b = cv * got[0], cv * got[1]
            lo += min(a, b)
            hi += max(a, b)
    except (KeyError, ZeroDivisionError):
        return None
    return lo, hi


def _atom_range(a: object, box: dict, env: dict, depth: int) -> tuple[int, int] | None:
    if depth > 4 or not isinstance(a, af.DivAtom | af.ModAtom):
        return None
    if not a.den.is_const or a.den.const_value <= 0:
        return None
    num = _box_range(a.num, box, env, depth + 1)
    # a non-negative numerator only: the IR divides by flooring (FloorDiv, Mod), C truncates
    if num is None or num[0] < 0:
        return None
    k = a.den.const_value
    if isinstance(a, af.DivAtom):
        return num[0] // k, num[1] // k
    return (num[0], num[1]) if num[1] < k else (0, k - 1)


def _undivided(c: af.Cmp, axes: set) -> af.Cmp:
    """``ax / d < X`` (``d`` a positive constant, ``X`` free of ``ax``) as ``ax < d*X``."""
    if c.op != "<":
        return c
    for m, k in c.poly.terms:
        if len(m) != 1 or k != 1 or not isinstance(m[0], af.DivAtom):
            continue
        a = m[0]
        if not (a.den.is_const and a.den.const_value > 0 and a.num in [af.sym(x) for x in axes]):
            continue
        rest = c.poly - Poly.atom(a)
        if rest.atoms() & (axes | {a}) or any(not isinstance(x, str) for x in rest.atoms()):
            continue
        return af.Cmp(a.num + a.den * rest, "<")
    return c


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


def _holds_below(c: af.Cmp, a: str) -> bool:
    """``c`` holding at ``a`` holds at every ``a' < a``: free of ``a``, or ``k*a + r < 0`` with
    ``k > 0`` and ``r`` free of ``a``."""
    if a not in c.poly.atoms():
        return True
    k = af.coefficient(c.poly, a)
    rest = c.poly - k * af.sym(a)
    return c.op == "<" and k.is_const and k.const_value > 0 and a not in rest.atoms()


def _scan_bounds(e: V.DExpr) -> set:
    """Atoms bounding a fold's range (``j < t + 1``: a prefix up to ``t``)."""
    return {a for n in V.walk(e) if isinstance(n, V.Fold) for a in n.stop.atoms()}


def _ir_walk(e: N.Expr):
    from cuda2nki.lift.idioms.common import walk

    return walk(e)


def _identity_else(s: V.Select, op: str) -> bool:
    """``cond ? x : identity``: ``cond`` masks the fold (an integer fold's identity is the
    dtype's extreme, taken as a mask only where ``cond`` is an index condition)."""
    if not isinstance(s.else_, V.Const):
        return False
    if s.else_.value == _ident(op):
        return True
    extreme = {"min": 2**31 - 1, "max": -(2**31)}.get(op)
    return s.else_.dtype == "int32" and s.else_.value == extreme and isinstance(s.cond, V.Pred)


def _ident(op: str | None) -> float:
    return {"add": 0.0, "max": float("-inf"), "min": float("inf"), "mul": 1.0}.get(op or "", 0.0)


def _shape_str(shape: tuple) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def _point_str(env: Mapping) -> str:
    return ", ".join(f"{k}={v}" for k, v in env.items())


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
