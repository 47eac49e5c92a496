"""Loops whose trip count depends on data, as runtime loops (literal lowering).

A loop such as ``while (v > eps) {...}``, ``for (j = start[i]; j < start[i + 1]; ++j)`` or
``do {...} while (changed)`` runs, in CUDA, a different number of iterations in every thread.
The lockstep port runs it while *any* thread of the block is still in it, every thread under its
own active mask: a thread whose condition failed keeps its values (its stores and updates are
predicated away) and never comes back, even if the memory its condition reads changes.

How many iterations that takes is known only on the device, so the loop is an ``nl.while_loop``
(reference/NKI.md §5, runtime loops) whose condition is a register:

* the active mask ``act`` (a 0/1 tile) starts as the threads that reach the loop (and have not
  returned), and every evaluation of the condition clears the threads it fails in;
* whether any thread is left is ``act`` reduced over the free axis and then across partitions
  (``nisa.tensor_partition_reduce``), written as one int32 element and ``register_load``-ed;
* the body function is traced once and runs on the device, so the per-thread locals it updates
  (and the active mask, and ``_live`` where the body returns) live in SBUF tiles allocated in
  front of the loop (``_c2n_carry``): the body starts from them, writes its new values back into
  them at its end (``_c2n_keep``) and the code after the loop reads them.  Nothing else the body
  computes is visible after it (:mod:`.runtime_scope` checks the finished program for that).

A loop that walks a contiguous range of indices (``for (k = a[i]; k < a[i + 1]; ++k)``) runs
several iterations per pass, its loads at the index read once per pass as runs of elements
(:mod:`.datarun`).

Choices where the reference is silent: the body's register is allocated inside the body and
returned (the reference only says the body returns the next condition register); the condition
is evaluated once in front of the loop and once at the end of each iteration, so that its side
effects happen exactly as often as in C.  Loop-carried trace-time values (a uniform or index
local, a per-thread local array, a pointer moved by the loop) cannot be stated this way and are
refused.  The legacy API has no runtime loop: ports for it are refused (C2N2301).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.bound import nodes
from cuda2nki.lift.literal.program import Instr, Loop, Node
from cuda2nki.lift.literal.state import Scope
from cuda2nki.lift.literal.unbounded import data_loop_text
from cuda2nki.lift.literal.values import Local, Tile

if TYPE_CHECKING:
    from cuda2nki.lift.literal.datarun import RunPlan

#: the name prefix of a runtime loop's body function (see :mod:`.runtime_scope`)
BODY_PREFIX = "_c2n_wloop"

_KINDS = {"U": "uniform local", "L": "thread-affine local", "I": "index local", "P": "pointer"}

#: the most elements of one local array a runtime loop carries (one SBUF tile each)
MAX_CARRIED_ELEMENTS = 64


def assigned_names(parts: tuple[object, ...]) -> list[tuple[str, str]]:
    """The names that ``parts`` (the condition, body and step of a loop) may assign, in order
    of first appearance, each with how: ``local`` (an assignment, an increment, its address
    taken), ``element`` (``a[k] = ...``: an element of a local array or memory) or ``call``
    (passed to a ``__device__`` function, which may write it through a pointer or reference)."""
    out: list[tuple[str, str]] = []

    def add(name: str, how: str) -> None:
        if (name, how) not in out:
            out.append((name, how))

    for n in nodes(parts):
        target: A.Expr | None = None
        if isinstance(n, A.Assign):
            target = n.target
        elif isinstance(n, A.Unary) and n.op in ("pre++", "post++", "pre--", "post--", "&"):
            target = n.operand
        elif isinstance(n, A.Call) and n.target is not None:  # a __device__ function
            for arg in n.args:
                base = arg.operand if isinstance(arg, A.Unary) and arg.op == "&" else arg
                if isinstance(base, A.Name):
                    add(base.name, "call")
        how = "local"
        while isinstance(target, A.Index):
            target, how = target.base, "element"
        if isinstance(target, A.Name):
            add(target.name, how)
    return out


def _returns(x: object) -> bool:
    return any(isinstance(n, A.Return) for n in nodes(x))


class DataLoopMixin:
    """Loops whose trip count depends on data, run until no thread is left in them.

    A part of :class:`~.lower.Lowerer`, whose fields it uses."""

    def data_loop(
        self,
        cond: A.Expr,
        body: A.Stmt,
        step: tuple[A.Stmt, ...],
        scope: Scope,
        s: A.Stmt,
        *,
        do: bool,
    ) -> None:
        """Lower ``while (cond) body; step`` (``do``: ``do body while (cond)``) as a runtime
        loop (see the module)."""
        carried = self.carried_tiles(cond, body, step, s)
        plan = self.run_plan(cond, body, step, carried)
        returns = self.live and _returns(body)
        act = self.fresh("act")
        start = self.mask_and(scope.mask, "_live" if self.live else None)
        what = data_loop_text("a do-while loop" if do else "a loop", cond, self.per_thread)
        self.emit("comment", text=f"{what}: it runs on the device while any thread is in it "
                  "(nl.while_loop), every thread under its own mask")  # fmt: skip
        if start is None:
            self.emit("full", dst=act, value="1.0", dtype="nl.float32")
        else:
            self.emit("op", dst=act, op="copy", args=start, dtype="nl.float32")
        inner = Scope(act, scope.depth + 1, True, scope.np_mask)
        if not do:
            self.leave_unless(cond, act, inner)
        slots, arrays = self.carry_in(carried, act, returns)
        reg, fn = self.fresh("reg"), self.fresh(BODY_PREFIX[1:])
        self.emit("let", dst=reg, value=f"_c2n_lanes_left({act})")
        inside = self.runtime_body(cond, body, step, inner, slots, arrays, returns, plan)
        self.out[-1].append(Loop("def", f"{fn}(_r)", tuple(inside), s.loc.line))
        self.out[-1].append(Instr("call", (("expr", f"nl.while_loop({reg}, {fn})"),), s.loc.line))
        self.rebind(slots, arrays)

    def carry_in(
        self, carried: list[tuple[str, int]], act: str, returns: bool
    ) -> tuple[dict[str, str], dict[str, int]]:
        """Allocate the slot of every carried value (tiles, the active mask, ``_live`` where
        the body returns, each element of a carried array): (value -> slot, array -> count)."""
        tiles = [name for name, count in carried if not count]
        arrays = {name: count for name, count in carried if count}
        state = [*tiles, act] + (["_live"] if returns else [])
        state += [f"{name}[{k}]" for name, count in arrays.items() for k in range(count)]
        slots = {name: self.fresh("cv") for name in state}
        for name, slot in slots.items():
            self.emit("let", dst=slot, value=f"_c2n_carry({name})")
        return slots, arrays

    def runtime_body(
        self,
        cond: A.Expr,
        body: A.Stmt,
        step: tuple[A.Stmt, ...],
        inner: Scope,
        slots: dict[str, str],
        arrays: dict[str, int],
        returns: bool,
        plan: RunPlan | None = None,
    ) -> list[Node]:
        """The body function of a runtime loop: the carried values rebound from their slots,
        one iteration under the active mask ``inner.mask`` (``plan``: its runs read, then
        ``plan.width`` iterations, see :mod:`.datarun`), the condition clearing the threads
        it fails, the values written back and whether any thread is left returned."""
        act = inner.mask or ""
        self.out.append([])
        self.trail.append(None)
        try:
            self.rebind(slots, arrays)
            if plan is None:
                self.iteration(cond, body, step, inner)
            else:
                self.run_tiles = self.open_runs(plan, inner)
                for j in range(plan.width):
                    self.run_col = j
                    self.iteration(cond, A.Block(loc=body.loc, body=plan.body), plan.step, inner)
                self.run_tiles = {}
            if returns:  # a thread that returned inside the loop is no longer in it
                self.emit("op", dst=act, op="multiply", args=f"{act}, _live", dtype="nl.float32")
            for name, slot in slots.items():
                self.emit("call", expr=f"_c2n_keep({slot}, {name})")
            self.emit("ret", value=f"_c2n_lanes_left({slots[act]})")
        finally:
            self.trail.pop()
            inside = self.out.pop()
        return inside

    def iteration(self, cond: A.Expr, body: A.Stmt, step: tuple[A.Stmt, ...], inner: Scope) -> None:
        """One iteration under the active mask ``inner.mask``: the body (its run loads read
        from column ``run_col`` of their runs), the step, and the condition clearing the
        threads it fails."""
        try:
            self.stmt(body, inner)
        finally:
            self.run_col = None
        self.dead = False
        for st in step:
            self.stmt(st, inner)
        self.leave_unless(cond, inner.mask or "", inner)

    def rebind(self, slots: dict[str, str], arrays: dict[str, int]) -> None:
        """Bind the carried locals to their slots (a local array as a new list of them)."""
        for name, slot in slots.items():
            if name.endswith("]"):
                continue
            self.emit("let", dst=name, value=slot)
        for name, count in arrays.items():
            items = ", ".join(slots[f"{name}[{k}]"] for k in range(count))
            self.emit("let", dst=name, value=f"[{items}]")

    def carried_tiles(
        self, cond: A.Expr, body: A.Stmt, step: tuple[A.Stmt, ...], s: A.Stmt
    ) -> list[tuple[str, int]]:
        """The per-thread locals declared outside the loop that it may assign (their values
        cross iterations and outlive the loop): (spelled name, 0) for a tile, (name, count) for
        a local array of ``count`` tiles.  A local of another kind that the loop assigns is
        refused."""
        out: list[tuple[str, int]] = []
        for cname, how in assigned_names((cond, body, step)):
            b = self.lookup(cname)
            if b is None or b.klass == "S":  # declared inside the loop, or a __shared__ scalar
                continue
            if isinstance(b.value, Local):  # a local array (or a parameter bound to one)
                entry = (b.value.expr, math.prod(b.value.dims))
                if entry[1] > MAX_CARRIED_ELEMENTS:
                    raise self.refuse(
                        f"the local array '{cname}' of {entry[1]} elements assigned in a loop "
                        f"whose trip count depends on data (at most {MAX_CARRIED_ELEMENTS} "
                        "elements are carried through a runtime loop)",
                        s,
                    )
            elif b.klass == "T" and isinstance(b.value, Tile) and how != "element":
                entry = (b.value.expr, 0)
            elif how != "local":  # a store to memory, or a value passed to a function
                continue
            else:
                raise self.refuse(
                    f"the {_KINDS.get(b.klass, 'trace-time value')} '{cname}' assigned in a loop "
                    "whose trip count depends on data (a runtime loop carries per-thread tiles "
                    "only)",
                    s,
                )
            if entry not in out:
                out.append(entry)
        return out
