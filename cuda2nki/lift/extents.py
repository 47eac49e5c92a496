"""Pointer extents read from a kernel's syntax, for binding inference where symbolic execution
gives up (shared memory, warp collectives, loops it cannot fold).

The kernel body is walked once, in order.  Integer locals and loop variables become atoms with an
exclusive upper bound; every global access ``p[e]`` (also through a pointer local such as
``const float* x = inp + row * C``, ``*(p + e)``, ``&p[e]`` handed to an intrinsic, or a cast to a
vector pointer) records its flat offset as a :class:`~cuda2nki.lift.affine.Poly`.  Bounds come
from, in order of preference:

* guards: ``if (i < n) {...}``, ``if (i >= n) return;`` (also ``<=``, ``>``, ``&&``);
* loops: ``for (int i = s; i < n; i += step)`` (grid-stride loops included: ``i < n``);
* the launch geometry: ``threadIdx.d < block.d``, ``blockIdx.d < grid.d``, and a global index
  ``blockIdx.d * blockDim.d + threadIdx.d < X`` when the grid is ``ceil_div(X, block.d)``.  A bound
  taken from the launch rather than a guard is a guess about the host's sizes, so the extent
  carries a note saying so.

The largest offset plus one is the extent, a polynomial in the kernel's scalar parameters.  A
product of parameters (and constants) becomes an N-D row-major shape, outermost first
(``b * T * C + t * C + c`` with ``b < B``, ``t < T``, ``c < C`` is ``[B, T, C]``); other
polynomials stay one flat dimension.
"""

from __future__ import annotations

import ast as pyast
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk
from cuda2nki.lift import affine as af
from cuda2nki.lift.affine import DivAtom, ModAtom, Poly
from cuda2nki.lift.capped import capped_text, is_capped
from cuda2nki.lift.tilebounds import loose_strides, scaled_key, tile_pair

#: calls that store through their first (pointer) argument: __stcs, atomicAdd, store128, ...
_STORE_RE = re.compile(r"^(__st[a-z]*|atomic\w*|\w*[Ss]tore\w*)$")


@dataclass(frozen=True)
class Extent:
    """What the syntax says about one pointer parameter: ``shape`` (None: no bounded offset),
    ``role`` (None: never accessed) and ``note`` (set when a bound was guessed from the launch)."""

    shape: tuple[str | int, ...] | None
    role: str | None
    note: str | None = None
    #: (size, step, loop): the extent assumes the size a multiple of a tile loop's step
    tiles: tuple[tuple[str, int, str], ...] = ()
    #: grid axes whose block index no guard bounds (the shape took the launch's bound)
    unguarded: tuple[int, ...] = ()


@dataclass(frozen=True)
class _Access:
    ptr: str
    offset: Poly | None
    width: int
    kind: str  # "r" | "w" | "rw"
    bounds: tuple  # ((atom, hi), ...) in force at the access


class _Opaque(Exception):
    """An integer the scan does not model."""


class _Scan:
    def __init__(self, fn: A.Function, launch: dict | None, ties: dict | None = None) -> None:
        self.fn = fn
        #: size parameters tied to another size (:mod:`cuda2nki.lift.squares`): name -> name
        self.ties = dict(ties or {})
        self.pointers = {p.name for p in fn.params if isinstance(p.ty, A.PointerType)}
        self.scalars = {p.name for p in fn.params if not isinstance(p.ty, A.PointerType)}
        self.block = _block(launch)
        self.grid = _grid(launch, self.scalars)
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
        self._launch_bounds()

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
            self.env.pop(name, None)
            return
        if value.depends_on(self._index_atoms(value)):
            atom = f"${name}" + ("'" * sum(1 for a in self.defs if a.split("'")[0] == f"${name}"))
            self.defs[atom] = af.canonical(value, self.block)
            self.env[name] = Poly.atom(atom)
        else:
            self.env[name] = value

    def _expr_stmt(self, e: A.Expr) -> None:
        if isinstance(e, A.Assign) and isinstance(e.target, A.Name):
            name = e.target.name
            if name in self.alias or name in self.pointers:
                self.alias[name] = self._moved(name, e)
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
            raise _Opaque
        if isinstance(e, A.Builtin):
            return self._builtin(e)
        if isinstance(e, A.Cast):
            if isinstance(e.to, A.ScalarType) and e.to.name.startswith(("float", "bfloat")):
                raise _Opaque
            return self._poly(e.operand)
        if isinstance(e, A.Unary) and e.op in ("+", "-"):
            v = self._poly(e.operand)
            return v if e.op == "+" else -v
        if isinstance(e, A.Binary):
            return self._binary(e)
        if isinstance(e, A.SizeOf):  # `size / sizeof(T)`: a byte count as elements
            from cuda2nki.frontend.typesys import sizeof

            n = sizeof(e.of)
            if n:
                return Poly.const(n)
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
        raise _Opaque

    def _known(self) -> dict:
        return {a: h for a, (h, _) in self.hi.items() if h.is_const}

    # ------------------------------------------------------------------ accesses
    def _pointer(self, e: A.Expr) -> tuple[str, Poly | None, int] | None:
        """(pointer parameter, element offset or None when unknown, access width) of a pointer
        expression."""
        if isinstance(e, A.Name):
            if e.name in self.alias:
                return self.alias[e.name]
            if e.name in self.pointers:
                return (e.name, Poly.const(0), 1)
            return None
        if isinstance(e, A.Cast) and isinstance(e.to, A.PointerType):
            inner = self._pointer(e.operand)
            if inner is None:
                return None
            base, off, _ = inner
            width = _width(e.to.pointee, self._pointee(base))
            return (base, off, width) if width else (base, None, 1)
        if isinstance(e, A.Binary) and e.op in ("+", "-"):
            ptr, idx = (e.left, e.right) if e.op == "-" else _ptr_first(e)
            inner = self._pointer(ptr)
            if inner is None:
                return None
            base, off, w = inner
            try:
                step = self._poly(idx) * w
            except (_Opaque, af.BudgetExceeded):
                return (base, None, w)
            if off is None:
                return (base, None, w)
            return (base, off + step if e.op == "+" else off - step, w)
        if isinstance(e, A.Unary) and e.op == "&" and isinstance(e.operand, A.Index):
            return self._indexed(e.operand)
        return None

    def _pointee(self, name: str) -> A.CType | None:
        p = next((q for q in self.fn.params if q.name == name), None)
        return p.ty.pointee if p is not None and isinstance(p.ty, A.PointerType) else None

    def _indexed(self, e: A.Index) -> tuple[str, Poly | None, int] | None:
        inner = self._pointer(e.base)
        if inner is None:
            return None
        base, off, w = inner
        try:
            i = self._poly(e.index) * w
        except (_Opaque, af.BudgetExceeded):
            return (base, None, w)
        return (base, None if off is None else off + i, w)

    def _record(self, target: tuple[str, Poly | None, int], kind: str) -> None:
        base, off, w = target
        self.accesses.append(_Access(base, off, w, kind, tuple(self.hi.items())))

    def _accesses(self, e: A.Expr | None, kind: str) -> None:
        if e is None:
            return
        if isinstance(e, A.Assign):
            k = "w" if e.op == "=" else "rw"
            self._lvalue(e.target, k)
            self._accesses(e.value, "r")
            return
        if isinstance(e, A.Unary) and e.op in ("pre++", "pre--", "post++", "post--"):
            self._lvalue(e.operand, "rw")
            return
        if isinstance(e, A.Index):
            got = self._indexed(e)
            if got is not None:
                self._record(got, kind)
            self._accesses(e.index, "r")
            if got is None:
                self._accesses(e.base, "r")
            return
        if isinstance(e, A.Unary) and e.op == "*":
            got = self._pointer(e.operand)
            if got is not None:
                self._record(got, kind)
                return
        if isinstance(e, A.Call):
            self._call(e)
            return
        if isinstance(e, A.Ternary):  # `i < n ? p[i] : 0`: each arm under its condition
            self._accesses(e.cond, "r")
            for arm, negate in ((e.then, False), (e.else_, True)):
                saved = dict(self.hi)
                self._guard(e.cond, negate=negate)
                self._accesses(arm, kind)
                self.hi = saved
            return
        for k in _expr_children(e):
            self._accesses(k, "r")

    def _lvalue(self, t: A.Expr, kind: str) -> None:
        if isinstance(t, A.Index | A.Unary):
            self._accesses(t, kind)
        elif isinstance(t, A.Member):
            self._lvalue(t.base, kind)

    def _call(self, e: A.Call) -> None:
        store = _STORE_RE.match(e.func.split("::")[-1]) is not None
        if e.target is not None:
            self._returned_pointers(e)
        for i, a in enumerate(e.args):
            got = self._pointer(a)
            if got is not None and isinstance(a, A.Name) and e.target is not None:
                got = (got[0], None, 1)  # a device function may index the whole pointer
            if got is not None:
                kind = ("rw" if e.func.startswith("atomic") else "w") if store and i == 0 else "r"
                if e.target is not None and not store:  # a helper may write through it
                    kind = self.callees(e.target, i)
                if not kind:  # it only computes an address from it
                    continue
                self._record(got, kind)
            else:
                self._accesses(a, "r")

    def _returned_pointers(self, e: A.Call) -> None:
        """A helper that sets a pointer local through its address (``Matrix s =
        GetSubMatrix(A, r, c)`` sets ``s__elements``) points it into the one pointer it is
        given (at an offset the scan does not follow)."""
        outs = [
            a.operand.name
            for a in e.args
            if isinstance(a, A.Unary)
            and a.op == "&"
            and isinstance(a.operand, A.Name)
            and isinstance(a.operand.ty, A.PointerType)
        ]
        if not outs:
            return
        bases = set()
        for a in e.args:
            got = self._pointer(a) if isinstance(a.ty, A.PointerType) else None
            if got is not None:
                bases.add((got[0], got[2]))
        if len(bases) == 1:
            ((base, w),) = bases
            for name in outs:
                self.alias[name] = (base, None, w)

    # ------------------------------------------------------------------ results
    def extents(self) -> dict[str, Extent]:
        out = {}
        for name in sorted(self.pointers):
            acc = [a for a in self.accesses if a.ptr == name]
            kinds = set("".join(a.kind for a in acc))
            role = None
            if kinds:
                role = "inout" if kinds == {"r", "w"} else ("out" if kinds == {"w"} else "in")
            shape, note = self._shape(acc)
            tiles = tuple((b, st, v) for v, st, b in sorted(self.tiled)) if shape else ()
            loose = self.unguarded if shape else ()
            out[name] = Extent(shape, role, note, tiles, loose)
        return out

    def _shape(self, acc: list[_Access]) -> tuple[tuple | None, str | None]:
        best: Poly | None = None
        offsets: list[Poly] = []
        guessed: set = set()
        self.tiled = set()
        self.unguarded = ()
        for a in acc:
            if a.offset is None:
                return None, None
            hi = dict(a.bounds)
            top = self._upper(af.canonical(a.offset, self.block), hi, guessed)
            if top is None:
                return None, None
            ext = top + a.width
            if best is None:
                best = ext
            elif best != ext:
                bigger = _bigger(ext, best)
                if bigger is None:
                    return None, None
                best = bigger
            offsets.append(a.offset)
        if best is None or best.depends_on(self._index_atoms(best)):
            return None, None
        best = _round_up(_relax(best))
        note = None
        self.unguarded = tuple(i for i in range(3) if {af.BLOCK[i], af.GID[i]} & guessed)
        if guessed:
            note = (
                "bounded by the launch geometry (no guard bounds "
                + ", ".join(sorted(map(str, guessed)))
                + "): the host must launch exactly enough threads"
            )
        if self.tiled:
            tiles = "; ".join(
                f"{b} a multiple of {s} (the step of loop '{v}')" for v, s, b in sorted(self.tiled)
            )
            note = (note + "; " if note else "") + f"assumes {tiles}"
        both = offsets + [self._expand(o) for o in offsets]
        return _dims(best, both, self.scalars), note

    def _expand(self, p: Poly) -> Poly:
        """``p`` with the locals it uses replaced by their definitions (``inp[row_off + c]``
        shows its strides once ``row_off`` is ``b * T * C + t * C``)."""
        for _ in range(6):
            mapping = {a: self.defs[a] for a in p.top_atoms() if a in self.defs}
            if not mapping:
                break
            try:
                p = p.subs(mapping)
            except af.BudgetExceeded:
                break
        return p

    def _upper(self, p: Poly, hi: dict, guessed: set, depth: int = 0) -> Poly | None:
        """Inclusive upper bound of ``p`` in parameters: each index atom is replaced by the upper
        bound of its own bound less one (bounds may use other index atoms: ``i < row``)."""
        if depth > 8:
            return None
        sized = lambda a: _is_size(a, self.scalars)  # noqa: E731
        for key, (bound, _) in hi.items():
            if not isinstance(key, Poly):
                continue
            f = af.ONE if _contains(p, key) else scaled_key(p, key, sized)
            if f is not None:  # `(k0 + ty) * N` under `k0 + ty < K`
                rest = self._upper(p - f * key, hi, guessed, depth + 1)
                top = self._upper(bound - 1, hi, guessed, depth + 1)
                return None if rest is None or top is None else rest + f * top
        pair = tile_pair(p, self.steps, hi, lambda q: self._upper(q, hi, guessed, depth + 1), sized)
        if pair is not None:  # `k + c` with k a tile loop's counter and c inside its tile
            rest = self._upper(p - pair.part, hi, guessed, depth + 1)
            if rest is not None:
                self.tiled.add((pair.loop, pair.step, _text(pair.bound)))
                return rest + pair.top
        out = af.ZERO
        for m, c in p.terms:
            index = [a for a in m if not _is_size(a, self.scalars)]
            if not index:
                out = out + Poly(((m, c),))  # sizes and constants are exact
                continue
            if c < 0:
                continue  # atoms are non-negative: dropping the term bounds from above
            t = Poly.const(c)
            for a in m:
                if a not in index:
                    t = t * Poly.atom(a)
                    continue
                h = self._atom_hi(a, hi, guessed, depth)
                if h is None:
                    return None
                top = h - 1
                if top.depends_on(self._index_atoms(top)):
                    top = self._upper(top, hi, guessed, depth + 1)
                    if top is None:
                        return None
                t = t * top
            out = out + t
        return out

    def _atom_hi(self, a, hi: dict, guessed: set, depth: int) -> Poly | None:
        if a in hi:
            bound, guess = hi[a]
            if guess:
                guessed.add(a)
            return bound
        if isinstance(a, ModAtom):
            return a.den
        if isinstance(a, DivAtom):
            top = self._upper(a.num, hi, guessed, depth + 1)
            if top is None:
                return None
            q = af._exact_div(top + 1, a.den)
            if q is not None:
                return q
            with af.bounds(self._known()):
                return af.floordiv(top, a.den) + 1
        if a in self.defs:
            top = self._upper(self.defs[a], hi, guessed, depth + 1)
            return None if top is None else top + 1
        if isinstance(a, str) and a.startswith("threadIdx."):
            return None
        return None


def extents(
    fn: A.Function,
    launch: dict | None,
    ties: dict | None = None,
    callees: Callable[[str, int], str] | None = None,
) -> dict[str, Extent]:
    """Pointer parameter -> :class:`Extent` from the syntax of ``fn`` under ``launch`` (the
    inferred ``{"grid": [...], "block": [...]}`` in parameter names, or None), with the sizes
    ``ties`` names read as the sizes they are tied to.  ``callees(function, i)``: what a device
    function does through its ``i``-th parameter (``"r"``, ``"w"``, ``"rw"``; see
    :mod:`cuda2nki.lift.calleeroles`); without it, a pointer passed to one is read."""
    scan = _Scan(fn, launch, ties)
    if callees is not None:
        scan.callees = callees
    try:
        scan.run()
    except (af.BudgetExceeded, RecursionError):
        return {}
    return scan.extents()


# ---------------------------------------------------------------------- helpers


def _block(launch: dict | None) -> tuple | None:
    if launch is None:
        return None
    b = list(launch.get("block", ()))
    if not b or not all(isinstance(x, int) for x in b):
        return None
    return tuple(b) + (1,) * (3 - len(b))


def _grid(launch: dict | None, scalars: set[str]) -> tuple | None:
    """Per axis: (blocks as a Poly, the index range it covers when written ``ceil_div(X, b)``
    with ``b`` the block size, else None), or None for an axis that is not understood."""
    block = _block(launch)
    if launch is None:
        return None
    grid = list(launch.get("grid", ())) + [1] * (3 - len(launch.get("grid", ())))
    out = []
    for k, g in enumerate(grid[:3]):
        out.append(_grid_axis(str(g), scalars, block[k] if block else None))
    return tuple(out)


def _grid_axis(text: str, scalars: set[str], b: int | None) -> tuple | None:
    try:
        tree = pyast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    capped = _capped_count(tree, scalars)
    if capped is not None:
        return capped, None
    if (
        isinstance(tree, pyast.Call)
        and isinstance(tree.func, pyast.Name)
        and tree.func.id == "ceil_div"
        and len(tree.args) == 2
    ):
        x, d = (_py_poly(a, scalars) for a in tree.args)
        if x is None or d is None:
            return None
        q = af._exact_div(x, d)
        count = q if q is not None else Poly.atom(DivAtom(x, d))
        cover = x if b is not None and d == Poly.const(b) else None
        return count, cover
    p = _py_poly(tree, scalars)
    if p is None:
        return None
    tiles = _whole_tiles(p)
    if tiles is not None:  # (X + d - 1) / d blocks of a tiled kernel with no guard
        x, d = tiles
        cover = x if b is not None and d == Poly.const(b) else None
        return Poly.atom(DivAtom(x, d)), cover
    return p, None


def _capped_count(tree: pyast.expr, scalars: set[str]) -> Poly | None:
    """``min(cap, X)`` blocks (either order, ``X`` often ``ceil_div(n, b)``, the cap a constant or
    a size) as one size atom (:mod:`cuda2nki.lift.capped`)."""
    text = capped_text(tree)
    if text is None:
        return None
    parts = [_py_poly(a, scalars) for a in tree.args]  # type: ignore[attr-defined]
    if any(p is None for p in parts):
        return None
    return parts[0] if parts[0] == parts[1] else Poly.atom(text)


def _whole_tiles(p: Poly) -> tuple[Poly, Poly] | None:
    """``(X + c) / d`` as ``(X, d)`` for a constant ``d`` > 1 and ``0 <= c < d``: rounded up
    (``c = d - 1``) or down (``X / d``, ``c = 0``), the grid covers exactly ``X`` threads when
    ``X`` is a multiple of ``d`` (as check chooses it)."""
    if len(p.terms) != 1 or p.terms[0][1] != 1 or len(p.terms[0][0]) != 1:
        return None
    a = p.terms[0][0][0]
    if not isinstance(a, DivAtom) or not a.den.is_const or a.den.const_value <= 1:
        return None
    c = a.num.const_value
    if not 0 <= c < a.den.const_value or a.num.is_const:
        return None
    return a.num - c, a.den


def _py_poly(n: pyast.expr, scalars: set[str]) -> Poly | None:
    if isinstance(n, pyast.Constant) and isinstance(n.value, int):
        return Poly.const(n.value)
    if isinstance(n, pyast.Name):
        return af.sym(n.id) if n.id in scalars else None
    if isinstance(n, pyast.UnaryOp) and isinstance(n.op, pyast.USub | pyast.UAdd):
        v = _py_poly(n.operand, scalars)
        return None if v is None else (-v if isinstance(n.op, pyast.USub) else v)
    if isinstance(n, pyast.BinOp):
        a, b = _py_poly(n.left, scalars), _py_poly(n.right, scalars)
        if a is None or b is None:
            return None
        if isinstance(n.op, pyast.Add):
            return a + b
        if isinstance(n.op, pyast.Sub):
            return a - b
        if isinstance(n.op, pyast.Mult):
            return a * b
        if isinstance(n.op, pyast.Div | pyast.FloorDiv):
            return af.floordiv(a, b)
    if isinstance(n, pyast.Call) and isinstance(n.func, pyast.Name) and n.func.id == "ceil_div":
        a, b = (_py_poly(x, scalars) for x in n.args[:2])
        if a is None or b is None or len(n.args) != 2:
            return None
        return af.floordiv(a + b - 1, b)
    return None


def _assign_counts(fn: A.Function) -> dict[str, int]:
    """Local name -> how often it is assigned after its declaration."""
    out: dict[str, int] = {}
    for n in walk(fn.body):
        t = None
        if isinstance(n, A.Assign):
            t = n.target
        elif isinstance(n, A.Unary) and n.op in ("pre++", "pre--", "post++", "post--"):
            t = n.operand
        if isinstance(t, A.Name):
            out[t.name] = out.get(t.name, 0) + 1
    for n in walk(fn.body):  # loop variables are assigned by their loop (bounded separately)
        if isinstance(n, A.For):
            for s in n.init:
                if isinstance(s, A.VarDecl):
                    out.pop(s.name, None)
    return out


def _branch_assigned(fn: A.Function) -> set[str]:
    """Names declared outside an ``if`` / ``switch`` / ``?:`` branch and assigned inside it."""
    out: set[str] = set()
    for st in walk(fn.body):
        if isinstance(st, A.If):
            out |= _assigned_in(st.then) | _assigned_in(st.else_)
        elif isinstance(st, A.Switch | A.Ternary):
            out |= _assigned_in(st)
    return out


def _loop_assigned(fn: A.Function) -> set[str]:
    """Names declared outside a loop body and assigned inside it (or by the loop's step): their
    value changes per iteration."""
    out: set[str] = set()
    for loop in walk(fn.body):
        if isinstance(loop, A.For | A.While | A.DoWhile):
            own: set[str] = set()
            if isinstance(loop, A.For):  # a variable the loop declares lives in the loop only
                own = {s.name for s in loop.init if isinstance(s, A.VarDecl)}
            out |= _assigned_in(loop.body) - own
            if isinstance(loop, A.For) and loop.step is not None:
                out |= _assigned_in(loop.step, declared=False) - own
    return out


def _assigned_in(node: object, declared: bool = True) -> set[str]:
    """Names assigned (``=``, compound, ``++``) under ``node``, less those it declares."""
    if node is None:
        return set()
    names: set[str] = set()
    local: set[str] = set()
    for n in walk(node):
        t = None
        if isinstance(n, A.Assign):
            t = n.target
        elif isinstance(n, A.Unary) and n.op in ("pre++", "pre--", "post++", "post--"):
            t = n.operand
        elif isinstance(n, A.VarDecl) and declared:
            local.add(n.name)
        if isinstance(t, A.Name):
            names.add(t.name)
    return names - local


def _bump_amount(e: A.Assign, p: str) -> A.Expr | None:
    """``s`` of ``p += s`` or ``p = p + s`` / ``p = s + p``."""
    if e.op == "+=":
        return e.value
    v = e.value
    if e.op != "=" or not isinstance(v, A.Binary) or v.op != "+":
        return None
    if isinstance(v.left, A.Name) and v.left.name == p:
        return v.right
    if isinstance(v.right, A.Name) and v.right.name == p:
        return v.left
    return None


def _early_exit(st: A.Stmt) -> A.Expr | None:
    """The condition of ``if (c) return;`` (a guard for what follows)."""
    if not isinstance(st, A.If) or st.else_ is not None:
        return None
    body = st.then
    while isinstance(body, A.Block) and len(body.body) == 1:
        body = body.body[0]
    return st.cond if isinstance(body, A.Return) and body.value is None else None


def _ptr_first(e: A.Binary) -> tuple[A.Expr, A.Expr]:
    if isinstance(e.right.ty, A.PointerType) and not isinstance(e.left.ty, A.PointerType):
        return e.right, e.left
    return e.left, e.right


def in_scalars(shape: list, ptr: A.CType | None) -> list:
    """A shape counted in elements of the pointer's own type, as the binding counts it: in
    scalars, a vector (or struct) pointee's lanes (bytes) a last axis of its width."""
    pointee = ptr.pointee if isinstance(ptr, A.PointerType) else None
    if type(pointee) is A.VectorType and pointee.width > 1:
        return [*shape, pointee.width]
    return shape


def _width(to: A.CType, base: A.CType | None) -> int:
    """How many elements of the pointer's own type one element of ``to`` covers (1 when the
    same; 0 when it cannot be told)."""
    if base is None:
        return 1
    if isinstance(to, A.VectorType):
        if isinstance(base, A.ScalarType) and to.base.name == base.name:
            return to.width
        return 0
    if isinstance(to, A.ScalarType) and isinstance(base, A.ScalarType):
        return 1 if to.name == base.name else 0
    return 0


def _expr_children(e: A.Expr) -> Iterator[A.Expr]:
    for f in ("left", "right", "operand", "value", "cond", "then", "else_", "base", "index"):
        k = getattr(e, f, None)
        if isinstance(k, A.Expr):
            yield k
    for f in ("args", "exprs", "items"):
        for k in getattr(e, f, ()) or ():
            if isinstance(k, A.Expr):
                yield k


def _bigger(a: Poly, b: Poly) -> Poly | None:
    """The larger of two extents: where their difference has one sign (atoms are non-negative),
    else where one is at least the other at every sample of the sizes."""
    d = a - b
    if all(c >= 0 for _, c in d.terms):
        return a
    if all(c <= 0 for _, c in d.terms):
        return b
    if a.is_const != b.is_const:  # `ptr[0]` beside `ptr[i]` under `i < size / 4`
        return _sized_over_constant(b if a.is_const else a, a if a.is_const else b)
    names = sorted({str(x) for x in d.atoms() if isinstance(x, str)})
    signs = set()
    for k, v in enumerate((1, 4, 7, 64, 96, 129, 1000)):
        env = {n: v + 4 * ((i * 7 + k) % 5) for i, n in enumerate(names)}
        try:
            signs.add(d.evaluate(env) >= 0)
        except Exception:  # noqa: BLE001 - a division by a size that is 0 here
            return None
    if len(signs) != 1:
        return None
    return a if signs.pop() else b


def _sized_over_constant(sized: Poly, const: Poly) -> Poly | None:
    """``sized`` when it covers the constant extent ``const`` at every size a check would use
    (the program's own accesses assume as much), else None."""
    names = set(re.findall(r"[A-Za-z_]\w*", str(sized)))
    for v in (16, 64, 96, 129, 1000, 4096):
        try:
            if sized.evaluate(dict.fromkeys(names, v)) < const.const_value:
                return None
        except Exception:  # noqa: BLE001 - a name the samples cannot give
            return None
    return sized


def _dims(ext: Poly, offsets: list[Poly], scalars: set[str]) -> tuple[str | int, ...]:
    """Row-major dims of an extent, outermost first, from the strides of the offsets: strides
    ``1, C, T*C`` under an extent ``B*T*C`` are the dims ``[B, T, C]``; an offset that is one
    flat index (``out[idx]``) keeps one flat dim.  The offset with the most dims wins."""
    best: tuple = (_text(ext),)
    for off in offsets:
        strides = _strides(off, scalars)
        got = _split(ext, strides) or _split(ext, loose_strides(strides))
        if got is not None and len(got) > len(best):
            best = got
    return best


def _strides(off: Poly, scalars: set[str]) -> list[Poly]:
    """The distinct coefficients (in parameters) of the offset's index atoms, smallest first."""
    out: list[Poly] = []
    for mono, c in off.terms:
        sizes = [a for a in mono if _is_size(a, scalars)]
        if len(sizes) == len(mono) or c <= 0:
            continue  # a constant or sizes-only term, or a negative one: not a stride
        stride = Poly.const(c)
        for a in sizes:
            stride = stride * Poly.atom(a)
        if stride not in out:
            out.append(stride)
    if any(not x.is_const for x in out):  # `4 * i` beside `row * T`: a vector step, not a dim
        out = [x for x in out if x == af.ONE or not x.is_const]
    return sorted(out, key=lambda p: (len(p.terms[0][0]), p.terms[0][1]))


def _split(ext: Poly, strides: list[Poly]) -> tuple | None:
    """Dims (outermost first): each stride that divides the next kept one starts a dim, and the
    last kept divides ``ext`` (a stride that fits no chain, such as a head's offset inside a row,
    is passed over)."""
    if not strides:
        return None
    dims: list[Poly] = []
    if strides[0] != af.ONE:
        if not strides[0].is_const:
            return None
        dims.append(strides[0])
    last = strides[0]
    for hi in strides[1:]:
        q = af._exact_div(hi, last)
        if q is None or q == af.ONE or q.const_value < 0:
            continue
        dims.append(q)
        last = hi
    q = af._exact_div(ext, last)
    if q is None or q == af.ONE and len(dims) > 0:
        return None
    dims.append(q)
    return tuple(_text(d) for d in reversed(dims))


def _contains(p: Poly, part: Poly) -> bool:
    """Every term of ``part`` is a term of ``p`` with the same coefficient."""
    mine = dict(p.terms)
    return all(mine.get(m) == c for m, c in part.terms)


def _is_size(a: object, scalars: set[str]) -> bool:
    """A size parameter, or a quotient / remainder of sizes (``C / NH``)."""
    if isinstance(a, str):
        return a in scalars
    if isinstance(a, DivAtom | ModAtom):
        return all(_is_size(x, scalars) for x in a.num.top_atoms() | a.den.top_atoms())
    return False


def _relax(p: Poly) -> Poly:
    """``NH * (C / NH)`` is at most ``C``: each such product replaced by its numerator (an
    upper bound, so the extent stays safe)."""
    out = af.ZERO
    for m, c in p.terms:
        rest = list(m)
        term = None
        for a in m:
            if isinstance(a, DivAtom) and a.den.is_const and a.den.const_value > 0:
                k = a.den.const_value
                if c % k == 0:  # 128 * (M / 128) is at most M
                    left = list(rest)
                    left.remove(a)
                    term = Poly(((tuple(left), c // k),)) * a.num
                    break
            if isinstance(a, DivAtom) and len(a.den.terms) == 1 and a.den.terms[0][1] == 1:
                den = list(a.den.terms[0][0])
                left = list(rest)
                left.remove(a)
                if all(left.count(x) >= den.count(x) for x in den):
                    for x in den:
                        left.remove(x)
                    term = Poly(((tuple(left), c),)) * a.num if left else a.num * c
                    break
        out = out + (term if term is not None else Poly(((m, c),)))
    return out


def _round_up(p: Poly) -> Poly:
    """``3*B*T*C - C`` as ``3*B*T*C``: a single largest monomial with the rest negative is an
    upper bound that splits into dims (the buffer is at least as large as the kernel reads)."""
    pos = [(m, c) for m, c in p.terms if c > 0]
    if len(pos) == 1 and pos[0][0] and len(p.terms) > 1:
        return Poly((pos[0],))
    return p


def _text(p: Poly) -> str | int:
    return p.const_value if p.is_const else str(p).replace(" ", "")
