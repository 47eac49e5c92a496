"""Elementwise iterations with a data-dependent exit on tiles: a part of the tile-expression
compiler (:class:`cuda2nki.passes._tiles.TileExprCompiler` mixes :class:`IterationOps` in).

An :class:`~cuda2nki.ir.nodes.Iterate` becomes a loop of ``trips`` iterations run when the kernel
is traced (a sequential loop in the scheduled IR) with one state tile per carried variable and a
per-element ``active`` mask (1.0 / 0.0)::

    state = init;  active = enter (or 1)
    for k in range(trips):
        new = update(state);  c = cond(state)          # every value from the iteration's start
        state = select(active, new, state)              # an element that has left keeps its values
        active = active * c

The trip bound makes every element leave by the end, so each computes what its CUDA thread
computes after its own number of iterations.  The variables of one loop are computed together:
the results of every statement that reads the same loop come from one run of it.

Integer variables stay in fp32 tiles while their bounds stay below 2**24 (the bounds of the
loop's values after ``trips`` iterations, by interval arithmetic), else they are integer tiles
updated with exact instructions and selected bitwise (see :mod:`cuda2nki.passes._ints`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda2nki.ir.nodes import (
    Activation,
    Binary,
    Carry,
    Cast,
    Const,
    Expr,
    IndexValue,
    Iterate,
    Lit,
    Loop,
    Memset,
    Param,
    Read,
    Select,
    TensorCopy,
    TensorScalar,
    TensorSelect,
    TensorTensor,
)
from cuda2nki.ir.ops import LoopKind, Op, is_float
from cuda2nki.passes._analysis import alpha_key
from cuda2nki.passes._ints import INT32, SMALL, bounds_of, interval, small

if TYPE_CHECKING:
    from cuda2nki.passes._tiles import Val

#: at most this many iterations of the interval analysis of a loop's integer variables
_MAX_BOUND_STEPS = 4096


class IterationOps:
    """Iterations on tiles (see the module docstring); mixed into the tile-expression compiler."""

    def carry_value(self, e: Carry) -> Val:
        from cuda2nki.passes._tiles import Unsupported

        got = self.carried.get(e.name)  # type: ignore[attr-defined]
        if got is None:
            raise Unsupported(f"carry({e.name}) outside its loop", e.loc)
        return got

    def iterate(self, e: Iterate) -> Val:
        """The variable ``e.result`` after the loop; the loop runs once for all its results."""
        key = ("iterate", alpha_key(e.with_result("")))
        states = self.cache.get(key)  # type: ignore[attr-defined]
        if states is None:
            states = self._run_loop(e)
            self.cache[key] = states  # type: ignore[attr-defined]
        return states[e.result]

    # ------------------------------------------------------------------ the loop
    def _run_loop(self, e: Iterate) -> dict[str, Val]:
        from cuda2nki.passes._tiles import FULL, IMM, Unsupported, Val

        if not isinstance(e.trips, Const) and not e.trips.free_syms() <= set(self.params):  # type: ignore[attr-defined]
            raise Unsupported("an iteration bound that is not a size of the kernel", e.loc)
        bounds = self._var_bounds(e)
        states: dict[str, Val] = {}
        for v, dt, x in zip(e.names, e.dtypes, e.init):
            lo, hi = bounds.get(v, (None, None))
            wide = dt in INT32 and not small(lo, hi)
            store = dt if wide else "float32"
            if not (is_float(dt) or dt in INT32 or dt == "bool"):
                raise Unsupported(f"a {dt} variable carried by an iteration", e.loc)
            tile = self.tile(f"{v}_state", FULL, store)  # type: ignore[attr-defined]
            init = self.compile(x)  # type: ignore[attr-defined]
            if wide:
                init = self.int_full(init, dt)  # type: ignore[attr-defined]
            if init.kind == IMM and isinstance(init.operand, Lit):
                value = init.operand.value
                self.b.emit(Memset(tile, Lit(value if wide else float(value), store), loc=e.loc))  # type: ignore[attr-defined]
            else:
                init = self.as_full(init)  # type: ignore[attr-defined]
                self.b.emit(TensorCopy(tile, init.operand, loc=e.loc))  # type: ignore[attr-defined]
            states[v] = Val(FULL, tile, dt, lo, hi)
        active = self.tile("active", FULL, "float32")  # type: ignore[attr-defined]
        if e.enter is None:
            self.b.emit(Memset(active, Lit(1.0, "float32"), loc=e.loc))  # type: ignore[attr-defined]
        else:
            enter = self.as_full(self.compile(e.enter), "enter")  # type: ignore[attr-defined]
            self.b.emit(TensorCopy(active, enter.operand, loc=e.loc))  # type: ignore[attr-defined]
        self._loop_body(e, states, Val(FULL, active))
        return states

    def _loop_body(self, e: Iterate, states: dict[str, Val], active: Val) -> None:
        start, cache, carried = len(self.b.stmts), self.cache, self.carried  # type: ignore[attr-defined]
        self.cache = dict(cache)  # values inside the loop change every iteration
        self.carried = {**carried, **states}
        try:
            new = [self.compile(u) for u in e.update]  # type: ignore[attr-defined]
            cond = self.as_full(self.compile(e.cond), "cond")  # type: ignore[attr-defined]
            tiles = {s.operand.tensor for s in states.values()}
            for k, (v, val) in enumerate(zip(e.names, new)):
                if val.kind != "imm" and val.operand.tensor in tiles and val != states[v]:
                    new[k] = self._copied(val)  # another variable's state: read before it changes
            for v, val in zip(e.names, new):
                self._select_into(states[v], active, val, e)
            self.b.emit(  # type: ignore[attr-defined]
                TensorTensor(active.operand, Op.MUL, active.operand, cond.operand, loc=e.loc)
            )
        finally:
            self.cache, self.carried = cache, carried
        body = tuple(self.b.stmts[start:])  # type: ignore[attr-defined]
        del self.b.stmts[start:]  # type: ignore[attr-defined]
        var = self.b.fresh("k")  # type: ignore[attr-defined]
        self.b.emit(Loop(var, Const(0), e.trips, kind=LoopKind.SEQUENTIAL, body=body, loc=e.loc))  # type: ignore[attr-defined]

    def _copied(self, v: Val) -> Val:
        from cuda2nki.passes._tiles import FULL, Val

        store = self.b.dtypes.get(v.operand.tensor, "float32")  # type: ignore[attr-defined]
        dst = self.tile("prev", FULL, store)  # type: ignore[attr-defined]
        self.b.emit(TensorCopy(dst, self.as_full(v).operand, loc=self.loc))  # type: ignore[attr-defined]
        return Val(FULL, dst, v.dtype, v.lo, v.hi)

    def _select_into(self, state: Val, active: Val, new: Val, e: Iterate) -> None:
        """``state = active ? new : state``; integer tiles bitwise (exact), else a select."""
        store = self.b.dtypes.get(state.operand.tensor, "float32")  # type: ignore[attr-defined]
        if store in INT32:
            new = self.int_full(self.as_int(new, store), store)  # type: ignore[attr-defined]
            mask = self.tile("mask", "full", "int32")  # type: ignore[attr-defined]
            self.b.emit(  # type: ignore[attr-defined]
                TensorScalar(mask, active.operand, Op.MUL, Lit(-1.0), loc=e.loc)
            )
            diff = self.tile("bitxor", "full", store)  # type: ignore[attr-defined]
            s = state.operand
            self.b.emit(TensorTensor(diff, Op.BITXOR, new.operand, s, loc=e.loc))  # type: ignore[attr-defined]
            self.b.emit(TensorTensor(diff, Op.BITAND, diff, mask, loc=e.loc))  # type: ignore[attr-defined]
            self.b.emit(TensorTensor(s, Op.BITXOR, s, diff, loc=e.loc))  # type: ignore[attr-defined]
            return
        if new.kind != "imm":
            new = self.as_full(new)  # type: ignore[attr-defined]
        operand = new.operand
        if isinstance(operand, Lit):
            operand = Lit(float(operand.value), "float32")
        self.b.emit(  # type: ignore[attr-defined]
            TensorSelect(state.operand, active.operand, operand, state.operand, loc=e.loc)
        )

    # ------------------------------------------------------------------ division
    def refined_quotient(self, a: Val, b: Val, q: Val, loc) -> Val:
        """``a / b`` rounded as IEEE division, from the reciprocal product ``q``: inside an
        iteration a one-ulp difference can change when an element leaves the loop.  The residual
        ``a - q*b`` is exact (the product split in halves, Dekker) and ``q + residual / b``
        corrects ``q``; where that is not a number (an overflowing split) ``q`` stays."""
        from cuda2nki.passes._tiles import FULL, Val

        a, b, q = (self.as_full(x) for x in (a, b, q))  # type: ignore[attr-defined]

        def tt(op: Op, x, y):  # noqa: ANN001, ANN202
            dst = self.tile(op.value, FULL, "float32")  # type: ignore[attr-defined]
            self.b.emit(TensorTensor(dst, op, x, y, loc=loc))  # type: ignore[attr-defined]
            return dst

        def split(x):  # noqa: ANN001, ANN202
            c = self.tile("split", FULL, "float32")  # type: ignore[attr-defined]
            self.b.emit(TensorScalar(c, x, Op.MUL, Lit(4097.0), loc=loc))  # type: ignore[attr-defined]
            hi = tt(Op.SUB, c, tt(Op.SUB, c, x))
            return hi, tt(Op.SUB, x, hi)

        qo, bo = q.operand, b.operand
        (qh, ql), (bh, bl) = split(qo), split(bo)
        p = tt(Op.MUL, qo, bo)
        err = tt(Op.ADD, tt(Op.SUB, tt(Op.MUL, qh, bh), p), tt(Op.MUL, qh, bl))
        err = tt(Op.ADD, tt(Op.ADD, err, tt(Op.MUL, ql, bh)), tt(Op.MUL, ql, bl))
        rem = tt(Op.SUB, tt(Op.SUB, a.operand, p), err)
        inv = self.tile("recip", FULL, "float32")  # type: ignore[attr-defined]
        self.b.emit(Activation(inv, Op.RECIPROCAL, bo, loc=loc))  # type: ignore[attr-defined]
        fixed = tt(Op.ADD, qo, tt(Op.MUL, rem, inv))
        ok = tt(Op.EQ, fixed, fixed)
        dst = self.tile("quot", FULL, "float32")  # type: ignore[attr-defined]
        self.b.emit(TensorSelect(dst, ok, fixed, qo, loc=loc))  # type: ignore[attr-defined]
        return Val(FULL, dst)

    # ------------------------------------------------------------------ integer bounds
    def _var_bounds(self, e: Iterate) -> dict[str, tuple[int, int]]:
        """Bounds of the integer variables over every iteration (interval arithmetic run
        ``trips`` times, or until it settles; a variable it cannot bound gets its dtype's)."""
        ints = [v for v, t in zip(e.names, e.dtypes) if t in INT32]
        if not ints:
            return {}
        env: dict[str, tuple[int, int]] = {}
        for v, t, x in zip(e.names, e.dtypes, e.init):
            if t in INT32:
                env[v] = self._static(x, {}) or bounds_of(t)
        steps = e.trips.value if isinstance(e.trips, Const) else _MAX_BOUND_STEPS + 1
        for _ in range(min(steps, _MAX_BOUND_STEPS)):
            nxt = dict(env)
            for v, t, u in zip(e.names, e.dtypes, e.update):
                if t in INT32:
                    b = self._static(u, env) or bounds_of(t)
                    nxt[v] = (min(env[v][0], b[0]), max(env[v][1], b[1]))
            if nxt == env:
                return env
            env = nxt
        if steps > _MAX_BOUND_STEPS:
            return {v: bounds_of(t) for v, t in zip(e.names, e.dtypes) if t in INT32}
        return env

    def _static(self, x: Expr, env: dict[str, tuple[int, int]]) -> tuple[int, int] | None:
        """Bounds of an integer expression without compiling it (None: not known)."""
        t = self.type_of(x)  # type: ignore[attr-defined]
        if not t or is_float(t):
            return None
        full = bounds_of(t) if t != "bool" else (0, 1)
        if isinstance(x, Carry):
            return env.get(x.name, full)
        if isinstance(x, Lit):
            return (int(x.value), int(x.value))
        if isinstance(x, (IndexValue, Param)):
            names = {x.name} if isinstance(x, Param) else set(x.expr.free_syms())
            if all(s not in self.params or s in self.sizes for s in names):  # type: ignore[attr-defined]
                return (-SMALL + 1, SMALL - 1)
            return full
        if isinstance(x, Read):
            return full
        if isinstance(x, Cast):
            inner = self._static(x.x, env)
            if inner is None or t == "bool":
                return full
            return inner if full[0] <= inner[0] and inner[1] <= full[1] else full
        if isinstance(x, Select):
            a, b = self._static(x.a, env), self._static(x.b, env)
            return full if a is None or b is None else (min(a[0], b[0]), max(a[1], b[1]))
        if isinstance(x, Binary):
            if x.op.info.kind in ("compare", "logical"):
                return (0, 1)
            a, b = self._static(x.a, env), self._static(x.b, env)
            if a is None or b is None:
                return full
            return interval(x.op, a, b, t if t in INT32 else "int32")
        return full
