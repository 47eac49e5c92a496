"""Probe runs: reads at a per-thread index that a loop known at trace time steps by one.

A loop whose trip count is known when the kernel is traced (``for (p = 0; p < 16; ++p)``, the
break of a thread that found what it looks for a per-thread flag) may walk a per-thread index
one slot at a time -- a linear probe ``slot = (slot + 1) & (capacity - 1)``, a scan ``j++`` --
and read the slot every iteration (``held = keys[slot]``): one element per thread and
iteration.  Here each such read is a :func:`_c2n_probe_run` of the port: every ``W`` iterations
the threads still active read their next ``W`` elements at once (one DMA per thread column,
runs of ``W`` elements per partition, the threads that left moving nothing); in between, a
thread whose index is its run's start plus the iteration's position takes its element from the
run, and any other -- its index wrapped around or jumped, or it was not active when the run was
read -- gathers its element alone.  The choice is made per thread from the index itself, so the
values are exactly the serial loop's whatever the loop does to the index.

A read is served so when every iteration reaches it in every thread still in the loop (it is
at the top level of the body, or inside ``if``s that test only the loop's exit flags), at ``index + c`` (``c`` a literal or a uniform value the loop does not change) of a
one-dimensional buffer, the index a per-thread integer local that the loop assigns once, at such a
place in its body or step, with ``index + 1`` (or ``(index + 1) & m``, ``(index + 1) % m``,
``++index``, ``index++``, ``index += 1``), and the loop writes no memory.
"""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.bound import nodes
from cuda2nki.lift.literal.datarun import MAX_WIDTH, RUN_BYTES, _is_step, _writes, writes_memory
from cuda2nki.lift.literal.state import Scope
from cuda2nki.lift.literal.values import Tile

_TOP = (A.VarDecl, A.ExprStmt)
#: the flags a loop's ``break`` and ``continue`` set (:mod:`.flow`)
EXIT_FLAGS = ("__c2n_brk", "__c2n_cnt")


def _wrapped_step(s: A.Stmt, name: str) -> bool:
    """``index = (index + 1) & m`` or ``% m``, or a plain step by one (:func:`_is_step`)."""
    if _is_step(s, name):
        return True
    e = s.expr if isinstance(s, A.ExprStmt) else None
    if not (isinstance(e, A.Assign) and e.op == "=" and isinstance(e.target, A.Name)):
        return False
    v = e.value
    if e.target.name != name or not (isinstance(v, A.Binary) and v.op in ("&", "%")):
        return False
    inner = A.ExprStmt(loc=s.loc, expr=A.Assign(loc=e.loc, op="=", target=e.target, value=v.left))
    return _is_step(inner, name)


def _statements(body: A.Stmt, step: tuple[A.Stmt, ...]) -> tuple[A.Stmt, ...]:
    """The statements every iteration reaches in every thread still in the loop: those of the
    body and step, and inside an ``if`` that only tests the loop's own exit flags (a thread
    that left by ``break`` is no longer in the loop)."""
    out: list[A.Stmt] = []

    def walk(items: tuple[A.Stmt, ...]) -> None:
        for s in items:
            if isinstance(s, A.Block):
                walk(s.body)
            elif isinstance(s, A.If) and s.else_ is None and _exit_flags_only(s.cond):
                walk(s.then.body if isinstance(s.then, A.Block) else (s.then,))
            else:
                out.append(s)

    walk((body, *step))
    return tuple(out)


def _exit_flags_only(cond: A.Expr) -> bool:
    names = [x.name for x in nodes(cond) if isinstance(x, A.Name)]
    return bool(names) and all(n.startswith(EXIT_FLAGS) for n in names)


class ProbeRunMixin:
    """Plans the probe runs of a loop known at trace time (see the module).

    A part of :class:`~.lower.Lowerer`, whose fields it uses."""

    def open_probe_runs(self, body: A.Stmt, step: tuple[A.Stmt, ...], line: int) -> dict:
        """Emit a probe run for each read the module allows, in front of the loop; the
        previous reads -> runs (restored by the caller after the loop)."""
        saved = self.probe_reads  # type: ignore[attr-defined]
        reads = self._probe_reads(body, step)
        runs: dict[tuple[str, str], str] = {}
        width = MAX_WIDTH
        while width > 1 and len({k for _, k in reads}) * self.free * width * 4 > RUN_BYTES:  # type: ignore[attr-defined]
            width //= 2
        mine = dict(saved)
        for node, key in reads:
            if key not in runs:
                ptr = self.lookup(node.base.name).value  # type: ignore[attr-defined,union-attr]
                runs[key] = self.fresh("probe")  # type: ignore[attr-defined]
                self.emit("let", line, dst=runs[key],  # type: ignore[attr-defined]
                          value=f"_c2n_probe_run({ptr.tensor}, {width}, {self.dt(ptr.ty)})")  # type: ignore[attr-defined]  # fmt: skip
            mine[node] = runs[key]
        self.probe_reads = mine  # type: ignore[attr-defined]
        return saved

    def _probe_reads(
        self, body: A.Stmt, step: tuple[A.Stmt, ...]
    ) -> list[tuple[A.Index, tuple[str, str]]]:
        parts = (body, step)
        if writes_memory(parts):
            return []
        top = _statements(body, step)
        out: list[tuple[A.Index, tuple[str, str]]] = []
        for s in top:
            for index in self._probe_indices(s, parts):
                for st in top:
                    if not isinstance(st, _TOP):
                        continue
                    for x in nodes(st):
                        if not isinstance(x, A.Index) or not isinstance(x.base, A.Name):
                            continue
                        ptr = self.lookup(x.base.name)  # type: ignore[attr-defined]
                        if ptr is None or not self._run_buffer(ptr.value):  # type: ignore[attr-defined]
                            continue
                        off = self._run_offset(x.index, index, parts)  # type: ignore[attr-defined]
                        if off is not None:
                            out.append((x, (ptr.value.tensor, index + off)))
        return out

    def _probe_indices(self, s: A.Stmt, parts: tuple[object, ...]) -> list[str]:
        """The per-thread integer locals that ``s`` steps by one (see the module)."""
        e = s.expr if isinstance(s, A.ExprStmt) else None
        target = e.target if isinstance(e, A.Assign) else getattr(e, "operand", None)
        if not isinstance(target, A.Name) or not _wrapped_step(s, target.name):
            return []
        b = self.lookup(target.name)  # type: ignore[attr-defined]
        if b is None or b.klass != "T" or not isinstance(b.value, Tile) or b.value.ty != "int":
            return []
        return [target.name] if _writes(parts, target.name) == 1 else []

    def probe_read(self, e: A.Index, scope: Scope) -> Tile | None:
        """A read served by a probe run: its element, from the run or gathered alone."""
        run = self.probe_reads.get(e)  # type: ignore[attr-defined]
        if run is None:
            return None
        ptr, addr = self.address(e, scope)  # type: ignore[attr-defined]
        dst = self.fresh("ld")  # type: ignore[attr-defined]
        self.emit("let", e.loc.line, dst=dst,  # type: ignore[attr-defined]
                  value=f"{run}.at({addr.expr}, {self.store_mask(scope)})")  # type: ignore[attr-defined]  # fmt: skip
        return Tile(dst, ptr.ty)
