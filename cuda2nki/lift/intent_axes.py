"""Splitting a store's flat offset into target axes: mixed-radix dims fused into one axis, flat
splits, scatters and accumulating folds, guards tightened into extents, and launches proven to
cover them (mixed into :class:`~cuda2nki.lift.intent.Lowering`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from cuda2nki.lift import affine as af
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Cond, Poly
from cuda2nki.lift.delinear import delinearize
from cuda2nki.lift.intent_shapes import Axis
from cuda2nki.lift.invariant import collapse
from cuda2nki.lift.symexec import Refusal, StoreRec

if TYPE_CHECKING:
    from cuda2nki.lift.intent import Lowering

    _Base = Lowering
else:
    _Base = object


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


def _ident(op: str | None) -> float:
    return {"add": 0.0, "max": float("-inf"), "min": float("inf"), "mul": 1.0}.get(op or "", 0.0)


def _point_str(env: Mapping) -> str:
    return ", ".join(f"{k}={v}" for k, v in env.items())


class AxisSplitting(_Base):
    """The axis-splitting methods of :class:`~cuda2nki.lift.intent.Lowering`."""

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
