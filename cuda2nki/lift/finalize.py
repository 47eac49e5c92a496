"""From one thread's symbolic values to thread-free meaning.

Three rewrites, applied to the values the symbolic execution stored:

* **shared-memory resolution** -- every :class:`~cuda2nki.lift.values.SRead` is replaced by the
  value its writer stored: the writer's thread coordinates (and the variables of loops the reader
  is not in) are solved from the index equations (:func:`~cuda2nki.lift.solve.solve_writer`);
  a barrier must separate another thread's write from the read;
* **tree folding** -- an ``add``/``max``/``min`` tree whose leaves are one per-thread value at
  consecutive thread coordinates (what a shared-memory tree or a shuffle ladder computes, once the
  reading thread is known) becomes a :class:`~cuda2nki.lift.values.Fold` over those coordinates;
  every leaf must occur exactly once, so a tree that drops or repeats a thread's value is *not*
  folded;
* **fold fusion** -- nested folds whose variables only occur as one mixed-radix combination
  (``tid + 256*k``, a block-stride loop inside a block tree) become one fold over the fused
  variable, and a guard ``f < X`` covering the fused extent becomes the extent; a fold over
  threads of a seed combined with a nested fold (``t < W ? x(t) : x(0)``, then a block-stride
  loop) is split and its two adjacent ranges joined into one fold over the row.
"""

from __future__ import annotations

import itertools

from cuda2nki.lift import affine as af
from cuda2nki.lift import movetree, network, scan
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Cond, Poly
from cuda2nki.lift.complement import follows, masked
from cuda2nki.lift.foldfuse import (
    _IDENT,
    _guarded_term,
    _invariant_scale,
    _merge_halves,
    _neutral,
    _rebase_exp,
    _tighten,
    fuse_vars,
    join_ranges,
    split_nested,
)
from cuda2nki.lift.forwarding import LoopCtx
from cuda2nki.lift.leafmatch import (
    _AU,
    _antiunify,
    _combine,
    _flatten,
    _instance,
    _nearest,
    _thread_atoms,
    index_atoms,
)
from cuda2nki.lift.peeled import join_peeled
from cuda2nki.lift.staged import _merge_pieces
from cuda2nki.lift.symexec import Refusal, SharedWrite, ThreadProgram
from cuda2nki.lift.valmap import _all_polys as _all_polys
from cuda2nki.lift.valmap import _map_cond as _map_cond
from cuda2nki.lift.valmap import _map_polys as _map_polys
from cuda2nki.lift.valmap import _rewrite_dag, _rewrite_outer

_COMB = ("add", "max", "min")
#: work units (see :data:`cuda2nki.lift.values.WORK`) one kernel's finalisation may spend before
#: the lifter gives up: a refusal, never a hang, and the same answer however loaded the machine
BUDGET_UNITS = 400_000
#: extra units for each further global store of the kernel
STORE_UNITS = 200_000
_TOO_LARGE = "cooperative code too large to analyse within the work budget"


class Finalizer:
    def __init__(self, prog: ThreadProgram):
        self.prog = prog
        self.block = prog.block or None
        self.memo: dict = {}
        self.counter = itertools.count()
        self._templates: list | None = None
        self.units_left: float = BUDGET_UNITS
        self._folded: dict = {}
        self._resolved: dict = {}
        self._tree_sizes: dict = {}
        self._networks: dict = {}
        self._left: set = set()  # (read, loop variable, conditions) already cleared
        self._active = 0
        # simplification is charged per memo miss: start each kernel from an empty memo, so
        # what it costs does not depend on the kernels lifted before it in this process
        V.reset_memos()

    def grant(self, stores: int) -> None:
        """Extra budget for ``stores`` further global stores lowered with this finaliser."""
        self.units_left += STORE_UNITS * max(stores, 0)

    def enter_budget(self) -> None:
        """Charge the work done from now on (nested calls share one account)."""
        if self._active == 0:
            V.WORK[0] = self.units_left
        self._active += 1

    def leave_budget(self) -> None:
        self._active -= 1
        if self._active == 0:
            self.units_left = V.WORK[0]
            V.WORK[0] = float("inf")

    def check_budget(self, units: int = 1) -> None:
        try:
            V.spend(units)
        except V.BudgetExceeded:
            raise Refusal("C2N2015", None, what=_TOO_LARGE) from None

    def fresh(self, base: str) -> str:
        return f"%{base}@{next(self.counter)}"

    def thread_bounds(self) -> dict:
        return {f"threadIdx.{d}": b for d, b in zip("xyz", self.block or ())}

    # ------------------------------------------------------------------ entry
    def finalize(self, e: V.DExpr, known: Cond | None = None) -> V.DExpr:
        """``e`` thread-free; ``known``: the guard under which the value is used (the store's),
        whose conjuncts may be assumed where pieces of a staged window are joined."""
        self.enter_budget()
        try:
            return self._finalize(e, tuple((known.conjuncts() or []) if known else ()))
        except V.BudgetExceeded:
            raise Refusal("C2N2015", None, what=_TOO_LARGE) from None
        finally:
            self.leave_budget()

    def _finalize(self, e: V.DExpr, known: tuple = ()) -> V.DExpr:
        with af.bounds(self.thread_bounds()):
            e = self.resolve(e)
            e = _rewrite_outer(e, lambda x: _merge_pieces(x, known), {})
            e = V.simplify(_rewrite_dag(e, _rebase_exp, {}))
            e = self.fold_trees(e)
            e = self.fuse(_rewrite_dag(e, _guarded_term, {}))
            return V.simplify(e)

    # ------------------------------------------------------------------ resolution
    def resolve(self, e: V.DExpr) -> V.DExpr:
        """``e`` with its shared reads replaced by the values written; a subexpression shared
        in the DAG is resolved once per atom-bounds context.  Meeting it again charges the
        work budget one unit per node of it as a tree: what walking it again cost when it was
        resolved as a tree (its simplifications were memo hits then, and free), so the budget,
        and which kernels it refuses, stay those of the tree walk; only the time is saved."""
        key = (e, V._bounds_key())
        got = self._resolved.get(key)
        if got is not None:
            self.check_budget(self._tree_nodes(e))
            return got
        value = self._resolve(e)
        self._resolved[key] = value
        return value

    def _tree_nodes(self, e: V.DExpr) -> int:
        """The nodes of ``e`` counted as a tree (a shared subexpression once per use)."""
        got = self._tree_sizes.get(e)
        if got is None:
            got = 1 + sum(self._tree_nodes(k) for k in V.children(e))
            self._tree_sizes[e] = got
        return got

    def _resolve(self, e: V.DExpr) -> V.DExpr:
        self.check_budget()
        if isinstance(e, V.SRead):
            return self.sread(e)
        if isinstance(e, V.Fold):
            with af.bounds({e.var: e.stop}):
                body = self.resolve(e.body)
            return V.Fold(e.dtype, e.op, e.var, e.start, e.stop, e.step, body)
        kids = V.children(e)
        if not kids:
            return _resolve_index_payloads(e, self)
        new = tuple(self.resolve(k) for k in kids)
        return V.rebuild(e, new) if new != kids else e

    def sread(self, r: V.SRead) -> V.DExpr:
        if r in self.memo:
            return self.memo[r]
        self.check_budget()
        arr = self.prog.shared[r.array]
        v = self._move_tree(arr, r)
        if v is None:
            v = self._tree(arr, r)
        if v is None:
            v = self._scan(arr, r)
        if v is None:
            v = self._network(arr, r)
        if v is None:
            v = self._from_writes(arr.name, arr.writes, r, r.upto, arr.dtype)
            if _in_writing_loop(r, arr.writes):
                v = masked(v)  # zero fills of a tile refilled each step: one masked load
        self.memo[r] = v
        return v

    # ------------------------------------------------------------------ block trees
    def _tree(self, arr, r: V.SRead) -> V.DExpr | None:
        """``A[0]`` after tree steps ``if (t < s) A[t] = A[t] op A[t + s]`` for ``s = S, S/2,
        ..., 1`` (a barrier between steps) is ``op`` over ``A[j]``, ``j < 2S``, as the steps
        found it: one fold, resolved once for a symbolic ``j`` instead of thread by thread."""
        b = self.block
        if not b or b[1:] != (1, 1) or r.index != (af.ZERO,) or len(arr.dims) != 1:
            return None
        if r.live is None:
            return None
        steps: list = []
        k = r.upto - 1
        stride = 1
        while k >= 0:
            got = _tree_step(arr.name, arr.writes[k], k, stride, r.live)
            if got is None:
                break
            steps.append(got)
            k -= 1
            stride *= 2
        if len(steps) < 2 or stride > b[0] or (arr.dims[0] is not None and arr.dims[0] < stride):
            return None
        ops = {op for op, _ in steps}
        if len(ops) != 1:
            return None
        # each step reads what the previous step wrote after a barrier; the reader too
        epochs = [e for _, e in steps]  # epoch of each step's reads, last step first
        writes = arr.writes[k + 1 : r.upto]  # first step first
        if r.epoch <= writes[-1].epoch or any(
            e <= w.epoch for e, w in zip(reversed(epochs[:-1]), writes[:-1])
        ):
            return None
        op = ops.pop()
        self.check_budget(8)
        j = self.fresh("t")
        first = V.SRead(arr.dtype, arr.name, (af.sym(j),), k + 1, epochs[-1], r.ctx, r.live, r.who)
        fold = V.Fold(arr.dtype, op, j, af.ZERO, Poly.const(stride), af.ONE, first)
        return V.simplify(self.resolve(fold))

    def _move_tree(self, arr, r: V.SRead) -> V.DExpr | None:
        """A compare-and-move (arg-max) tree (see :mod:`cuda2nki.lift.movetree`); a read that
        sees a data-guarded write outside such a tree is refused."""
        if not arr.guarded or arr.guarded[0][0] >= r.upto:
            return None
        got = movetree.find(self.prog.shared, arr, r, self.block)
        if got is None:
            raise Refusal("C2N2018", arr.guarded[0][1], what=movetree.REFUSED)
        self.check_budget(24)
        tree, *reads = got
        return V.simplify(movetree.value_of(tree, tuple(reads), r, self.fresh, self.resolve))

    def _scan(self, arr, r: V.SRead) -> V.DExpr | None:
        """A Hillis-Steele block scan (see :mod:`cuda2nki.lift.scan`)."""
        got = scan.prefix_of(arr.writes, r, self.block, self.fresh)
        return None if got is None else V.simplify(self.resolve(got))

    def _network(self, arr, r: V.SRead) -> V.DExpr | None:
        """An add-only network over staged elements (see :mod:`cuda2nki.lift.network`)."""
        if arr.name not in self._networks:
            self.check_budget(64)
            self._networks[arr.name] = network.analyse(
                arr, self.block, self.fresh("scan"), self.prog.warp_epochs
            )
        net = self._networks[arr.name]
        got = None if net is None else network.read(net, r, self.block)
        return None if got is None else V.simplify(self.resolve(got))

    def _from_writes(
        self,
        name: str,
        writes: list,
        r: V.SRead,
        upto: int,
        dtype: str,
        covered: tuple = (),
    ):
        """The value ``r`` reads: the latest of ``writes[:upto]`` that wrote its element, as a
        select chain where a write covers only some readers (``covered``: the conditions of the
        writes already passed, none of which holds for the readers this call resolves for)."""
        for k in range(upto - 1, -1, -1):
            self._leaving_loops(name, writes, r, writes[k], covered)
            if writes[k].accumulate is not None:
                got = self._accumulated(name, writes[k], r)
                if got is None:
                    continue
                prior = self._from_writes(name, writes, r, k, dtype, covered)
                if _neutral(prior, writes[k].accumulate):
                    return got
                return V.Op(dtype, writes[k].accumulate, (prior, got))
            got = self._try_write(name, writes[k], r)
            if got is None:
                continue
            val, cond = got
            if cond == af.TRUE or (follows(cond, covered) and _in_writing_loop(r, writes)):
                return val
            rest = self._from_writes(name, writes, r, k, dtype, (*covered, cond))
            return V.Select(dtype, V.Pred("bool", cond), val, rest)
        self._leaving_loops(name, writes, r, None, covered)
        # never written on this path: CUDA reads garbage here; any use must be guarded away
        return V.Const(dtype, float("nan"))

    # ------------------------------------------------------------------ recurrences
    def _leaving_loops(
        self, name: str, writes: list, r: V.SRead, w: SharedWrite | None, covered: tuple
    ) -> None:
        """Refuse when ``r``, read inside a loop that writes the array, would next look at a
        write outside that loop (``w``; ``None``: no write at all) for readers an earlier
        iteration of the loop may have written the element for: that element is a recurrence
        through shared memory (``s[t] = f(s[t])`` repeated), which the resolution -- one
        iteration, run once with the loop variable symbolic -- does not follow."""
        inside = {lc.var for lc in w.loops} if w is not None else set()
        for v in r.ctx:
            if v in inside or (r, v, covered) in self._left:
                continue  # (a later write outside the loop: the same question, answered)
            self._left.add((r, v, covered))
            loop = _writing_loop(writes, v)
            if loop is None:
                continue  # the loop writes nothing to this array, or runs once
            if self._reaches_none(r, covered):
                return
            for x in writes:
                if loop in x.loops and self._earlier_iteration(x, r, loop):
                    raise Refusal(
                        "C2N2012",
                        x.loc,
                        array=name,
                        why="an element written in one iteration of a loop is read in a later "
                        "one: a recurrence through shared memory",
                    )

    def _reaches_none(self, r: V.SRead, covered: tuple) -> bool:
        """Whether no reading thread is left once the writes passed (``covered``) are taken out,
        decided by trying every thread of the block on the conditions over thread coordinates
        alone (the others are dropped, which can only keep more readers)."""
        if not covered or not self.block:
            return False
        coords = {f"threadIdx.{d}" for d in "xyz"}
        parts = [c.negate() for c in covered]
        if r.live is not None:
            parts.extend(Cond.of(c) for c in (r.live.conjuncts() or []))
        parts = [c for c in parts if c.atoms() and c.atoms() <= coords]
        if not parts:
            return False
        ranges = [range(b) for b in self.block]
        for tx, ty, tz in itertools.product(*ranges):
            env = {"threadIdx.x": tx, "threadIdx.y": ty, "threadIdx.z": tz}
            if all(af.holds(c, env) for c in parts):
                return False
        return True

    def _earlier_iteration(self, w: SharedWrite, r: V.SRead, loop) -> bool:  # noqa: ANN001
        """Whether ``w``, in an iteration of ``loop`` before the reader's, may write the element
        ``r`` reads (``True`` when that cannot be ruled out)."""
        ren, unknowns = self._writer_frame(w, r, loop)
        widx = tuple(p.subs(ren) for p in w.index)
        with af.bounds({**unknowns, loop.var: loop.extent}):
            sol = _solve(widx, r.index, unknowns, w.guard.subs(ren))
            if sol is None:
                return True
            mapping, cond = sol
            before = af.compare(
                "<", mapping.get("w:" + loop.var, af.sym("w:" + loop.var)), af.sym(loop.var)
            )
            cond = V.simplify_cond(af.conj([cond.subs(mapping), Cond.of(before)]))
        return cond != af.FALSE

    def _accumulated(self, name: str, w: SharedWrite, r: V.SRead) -> V.DExpr | None:
        """What the shared atomics of ``w`` added to the element ``r`` reads: a fold, over the
        writing threads (and their loops) the index equations leave free, of the value each
        contributed where it wrote that element."""
        if w.epoch >= r.epoch:
            raise Refusal(
                "C2N2012",
                r_loc(w),
                array=name,
                why="a shared atomic's result is read without a __syncthreads between",
            )
        ren: dict = {}
        unknowns: dict = {}
        for k, d in enumerate("xyz"):
            t = f"threadIdx.{d}"
            ren[t] = af.sym("w:" + t)
            b = self.block[k] if self.block else None
            if b is None:
                raise Refusal(
                    "C2N2012", w.loc, array=name, why="shared atomics need the block size"
                )
            unknowns["w:" + t] = Poly.const(b)
        for lc in w.loops:
            ren[lc.var] = af.sym("w:" + lc.var)
        for lc in w.loops:
            unknowns["w:" + lc.var] = lc.extent.subs(ren)
        widx = tuple(p.subs(ren) for p in w.index)
        wguard = w.guard.subs(ren)
        keyed = _data_key(w.index, r.index, ren)
        if keyed is not None:
            # a histogram privatised in shared memory: every writer contributes where its key
            # (read from data) is the element read
            sol = ({}, wguard)
        else:
            with af.bounds(unknowns):
                sol = _solve(widx, r.index, unknowns, wguard)
        if sol is None:
            raise Refusal(
                "C2N2012",
                w.loc,
                array=name,
                why=f"cannot invert the atomic's index [{', '.join(map(str, w.index))}]",
            )
        mapping, cond = sol
        val = V.subs_poly(V.subs_poly(w.value, ren), mapping)
        cond = V.simplify_cond(cond.subs(mapping))
        if cond == af.FALSE:
            return None
        ident = _IDENT.get(w.accumulate)
        if ident is None:
            raise Refusal("C2N2022", w.loc, what=f"shared atomic '{w.accumulate}'")
        # the free writer variables, innermost (loops) first
        free = [u for u in unknowns if u not in mapping][::-1]
        one = {u: af.ZERO for u in free if unknowns[u] == af.ONE}
        free = [u for u in free if u not in one]
        cond = cond.subs(one) if one else cond
        parts = cond.conjuncts() if cond.conjuncts() is not None else [cond]
        inner = af.conj(
            Cond.of(c) if isinstance(c, af.Cmp) else c
            for c in parts
            if (c.poly if isinstance(c, af.Cmp) else c).atoms() & set(free)
        )
        outer = af.conj(
            Cond.of(c) if isinstance(c, af.Cmp) else c
            for c in parts
            if not (c.poly if isinstance(c, af.Cmp) else c).atoms() & set(free)
        )
        val = V.subs_poly(val, one) if one else val
        zero = V.Const(val.dtype, ident)
        if inner != af.TRUE:
            val = V.Select(val.dtype, V.Pred("bool", inner), val, zero)
        if keyed is not None:
            val = V.Select(val.dtype, V.subs_poly(keyed, one) if one else keyed, val, zero)
        for u in free:
            var = self.fresh("atomic")
            val = V.subs_poly(val, {u: af.sym(var)})
            val = V.Fold(val.dtype, w.accumulate, var, af.ZERO, unknowns[u], af.ONE, val)
        if outer != af.TRUE:
            val = V.Select(val.dtype, V.Pred("bool", outer), val, zero)
        return V.simplify(self.resolve(val))

    def _writer_frame(self, w: SharedWrite, r: V.SRead, loop=None) -> tuple[dict, dict]:  # noqa: ANN001
        """The writer's coordinates renamed apart from the reader's (``w:threadIdx.x``, ...):
        its thread coordinates and the variables of its loops the reader is not in (and
        ``loop``, when given), each an unknown bounded by its extent."""
        ren: dict = {}
        unknowns: dict = {}
        for k, d in enumerate("xyz"):
            t = f"threadIdx.{d}"
            ren[t] = af.sym("w:" + t)
            b = self.block[k] if self.block else None
            unknowns["w:" + t] = Poly.const(b) if b is not None else af.sym(f"blockDim.{d}")
        free = [lc for lc in w.loops if lc.var not in r.ctx or lc is loop]
        for lc in free:
            ren[lc.var] = af.sym("w:" + lc.var)
        for lc in free:
            unknowns["w:" + lc.var] = lc.extent.subs(ren)
        return ren, unknowns

    def _try_write(self, name: str, w: SharedWrite, r: V.SRead):
        self.check_budget(40)  # one index system solved (and its value substituted)
        ren, unknowns = self._writer_frame(w, r)
        widx = tuple(p.subs(ren) for p in w.index)
        wguard = w.guard.subs(ren)
        with af.bounds(unknowns):
            sol = _solve(widx, r.index, unknowns, wguard)
        if sol is None:
            raise Refusal(
                "C2N2012",
                w.loc,
                array=name,
                why=f"cannot invert the write index [{', '.join(map(str, w.index))}] "
                f"for the read [{', '.join(map(str, r.index))}]",
            )
        mapping, cond = sol
        cond = V.simplify_cond(_assuming(cond, r.live))
        if cond == af.FALSE:
            return None
        who = V.reader_coords(r)
        same = all(
            mapping.get("w:" + t, af.sym(t)) == who[k]
            for k, t in enumerate(af.THREAD)
            if not (self.block and self.block[k] == 1)
        )
        if not same and w.epoch >= r.epoch:
            raise Refusal(
                "C2N2012",
                r_loc(w),
                array=name,
                why="another thread's write is read without a __syncthreads between",
            )
        val = V.subs_poly(V.subs_poly(w.value, ren), mapping)
        left = {a for a in index_atoms(val) if isinstance(a, str) and a.startswith("w:")}
        if left or any(isinstance(a, str) and a.startswith("w:") for a in cond.atoms()):
            raise Refusal(
                "C2N2012",
                w.loc,
                array=name,
                why="several threads write the element with different values",
            )
        val = V.simplify(self.resolve(val))
        return val, cond

    # ------------------------------------------------------------------ tree folding
    def templates(self):
        """The per-thread values that tree leaves may be instances of, resolved lazily (in
        program order, each once).  Values of combination steps (a shared write reading its own
        array) are partial trees, never leaves: they are not resolved at a symbolic thread."""
        if self._templates is None:
            self._templates = []
            self._tpl_pos = 0
            steps = set()
            for arr in self.prog.shared.values():
                for w in arr.writes:
                    if any(isinstance(n, V.SRead) and n.array == arr.name for n in V.walk(w.value)):
                        steps.add(w.value)
            self._tpl_src = [t for t in self.prog.templates if t not in steps]
        k = 0
        while True:
            if k < len(self._templates):
                yield self._templates[k]
                k += 1
                continue
            if self._tpl_pos >= len(self._tpl_src):
                return
            t = self._tpl_src[self._tpl_pos]
            self._tpl_pos += 1
            try:
                rt = V.simplify(self.resolve(t))
            except Refusal:
                continue
            if (
                any(isinstance(a, str) and a.startswith("threadIdx.") for a in index_atoms(rt))
                and rt not in self._templates
            ):
                self._templates.append(rt)

    def fold_trees(self, e: V.DExpr) -> V.DExpr:
        """Trees of ``add``/``max``/``min`` over per-thread values as folds; a shared subtree
        is folded once (per atom-bounds context)."""
        key = (e, V._bounds_key())
        got = self._folded.get(key)
        if got is None:
            got = self._folded[key] = self._fold_trees(e)
        return got

    def _fold_trees(self, e: V.DExpr) -> V.DExpr:
        self.check_budget()
        if isinstance(e, V.Op) and e.op in _COMB:
            leaves = _flatten(e, e.op)
            if len(leaves) >= 2:
                got = self._match(e.op, e.dtype, leaves)
                if got is not None:
                    return got
            return _combine(e.op, e.dtype, [self.fold_trees(x) for x in leaves])
        if isinstance(e, V.Fold):
            with af.bounds({e.var: e.stop}):
                return V.Fold(
                    e.dtype, e.op, e.var, e.start, e.stop, e.step, self.fold_trees(e.body)
                )
        kids = V.children(e)
        if not kids:
            return e
        return V.rebuild(e, tuple(self.fold_trees(k) for k in kids))

    def _match(self, op: str, dtype: str, leaves: list) -> V.DExpr | None:
        self.check_budget()
        ident = _IDENT[op]
        real = [x for x in leaves if not (isinstance(x, V.Const) and x.value == ident)]
        if op in ("max", "min"):  # idempotent: a value met twice counts once
            real = list(dict.fromkeys(real))
        if len(real) < 2:
            return None
        for tpl, atom in self._candidates(op):
            got = self._fold_as(op, dtype, real, tpl, atom)
            if got is not None:
                return got
        # no program value is the leaves' pattern (partial folds rewritten after resolution):
        # the pattern two leaves share, checked against every leaf like any other template.
        # Only for combinations of partial folds (what threads hand to a cooperative step);
        # a few loads combined in one thread (a stencil) stay as written.
        if not all(isinstance(x, V.Fold) and x.op == op for x in real):
            return None
        near = _nearest(real)
        tpl = None if near is None else _antiunify(real[0], near, _AU)
        return None if tpl is None else self._fold_as(op, dtype, real, tpl, _AU)

    def _fold_as(self, op: str, dtype: str, real: list, tpl: V.DExpr, atom: str):
        """The leaves that are ``tpl`` at consecutive values of ``atom`` as one fold (combined
        with the other leaves), or None."""
        cs = []
        rest = []
        for leaf in real:
            c = _instance(tpl, leaf, atom)
            if c is None:
                rest.append(leaf)
            else:
                cs.append(c)
        if len(cs) < 2:
            return None
        base = min(cs, key=lambda p: p.const_value if (p - cs[0]).is_const else 0)
        offs = sorted((c - base).const_value if (c - base).is_const else -1 for c in cs)
        if offs != list(range(len(cs))):
            return None
        t = self.fresh("t")
        body = V.simplify(V.subs_poly(tpl, {atom: base + af.sym(t)}))
        with af.bounds({t: len(cs)}):
            body = self.fold_trees(body)
        fold = V.Fold(dtype, op, t, af.ZERO, Poly.const(len(cs)), af.ONE, body)
        if not rest:
            return fold
        return _combine(op, dtype, [fold] + [self.fold_trees(x) for x in rest])

    def _candidates(self, op: str):
        """(template, thread atom) pairs to try as the leaf pattern of an ``op`` tree: each
        template, and the operands of a template that is itself an ``op`` combination (a
        per-thread ``max(init, fold)`` seen as ``max`` leaves)."""
        for tpl in self.templates():
            parts = [tpl]
            if isinstance(tpl, V.Op) and tpl.op == op:
                parts += [x for x in _flatten(tpl, op) if x is not tpl]
            for part in parts:
                for atom in _thread_atoms(part):
                    yield part, atom

    # ------------------------------------------------------------------ fold fusion
    def fuse(self, e: V.DExpr) -> V.DExpr:
        if isinstance(e, V.Op) and e.op in _COMB and len(e.args) == 2:
            leaves = _flatten(e, e.op)
            joined = join_peeled(leaves, e.op)
            if joined is not None:  # a step written out of its loop (see lift.peeled)
                return self.fuse(_combine(e.op, e.dtype, joined))
        kids = V.children(e)
        if kids:
            if isinstance(e, V.Fold):
                with af.bounds({e.var: e.stop}):
                    e = V.rebuild(e, (self.fuse(e.body),))
            else:
                e = V.rebuild(e, tuple(self.fuse(k) for k in kids))
        if not isinstance(e, V.Fold):
            return e
        scaled = _invariant_scale(e)
        if scaled is not None:  # sum_v (x(v) / c) == (sum_v x(v)) / c
            inner, op, c = scaled
            return V.Op(e.dtype, op, (self.fuse(inner), c))
        if (
            e.op in ("max", "min")
            and isinstance(e.body, V.Op)
            and e.body.op == e.op
            and isinstance(e.body.args[0], V.Const)
            and isinstance(e.body.args[1], V.Fold)
        ):
            # fold(max(c, inner)) == max(c, fold(inner)): max/min are idempotent
            c, inner = e.body.args
            hoisted = V.Fold(e.dtype, e.op, e.var, e.start, e.stop, e.step, inner)
            return V.Op(e.dtype, e.op, (c, self.fuse(hoisted)))
        parts = split_nested(e)
        if parts is not None:  # fold(a op fold(b)) == fold(a) op fold(fold(b)), when one fold
            taken = self.counter
            self.counter, names = itertools.tee(taken)
            whole = join_ranges([self.fuse(p) for p in parts])
            if whole is not None:
                return whole
            self.counter = names  # as if never tried: the same fresh names as before
        chain = [e]
        body = e.body
        while isinstance(body, V.Fold) and body.op == e.op:
            chain.append(body)
            body = body.body
        if len(chain) < 2:
            return _tighten(_merge_halves(e))
        extents = {f.var: f.stop for f in chain}
        fused = fuse_vars(extents, body, self.fresh("r"))
        if fused is None:
            return _tighten(e)
        var, ext, new_body = fused
        return _tighten(V.Fold(e.dtype, e.op, var, af.ZERO, ext, af.ONE, new_body))


def _data_key(windex: tuple, rindex: tuple, ren: dict) -> V.DExpr | None:
    """``key(writer) == element`` where a shared atomic's index is a value read from data (and
    the reader's index is not): the condition under which a writer adds to the element read."""
    if len(windex) != 1 or len(rindex) != 1:
        return None
    atoms = windex[0].top_atoms() if hasattr(windex[0], "top_atoms") else windex[0].atoms()
    data = [a for a in atoms if isinstance(a, af.OpaqueAtom) and isinstance(a.payload, V.DExpr)]
    if len(data) != 1 or windex[0] != Poly.atom(data[0]):
        return None
    if any(isinstance(a, af.OpaqueAtom) for a in rindex[0].atoms()):
        return None
    key = V.subs_poly(data[0].payload, ren)
    return V.Op("bool", "eq", (key, V.IntVal("int32", rindex[0])))


def _tree_step(name: str, w: SharedWrite, k: int, s: int, live: Cond):
    """``(op, epoch of its reads)`` when write ``k`` is ``if (t < s) A[t] = A[t] op A[t + s]``
    (reading the array as the earlier writes left it, its other conditions the reader's)."""
    t = af.sym("threadIdx.x")
    if w.index != (t,) or w.loops or w.accumulate is not None:
        return None
    v = w.value
    if not (isinstance(v, V.Op) and v.op in _COMB and len(v.args) == 2):
        return None
    reads = v.args
    if not all(isinstance(x, V.SRead) and x.array == name and x.upto == k for x in reads):
        return None
    if {x.index for x in reads} != {(t,), (t + s,)} or reads[0].epoch != reads[1].epoch:
        return None
    facts = set(live.conjuncts() or [])
    cs = V.simplify_cond(w.guard).conjuncts()
    want = af.compare("<", t, Poly.const(s))
    if cs is None or want not in cs or any(c not in facts for c in cs if c != want):
        return None
    return v.op, reads[0].epoch


def r_loc(w: SharedWrite):
    return w.loc


def _assuming(cond: Cond, known: Cond | None) -> Cond:
    """Drop the conjuncts of ``cond`` that the reader's own guard ``known`` already states."""
    if known is None:
        return cond
    facts = set(known.conjuncts() or [])
    cs = cond.conjuncts()
    if cs is None or not facts:
        return cond
    return af.conj(Cond.of(c) for c in cs if c not in facts)


def _reads_own(r: V.SRead, value: V.DExpr) -> bool:
    """Whether ``value`` (a shared write's value) reads the array it is written to; the writer's
    array is not recorded on the value, so any shared read makes it a combination step."""
    return True


def _solve(widx, ridx, unknowns, guard):
    from cuda2nki.lift.solve import solve_writer

    return solve_writer(widx, ridx, unknowns, guard)


def _resolve_index_payloads(e: V.DExpr, fin: Finalizer) -> V.DExpr:
    """Resolve shared reads hidden in gather indices (opaque atoms carrying a value)."""
    if not isinstance(e, V.Load):
        return e
    rep = {}
    for a in e.index.top_atoms():
        if isinstance(a, af.OpaqueAtom) and isinstance(a.payload, V.DExpr):
            new = fin.resolve(a.payload)
            if new != a.payload:
                rep[a] = Poly.atom(V.opaque_of(new))
    return V.Load(e.dtype, e.tensor, e.index.subs(rep)) if rep else e


def _in_writing_loop(r: V.SRead, writes: list) -> bool:
    """Whether ``r`` is read inside a loop (of more than one trip) that writes the array (a
    tile refilled each step): there a write whose condition the writes passed leave no other
    reader for ends the chain (falling through would reach an earlier iteration) and the zero
    fills fold into one masked load; elsewhere the chain stays whole, for a window staged piece
    by piece to join (:mod:`cuda2nki.lift.staged`)."""
    return any(_writing_loop(writes, v) is not None for v in r.ctx)


def _writing_loop(writes: list, var: str) -> LoopCtx | None:
    """The loop over ``var`` (of more than one trip) that some of ``writes`` sit in, if any."""
    loop = next((lc for x in writes for lc in x.loops if lc.var == var), None)
    return None if loop is None or loop.extent == af.ONE else loop
