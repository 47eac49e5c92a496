"""The walk of an extent scan: the kernel body in order, integer locals and loop variables as
atoms with an exclusive upper bound from guards, loops and the launch geometry, and the flat
offsets the accesses take (see :mod:`cuda2nki.lift.extents`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk
from cuda2nki.lift import affine as af
from cuda2nki.lift import byteview
from cuda2nki.lift.affine import DivAtom, Poly
from cuda2nki.lift.capped import is_capped
from cuda2nki.lift.counters import counter_bounds
from cuda2nki.lift.dataindex import (
    data_atom,
    data_pointers,
    loaded,
    local_bound,
    mask_atom,
    masked_locals,
)
from cuda2nki.lift.extentaccess import _Access, _Accesses, _Opaque
from cuda2nki.lift.extentcalls import clamped, returned
from cuda2nki.lift.extentgeom import _block, _grid, rounded_counts
from cuda2nki.lift.extentinline import _Inline
from cuda2nki.lift.extentshape import _is_size
from cuda2nki.lift.extentsyntax import (
    _assign_counts,
    _assigned_in,
    _branch_assigned,
    _bump_amount,
    _early_exit,
    _loop_assigned,
)
from cuda2nki.lift.extentwhile import scan_while, stepped_counter
from cuda2nki.lift.sharedindex import carrier_locals, root_name, staged_index_arrays

#: 24-bit integer multiplications, spelled in index arithmetic of older kernels
_MUL24 = frozenset({"__mul24", "__umul24"})


class _Scan(_Accesses, _Inline):
    def __init__(self, fn: A.Function, launch: dict | None, ties: dict | None = None) -> None:
        self.fn = fn
        #: size parameters tied to another size (:mod:`cuda2nki.lift.squares`): name -> name
        self.ties = dict(ties or {})
        self.pointers = {p.name for p in fn.params if isinstance(p.ty, A.PointerType)}
        self.scalars = {p.name for p in fn.params if not isinstance(p.ty, A.PointerType)}
        self.block = _block(launch)
        self.grid = _grid(launch, self.scalars)
        self.rounded = rounded_counts(launch, self.scalars)
        self.scalars |= {a for p in self.rounded.values() for a in p.atoms()}
        # a capped grid, ``min(cap, ceil_div(n, b))`` blocks, is a size of its own (check
        # evaluates it once ``n`` is known): ``out[blockIdx.x]`` has that many partial results
        self.scalars |= {a for g in self.grid or () if g for a in g[0].atoms() if is_capped(a)}
        self.defs: dict[str, Poly] = {}  # atom -> definition (locals that depend on threads)
        self.env: dict[str, Poly] = {}  # local name -> its value (an atom or a sizes polynomial)
        self.alias: dict[str, tuple[str, Poly | None, int]] = {}
        # atom -> (exclusive upper bound, whether it was guessed from the launch geometry)
        self.hi: dict = {}
        self.accesses: list[_Access] = []
        self.assigned = _assign_counts(fn)
        self.loop_assigned = _loop_assigned(fn)
        #: names whose value depends on the path taken: assigned in a loop or a branch
        self.unstable = self.loop_assigned | _branch_assigned(fn)
        self.loop_depth = 0
        self.strided: set[str] = set()  # pointers advanced by a fixed step per loop iteration
        #: loop atom -> its constant step (0 where loops of one name step differently)
        self.steps: dict[str, int] = {}
        #: tile loops whose bound an extent assumes a multiple of the step: (var, step, bound)
        self.tiled: set[tuple[str, int, str]] = set()
        self.unguarded: tuple[int, ...] = ()
        #: what a device function does through its i-th parameter (see extents())
        self.callees: Callable[[str, int], str] = lambda name, i: "r"
        # loaded index data and masked values (lift.dataindex): data pointers, data atom ->
        # bound (none until a second scan sets them), the data atoms a shape used, masks
        self.data = data_pointers(fn)
        #: shared arrays holding values of one data pointer only (lift.sharedindex)
        self.staged = staged_index_arrays(fn, self.data)
        #: locals assigned loads of one data pointer only, in loops or branches too
        self.carriers = carrier_locals(fn, self.data)
        self.data_hi: dict[str, Poly] = {}
        self.data_used: set[str] = set()
        self.masks: dict[str, Poly] = {}
        self.masked = masked_locals(fn)
        #: locals of values the scan cannot follow: name -> how many such atoms it had
        self.opaque: dict[str, int] = {}
        self._launch_bounds()
        #: counters bumped in counted loops (lift.counters): name -> atom, bounded in ``hi``
        self.counters: dict[str, Poly] = {}
        self.counters = self._counters()

    # ------------------------------------------------------------------ launch geometry
    def _launch_bounds(self) -> None:
        for k, d in enumerate(af.DIMS):
            b = self.block[k] if self.block else None
            if b is not None:
                self.hi[f"threadIdx.{d}"] = (Poly.const(b), False)
            g = self.grid[k] if self.grid else None
            if g is None:
                continue
            count, cover = g
            # a count of whole tiles, X / d, assumes the host's size is a multiple of the tile
            tiles = any(isinstance(a, DivAtom) for a in count.atoms())
            self.hi[f"blockIdx.{d}"] = (count, tiles)
            if cover is not None:  # exact when the host rounds its size up to whole blocks
                self.hi[f"gid.{d}"] = (cover, True)
            elif b is not None:
                self.hi[f"gid.{d}"] = (count * b, False)

    def _counters(self) -> dict[str, Poly]:
        """Each counter's atom, below its bound (constant locals read as their value)."""
        consts = {
            n.name: Poly.const(n.init.value)
            for n in walk(self.fn.body)
            if isinstance(n, A.VarDecl)
            and isinstance(n.init, A.IntLit)
            and not self.assigned.get(n.name)
        }

        def poly(e: A.Expr) -> Poly:
            if isinstance(e, A.Name) and e.name in self.scalars:  # a parameter's start
                return af.sym(self.ties.get(e.name, e.name))
            saved, self.env = self.env, {**consts, **self.env}
            try:
                return self._poly(e)
            finally:
                self.env = saved

        out = {}
        for name, hi in counter_bounds(self.fn, poly).items():
            if hi.depends_on(self._index_atoms(hi)):  # type: ignore[attr-defined]
                continue
            out[name] = Poly.atom(f"#{name}")
            self.hi[f"#{name}"] = (hi, False)
        return out

    # ------------------------------------------------------------------ statements
    def run(self) -> None:
        self._stmts(self.fn.body.body)

    def _stmts(self, body: tuple) -> None:
        saved = dict(self.hi)
        for st in body:
            self._stmt(st)
            early = _early_exit(st)
            if early is not None:  # `if (i >= n) return;`: i < n from here on
                self._guard(early, negate=True)
        self.hi = saved

    def _stmt(self, st: A.Stmt) -> None:
        if not isinstance(st, A.Block):
            self.at = st.loc  # where the accesses it records are (lift.extentwhy)
        if isinstance(st, A.Block):
            self._stmts(st.body)
        elif isinstance(st, A.VarDecl):
            self._decl(st)
        elif isinstance(st, A.ExprStmt):
            self._expr_stmt(st.expr)
        elif isinstance(st, A.If):
            self._accesses(st.cond, "r")
            saved = dict(self.hi)
            self._guard(st.cond, negate=False)
            self._stmt(st.then)
            self.hi = dict(saved)
            if st.else_ is not None:
                self._guard(st.cond, negate=True)
                self._stmt(st.else_)
            self.hi = saved
        elif isinstance(st, A.For):
            self._for(st)
        elif isinstance(st, A.While) and (v := stepped_counter(st)) is not None:
            scan_while(self, st, v)  # a counted while loop (lift.extentwhile)
        elif isinstance(st, A.While | A.DoWhile):
            self._accesses(st.cond, "r")
            for p in self._moving(st.body, None):
                base, _, w = self.alias.get(p, (p, None, 1))
                self.alias[p] = (base, None, w)
            self.loop_depth += 1
            self._stmt(st.body)
            self.loop_depth -= 1
        elif isinstance(st, A.Switch):
            self._accesses(st.cond, "r")
            for c in st.cases:
                self._stmts(c.body)
        elif isinstance(st, A.Return) and st.value is not None:
            self._accesses(st.value, "r")

    def _decl(self, st: A.VarDecl) -> None:
        if st.init is None:
            return
        if isinstance(st.ty, A.PointerType):
            target = self._pointer(st.init)
            if target is not None:
                self.alias[st.name] = target
            byteview.remember(self, st.name, st.init)
            self._accesses(st.init, "r")
            return
        self._accesses(st.init, "r")
        if not isinstance(st.ty, A.ScalarType) or st.ty.name.startswith(("float", "bfloat")):
            return
        if st.name in self.unstable:
            return
        self._define(st.name, st.init)

    def _define(self, name: str, init: A.Expr) -> None:
        """``name`` (an integer local) now holds ``init``."""
        try:
            value = self._poly(init)
        except (_Opaque, af.BudgetExceeded):
            # a value the scan cannot follow (`(g >> s) << t`, a call): an atom of its own, which
            # bounds nothing until a guard on it does (`if (fbr < n)`)
            self.env[name] = Poly.atom(self._fresh(f"?{name}"))
            return
        if value.depends_on(self._index_atoms(value)):
            atom = f"${name}" + ("'" * sum(1 for a in self.defs if a.split("'")[0] == f"${name}"))
            self.defs[atom] = af.canonical(value, self.block)
            self.env[name] = Poly.atom(atom)
        else:
            self.env[name] = value

    def _fresh(self, base: str) -> str:
        """``base`` primed once per earlier atom of that name (a local declared anew)."""
        n = self.opaque.get(base, 0)
        self.opaque[base] = n + 1
        return base + "'" * n

    def _expr_stmt(self, e: A.Expr) -> None:
        if isinstance(e, A.Assign) and isinstance(e.target, A.Name):
            name = e.target.name
            if name in self.alias or name in self.pointers:
                self.alias[name] = self._moved(name, e)
                byteview.remember(self, name, e.value if e.op == "=" else None)
            self._accesses(e.value, "r")
            if name in self.env and not name.startswith("%"):
                if name in self.unstable or e.op != "=":
                    self.env.pop(name, None)
                else:
                    self._define(name, e.value)
            return
        self._accesses(e, "r")

    def _moved(self, name: str, e: A.Assign) -> tuple[str, Poly | None, int]:
        """Where pointer ``name`` points after ``name = p + e`` / ``name += e``."""
        base, off, w = self.alias.get(name, (name, Poly.const(0), 1))
        if name in self.strided:  # its offset inside the loop is already a function of the loop
            return (base, off, w)
        if e.op == "=":
            got = self._pointer(e.value)
            if got is None:
                return (base, None, w)
            base, off, w = got
        elif e.op in ("+=", "-="):
            try:
                step = self._poly(e.value) * w
            except (_Opaque, af.BudgetExceeded):
                return (base, None, w)
            off = None if off is None else off + (step if e.op == "+=" else -step)
        else:
            off = None
        return (base, off, w)

    def _for(self, st: A.For) -> None:
        saved = dict(self.hi)
        var = None
        for s in st.init:
            if isinstance(s, A.VarDecl):
                var = s.name
                self._accesses(s.init, "r")
            elif isinstance(s, A.ExprStmt):
                if isinstance(s.expr, A.Assign) and isinstance(s.expr.target, A.Name):
                    var = s.expr.target.name
                self._accesses(s.expr, "r")
        if var is not None:
            atom = f"%{var}"
            self.env[var] = Poly.atom(atom)
            self.hi.pop(atom, None)
            bound = self._loop_bound(var, st)
            if bound is not None:
                self.hi[atom] = (bound, False)
            step = self._tile_step(st)
            self.steps[atom] = step if self.steps.get(atom, step) == step else 0
        if st.cond is not None:
            self._guard(st.cond, negate=False)
            self._accesses(st.cond, "r")
        moved = self._moving(st.body, st.step)
        strided = {p for p in moved if var is not None and self._stride(p, var, st)}
        for p in moved - strided:
            base, _, w = self.alias.get(p, (p, None, 1))
            self.alias[p] = (base, None, w)
        self.strided |= strided
        self.loop_depth += 1
        self._stmt(st.body)
        if st.step is not None:
            self._accesses(st.step, "r")
        self.loop_depth -= 1
        self.strided -= strided
        for p in strided:  # past the loop: wherever the last iteration left it
            base, _, w = self.alias[p]
            self.alias[p] = (base, None, w)
        self.hi = saved
        if var is not None:
            self.env.pop(var, None)

    def _moving(self, body: A.Stmt, step: A.Expr | None) -> set[str]:
        """Pointers (parameters or pointer locals) a loop assigns."""
        names = _assigned_in(body) | (_assigned_in(step, declared=False) if step else set())
        return {n for n in names if n in self.pointers or n in self.alias}

    def _stride(self, p: str, var: str, st: A.For) -> bool:
        """``p += s`` once per iteration of ``for (v = a; ...; v += c)`` with ``s`` a multiple
        ``q * c`` of the loop's step: inside the loop ``p`` is at its entry offset plus
        ``q * (v - a)`` (the tiles of a K loop: ``A += BK`` beside ``k += BK``)."""
        body = st.body.body if isinstance(st.body, A.Block) else (st.body,)
        moves = [
            b.expr
            for b in body
            if isinstance(b, A.ExprStmt)
            and isinstance(b.expr, A.Assign)
            and isinstance(b.expr.target, A.Name)
            and b.expr.target.name == p
        ]
        others = [
            n
            for n in walk(st.body)
            if isinstance(n, A.Assign) and isinstance(n.target, A.Name) and n.target.name == p
        ]
        amount = _bump_amount(moves[0], p) if len(moves) == 1 and len(others) == 1 else None
        if amount is None:
            return False
        start = next((x.init for x in st.init if isinstance(x, A.VarDecl)), None)
        if start is None:
            start = next(
                (x.expr.value for x in st.init if isinstance(x, A.ExprStmt)),
                None,
            )
        step = st.step
        try:
            if isinstance(step, A.Unary) and step.op in ("pre++", "post++"):
                c = Poly.const(1)
            elif isinstance(step, A.Assign) and step.op == "+=":
                c = self._poly(step.value)
            else:
                return False
            a = self._poly(start) if start is not None else None
            base, off, w = self.alias.get(p, (p, Poly.const(0), 1))
            step_p = self._poly(amount) * w
            q = af._exact_div(step_p, c)
        except (_Opaque, af.BudgetExceeded):
            return False
        if any(str(x).startswith("%") for x in step_p.atoms()):
            return False  # a step that changes with the iteration
        if q is None or a is None or off is None:
            return False
        self.alias[p] = (base, off + q * (af.sym(f"%{var}") - a), w)
        return True

    def _tile_step(self, st: A.For) -> int:
        """The constant step of ``for (v = 0; ...; v += S)``, else 0."""
        start = next((s.init for s in st.init if isinstance(s, A.VarDecl)), None)
        if start is None:
            start = next((s.expr.value for s in st.init if isinstance(s, A.ExprStmt)), None)
        if not isinstance(st.step, A.Assign) or st.step.op != "+=" or start is None:
            return 0
        try:
            a, c = self._poly(start), self._poly(st.step.value)
        except (_Opaque, af.BudgetExceeded):
            return 0
        return c.const_value if a == af.ZERO and c.is_const and c.const_value > 1 else 0

    def _loop_bound(self, var: str, st: A.For) -> Poly | None:
        """``v < n`` / ``v <= n`` / ``n > v`` of an increasing loop; ``start + 1`` of a loop
        counting down to a lower bound."""
        c = st.cond
        if not isinstance(c, A.Binary):
            return None
        down = isinstance(st.step, A.Unary) and st.step.op in ("pre--", "post--")
        down = down or (isinstance(st.step, A.Assign) and st.step.op == "-=")
        if down:
            start = next((s.init for s in st.init if isinstance(s, A.VarDecl)), None)
            try:
                return self._poly(start) + 1 if start is not None else None
            except (_Opaque, af.BudgetExceeded):
                return None
        return None  # an increasing loop's bound is its guard (see _guard)

    # ------------------------------------------------------------------ guards
    def _guard(self, cond: A.Expr, negate: bool) -> None:
        for atom, hi in self._bounds_of(cond, negate):
            old = self.hi.get(atom)
            if old is None or old[1]:
                self.hi[atom] = (hi, False)

    def _bounds_of(self, c: A.Expr, negate: bool) -> Iterator[tuple]:
        if isinstance(c, A.Binary) and c.op == ("||" if negate else "&&"):
            yield from self._bounds_of(c.left, negate)
            yield from self._bounds_of(c.right, negate)
            return
        if isinstance(c, A.Unary) and c.op == "!":
            yield from self._bounds_of(c.operand, not negate)
            return
        if not isinstance(c, A.Binary) or c.op not in ("<", "<=", ">", ">="):
            return
        op, left, right = c.op, c.left, c.right
        if op in (">", ">="):
            op, left, right = {">": "<", ">=": "<="}[op], right, left
        if negate:  # not (l < r) is r <= l; not (l <= r) is r < l
            op, left, right = {"<": "<=", "<=": "<"}[op], right, left
        try:
            lv, rv = self._poly(left), self._poly(right)
        except (_Opaque, af.BudgetExceeded):
            return
        lv = af.canonical(lv, self.block)
        hi = rv + 1 if op == "<=" else rv
        if any(str(a).startswith("?") for a in hi.atoms()):
            return  # below a value the scan cannot follow: no bound
        lv, hi = _moved_across(lv, hi, self._index_atoms(lv))  # `i + 4 <= n` is `i < n - 3`
        if len(lv.terms) == 1 and lv.terms[0][1] == 1 and len(lv.terms[0][0]) == 1:
            atom = lv.terms[0][0][0]
            if atom not in hi.atoms():  # `i < row` may bound by another index
                yield atom, hi
        elif lv.depends_on(self._index_atoms(lv)) and not (lv.atoms() & hi.atoms()):
            yield lv, hi  # a bound on a sum, used where an offset contains that sum

    # ------------------------------------------------------------------ expressions
    def _index_atoms(self, p: Poly) -> set:
        return {a for a in p.top_atoms() if not _is_size(a, self.scalars)}

    def _poly(self, e: A.Expr) -> Poly:
        if isinstance(e, A.IntLit):
            return Poly.const(e.value)
        if isinstance(e, A.BoolLit):
            return Poly.const(int(e.value))
        if isinstance(e, A.Name):
            if e.name in self.env:
                return self.env[e.name]
            if e.name in self.scalars and not self.assigned.get(e.name):  # an unchanged size
                return af.sym(self.ties.get(e.name, e.name))
            if e.name in self.carriers:  # `idx0 = keys[f]` in a loop: a value of `keys`
                return Poly.atom(data_atom(self.carriers[e.name]))
            if e.name in self.counters:  # bumped in counted loops only (lift.counters)
                return self.counters[e.name]
            if e.name in self.masked:  # assigned masked values only (lift.dataindex)
                bound = local_bound(self, self.masked[e.name])
                if bound is not None:
                    return mask_atom(Poly.atom(f"%{e.name}"), bound - 1, self.masks)
            raise _Opaque
        if isinstance(e, A.Index) and (got := loaded(e, self.data)) is not None:
            return got  # a value of index data (lift.dataindex)
        if isinstance(e, A.Index) and (arr := root_name(e)) in self.staged:
            return Poly.atom(data_atom(self.staged[arr]))  # index data staged in shared memory
        if isinstance(e, A.Builtin):
            return self._builtin(e)
        if isinstance(e, A.Cast):
            if isinstance(e.to, A.ScalarType) and e.to.name.startswith(("float", "bfloat")):
                raise _Opaque
            return self._poly(e.operand)
        if isinstance(e, A.Unary) and isinstance(e.operand, A.Name) and e.op in ("pre++", "post++"):
            if e.operand.name in self.counters:  # `table[cursor++]`: within the counter's bound
                return self.counters[e.operand.name]
        if isinstance(e, A.Unary) and e.op in ("+", "-"):
            v = self._poly(e.operand)
            return v if e.op == "+" else -v
        if isinstance(e, A.Binary):
            return self._binary(e)
        if isinstance(e, A.Call) and e.func in _MUL24 and len(e.args) == 2:
            # `__umul24(blockIdx.x, blockDim.x)`: an index's operands are below 2**24, where
            # the 24-bit product is the product
            return self._poly(e.args[0]) * self._poly(e.args[1])
        if isinstance(e, A.SizeOf):  # `size / sizeof(T)`: a byte count as elements
            from cuda2nki.frontend.typesys import sizeof

            n = sizeof(e.of)
            if n:
                return Poly.const(n)
        if isinstance(e, A.Call) and (got := returned(self, e) or clamped(self, e)) is not None:
            return got  # `ceil_div(V, 4)`, `min(i, n - 1)` (lift.extentcalls)
        raise _Opaque

    def _builtin(self, e: A.Builtin) -> Poly:
        k = af.DIMS.index(e.dim) if e.dim in af.DIMS else -1
        if e.name == "warpSize":
            return Poly.const(32)
        if e.name == "blockDim" and self.block and k >= 0:
            return Poly.const(self.block[k])
        if e.name == "gridDim" and self.grid and k >= 0 and self.grid[k] is not None:
            return self.grid[k][0]
        return af.sym(f"{e.name}.{e.dim}")

    def _binary(self, e: A.Binary) -> Poly:
        a, b = self._poly(e.left), self._poly(e.right)
        if e.op == "+":
            return a + b
        if e.op == "-":
            return a - b
        if e.op == "*":
            return a * b
        with af.bounds(self._known()):
            if e.op == "/":
                return af.floordiv(a, b)
            if e.op == "%":
                return af.mod(a, b)
            if e.op in ("<<", ">>") and b.is_const and 0 <= b.const_value < 63:
                f = 1 << b.const_value
                return a * f if e.op == "<<" else af.floordiv(a, f)
            if e.op == "&" and b.is_const and b.const_value > 0:
                m = b.const_value + 1
                if m & (m - 1) == 0:  # x & (2^k - 1) is x % 2^k
                    return af.mod(a, m)
            if e.op == "&" and not b.depends_on(self._index_atoms(b)):
                return mask_atom(a, b, self.masks)  # `h & (cap - 1)` is at most cap - 1
            if e.op == "&" and not a.is_const and not a.depends_on(self._index_atoms(a)):
                return mask_atom(b, a, self.masks)  # `(cap - 1) & h`
        raise _Opaque

    def _known(self) -> dict:
        return {a: h for a, (h, _) in self.hi.items() if h.is_const}


def _moved_across(lv: Poly, hi: Poly, index: set) -> tuple[Poly, Poly]:
    """``i + s < hi`` as ``i < hi - s`` where ``s`` holds no index (a constant or sizes), so that
    ``for (o = 0; o + step <= n; o += step)`` bounds ``o``; else ``(lv, hi)`` unchanged."""
    moving = [(m, c) for m, c in lv.terms if any(a in index for a in m)]
    rest = Poly(tuple(t for t in lv.terms if t not in moving))
    if len(moving) != 1 or not rest.terms:
        return lv, hi
    return Poly(tuple(moving)), hi - rest
