"""Converting a store's value and guard to intent IR expressions: loads split along their
tensors' shapes (each index proven in range), folds and scans, conditions.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from cuda2nki.ir import nodes as N
from cuda2nki.ir.ops import AxisKind
from cuda2nki.lift import affine as af
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Cond, Poly
from cuda2nki.lift.delinear import borrows, delinearize
from cuda2nki.lift.intent_axes import _ident
from cuda2nki.lift.intent_ranges import _range, _split_cmp, _value_range
from cuda2nki.lift.intent_shapes import _shape_str
from cuda2nki.lift.symexec import Refusal
from cuda2nki.lift.views import split_by_view
from cuda2nki.rewrite import strip_locs

if TYPE_CHECKING:  # the lowering owns the converter; imported for its type only
    from cuda2nki.lift.intent import Lowering


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
        if isinstance(e, V.Bitcast):
            return N.Bitcast(e.dtype, self.expr(e.operand))
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


def _holds_below(c: af.Cmp, a: str) -> bool:
    """``c`` holding at ``a`` holds at every ``a' < a``: free of ``a``, or ``k*a + r < 0`` with
    ``k > 0`` and ``r`` free of ``a``."""
    if a not in c.poly.atoms():
        return True
    k = af.coefficient(c.poly, a)
    rest = c.poly - k * af.sym(a)
    return c.op == "<" and k.is_const and k.const_value > 0 and a not in rest.atoms()


def _identity_else(s: V.Select, op: str) -> bool:
    """``cond ? x : identity``: ``cond`` masks the fold (an integer fold's identity is the
    dtype's extreme, taken as a mask only where ``cond`` is an index condition)."""
    if not isinstance(s.else_, V.Const):
        return False
    if s.else_.value == _ident(op):
        return True
    extreme = {"min": 2**31 - 1, "max": -(2**31)}.get(op)
    return s.else_.dtype == "int32" and s.else_.value == extreme and isinstance(s.cond, V.Pred)
