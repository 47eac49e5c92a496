"""Loops of the symbolic execution: counted, count-down and unrolled loops, loop
steps and bounds, loop bodies as parallel axes or folds (a mixin of
:class:`cuda2nki.lift.symexec.Executor`)."""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.lift import affine as af
from cuda2nki.lift import argfold, control, reroll
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Cond, Poly
from cuda2nki.lift.bareloops import with_own_init
from cuda2nki.lift.forwarding import LoopCtx, StoreRec
from cuda2nki.lift.lockstep import split_lockstep
from cuda2nki.lift.online_branch import canonical_online
from cuda2nki.lift.symbase import (
    _UNSET,
    CondVal,
    PtrVal,
    Refusal,
    SharedArr,
    VecVal,
    _assigned_names,
    _cast_to,
    _identity,
    _int_fold,
    _is_name,
    _online_sum,
    _scaled_stop,
    _split_combine,
    _varying,
    _vector_names,
    _walk_exprs,
    _walk_stmts,
)


def _bare_name(s: A.For) -> str:
    got = with_own_init(s)
    return "" if got is None else got[1]


class LoopExecution:
    """Loops of the symbolic execution: counted, count-down and unrolled loops, loop"""

    # ------------------------------------------------------------------ loops
    def exec_for(self, s: A.For) -> None:
        if len(s.init) > 1:  # variables stepped in lockstep: one counted loop (lift.lockstep)
            single = split_lockstep(s, _assigned_names(s.body))
            if single is not None:
                self.exec_stmt(single)
                return
        bare = with_own_init(s) if self.env.get(_bare_name(s)) is not None else None
        if bare is not None:  # `for (; i < n; i += stride)` stepping a declared `i`
            self.exec_for(bare[0])
            self.env[bare[1]] = None  # its value after the loop is not tracked
            return
        if len(s.init) != 1 or s.cond is None or s.step is None:
            raise Refusal("C2N2019", s.loc, what="a for loop without one init, condition and step")
        init = s.init[0]
        if isinstance(init, A.VarDecl):
            name, start_e = init.name, init.init
        elif (
            isinstance(init, A.ExprStmt)
            and isinstance(init.expr, A.Assign)
            and isinstance(init.expr.target, A.Name)
            and init.expr.op == "="
        ):
            name, start_e = init.expr.target.name, init.expr.value
        else:
            raise Refusal("C2N2019", s.loc, what="loop initialisation")
        if start_e is None:
            raise Refusal("C2N2019", s.loc, what="uninitialised loop variable")
        if name in _assigned_names(s.body):
            raise Refusal("C2N2019", s.loc, what=f"loop variable '{name}' assigned in the body")
        start = self.as_poly(self.eval(start_e), start_e.loc)
        saved = self.env.get(name, _UNSET)
        saved_depth = self.decl_depth.get(name)
        self.decl_depth[name] = len(self.guards)
        step = self._loop_step(s.step, name)
        arrays = {k for k, v in self.env.items() if isinstance(v, tuple) and v[0] == "localarr"}
        arrays |= _vector_names(self.env, s.body)
        if step is None:
            self.exec_unrolled(s, name, start)
        elif arrays and control.indexes_with(s.body, name, arrays):
            self.exec_unrolled(s, name, start, arrays=True)
        elif (
            step.is_const
            and start.is_const
            and control.constant_bound(s.cond, name)
            and control.shuffles_in(s.body)
        ):
            # a shuffle ladder counted by an additive variable (offset ``32 >> k``, k = 1..5):
            # its steps are known, each exchanges the value the previous one produced
            self.exec_unrolled(s, name, start)
        elif step.is_const and step.const_value < 0:
            self.exec_countdown(s, name, start, step)
        else:
            self.exec_counted(s, name, start, step)
        if saved is _UNSET:
            self.env.pop(name, None)
        else:
            self.env[name] = saved
        if saved_depth is not None:
            self.decl_depth[name] = saved_depth

    def exec_counted(self, s: A.For, name: str, start: Poly, step: Poly) -> None:
        """``for (v = start; v < stop; v += step)`` as ``v = start + step*k``, ``0 <= k < trips``
        (plus the guard ``v < stop`` where ``start`` depends on the thread)."""
        raw = self.fresh(name)
        self.env[name] = af.sym(raw)
        cond = self.as_cond(self.eval(s.cond), s.cond.loc)
        stop = self._loop_stop(cond, raw, s)
        bound = stop
        if _varying(stop):
            # a triangular loop (``s <= t``): run to the largest stop, guarded by its own
            bound = af.upper(stop)
            if bound is None or _varying(bound):
                bound = self._guard_bound(stop)
            if bound is None or _varying(bound):
                raise Refusal(
                    "C2N2019",
                    s.loc,
                    what="a loop whose trip count depends on the thread or an outer loop "
                    "without a known bound",
                )
        if (
            step.depends_on(af.THREAD_COORDS - set(af.GID))
            or step == af.ZERO
            or (step.is_const and step.const_value < 0)
        ):
            raise Refusal(
                "C2N2019", s.loc, what="a loop step that is not a positive constant or launch size"
            )
        thread_start = start.depends_on(af.THREAD_COORDS)
        lo = start.subs({a: 0 for a in af.THREAD + af.BLOCK}) if thread_start else start
        trips = af.floordiv(bound - lo + step - 1, step) if step != af.ONE else bound - lo
        var = raw
        self.env[name] = start + step * af.sym(var)
        guard = af.TRUE
        if thread_start or bound != stop:
            guard = Cond.of(af.compare("<", start + step * af.sym(var), stop))
        ctx = LoopCtx(var, trips, guard, s.loc)
        with af.bounds({var: trips}):
            self.exec_loop_body(s.body, ctx, name)

    def exec_countdown(self, s: A.For, name: str, start: Poly, step: Poly) -> None:
        """``for (v = start; v >= lo; v -= d)`` as ``v = start - d*k``, ``0 <= k < trips``: the
        condition, read in ``k``, gives the trip count (``k < start - lo + 1`` for ``d = 1``).
        The steps run in the CUDA order (``k = 0`` is ``v = start``)."""
        raw = self.fresh(name)
        self.env[name] = start + step * af.sym(raw)
        cond = self.as_cond(self.eval(s.cond), s.cond.loc)
        trips = self._loop_stop(cond, raw, s)
        if _varying(trips):
            raise Refusal(
                "C2N2019",
                s.loc,
                what="a count-down loop whose trip count depends on the thread or an outer loop",
            )
        ctx = LoopCtx(raw, trips, af.TRUE, s.loc)
        with af.bounds({raw: trips}):
            self.exec_loop_body(s.body, ctx, name)

    def _guard_bound(self, stop: Poly) -> Poly | None:
        """A bound of ``stop`` free of the thread from a guard around the loop: under
        ``P < 0`` it is at most ``stop - P - 1`` (``j <= i`` under ``i < n``: ``n``)."""
        for c in self.live().conjuncts() or []:
            if c.op != "<":
                continue
            b = stop - c.poly - 1
            if not _varying(b):
                return b
        return None

    def exec_unrolled(self, s: A.For, name: str, start: Poly, arrays: bool = False) -> None:
        """A loop with a multiplicative/shift step (tree levels, shuffle offsets): its trip values
        are fixed by the block size, so it is unrolled.  So is a loop indexing a local array or
        constant table with its variable (``arrays``); the stores of its iterations are rolled
        back into one store in a loop where they differ by a constant step."""
        kind = "a loop indexing a local array" if arrays else "a loop with a multiplicative step"
        if not start.is_const:
            raise Refusal(
                "C2N2015" if not arrays else "C2N2019",
                s.loc,
                what=f"{kind} whose start '{start}' is not known"
                + ("" if arrays else " (needs the launch block size)"),
            )
        self.env[name] = start
        marks: list[int] = []
        nshared = sum(len(a.writes) for a in self.shared.values())
        for _ in range(64):
            c = self.as_cond(self.eval(s.cond), s.cond.loc)
            c = V.simplify_cond(c) if isinstance(c, Cond) else c
            if not isinstance(c, Cond) or c.kind not in ("true", "false"):
                raise Refusal(
                    "C2N2015" if not arrays else "C2N2019",
                    s.loc,
                    what=f"{kind} and a condition that is not decided"
                    + ("" if arrays else " for the block size"),
                )
            if c.kind == "false":
                if arrays and nshared == sum(len(a.writes) for a in self.shared.values()):
                    self._reroll(marks, s)
                return
            marks.append(len(self.stores))
            self.exec_block(s.body)
            self.eval(s.step, stmt=True)
            v = self.env[name]
            if not isinstance(v, Poly) or not v.is_const:
                raise Refusal("C2N2015", s.loc, what="a loop step that is not a constant")
        raise Refusal("C2N2019", s.loc, what="a loop with more than 64 unrolled iterations")

    def _reroll(self, marks: list[int], s: A.For) -> None:
        if len(marks) < 2 or not self.reroll:
            return
        bounds = marks + [len(self.stores)]
        groups = [self.stores[a:b] for a, b in zip(bounds, bounds[1:])]
        var = self.fresh("unrolled")
        tmpl = reroll.reroll(groups, var)
        if tmpl is None:
            return
        ctx = LoopCtx(var, Poly.const(len(groups)), af.TRUE, s.loc)
        self.rerolled = True
        del self.stores[marks[0] :]
        for first, t in zip(groups[0], tmpl):
            self.stores.append(
                StoreRec(
                    first.tensor,
                    t["index"],
                    t["value"],
                    t["guard"],
                    (ctx,) + first.loops,
                    first.accumulate,
                    first.loc,
                    len(self.stores),
                )
            )

    def _loop_step(self, e: A.Expr, name: str) -> Poly | None:
        """Additive step (Poly), or None for multiplicative / shifting steps."""
        if isinstance(e, A.Unary) and e.op in ("pre++", "post++") and _is_name(e.operand, name):
            return af.ONE
        if isinstance(e, A.Unary) and e.op in ("pre--", "post--") and _is_name(e.operand, name):
            return Poly.const(-1)
        if isinstance(e, A.Assign) and _is_name(e.target, name):
            if e.op == "+=":
                return self.as_poly(self.eval(e.value), e.loc)
            if e.op == "-=":
                return -self.as_poly(self.eval(e.value), e.loc)
            if (
                e.op == "="
                and isinstance(e.value, A.Binary)
                and _is_name(e.value.left, name)
                and e.value.op in ("+", "-")
            ):
                d = self.as_poly(self.eval(e.value.right), e.loc)
                return d if e.value.op == "+" else -d
            return None
        raise Refusal("C2N2019", e.loc, what="loop step")

    def _loop_stop(self, cond: object, var: str, s: A.For) -> Poly:
        if not isinstance(cond, Cond):
            raise Refusal("C2N2019", s.loc, what="a data-dependent loop condition")
        dom = af.domain_of(cond, {var})
        scaled = _scaled_stop(cond, var)
        if scaled is not None and (dom is None or dom.residual or var not in dom.bounds):
            return scaled  # ``c * var < b`` (a counter stepping a stride-c variable)
        if (
            dom is None
            or dom.residual
            or var not in dom.bounds
            or len(dom.bounds[var].hi) != 1
            or dom.bounds[var].lo
        ):
            raise Refusal("C2N2019", s.loc, what=f"loop condition '{cond}' (need 'var < bound')")
        return dom.bounds[var].hi[0]

    def exec_loop_body(self, body: A.Stmt, ctx: LoopCtx, name: str) -> None:
        """Run the body once with the symbolic loop variable; carried locals become folds."""
        promoted = self._promote(body, name, ctx)
        before = dict(self.env)
        visible = {
            k
            for k, v in before.items()
            if not isinstance(v, (PtrVal, SharedArr, tuple)) and v is not None and k != name
        }
        names = _assigned_names(body)
        assigned = names & visible
        # elements of local arrays the body writes are carried like scalar locals
        arrays = {
            n for n in names if isinstance(before.get(n), tuple) and before[n][0] == "localarr"
        }
        assigned |= {k for k in visible if k.split("[")[0] in arrays and "[" in k}
        assigned |= set(promoted.values())
        carried = {}
        ints = {n for n in assigned if argfold.int_init(before[n])}
        for n in assigned:
            old = before[n]
            if n in ints:  # an index that may follow a running extremum (argmax)
                old = self.as_data(old, ctx.loc)
            elif isinstance(old, (CondVal, VecVal)):
                raise Refusal(
                    "C2N2011",
                    ctx.loc,
                    var=n,
                    why="an integer, condition or vector carried across iterations",
                )
            carried[n] = old
            self.env[n] = V.Carried(old.dtype, n)
            self.decl_depth[n + "#carry"] = self.decl_depth.get(n, 0)
        saved_depths = {n: self.decl_depth.get(n, 0) for n in carried}
        for n in carried:  # selects inside the body are relative to the iteration start
            self.decl_depth[n] = len(self.guards) + 1
        nstores = len(self.stores)
        self.loops.append(ctx)
        self.carry_scope.append(carried)
        self.guards.append(ctx.guard)
        self.exec_block(body)
        self.guards.pop()
        self.carry_scope.pop()
        self.loops.pop()
        self.decl_depth.update(saved_depths)
        for st in self.stores[nstores:]:
            if V.has_carried(st.value, set(carried)):
                raise Refusal(
                    "C2N2011",
                    st.loc,
                    var=name,
                    why="a running value stored inside the loop (prefix scan)",
                )
        for arr in self.shared.values():
            for w in arr.writes:
                if ctx in w.loops and V.has_carried(w.value, set(carried)):
                    raise Refusal(
                        "C2N2011",
                        ctx.loc,
                        var=name,
                        why="a running value written to shared memory inside the loop",
                    )
        args = argfold.pairs(self.env, carried, ints, ctx.var)
        keys = {p.value for p in args.values()}  # an integer key's running extremum folds
        for n in ints - args.keys() - keys:
            if not _int_fold(self.env[n], n):  # an integer sum (acc += a[k] * w[k]) folds
                raise Refusal(
                    "C2N2011",
                    ctx.loc,
                    var=n,
                    why="an integer, condition or vector carried across iterations",
                )
        canonical_online(self.env, carried)
        online = {n: got for n in carried if (got := _online_sum(self.env, n, carried))}
        for n, old in carried.items():
            if n not in online and n not in args:
                self.env[n] = self._fold(n, old, self.env[n], ctx)
        for n, p in args.items():
            init = self.as_data(carried[p.value], ctx.loc, p.term.dtype)
            self.env[n] = argfold.index_fold(p, self.env[p.value], init, carried[n], ctx)
        for n, (m, v) in online.items():
            acc = self.env[n].dtype  # a double normaliser stays double (C2N2515 when narrowed)
            self.env[n] = self._online_fold(carried[n], carried[m], self.env[m], v, ctx, acc)
        for (tensor, index, dtype), key in promoted.items():  # the element's value after the loop
            del self.promoted[(tensor, index)]
            value = self.env.pop(key)
            if value is not self.promoted_init.pop(key):  # the loop wrote the element
                self._store1(tensor, index, value, dtype, ctx.loc, None)

    def _promote(self, body: A.Stmt, name: str, ctx: LoopCtx) -> dict:
        """Global elements the loop body updates in place at an index that does not change over
        the loop (``y[j] += A[i][j] * x[i]``) are carried like locals and stored after it."""
        out: dict = {}
        declared = {d.name for d in _walk_stmts(body) if isinstance(d, A.VarDecl)}
        assigned = _assigned_names(body) | {name} | declared  # names that change in the body
        for x in _walk_exprs(body):
            if not (isinstance(x, A.Assign) and isinstance(x.target, A.Index)):
                continue
            if x.op == "=" and not control.reads_target(x):
                continue
            t = x.target
            if isinstance(t.base, A.Index) or control.names_in(t.index) & assigned:
                continue
            try:
                base, idx = self._index_path(t)
            except Refusal:
                continue
            if not isinstance(base, PtrVal) or base.shared or base.width != 1:
                continue
            index = base.offset + idx[0]
            k = (base.tensor, index, base.dtype)
            if k in out or (base.tensor, index) in self.promoted:
                continue
            key = self.fresh(f"{base.tensor}[{index}]")
            self.env[key] = self.load(base.tensor, index, base.dtype, x.loc)
            self.promoted_init[key] = self.env[key]
            self.decl_depth[key] = len(self.guards)
            self.promoted[(base.tensor, index)] = key
            out[k] = key
        return out

    def _online_fold(
        self, d0: object, m0: object, m: V.DExpr, v: V.DExpr, ctx: LoopCtx, acc: str
    ) -> V.DExpr:
        """The online sum ``d`` after the loop: ``sum_k exp(v_k - m) + d0 * exp(m0 - m)`` with
        ``m`` the running maximum's final value (the rescalings telescope), summed in ``acc``
        (the normaliser's own type)."""
        term: V.DExpr = V.Op(v.dtype, "exp", (V.Op(v.dtype, "sub", (v, m)),))
        term = _cast_to(term, acc)
        if ctx.guard != af.TRUE:
            term = V.Select(term.dtype, V.Pred("bool", ctx.guard), term, V.Const(term.dtype, 0.0))
        fold = V.Fold(term.dtype, "add", ctx.var, af.ZERO, ctx.extent, af.ONE, term)
        d0 = _cast_to(self.as_data(d0, ctx.loc, term.dtype), term.dtype)
        if isinstance(d0, V.Const) and d0.value == 0:
            return fold
        m0 = _cast_to(self.as_data(m0, ctx.loc, term.dtype), term.dtype)
        scale = V.Op(term.dtype, "exp", (V.Op(term.dtype, "sub", (m0, m)),))
        return V.Op(term.dtype, "add", (V.Op(term.dtype, "mul", (d0, scale)), fold))

    def _fold(self, n: str, init: object, new: object, ctx: LoopCtx) -> object:
        if not isinstance(new, V.DExpr):
            raise Refusal("C2N2011", ctx.loc, var=n, why="not a scalar value")
        car = V.Carried(new.dtype, n)
        if new == car:
            return init
        if not V.has_carried(new, {n}):
            raise Refusal(
                "C2N2011",
                ctx.loc,
                var=n,
                why="the value is overwritten each iteration (last-iteration value)",
            )
        op, term = _split_combine(new, car)
        if op is None or V.has_carried(term):
            raise Refusal(
                "C2N2011",
                ctx.loc,
                var=n,
                why=f"update '{V.short(new, 120)}' is not 'acc = acc op f(k)'",
            )
        if ctx.guard != af.TRUE:
            term = V.Select(
                term.dtype, V.Pred("bool", ctx.guard), term, V.Const(term.dtype, _identity(op))
            )
        fold = V.Fold(new.dtype, op, ctx.var, af.ZERO, ctx.extent, af.ONE, term)
        init_d = _cast_to(self.as_data(init, ctx.loc, new.dtype), new.dtype)
        if isinstance(init_d, V.Const) and init_d.value == _identity(op):
            return fold
        return V.Op(new.dtype, op, (init_d, fold))
