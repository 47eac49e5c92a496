"""Accesses an extent scan records and what it makes of them: which global pointer an expression
reads or writes at which flat offset (``p[e]``, ``*(p + e)``, pointer locals, vector casts, calls
that store or take a pointer), and per pointer the largest offset under the bounds in force, as
an :class:`Extent`.  A mixin of :class:`cuda2nki.lift.extentscan._Scan`."""

from __future__ import annotations

from dataclasses import dataclass

from cuda2nki.frontend import ast as A
from cuda2nki.lift import affine as af
from cuda2nki.lift import byteview
from cuda2nki.lift.affine import DivAtom, ModAtom, Poly
from cuda2nki.lift.extentshape import _bigger, _contains, _dims, _is_size, _relax, _round_up, _text
from cuda2nki.lift.extentsyntax import _STORE_RE, _expr_children, _ptr_first, _width
from cuda2nki.lift.extentwhy import why_unsized
from cuda2nki.lift.tilebounds import scaled_key, tile_pair


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
    #: the values of index data the shape assumes (:class:`cuda2nki.lift.dataindex.DataRange`)
    ranges: tuple = ()
    #: why there is no shape, in words (:mod:`cuda2nki.lift.extentwhy`)
    missing: str | None = None


@dataclass(frozen=True)
class _Access:
    ptr: str
    offset: Poly | None
    width: int
    kind: str  # "r" | "w" | "rw"
    bounds: tuple  # ((atom, hi), ...) in force at the access
    atomic: bool = False  # a read-modify-write by an atomic function
    loc: object = None  # the statement it is in


class _Opaque(Exception):
    """An integer the scan does not model."""


class _Accesses:
    """The access recording and results of :class:`~cuda2nki.lift.extentscan._Scan`."""

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
        view = byteview.view_of(self, e.base)  # the bytes of one element (lift.byteview)
        if view is not None:
            return byteview.item(view, e.index) or (view[0], None, 1)
        inner = self._pointer(e.base)
        if inner is None:
            return None
        base, off, w = inner
        try:
            i = self._poly(e.index) * w
        except (_Opaque, af.BudgetExceeded):
            return (base, None, w)
        return (base, None if off is None else off + i, w)

    def _record(
        self, target: tuple[str, Poly | None, int], kind: str, atomic: bool = False
    ) -> None:
        base, off, w = target
        at = self.__dict__.get("at")
        self.accesses.append(_Access(base, off, w, kind, tuple(self.hi.items()), atomic, at))

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
            view = byteview.view_of(self, e.operand)
            got = byteview.item(view, None) if view is not None else self._pointer(e.operand)
            if got is not None:
                self._record(got, kind)
                self._address_reads(e.operand)  # `*(u + nbr[i])` reads `nbr`
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
            if self._inline(e):  # the helper's own accesses, scanned in place
                for a in e.args:
                    if self._pointer(a) is None:
                        self._accesses(a, "r")
                return
        for i, a in enumerate(e.args):
            got = self._pointer(a)
            if got is not None and isinstance(a, A.Name) and e.target is not None:
                got = (got[0], None, 1)  # a device function may index the whole pointer
            if got is not None:
                atomic = store and i == 0 and e.func.startswith("atomic")
                kind = ("rw" if atomic else "w") if store and i == 0 else "r"
                if e.target is not None and not store:  # a helper may write through it
                    kind = self.callees(e.target, i)
                self._address_reads(a)  # `atomicAdd(&h[bin[i]], 1)` reads `bin`
                if not kind:  # it only computes an address from it
                    continue
                self._record(got, kind, atomic and kind == "rw")
            else:
                self._accesses(a, "r")

    def _address_reads(self, a: A.Expr) -> None:
        """The loads an address argument makes to compute its offset: the index of ``&p[e]``,
        the offset of ``p + e`` (through casts)."""
        while isinstance(a, A.Cast):
            a = a.operand
        if isinstance(a, A.Unary) and a.op == "&" and isinstance(a.operand, A.Index):
            self._accesses(a.operand.index, "r")
            self._address_reads(a.operand.base)
        elif isinstance(a, A.Binary) and a.op in ("+", "-"):
            ptr, idx = (a.left, a.right) if a.op == "-" else _ptr_first(a)
            self._accesses(idx, "r")
            self._address_reads(ptr)

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
            missing = None if shape else why_unsized(self, acc)
            out[name] = Extent(shape, role, note, tiles, loose, missing=missing)
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
        best = best.subs(self.rounded)  # `X / d` blocks left in the extent: those launched
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
        if isinstance(a, str) and a in self.masks:  # lift.dataindex
            return self.masks[a]
        if a in hi:
            bound, guess = hi[a]
            if guess:
                guessed.add(a)
            return bound
        if isinstance(a, str) and a in self.data_hi:  # a guard on the value bounds it first
            self.data_used.add(a[1:])
            return self.data_hi[a]
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
