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
  variable, and a guard ``f < X`` covering the fused extent becomes the extent.
"""

from __future__ import annotations

import itertools

from cuda2nki.lift import affine as af
from cuda2nki.lift import network, scan
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Cond, Poly
from cuda2nki.lift.peeled import join_peeled
from cuda2nki.lift.solve import radix_order
from cuda2nki.lift.symexec import Refusal, SharedWrite, ThreadProgram

_COMB = ("add", "max", "min")
#: work units (see :data:`cuda2nki.lift.values.WORK`) one kernel's finalisation may spend before
#: the lifter gives up: a refusal, never a hang, and the same answer however loaded the machine
BUDGET_UNITS = 400_000
#: extra units for each further global store of the kernel
STORE_UNITS = 200_000
_IDENT = {"add": 0.0, "max": float("-inf"), "min": float("inf")}
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
        v = self._tree(arr, r)
        if v is None:
            v = self._scan(arr, r)
        if v is None:
            v = self._network(arr, r)
        if v is None:
            v = self._from_writes(arr.name, arr.writes, r, r.upto, arr.dtype)
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
            if cond == af.TRUE:
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
            loop = next((lc for x in writes for lc in x.loops if lc.var == v), None)
            if loop is None or loop.extent == af.ONE:
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


def _merge_pieces(e: V.DExpr, known: tuple = ()) -> V.DExpr | None:
    """A shared window staged piece by piece (the block's elements and its halos, each copied
    from the same global array under its own bounds test) reads back as one guarded load:
    ``c1 ? (g1 ? x[k1] : p) : c2 ? (g2 ? x[k2] : p) : ... : unwritten`` -> ``g ? x[k] : p``.
    A piece staged by ``if``/``else`` comes as two: ``c1 && g1 ? x[k1] : c1 && !g1 ? p : ...``
    (the bounds tests of a plain load's region are its tests; a constant piece must lie where
    the joined test fails).  ``k`` is the most general piece's index; each piece's bounds test
    is restated on it (a test ``k1 + b < 0`` becomes ``k + b < 0``), and every piece is checked
    to agree with the joined read in its own region (the region's pinned thread coordinates
    substituted, the tests it lacks implied by the region and ``known``, the reader's own
    guard: a halo staged with a one-sided test, ``lo >= 0 ? x[lo] : 0``, is inside the array
    at the other end because the reading thread is).  Unwritten elements are never read by a
    correct kernel (CUDA would read garbage there)."""
    pieces = _pieces(e)
    if pieces is None or len(pieces) < 2:
        return None
    loads: list = []  # (region, tests, load)
    pads: list = []  # regions of constant pieces
    values: set = set()
    for region, v in pieces:
        shape = _guarded_load(v)
        if shape is not None and shape[2] is None:  # a plain load: its region's bounds tests
            tests = [c for c in region.conjuncts() or [] if _restate(c, v.index, v.index)]
            shape = (tests, v, None)
        if shape is not None:
            loads.append((region, shape[0], shape[1]))
            if shape[2] is not None:
                values.add(shape[2])
        elif isinstance(v, V.Const) and v.value == v.value:
            pads.append(region)
            values.add(v.value)
        else:
            return None
    if not loads or len({ld.tensor for _, _, ld in loads}) != 1 or len(values) > 1:
        return None
    load = max((ld for _, _, ld in loads), key=lambda ld: len(ld.index.atoms()))
    joined: list = []
    for _, g, ld in loads:
        for c in g:
            moved = _restate(c, ld.index, load.index)
            if moved is None:
                return None
            if moved not in joined:
                joined.append(moved)
    for region, g, ld in loads:
        if not _agrees(region, g, ld, joined, load, known):
            return None
    if not all(_outside(region, joined, known) for region in pads):
        return None
    if not joined:
        return load if not pads else None
    if not values:
        return None
    cond = V.Pred("bool", af.conj(Cond.of(c) for c in joined))
    return V.Select(load.dtype, cond, load, V.Const(load.dtype, values.pop()))


def _pieces(e: V.DExpr) -> list | None:
    """``c1 ? v1 : c2 ? v2 : ... : rest`` as ``[(c1, v1), (c2, v2), ..., (TRUE, rest)]``; a
    last guarded load is a piece of its own (its test the staged bounds test), and an
    unwritten ``rest`` (NaN) is no piece."""
    if not (isinstance(e, V.Select) and isinstance(e.cond, V.Pred)):
        return None
    pieces: list = []
    rest: V.DExpr = e
    while isinstance(rest, V.Select) and isinstance(rest.cond, V.Pred):
        if pieces and _guarded_load(rest) is not None and not _unwritten(rest.else_):
            break
        pieces.append((rest.cond.cond, rest.then))
        rest = rest.else_
    if not _unwritten(rest):
        pieces.append((af.TRUE, rest))
    return pieces


def _unwritten(v: V.DExpr) -> bool:
    return isinstance(v, V.Const) and v.value != v.value  # NaN: never written


def _outside(region: Cond, joined: list, known: tuple) -> bool:
    """In ``region`` (and where ``known`` holds) one of the ``joined`` tests fails: a constant
    piece is the joined read's padding there."""
    pins = _pins(region)
    facts = (region.conjuncts() or []) + [c for c in known if c.op == "<"]
    for c in joined:
        p = V.renorm(c.poly.subs(pins))
        if _implied(af.Cmp(V.renorm(-p - Poly.const(1)), "<"), facts):  # p >= 0
            return True
    return False


def _restate(c: af.Cmp, k: Poly, general: Poly) -> af.Cmp | None:
    """A bounds test ``s*k + b < 0`` on a piece's index ``k`` as the same test on ``general``."""
    if c.op != "<":
        return None
    for sign in (1, -1):
        b = c.poly - sign * k
        if not (b.atoms() & (k.atoms() | general.atoms())):
            return af.Cmp(V.renorm(sign * general + b), "<")
    return None


def _agrees(
    region: Cond, g: list, ld: V.Load, joined: list, load: V.Load, known: tuple = ()
) -> bool:
    """In ``region`` (with its pinned coordinates) and where ``known`` holds, ``joined ? load``
    is ``g ? ld``."""
    pins = _pins(region)
    if V.renorm(load.index.subs(pins)) != V.renorm(ld.index):
        return False
    here = [af.Cmp(V.renorm(c.poly.subs(pins)), c.op) for c in joined]
    facts = (region.conjuncts() or []) + [
        af.Cmp(V.renorm(c.poly.subs(pins)), c.op) for c in known if c.op == "<"
    ]
    return all(c in here or _implied(c, facts + here) for c in g) and all(
        c in g or _implied(c, facts + g) for c in here
    )


def _pins(region: Cond) -> dict:
    """Coordinates a region fixes (``-threadIdx.x == 0``: ``threadIdx.x = 0``)."""
    out: dict = {}
    for c in region.conjuncts() or []:
        if c.op != "==":
            continue
        for a in c.poly.atoms():
            k = af.coefficient(c.poly, a)
            rest = c.poly - k * Poly.atom(a)
            if k.is_const and abs(k.const_value) == 1 and a not in rest.atoms():
                out[a] = -rest if k.const_value == 1 else rest
                break
    return out


def _guarded_load(v: V.DExpr) -> tuple[list, V.DExpr, object] | None:
    """``g ? x[k] : pad`` (or ``x[k]``): (the comparisons of ``g``, the load, ``pad``)."""
    if isinstance(v, V.Load):
        return [], v, None
    if (
        isinstance(v, V.Select)
        and isinstance(v.cond, V.Pred)
        and isinstance(v.then, V.Load)
        and isinstance(v.else_, V.Const)
    ):
        cmps = v.cond.cond.conjuncts()
        if cmps is not None and all(c.op == "<" for c in cmps):
            return list(cmps), v.then, v.else_.value
    return None


def _implied(c: af.Cmp, facts: list) -> bool:
    """``c`` (``p < 0``) follows from one of ``facts`` (``q < 0``) when ``q - p >= 0`` provably,
    or from two of them (``q1 + q2 < 0``: ``q1 + q2 - p >= 0``), or ``p < 0`` holds outright."""
    if c.op != "<":
        return False
    if af.provably_neg(c.poly):
        return True
    lt = [f for f in facts if f.op == "<"]
    if any(af.provably_nonneg(f.poly - c.poly) for f in lt):
        return True
    return any(
        af.provably_nonneg(f.poly + h.poly - c.poly) for i, f in enumerate(lt) for h in lt[i + 1 :]
    )


def _invariant_scale(f: V.Fold) -> tuple[V.Fold, str, V.DExpr] | None:
    """``fold(add, v: x(v) / c)`` (or ``* c``) with ``c`` free of ``v``: (``fold(add, v: x(v))``,
    the op, ``c``).  Float sums are order-independent at the intent level; scaling the total
    instead of each partial (a per-block ``sum / n`` added up with atomics) is the same sum."""
    b = f.body
    if f.op != "add" or not isinstance(b, V.Op) or b.op not in ("div", "mul") or len(b.args) != 2:
        return None
    if not f.dtype.startswith("float"):
        return None
    pairs = [(b.args[0], b.args[1])] + ([(b.args[1], b.args[0])] if b.op == "mul" else [])
    for x, c in pairs:
        if f.var in {str(a) for a in V.index_atoms(c)} or V.has_carried(c):
            continue
        if not any(isinstance(n, V.Fold) for n in V.walk(x)):
            continue  # only to expose a nested sum; a plain scaled body stays as it is
        return V.Fold(f.dtype, "add", f.var, f.start, f.stop, f.step, x), b.op, c
    return None


def _neutral(c: V.DExpr, op: str) -> bool:
    """``c op x == x`` for every ``x`` of the dtype (0 for add, the dtype's lowest for max)."""
    if not isinstance(c, V.Const):
        return False
    if c.value == _IDENT.get(op):
        return True
    if c.dtype.startswith(("int", "uint")) and op in ("max", "min"):
        import numpy as np

        info = np.iinfo(c.dtype)
        return c.value == (info.min if op == "max" else info.max)
    return False


def _merge_halves(f: V.Fold) -> V.Fold:
    """``fold(v < E: g(v) op g(v + E))`` -> ``fold(v < 2E: g(v))`` (each thread combining two
    elements a block apart before the tree: one fold over twice the block)."""
    if not (
        isinstance(f.body, V.Op)
        and f.body.op == f.op
        and len(f.body.args) == 2
        and f.start == af.ZERO
        and f.step == af.ONE
    ):
        return f
    for lo, hi in (f.body.args, f.body.args[::-1]):
        with af.bounds({f.var: 2 * f.stop}):
            moved = V.simplify(V.subs_poly(lo, {f.var: af.sym(f.var) + f.stop}))
            if moved == V.simplify(hi):
                return V.Fold(f.dtype, f.op, f.var, f.start, 2 * f.stop, f.step, lo)
    return f


_AU = "%leaf"


def _rewrite_dag(e: V.DExpr, fn, memo: dict) -> V.DExpr:
    """Bottom-up rewrite visiting each shared subtree once (``fn``: replacement or None)."""
    got = memo.get(e)
    if got is None:
        V.spend()
        kids = V.children(e)
        n = e
        if kids:
            new = tuple(_rewrite_dag(k, fn, memo) for k in kids)
            if any(x is not y for x, y in zip(new, kids)):
                n = V.rebuild(e, new)
        r = fn(n)
        got = memo[e] = n if r is None else r
    return got


def _rewrite_outer(e: V.DExpr, fn, memo: dict) -> V.DExpr:
    """Top-down rewrite visiting each shared subtree once: ``fn`` sees a node before its
    children (a whole chain of staged pieces before its tail), and again once they changed."""
    got = memo.get(e)
    if got is None:
        V.spend()
        got = fn(e)
        if got is None:
            kids = V.children(e)
            new = tuple(_rewrite_outer(k, fn, memo) for k in kids)
            got = e
            if any(x is not y for x, y in zip(new, kids)):
                got = V.rebuild(e, new)
                got = fn(got) or got
        memo[e] = got
    return got


def _rebase_exp(e: V.DExpr) -> V.DExpr | None:
    """``S * exp(A - B)`` where ``S`` is a sum of folds of ``exp(u - A)`` -> the same folds of
    ``exp(u - B)`` (``exp(u - A) * exp(A - B) == exp(u - B)``): the rescaling by which online
    softmax merges partial normalisers, undone so that the partial sums form one fold."""
    if not (isinstance(e, V.Op) and e.op == "mul" and len(e.args) == 2):
        return None
    for s, f in (e.args, e.args[::-1]):
        ab = _exp_sub(f)
        if ab is not None:
            got = _rebased(s, ab[0], ab[1])
            if got is not None:
                return got
    return None


def _rebased(s: V.DExpr, a: V.DExpr, b: V.DExpr) -> V.DExpr | None:
    if isinstance(s, V.Op) and s.op == "add" and len(s.args) == 2:
        x, y = (_rebased(t, a, b) for t in s.args)
        return None if x is None or y is None else V.Op(s.dtype, "add", (x, y))
    if isinstance(s, V.Fold) and s.op == "add":
        body = _rebased_term(s.body, a, b)
        return None if body is None else V.rebuild(s, (body,))
    return None


def _rebased_term(t: V.DExpr, a: V.DExpr, b: V.DExpr) -> V.DExpr | None:
    if isinstance(t, V.Select) and isinstance(t.else_, V.Const) and t.else_.value == 0:
        inner = _rebased_term(t.then, a, b)
        return None if inner is None else V.Select(t.dtype, t.cond, inner, t.else_)
    ub = _exp_sub(t)
    if ub is None or ub[1] != a:
        return None
    return V.Op(t.dtype, "exp", (V.Op(t.dtype, "sub", (ub[0], b)),))


def _exp_sub(e: V.DExpr) -> tuple | None:
    """``(a, b)`` for ``exp(a - b)``."""
    if isinstance(e, V.Op) and e.op == "exp" and isinstance(e.args[0], V.Op):
        inner = e.args[0]
        if inner.op == "sub" and len(inner.args) == 2:
            return inner.args
    return None


def _antiunify(a: V.DExpr, b: V.DExpr, atom: str) -> V.DExpr | None:
    """A tree ``t`` with ``t[atom := 0] == a`` and ``t[atom := 1] == b``: equal parts kept,
    index polynomials that differ by a constant ``d`` become ``p + d*atom``; None otherwise."""
    if type(a) is not type(b) or a.dtype != b.dtype:
        return None
    if a == b:
        return a
    if isinstance(a, V.Load):
        p = _au_poly(a.index, b.index, atom)
        return None if p is None or a.tensor != b.tensor else V.Load(a.dtype, a.tensor, p)
    if isinstance(a, V.IntVal):
        p = _au_poly(a.poly, b.poly, atom)
        return None if p is None else V.IntVal(a.dtype, p)
    if isinstance(a, V.Pred):
        ca, cb = a.cond.conjuncts(), b.cond.conjuncts()
        if ca is None or cb is None or len(ca) != len(cb):
            return None
        out = []
        for x, y in zip(ca, cb):
            p = _au_poly(x.poly, y.poly, atom)
            if p is None or x.op != y.op:
                return None
            out.append(Cond.of(af.Cmp(p, x.op)))
        return V.Pred(a.dtype, af.conj(out))
    if isinstance(a, V.Fold):
        if (a.op, a.var, a.start, a.stop, a.step) != (b.op, b.var, b.start, b.stop, b.step):
            return None
    elif isinstance(a, V.Op) and (a.op != b.op or len(a.args) != len(b.args)):
        return None
    kids = V.children(a)
    if not kids:
        return None
    new = tuple(_antiunify(x, y, atom) for x, y in zip(kids, V.children(b)))
    return None if any(k is None for k in new) else V.rebuild(a, new)


def _nearest(leaves: list) -> V.DExpr | None:
    """The leaf whose first differing index is closest to the first leaf's (its neighbour in
    thread order, whatever order the tree combined them in)."""
    best, dist = None, None
    for leaf in leaves[1:65]:
        d = _first_diff(leaves[0], leaf)
        if d is not None and d != 0 and (dist is None or abs(d) < dist):
            best, dist = leaf, abs(d)
    return best


def _first_diff(a: V.DExpr, b: V.DExpr) -> int | None:
    if a is b or type(a) is not type(b):
        return None
    if isinstance(a, V.Load):
        d = b.index - a.index
        return d.const_value if d.is_const else None
    for x, y in zip(V.children(a), V.children(b)):
        d = _first_diff(x, y)
        if d:
            return d
    return None


def _au_poly(p: Poly, q: Poly, atom: str) -> Poly | None:
    d = q - p
    return p + d * af.sym(atom) if d.is_const else None


def _guarded_term(e: V.DExpr) -> V.DExpr | None:
    """``c ? a + b : a`` -> ``a + (c ? b : 0)`` (``s = x[i]; if (i + B < n) s += x[i + B]``):
    each term then carries its own guard, as a padded load does."""
    if not (isinstance(e, V.Select) and isinstance(e.then, V.Op) and e.then.op == "add"):
        return None
    a, b = e.then.args
    zero = V.Const(e.dtype, 0.0)
    if b == e.else_:
        a, b = b, a
    elif a != e.else_:
        return None
    return V.Op(e.dtype, "add", (a, V.Select(e.dtype, e.cond, b, zero)))


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


def _flatten(e: V.DExpr, op: str) -> list:
    if isinstance(e, V.Op) and e.op == op and len(e.args) == 2:
        return _flatten(e.args[0], op) + _flatten(e.args[1], op)
    return [e]


def _combine(op: str, dtype: str, xs: list) -> V.DExpr:
    """``xs`` combined pairwise, as a balanced tree (stays shallow for a block's worth)."""
    if len(xs) == 1:
        return xs[0]
    if len(xs) == 2:
        return V.Op(dtype, op, (xs[0], xs[1]))
    half = len(xs) // 2
    return V.Op(dtype, op, (_combine(op, dtype, xs[:half]), _combine(op, dtype, xs[half:])))


def _thread_atoms(e: V.DExpr) -> list:
    atoms = index_atoms(e)
    return [t for t in af.THREAD if t in atoms]


def _polys(e: V.DExpr) -> list:
    """Index polynomials of ``e`` in preorder (loads, shared reads, integer values)."""
    out = []
    for n in V.walk(e):
        if isinstance(n, V.Load):
            out.append((n.tensor, n.index))
        elif isinstance(n, V.IntVal):
            out.append(("#int", n.poly))
    return out


def _instance(tpl: V.DExpr, leaf: V.DExpr, atom: str) -> Poly | None:
    """``c`` with ``tpl[atom := c] == leaf``, or None.  A structural match (both trees walked in
    step, only the index polynomials that use ``atom`` substituted) answers most leaves; what it
    cannot decide is checked by substituting into and simplifying the whole template."""
    pairs = _pair_up(tpl, leaf, atom)
    V.spend(1 + (len(pairs) if pairs else 0))
    if pairs is not None:
        c = _seed(pairs, atom)
        if c is not None and _agree(pairs, atom, c):
            return c
    return _instance_slow(tpl, leaf, atom)


def _pair_up(t: V.DExpr, x: V.DExpr, atom: str, ctx: tuple = (), out: list | None = None):
    """Nodes of ``t`` that use ``atom`` in an index, each with the node of ``x`` at the same
    place and the fold bounds around it; None when the trees differ elsewhere."""
    out = [] if out is None else out
    if t is x and atom not in index_atoms(t):
        return out
    if type(t) is not type(x) or t.dtype != x.dtype:
        return None
    if isinstance(t, (V.Load, V.IntVal, V.Pred)):
        if atom in _node_atoms(t):
            out.append((t, x, ctx))
            return out
        return out if t == x else None
    if isinstance(t, V.Op) and (t.op != x.op or len(t.args) != len(x.args)):
        return None
    if isinstance(t, V.Fold):
        if (t.op, t.var) != (x.op, x.var):
            return None
        if any(atom in p.atoms() for p in (t.start, t.stop, t.step)):
            out.append((t, x, ctx))
        elif (t.start, t.stop, t.step) != (x.start, x.stop, x.step):
            return None
        return _pair_up(t.body, x.body, atom, ctx + ((x.var, x.stop),), out)
    kids = V.children(t)
    if not kids:
        return out if t == x else None
    for a, b in zip(kids, V.children(x)):
        if _pair_up(a, b, atom, ctx, out) is None:
            return None
    return out


def _node_atoms(n: V.DExpr) -> set:
    if isinstance(n, V.Load):
        return n.index.atoms()
    if isinstance(n, V.IntVal):
        return n.poly.atoms()
    return n.cond.atoms()


def _seed(pairs: list, atom: str) -> Poly | None:
    """The value of ``atom`` read off the first index that uses it linearly."""
    for t, x, _ in pairs:
        if isinstance(t, V.Load) and t.tensor == x.tensor:
            p, q = t.index, x.index
        elif isinstance(t, V.IntVal):
            p, q = t.poly, x.poly
        else:
            continue
        a = af.coefficient(p, atom)
        if a == af.ZERO:
            continue
        num = q - (p - a * af.sym(atom))
        c = num if a == af.ONE else af._exact_div(num, a)
        if c is not None and not c.depends_on({atom}):
            return c
    return None


def _agree(pairs: list, atom: str, c: Poly) -> bool:
    """Each paired template node, with ``atom := c`` and simplified, equals the leaf's node."""
    sub = {atom: c}
    for t, x, ctx in pairs:
        with af.bounds(dict(ctx)):
            if isinstance(t, V.Load):
                ok = t.tensor == x.tensor and V.renorm(t.index.subs(sub)) == x.index
            elif isinstance(t, V.IntVal):
                ok = V.renorm(t.poly.subs(sub)) == x.poly
            elif isinstance(t, V.Pred):
                ok = V.simplify(V.Pred(t.dtype, t.cond.subs(sub))) == x
            else:
                ok = (t.start.subs(sub), t.stop.subs(sub), t.step.subs(sub)) == (
                    x.start,
                    x.stop,
                    x.step,
                )
        if not ok:
            return False
    return True


def index_atoms(e: V.DExpr, memo: dict | None = None) -> frozenset:
    """:func:`cuda2nki.lift.values.index_atoms`, visiting each shared subtree once."""
    memo = _ATOMS_MEMO if memo is None else memo
    got = memo.get(e)
    if got is None:
        if len(memo) > 200_000:
            memo.clear()
        kids = V.children(e)
        if kids:
            own = V.index_atoms(V.rebuild(e, tuple(V.Const(k.dtype, 0) for k in kids)))
            got = frozenset(own).union(*(index_atoms(k, memo) for k in kids))
        else:
            got = frozenset(V.index_atoms(e))
        memo[e] = got
    return got


_ATOMS_MEMO: dict = {}


def tree_size(e: V.DExpr, memo: dict | None = None) -> int:
    """Nodes of ``e`` as a tree (shared subtrees counted at each use), memoised per node."""
    memo = _SIZE_MEMO if memo is None else memo
    got = memo.get(e)
    if got is None:
        if len(memo) > 200_000:
            memo.clear()
        got = memo[e] = 1 + sum(tree_size(k, memo) for k in V.children(e))
    return got


_SIZE_MEMO: dict = {}


def _may_become(tpl: V.DExpr, leaf: V.DExpr) -> bool:
    """Whether simplifying an instance of ``tpl`` can give a tree with ``leaf``'s root:
    substitution keeps every node, simplification only drops selects (and folds constants)."""
    if isinstance(tpl, V.Select):
        return (
            isinstance(leaf, V.Select)
            or _may_become(tpl.then, leaf)
            or _may_become(tpl.else_, leaf)
        )
    if isinstance(leaf, V.Const):
        return isinstance(tpl, (V.Const, V.Pred)) or (
            isinstance(tpl, V.Op) and tpl.op in ("neg", "lnot", "land")
        )
    if type(tpl) is not type(leaf):
        return False
    if isinstance(tpl, V.Op):
        return tpl.op == leaf.op
    if isinstance(tpl, V.Load):
        return tpl.tensor == leaf.tensor
    return True


def _instance_slow(tpl: V.DExpr, leaf: V.DExpr, atom: str) -> Poly | None:
    if tree_size(leaf) > tree_size(tpl) or not _may_become(tpl, leaf):
        return None
    V.spend(tree_size(tpl))
    tp = [(k, p) for k, p in _polys(tpl) if af.coefficient(p, atom) != af.ZERO]
    lp = _polys(leaf)
    tried = set()
    for k, p in tp[:2]:
        a = af.coefficient(p, atom)
        rest = p - a * af.sym(atom)
        for k2, q in lp:
            if k2 != k:
                continue
            num = q - rest
            if a == af.ONE:
                c = num
            else:
                c = af._exact_div(num, a)
                if c is None:
                    continue
            if c in tried or c.depends_on({atom}):
                continue
            tried.add(c)
            if V.simplify(V.subs_poly(tpl, {atom: c})) == leaf:
                return c
            if len(tried) > 4:
                return None
    return None


def fuse_vars(extents: dict, body: V.DExpr, name: str):
    """Replace variables that only occur as one mixed-radix combination (up to a common factor
    per use: ``k + 16*t`` in ``A[row*K + k + 16*t]`` and ``(k + 16*t)*N`` in ``B``) by a single
    variable.  Returns ``(var, extent, body)`` or None."""
    vs = set(extents)
    norm = None
    for _, p in _all_polys(body):
        aff = af.affine(p, vs)
        if aff is None or any(k not in vs for k in aff.coeffs):
            return None
        if not aff.coeffs:
            continue
        if set(aff.coeffs) != vs:
            return None
        order = radix_order(aff.coeffs, extents)
        if order is None:
            return None
        c0 = aff.coeffs[order[0]]
        unit = {}
        for v in order:
            q = af._exact_div(aff.coeffs[v], c0)
            if q is None:
                return None
            unit[v] = q
        key = tuple(sorted((str(k), v) for k, v in unit.items()))
        if norm is None:
            norm = (key, order, unit)
        elif norm[0] != key:
            return None
    if norm is None:
        return None
    _, order, unit = norm
    ext = Poly.const(1)
    for v in order:
        ext = ext * extents[v]

    def rw(p: Poly) -> Poly:
        aff = af.affine(p, vs)
        if not aff.coeffs:
            return p
        c0 = aff.coeffs[order[0]]
        return p - sum((aff.coeffs[v] * af.sym(v) for v in order), af.ZERO) + c0 * af.sym(name)

    return name, ext, _map_polys(body, rw)


def _all_polys(e: V.DExpr) -> list:
    out = []
    for n in V.walk(e):
        if isinstance(n, V.Load):
            out.append((n, n.index))
        elif isinstance(n, V.IntVal):
            out.append((n, n.poly))
        elif isinstance(n, V.Pred):
            for c in _cmps(n.cond):
                out.append((n, c.poly))
        elif isinstance(n, V.Fold):
            out.append((n, n.stop))
        elif isinstance(n, V.SRead):
            out.extend((n, i) for i in n.index)
    return out


def _cmps(c: Cond) -> list:
    if c.kind == "cmp":
        return [c.cmp]
    out = []
    for a in c.args:
        out.extend(_cmps(a))
    return out


def _map_cond(c: Cond, fn) -> Cond:
    if c.kind == "cmp":
        return Cond.of(af.Cmp(fn(c.cmp.poly), c.cmp.op))
    if c.kind in ("and", "or"):
        return Cond(c.kind, tuple(_map_cond(a, fn) for a in c.args))
    return c


def _map_index(p: Poly, fn) -> Poly:
    """``fn`` applied to an index, and inside the values its gather atoms stand for."""
    rep = {}
    for a in p.top_atoms():
        if isinstance(a, af.OpaqueAtom) and isinstance(a.payload, V.DExpr):
            new = _map_polys(a.payload, fn)
            if new != a.payload:
                rep[a] = Poly.atom(V.opaque_of(new))
    return fn(p.subs(rep) if rep else p)


def _map_polys(e: V.DExpr, fn) -> V.DExpr:
    def f(n: V.DExpr) -> V.DExpr | None:
        if isinstance(n, V.Load):
            return V.Load(n.dtype, n.tensor, _map_index(n.index, fn))
        if isinstance(n, V.IntVal):
            return V.IntVal(n.dtype, _map_index(n.poly, fn))
        if isinstance(n, V.Pred):
            return V.Pred(n.dtype, _map_cond(n.cond, fn))
        if isinstance(n, V.Fold):
            return V.Fold(n.dtype, n.op, n.var, n.start, fn(n.stop), n.step, n.body)
        return None

    return V.transform(e, f)


def _hoist_common_guard(body: V.DExpr) -> V.DExpr:
    """``(c1 && g ? a : 0) * (c2 && g ? b : 0)`` -> ``g ? (c1 ? a : 0) * (c2 ? b : 0) : 0``
    (exact: with ``g`` false both factors are 0)."""
    if not (isinstance(body, V.Op) and body.op == "mul"):
        return body
    sels = body.args
    if not all(
        isinstance(x, V.Select)
        and isinstance(x.cond, V.Pred)
        and isinstance(x.else_, V.Const)
        and x.else_.value == 0
        for x in sels
    ):
        return body
    cs = [x.cond.cond.conjuncts() for x in sels]
    if any(c is None for c in cs):
        return body
    common = [c for c in cs[0] if c in cs[1]]
    if not common:
        return body

    def rest(x: V.Select, cc: list) -> V.DExpr:
        left = [c for c in cc if c not in common]
        if not left:
            return x.then
        return V.Select(x.dtype, V.Pred("bool", af.conj(Cond.of(c) for c in left)), x.then, x.else_)

    prod = V.Op(body.dtype, "mul", (rest(sels[0], cs[0]), rest(sels[1], cs[1])))
    return V.Select(
        body.dtype,
        V.Pred("bool", af.conj(Cond.of(c) for c in common)),
        prod,
        V.Const(body.dtype, 0.0),
    )


def _tighten(f: V.Fold) -> V.Fold:
    """``fold(v < c*ceil(X/c): cond(v < X) ? b : id)`` -> ``fold(v < X: b)``."""
    body = _hoist_common_guard(f.body) if f.op == "add" else f.body
    if not (isinstance(body, V.Select) and isinstance(body.cond, V.Pred)):
        return f
    if not _neutral(body.else_, f.op):
        return f
    cmps = body.cond.cond.conjuncts()
    if cmps is None:
        return f
    for c in cmps:
        if c.op != "<" or af.coefficient(c.poly, f.var) != af.ONE:
            continue
        x = -(c.poly - af.sym(f.var))  # v < x
        if x.depends_on({f.var}) or not _covers(f.stop, x):
            continue
        rest = [Cond.of(o) for o in cmps if o is not c]
        nb = (
            body.then
            if not rest
            else V.Select(body.dtype, V.Pred("bool", af.conj(rest)), body.then, body.else_)
        )
        return V.Fold(f.dtype, f.op, f.var, f.start, x, f.step, nb)
    return f


def _covers(ext: Poly, x: Poly) -> bool:
    """``ext >= x`` for ``ext = c * ((x + c - 1) / c)`` (or ``ext == x``)."""
    if ext == x or (ext.is_const and x.is_const and x.const_value <= ext.const_value):
        return True
    for m, c in ext.terms:
        if len(ext.terms) == 1 and len(m) >= 1:
            divs = [a for a in m if isinstance(a, af.DivAtom)]
            if len(divs) != 1:
                return False
            d = divs[0]
            factor = Poly(((tuple(a for a in m if a is not d), c),))
            return d.den == factor and d.num == x + factor - 1
    return False
