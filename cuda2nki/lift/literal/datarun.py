"""Runs of a loop whose trip count depends on data: several of its iterations per device pass.

A runtime loop (:mod:`.dataloop`) that walks a contiguous range of indices in every thread --
``for (k = off[r]; k < off[r + 1]; ++k) dot += v[k] * x[c[k]]``, ``while (e < end) { s +=
w[e]; e++; }`` -- would read ``v[k]``, ``c[k]`` and ``w[e]`` one element per thread and pass.
Here each pass of the ``nl.while_loop`` runs ``W`` iterations of the body in order, every one
under its own active mask as before (a thread whose condition failed does nothing more, so the
values and their rounding are exactly the serial loop's), and the loads at ``index + c`` are
read once per pass as runs: a ``(P, F, W)`` tile of each thread's next ``W`` elements, one
indirect DMA per thread column whose partition rows are runs of ``W`` elements, in which
threads that left the loop (and elements past the end of the buffer) move no bytes.  Iteration
``j`` of the pass reads column ``j``.

That is faithful when, in every thread still in the loop, the index is the pass's starting
value plus ``j`` in iteration ``j``, and the values read are the ones the serial loop would
read:

* the index is a per-thread integer local stepped by one (``++k``, ``k++``, ``k += 1``,
  ``k = k + 1``) exactly once per iteration -- in the ``for`` step, or as the last statement of
  the body -- and assigned nowhere else in the loop; only reads in the body before that step
  are served from runs (the condition, after the step, reads as before);
* the loop writes no memory (no stores, atomics or calls of ``__device__`` functions), so no
  element of a run changes while the pass runs, and it has no ``break``, ``continue`` or
  ``return``;
* the buffer is one-dimensional (its rows are its elements, so a run is a row range) and
  ``c`` is a literal or a uniform value the loop does not change.

``W`` is :data:`MAX_WIDTH`, fewer where the runs of one pass would hold more than
:data:`RUN_BYTES` per partition (their share of SBUF), and a loop the kernel's own bound caps
at fewer iterations (``k < K`` with ``K`` a literal) takes that many.
"""

from __future__ import annotations

from dataclasses import dataclass

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.bound import nodes
from cuda2nki.lift.literal.dataloop import assigned_names
from cuda2nki.lift.literal.spelling import _ATOMICS
from cuda2nki.lift.literal.state import Scope
from cuda2nki.lift.literal.values import Ptr, Tile
from cuda2nki.lift.literal.wide import WIDE_CLASSES

#: iterations per pass at most (the body is written out that many times)
MAX_WIDTH = 8
#: the bytes per partition the runs of one pass may hold
RUN_BYTES = 2048
_INCREMENTS = ("pre++", "post++")


@dataclass(frozen=True)
class RunPlan:
    """How a runtime loop runs in passes of ``width`` iterations: ``index`` the local stepped
    by one, ``body`` the statements before its step (their run loads served from runs),
    ``step`` the statements from the step on, ``loads`` the run loads (each ``A.Index`` node
    -> its run's key, the buffer and the index spelled without locations)."""

    index: str
    body: tuple[A.Stmt, ...]
    step: tuple[A.Stmt, ...]
    loads: tuple[tuple[A.Index, tuple[str, str]], ...]
    width: int


def _is_step(s: A.Stmt, name: str) -> bool:
    """``++k``, ``k++``, ``k += 1`` or ``k = k + 1`` (``1 + k``) as a statement."""
    e = s.expr if isinstance(s, A.ExprStmt) else None
    if isinstance(e, A.Unary):
        return e.op in _INCREMENTS and isinstance(e.operand, A.Name) and e.operand.name == name
    if not isinstance(e, A.Assign) or not (isinstance(e.target, A.Name) and e.target.name == name):
        return False
    if e.op == "+=":
        return isinstance(e.value, A.IntLit) and e.value.value == 1
    v = e.value
    if e.op != "=" or not (isinstance(v, A.Binary) and v.op == "+"):
        return False
    sides = {(type(v.left), getattr(v.left, "name", getattr(v.left, "value", None))),
             (type(v.right), getattr(v.right, "name", getattr(v.right, "value", None)))}  # fmt: skip
    return sides == {(A.Name, name), (A.IntLit, 1)}


def _split(body: A.Stmt, step: tuple[A.Stmt, ...]) -> list[tuple[str, tuple, tuple]]:
    """The ways the loop may step an index by one: (index, statements before the step,
    statements from the step on), from the ``for`` step or the body's last statement."""
    out = []
    stmts = body.body if isinstance(body, A.Block) else (body,)
    if step and isinstance(step[0], A.ExprStmt):
        for name in _stepped(step[0]):
            if _is_step(step[0], name):
                out.append((name, stmts, step))
    if not step and stmts:
        for name in _stepped(stmts[-1]):
            if _is_step(stmts[-1], name):
                out.append((name, stmts[:-1], (stmts[-1],)))
    return out


def _stepped(s: A.Stmt) -> list[str]:
    return [name for name, how in assigned_names((s,)) if how == "local"]


def _writes(parts: tuple[object, ...], name: str) -> int:
    """How many nodes of ``parts`` assign the local ``name`` (or take its address)."""
    n = 0
    for x in nodes(parts):
        target = None
        if isinstance(x, A.Assign):
            target = x.target
        elif isinstance(x, A.Unary) and x.op in ("pre++", "post++", "pre--", "post--", "&"):
            target = x.operand
        if isinstance(target, A.Name) and target.name == name:
            n += 1
    return n


def _spell(e: A.Expr) -> str | None:
    """A run index's offset from the stepped index, spelled without locations, if it is a
    literal or a name: ``k`` -> "", ``k + 2`` -> "+2", ``c + k`` -> "+c", ``k - 1`` -> "-1"."""
    if isinstance(e, A.IntLit):
        return str(e.value)
    if isinstance(e, A.Name):
        return e.name
    return None


def writes_memory(parts: tuple[object, ...]) -> bool:
    """Whether ``parts`` may write memory: a store (to memory or an element of a local
    array), an increment of anything but a local, an atomic or a ``__device__`` call."""
    for x in nodes(parts):
        if isinstance(x, A.Call) and (x.target is not None or x.func in _ATOMICS):
            return True
        if isinstance(x, A.Assign) and not isinstance(x.target, A.Name):
            return True
        if isinstance(x, A.Unary) and x.op in _INCREMENTS + ("pre--", "post--"):
            if not isinstance(x.operand, A.Name):
                return True
    return False


class DataRunMixin:
    """Plans and serves the runs of a runtime loop (see the module).

    A part of :class:`~.lower.Lowerer`, whose fields it uses."""

    def run_plan(
        self, cond: A.Expr, body: A.Stmt, step: tuple[A.Stmt, ...], carried: list[tuple[str, int]]
    ) -> RunPlan | None:
        """How the runtime loop ``while (cond) body; step`` runs in passes of several
        iterations, or None where it may not (see the module)."""
        parts = (cond, body, step)
        if not self._runs_allowed(parts):
            return None
        tiles = {name for name, count in carried if not count}
        for index, before, after in _split(body, step):
            b = self.lookup(index)
            if (
                b is None
                or b.klass != "T"
                or not isinstance(b.value, Tile)
                or b.value.ty != "int"
                or b.value.expr not in tiles
                or _writes(parts, index) != 1
            ):
                continue
            loads = self._run_loads(before, index, parts)
            if loads:
                return RunPlan(index, before, after, loads, self._run_width(cond, index, loads))
        return None

    def _runs_allowed(self, parts: tuple[object, ...]) -> bool:
        if any(isinstance(x, A.Break | A.Continue | A.Return) for x in nodes(parts)):
            return False
        return not writes_memory(parts)

    def _run_loads(
        self, before: tuple[A.Stmt, ...], index: str, parts: tuple[object, ...]
    ) -> tuple[tuple[A.Index, tuple[str, str]], ...]:
        out = []
        for x in nodes(before):
            if not isinstance(x, A.Index) or not isinstance(x.base, A.Name):
                continue
            ptr = self.lookup(x.base.name)
            if ptr is None or not self._run_buffer(ptr.value):
                continue
            off = self._run_offset(x.index, index, parts)
            if off is not None:
                out.append((x, (ptr.value.tensor, off)))  # type: ignore[union-attr]
        return tuple(out)

    def _run_buffer(self, v: object) -> bool:
        """A pointer at a uniform offset into a one-dimensional buffer of 32-bit elements."""
        if not isinstance(v, Ptr) or v.dims or v.ty in WIDE_CLASSES:
            return False
        if str(v.off.p) != "0" or str(v.off.f) != "0":
            return False
        names = {var: cname for cname, var in self.tensors.items()}
        cname = names.get(v.tensor)
        shapes = {t.name: t.shape for t in self.binding.tensors}  # type: ignore[attr-defined]
        return cname in shapes and len(shapes[cname]) == 1

    def _run_offset(self, e: A.Expr, index: str, parts: tuple[object, ...]) -> str | None:
        """``e`` as the stepped ``index`` plus a constant offset (spelled), else None."""
        if isinstance(e, A.Name):
            return "" if e.name == index else None
        if not isinstance(e, A.Binary) or e.op not in ("+", "-"):
            return None
        pairs = [(e.left, e.right)] + ([(e.right, e.left)] if e.op == "+" else [])
        for mine, other in pairs:
            if not (isinstance(mine, A.Name) and mine.name == index):
                continue
            spelled = _spell(other)
            if spelled is None:
                continue
            if isinstance(other, A.Name):
                b = self.lookup(other.name)
                if b is None or b.klass != "U" or _writes(parts, other.name):
                    continue
            return e.op + spelled
        return None

    def _run_width(
        self, cond: A.Expr, index: str, loads: tuple[tuple[A.Index, tuple[str, str]], ...]
    ) -> int:
        runs = len({key for _, key in loads})
        width = MAX_WIDTH
        while width > 1 and runs * self.free * width * 4 > RUN_BYTES:
            width //= 2
        cap = _literal_bound(cond, index)
        return max(1, min(width, cap)) if cap is not None else width

    def run_read(self, e: A.Index) -> Tile | None:
        """A run load's value in the iteration being lowered: a column of its run."""
        col = self.run_col  # type: ignore[attr-defined]
        run = self.run_tiles.get(e) if col is not None else None  # type: ignore[attr-defined]
        return None if run is None else Tile(f"{run[0]}[:, :, {col}]", run[1])

    def run_addressed(self, expr: str) -> bool:
        """Whether the tile ``expr`` is a column of a run, or an address made of one."""
        if expr in self.run_addrs:  # type: ignore[attr-defined]
            return True
        runs = {name for name, _ in self.run_tiles.values()}  # type: ignore[attr-defined]
        return expr.split("[", 1)[0] in runs and expr.endswith("]")

    def open_runs(self, plan: RunPlan, scope: Scope) -> dict[A.Index, tuple[str, str]]:
        """Read the runs of a pass at its start (the index at its starting value): each run
        once, for the threads active in ``scope``; the run loads -> (run tile, class)."""
        runs: dict[tuple[str, str], tuple[str, str]] = {}
        out: dict[A.Index, tuple[str, str]] = {}
        for node, key in plan.loads:
            if key not in runs:
                ptr, addr = self.address(node, scope)  # type: ignore[attr-defined]
                dst = self.fresh("run")  # type: ignore[attr-defined]
                self.emit("let", node.loc.line, dst=dst,  # type: ignore[attr-defined]
                          value=f"_c2n_gather_run({ptr.tensor}, {addr.expr}, {scope.mask}, "
                          f"{plan.width}, {self.dt(ptr.ty)})")  # type: ignore[attr-defined]  # fmt: skip
                runs[key] = (dst, ptr.ty)
            out[node] = runs[key]
        return out


def _literal_bound(cond: A.Expr, index: str) -> int | None:
    """The iterations a condition ``index < K`` (``<=``, mirrored, a conjunct) allows at most
    from a start of 0 when ``K`` is a literal, else None."""
    if isinstance(cond, A.Binary) and cond.op == "&&":
        a, b = _literal_bound(cond.left, index), _literal_bound(cond.right, index)
        return a if b is None else b if a is None else min(a, b)
    if not isinstance(cond, A.Binary):
        return None
    op, left, right = cond.op, cond.left, cond.right
    if isinstance(left, A.IntLit):
        op, left, right = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(op, op), right, left
    if not (isinstance(left, A.Name) and left.name == index and isinstance(right, A.IntLit)):
        return None
    if op == "<":
        return max(1, right.value)
    if op == "<=":
        return max(1, right.value + 1)
    return None
