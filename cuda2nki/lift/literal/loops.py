"""The literal lowering, loops: counted, uniform, per-thread (masked) and bounded by a counter."""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.bound import trip_bound
from cuda2nki.lift.literal.helpers import _np_and
from cuda2nki.lift.literal.program import Branch, Instr, Loop
from cuda2nki.lift.literal.spelling import _CMP
from cuda2nki.lift.literal.state import (
    LiteralRefusal,
    Scope,
)
from cuda2nki.lift.literal.structure import (
    _has_break,
    _has_continue,
)
from cuda2nki.lift.literal.values import (
    Idx,
    Lin,
    Uni,
    add,
    as_lin,
    lin_sub,
    sub,
)


class LoopMixin:
    """Loops: counted, uniform, per-thread (masked) and bounded by a counter.

    A part of :class:`~.lower.Lowerer`, whose fields it uses."""

    def for_(self, s: A.For, scope: Scope) -> None:
        self.env.append({})
        self.trail.append([])
        try:
            for i in s.init:
                self.stmt(i, scope)
                self.trail[-1].append(i)  # type: ignore[union-attr]
            step = (A.ExprStmt(loc=s.step.loc, expr=s.step),) if s.step is not None else ()
            cond = s.cond if s.cond is not None else A.BoolLit(loc=s.loc, value=True)
            self.while_(cond, s.body, step, scope, s)
        finally:
            self.trail.pop()
            self.env.pop()

    def while_(
        self, cond: A.Expr, body: A.Stmt, step: tuple[A.Stmt, ...], scope: Scope, s: A.Stmt
    ) -> None:
        if _has_continue(body):
            raise self.refuse("continue statement", s)
        # lower the condition once to learn its kind, inside a scratch list that is discarded
        self.out.append([])
        c = self.expr(cond, scope)
        self.out.pop()
        if isinstance(c, Uni):
            self.out.append([])
            c = self.expr(cond, scope)
            pre = self.out.pop()
            if pre:  # ``while (k >>= 1)``: the condition tested at the top of the body
                self.tested_in_body(cond, body, step, scope, s)
                return
            saved = self.open_probe_runs(body, step, s.loc.line)
            self.out.append([])
            self.trail.append(None)
            try:
                self.stmt(body, scope)
                self.dead = False
                for st in step:
                    self.stmt(st, scope)
            finally:
                self.probe_reads = saved
            self.trail.pop()
            inner = self.out.pop()
            self.out[-1].append(Loop("while", c.expr, tuple(inner), s.loc.line))
            return
        terms = self.affine_terms(cond, scope)
        if terms is None and isinstance(c, Idx):
            terms = [f"_c2n_term({c.expr})"]
        if terms is None and self.counted_loop(cond, body, step, scope, s, do=False):
            return
        if terms is None:
            self.data_loop(cond, body, step, scope, s, do=False)
            return
        self.out.append([])
        ct = self.cond_tile(self.expr(cond, scope), cond)
        cnp = self.index_np(cond)
        np_inner = _np_and(scope.np_mask, None if cnp is None else f"({cnp} != 0)")
        inner_scope = Scope(self.mask_and(scope.mask, ct), scope.depth + 1, True, np_inner)
        self.trail.append(None)
        self.stmt(body, inner_scope)
        self.dead = False
        for st in step:
            self.stmt(st, scope)
        self.trail.pop()
        inner = self.out.pop()
        header = f"_c2n_any([{', '.join(terms)}])"
        self.out[-1].append(Loop("while", header, tuple(inner), s.loc.line))

    def tested_in_body(
        self, cond: A.Expr, body: A.Stmt, step: tuple[A.Stmt, ...], scope: Scope, s: A.Stmt
    ) -> None:
        """A loop whose uniform condition has side effects (``while (k >>= 1)``,
        ``while (--n)``), as ``while (1) { if (!(cond)) break; body; step }``: the condition
        runs once per test, in C's order, and a uniform break leaves the loop."""
        loc, flag = cond.loc, A.ScalarType(name="bool")
        leave = A.If(loc=loc, cond=A.Unary(loc=loc, op="!", operand=cond, ty=flag),
                     then=A.Break(loc=loc))  # fmt: skip
        again = A.Block(loc=body.loc, body=(leave, body, *step))
        self.while_(A.BoolLit(loc=loc, value=True, ty=flag), again, (), scope, s)

    def counted_loop(
        self,
        cond: A.Expr,
        body: A.Stmt,
        step: tuple[A.Stmt, ...],
        scope: Scope,
        s: A.Stmt,
        *,
        do: bool,
    ) -> bool:
        """A loop whose condition depends on data but whose trip count a counter bounds (see
        :mod:`.bound`): that many iterations at trace time, every statement under a per-thread
        active mask that the condition clears (a thread that left keeps its values)."""
        if _has_break(body):
            return False

        def uniform(e: A.Expr) -> bool:
            self.out.append([])
            try:
                v = self.expr(e, scope)
            except LiteralRefusal:
                return False
            finally:
                pre = self.out.pop()
            return isinstance(v, Uni) and v.ty == "int" and not pre

        tb = trip_bound(cond, body, step, self.preceding(), uniform)
        if tb is None:
            return False
        self.out.append([])
        limit, start = self.expr(tb.limit, scope), self.expr(tb.start, scope)
        if self.out.pop() or not isinstance(limit, Uni) or not isinstance(start, Uni):
            return False
        trips = sub(add(limit.expr, "1" if tb.inclusive else "0"), start.expr)
        trips = f"max({1 if do else 0}, {trips})"
        act = self.fresh("act")
        self.emit("comment", text=f"at most {trips} trips: the counter '{tb.counter}' bounds "
                  "the loop; threads leave it under a mask")  # fmt: skip
        if scope.mask is None:
            self.emit("full", dst=act, value="1.0", dtype="nl.float32")
        else:
            self.emit("op", dst=act, op="copy", args=scope.mask, dtype="nl.float32")
        inner = Scope(act, scope.depth + 1, True, scope.np_mask)
        self.out.append([])
        self.trail.append(None)
        try:
            if not do:
                self.leave_unless(cond, act, inner)
            self.stmt(body, inner)
            self.dead = False
            for st in step:
                self.stmt(st, inner)
            if do:
                self.leave_unless(cond, act, inner)
        finally:
            self.trail.pop()
        loop = self.out.pop()
        self.out[-1].append(Loop("for", f"{self.fresh('trip')} in range({trips})", tuple(loop),
                                 s.loc.line))  # fmt: skip
        return True

    def leave_unless(self, cond: A.Expr, act: str, scope: Scope) -> None:
        """Clear the threads whose loop condition fails from the active mask ``act``."""
        ct = self.cond_tile(self.expr(cond, scope), cond)
        self.emit("op", dst=act, op="multiply", args=f"{act}, {ct}", dtype="nl.float32")

    def affine_terms(self, cond: A.Expr, scope: Scope) -> list[str] | None:
        """A per-thread loop condition as (base, cp, cf, op, bound) terms, if it is a conjunction
        of comparisons between affine per-thread integers and uniform values."""
        if isinstance(cond, A.Binary) and cond.op == "&&":
            a = self.affine_terms(cond.left, scope)
            b = self.affine_terms(cond.right, scope)
            return None if a is None or b is None else a + b
        if not (isinstance(cond, A.Binary) and cond.op in _CMP):
            return None
        self.out.append([])
        try:
            left, right = self.expr(cond.left, scope), self.expr(cond.right, scope)
        finally:
            self.out.pop()
        if not isinstance(left, Uni | Lin) or not isinstance(right, Uni | Lin):
            return None
        if isinstance(left, Uni) and isinstance(right, Uni):
            return [f"(0, 0, 0, '==', 0 if {left.expr} {cond.op} {right.expr} else 1)"]
        d = lin_sub(as_lin(left), as_lin(right))
        return [f"({d.b}, {d.p}, {d.f}, '{cond.op}', 0)"]

    def do_while(self, s: A.DoWhile, scope: Scope) -> None:
        self.out.append([])
        c = self.expr(s.cond, scope)
        self.out.pop()
        if not isinstance(c, Uni) and self.counted_loop(s.cond, s.body, (), scope, s, do=True):
            return
        if not isinstance(c, Uni):
            self.data_loop(s.cond, s.body, (), scope, s, do=True)
            return
        self.out.append([])
        self.trail.append(None)
        self.stmt(s.body, scope)
        self.trail.pop()
        self.dead = False
        c = self.expr(s.cond, scope)
        brk = Branch(f"not ({c.expr})", (Instr("brk", ()),), (), s.loc.line)
        self.out[-1].append(brk)
        inner = self.out.pop()
        self.out[-1].append(Loop("while", "True", tuple(inner), s.loc.line))
