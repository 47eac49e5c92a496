"""Memory in the symbolic execution: indexing, loads (with store forwarding), addresses,
assignments and stores to locals, global and shared memory (a mixin of
:class:`cuda2nki.lift.symexec.Executor`)."""

from __future__ import annotations

import dataclasses

from cuda2nki.diagnostics import SourceLoc
from cuda2nki.frontend import ast as A
from cuda2nki.lift import affine as af
from cuda2nki.lift import bitcasts
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Cond, Poly
from cuda2nki.lift.atomicident import atomic_identity
from cuda2nki.lift.forwarding import MISS, StoreRec, disjoint, forward_store, implies
from cuda2nki.lift.gaps import stride_gap
from cuda2nki.lift.localref import LocalRef
from cuda2nki.lift.movetree import guarded_shared_write
from cuda2nki.lift.symbase import (
    _BINOPS,
    LANES,
    PtrVal,
    Refusal,
    SharedArr,
    SharedWrite,
    VecVal,
    _address_remainder,
    _cast_to,
    _data_index,
    _decayed,
    _flat_shared,
    _floor_mod_fixup,
    _int_data,
    _lane,
    _le0,
    _poly_binop,
    dtype_of,
    is_float_dtype,
)


class MemoryExecution:
    """Memory in the symbolic execution: indexing, loads (with store forwarding), addresses,"""

    def e_Index(self, e: A.Index) -> object:
        base, idx = self._index_path(e)
        return self.read_indexed(base, idx, e.loc)

    def _index_path(self, e: A.Expr) -> tuple[object, list[Poly]]:
        idx: list[Poly] = []
        while isinstance(e, A.Index):
            idx.insert(0, self.as_poly(self.eval(e.index), e.index.loc))
            e = e.base
        return self.eval(e), idx

    def read_indexed(self, base: object, idx: list[Poly], loc: SourceLoc) -> object:
        if isinstance(base, PtrVal):
            if len(idx) != 1:
                raise Refusal("C2N2010", loc, what="multi-level pointer indexing")
            return self.deref(base, idx[0], loc)
        if isinstance(base, SharedArr):
            return self.read_shared(base, tuple(idx), loc)
        if isinstance(base, tuple) and base[0] == "localarr":
            key = self._local_key(base, idx, loc)
            if key not in self.env:
                raise Refusal("C2N2010", loc, what="read of an unwritten local array element")
            return self.env[key]
        if isinstance(base, VecVal):
            return base.lanes[_lane(base, idx, loc)]
        raise Refusal("C2N2010", loc, what="indexing a non-array value")

    def _local_key(self, arr: tuple, idx: list[Poly], loc: SourceLoc) -> str:
        if not all(i.is_const for i in idx):
            raise Refusal("C2N2013", loc, what="a local array indexed by a non-constant")
        name = next(k for k, v in self.env.items() if v is arr)
        return name + "".join(f"[{i.const_value}]" for i in idx)

    def deref(self, p: object, off: Poly, loc: SourceLoc) -> object:
        if isinstance(p, LocalRef) and off == af.ZERO:
            return p.value
        p = _decayed(p)
        if not isinstance(p, PtrVal):
            raise Refusal("C2N2010", loc, what="dereference of a non-pointer")
        if p.shared:
            got = self.read_shared(self.shared[p.tensor], (p.offset + off,), loc)
            return bitcasts.loaded(p, got)
        if p.seen_as:
            return bitcasts.loaded(p, self.load(p.tensor, p.offset + off, p.dtype, loc))
        flat = p.offset * 1 + off * p.width if p.width > 1 else p.offset + off
        if p.width > 1:
            lanes = tuple(self.load(p.tensor, flat + k, p.dtype, loc) for k in range(p.width))
            return VecVal(lanes, p.dtype)
        return self.load(p.tensor, flat, p.dtype, loc)

    def load(self, tensor: str, index: Poly, dtype: str, loc: SourceLoc) -> V.DExpr:
        index = _address_remainder(index)
        if (tensor, index) in self.promoted:
            return self.env[self.promoted[(tensor, index)]]
        for a in index.top_atoms():
            if isinstance(a, af.OpaqueAtom) and a.key.startswith("clamp:"):
                f, x, y = a.payload  # min(x, y) / max(x, y): the load of whichever is taken
                take_x = _le0(x - y) if f == "min" else _le0(y - x)
                lx = self.load(tensor, index.subs({a: x}), dtype, loc)
                ly = self.load(tensor, index.subs({a: y}), dtype, loc)
                return V.Select(dtype, V.Pred("bool", take_x), lx, ly)
            chosen = _chosen_index(a)
            if chosen is not None:  # x[c ? i : j]: the load of whichever is taken
                cond, x, y = chosen
                lx = self.load(tensor, index.subs({a: x}), dtype, loc)
                ly = self.load(tensor, index.subs({a: y}), dtype, loc)
                return V.Select(dtype, V.Pred("bool", cond), lx, ly)
        return self._forwarded(tensor, index, dtype, loc, len(self.stores))

    def _forwarded(self, tensor: str, index: Poly, dtype: str, loc: SourceLoc, upto: int):
        """This thread's own earlier store to the element (among the first ``upto`` stores), else
        the element's value in memory.  A store that may or may not have written the element
        (``data[2*t + 1]`` then ``data[n - 1]``) is selected by that condition."""
        for k in range(upto - 1, -1, -1):
            st = self.stores[k]
            if st.tensor != tensor:
                continue
            fwd = forward_store(st, index, self.loops)
            if fwd is MISS:
                continue
            if fwd is None and st.accumulate is None and stride_gap(st.index, index, self.sizes()):
                continue  # `C[r * N + c]` then `C[(r + 1) * N + c]`: apart unless C is empty
            if fwd is None:
                maybe = st.accumulate is None and all(lc in self.loops for lc in st.loops)
                if not maybe:
                    raise Refusal(
                        "C2N2017",
                        loc,
                        tensor=tensor,
                        why="it reads an element written earlier that cannot be matched to one "
                        "store",
                    )
                hit = af.conj([Cond.of(af.Cmp(st.index - index, "==")), st.guard])
                hit = V.simplify_cond(hit)
                rest = self._forwarded(tensor, index, dtype, loc, k)
                if hit.kind == "false":
                    return rest
                return V.Select(dtype, V.Pred("bool", hit), st.value, rest)
            value, wrote = fwd
            now = self.live()
            if implies(now, wrote):
                return value
            if disjoint(now, wrote):  # the other arm of a branch: this thread never stored
                continue
            rest = self._forwarded(tensor, index, dtype, loc, k)
            return V.Select(dtype, V.Pred("bool", wrote), value, rest)
        self.reads.add(tensor)
        return V.Load(dtype, tensor, index)

    def sizes(self) -> set[str]:
        """The integer scalar parameters (candidate sizes)."""
        return {n for n, d in self.scalars.items() if not is_float_dtype(d) and n not in self.ties}

    def address_of(self, e: A.Expr) -> PtrVal:
        if isinstance(e, A.Name) and isinstance(self.env.get(e.name), SharedArr):
            arr = self.env[e.name]
            if arr.scalar:
                return PtrVal(arr.name, af.ZERO, arr.dtype, 1, True)
        if isinstance(e, A.Index):
            base, idx = self._index_path(e)
            if isinstance(base, PtrVal) and len(idx) == 1:
                return dataclasses.replace(base, offset=base.offset + idx[0] * base.width)
            if isinstance(base, SharedArr):
                return PtrVal(base.name, _flat_shared(base, tuple(idx)), base.dtype, 1, True)
        if isinstance(e, A.Name) and self.env.get(e.name) is not None:
            return LocalRef(e.name, self.env[e.name])  # a member pointer passed to a method
        if isinstance(e, A.Unary) and e.op == "*":  # `&*p` is `p`
            p = _decayed(self.eval(e.operand))
            if isinstance(p, PtrVal):
                return p
        raise Refusal("C2N2010", e.loc, what="address-of this expression")

    # ------------------------------------------------------------------ assignment / stores
    def e_Assign(self, e: A.Assign) -> object:
        value = self.eval(e.value)
        t = e.target
        if e.op != "=":
            old = self.eval(t)
            bop = e.op[:-1]
            got = None
            if isinstance(old, Poly) and isinstance(value, Poly):
                got = _poly_binop(bop, old, value)
                if got is None and bop not in ("/", "%"):
                    raise Refusal("C2N2013", e.loc, what=f"integer '{e.op}'")
            if got is not None:
                value = got
            else:
                if isinstance(old, VecVal):
                    raise Refusal("C2N2010", e.loc, what="compound assignment on a vector")
                od = self.as_data(old, e.loc, dtype_of(t.ty))
                vd = self.as_data(value, e.loc, dtype_of(e.value.ty))
                dt = od.dtype
                value = self.combine(_BINOPS[bop], dt, od, _cast_to(vd, dt))
        self.assign(t, value, e.loc)
        return value

    def assign(self, t: A.Expr, value: object, loc: SourceLoc) -> None:
        if isinstance(t, A.Name):
            self.assign_local(t.name, value, t.ty, loc)
        elif isinstance(t, A.Index):
            base, idx = self._index_path(t)
            if isinstance(base, PtrVal):
                self.store(base, idx[0], value, loc)
            elif isinstance(base, SharedArr):
                self.write_shared(base, tuple(idx), value, loc)
            elif isinstance(base, tuple) and base[0] == "localarr":
                key = self._local_key(base, idx, loc)
                if key not in self.env:
                    self.decl_depth[key] = len(self.guards)
                    self.env[key] = None
                self.assign_local(key, value, None, loc, dtype=base[2])
            elif isinstance(base, VecVal) and isinstance(t.base, A.Name):
                self.set_lane(t.base.name, base, _lane(base, idx, loc), value, loc)
            else:
                raise Refusal("C2N2010", loc, what="assignment through this expression")
        elif isinstance(t, A.Unary) and t.op == "*":
            self.store(self.eval(t.operand), af.ZERO, value, loc)
        elif isinstance(t, A.Member) and isinstance(t.base, A.Name):
            vec = self.eval(t.base)
            if not isinstance(vec, VecVal) or t.field not in LANES:
                raise Refusal("C2N2010", loc, what=f"member store '.{t.field}'")
            self.set_lane(t.base.name, vec, LANES.index(t.field), value, loc)
        else:
            raise Refusal("C2N2010", loc, what="assignment target")

    def set_lane(self, name: str, vec: VecVal, k: int, value: object, loc: SourceLoc) -> None:
        """Lane ``k`` of the vector local ``name`` becomes ``value`` (where the guards since its
        declaration hold)."""
        lanes = list(vec.lanes)
        nv = _cast_to(self.as_data(value, loc, vec.dtype), vec.dtype)
        lanes[k] = self._guarded(name, nv, lanes[k], loc)
        self.env[name] = VecVal(tuple(lanes), vec.dtype)

    def _guard_since(self, name: str) -> Cond:
        depth = self.decl_depth.get(name, 0)
        return af.conj(self.guards[depth:])

    def _guarded(self, name: str, new: object, old: object, loc: SourceLoc) -> object:
        g = self._guard_since(name)
        dg = self.dguards[:]
        if g == af.TRUE and not dg:
            return new
        if old is None:
            return new
        if isinstance(new, Poly) and isinstance(old, Poly) and new == old:
            return new
        nd, od = self.as_data(new, loc), self.as_data(old, loc)
        if g == af.TRUE and len(dg) == 1:
            wrapped = _floor_mod_fixup(dg[0], nd, od)
            if wrapped is not None:
                return wrapped
        dt = od.dtype
        cond: V.DExpr | None = None if g == af.TRUE else V.Pred("bool", g)
        for d in dg:
            cond = d if cond is None else V.Op("bool", "land", (cond, d))
        return V.Select(dt, cond, _cast_to(nd, dt), od)

    def assign_local(
        self, name: str, value: object, ty: A.CType | None, loc: SourceLoc, dtype: str | None = None
    ) -> None:
        if name not in self.env:
            raise Refusal("C2N2010", loc, what=f"assignment to unknown '{name}'")
        old = self.env[name]
        if isinstance(old, SharedArr) and old.scalar:
            self.write_shared(old, (af.ZERO,), value, loc)
            return
        if isinstance(old, (PtrVal, SharedArr)):
            raise Refusal("C2N2010", loc, what="pointer reassignment")
        if ty is not None:
            value = self.convert(value, ty, loc)
        elif dtype is not None and isinstance(value, V.DExpr):
            value = _cast_to(value, dtype)
        if isinstance(value, VecVal):
            self.env[name] = value
            return
        self.env[name] = self._guarded(name, value, old, loc)

    def store(
        self, p: object, off: Poly, value: object, loc: SourceLoc, accumulate: str | None = None
    ) -> None:
        if isinstance(p, LocalRef):
            raise Refusal("C2N2010", loc, what=f"a store through the address of '{p.name}'")
        p = _decayed(p)
        if not isinstance(p, PtrVal):
            raise Refusal("C2N2010", loc, what="store through a non-pointer")
        if p.seen_as:
            if accumulate is not None:
                raise Refusal("C2N2022", loc, what="an atomic through a pointer of another type")
            value = bitcasts.stored(p, _cast_to(self.as_data(value, loc, p.seen_as), p.seen_as))
        if p.shared:
            self.write_shared(self.shared[p.tensor], (p.offset + off,), value, loc)
            return
        if p.width > 1:
            if not isinstance(value, VecVal):
                raise Refusal("C2N2010", loc, what="vector store of a non-vector")
            base = p.offset + off * p.width
            for k, lane in enumerate(value.lanes):
                self._store1(p.tensor, base + k, lane, p.dtype, loc, accumulate)
            return
        self._store1(p.tensor, p.offset + off, value, p.dtype, loc, accumulate)

    def _store1(
        self,
        tensor: str,
        index: Poly,
        value: object,
        dtype: str,
        loc: SourceLoc,
        accumulate: str | None,
    ) -> None:
        d = _cast_to(self.as_data(value, loc, dtype), dtype)
        index = _address_remainder(index)
        if (tensor, index) in self.promoted and accumulate is None:
            self.assign_local(self.promoted[(tensor, index)], d, None, loc, dtype=dtype)
            return
        if self.dguards:
            old = atomic_identity(accumulate, dtype)
            if accumulate is not None and old is None:
                raise Refusal("C2N2018", loc, what="an atomic under a data-dependent condition")
            cond = self.dguards[0]
            for g in self.dguards[1:]:
                cond = V.Op("bool", "land", (cond, g))
            # an atomic where the condition is false combines its op's identity: changes nothing
            old = old if accumulate else self.load(tensor, index, dtype, loc)
            d = V.Select(dtype, cond, d, old)
        self.stores.append(
            StoreRec(
                tensor, index, d, self.live(), tuple(self.loops), accumulate, loc, len(self.stores)
            )
        )

    # ------------------------------------------------------------------ shared memory
    def write_shared(
        self,
        arr: SharedArr,
        idx: tuple,
        value: object,
        loc: SourceLoc,
        accumulate: str | None = None,
    ) -> None:
        idx = self._shared_index(arr, idx, loc)
        d = _cast_to(self.as_data(value, loc, arr.dtype), arr.dtype)
        if self.dguards:  # a compare-and-move step, or refused when read (movetree)
            if accumulate is not None:
                raise Refusal(
                    "C2N2018", loc, what="a shared atomic under a data-dependent condition"
                )
            d = guarded_shared_write(self, arr, idx, d, loc)
        own = [n for n in V.walk(d) if isinstance(n, V.SRead) and n.array == arr.name]
        if own and not arr.stepped:
            # the first combination step reads the array as the threads filled it: that
            # per-thread value is what a tree over the block combines
            self.templates.extend(own)
            arr.stepped = True
        arr.writes.append(
            SharedWrite(idx, d, self.live(), self.epoch, tuple(self.loops), loc, accumulate)
        )
        self.templates.append(d)

    def _shared_index(self, arr: SharedArr, idx: tuple, loc: SourceLoc) -> tuple:
        if len(idx) == len(arr.dims):
            return tuple(idx)
        if len(idx) == 1:  # flat access to a multi-dim array (through a pointer)
            return (idx[0],) if len(arr.dims) == 1 else self._unflatten(arr, idx[0], loc)
        raise Refusal("C2N2012", loc, array=arr.name, why="partial indexing")

    def _unflatten(self, arr: SharedArr, flat: Poly, loc: SourceLoc) -> tuple:
        raise Refusal("C2N2012", loc, array=arr.name, why="flat access to a multi-dim array")

    def read_shared(self, arr: SharedArr, idx: tuple, loc: SourceLoc) -> V.DExpr:
        idx = self._shared_index(arr, idx, loc)
        return V.SRead(
            arr.dtype,
            arr.name,
            idx,
            len(arr.writes),
            self.epoch,
            tuple(lc.var for lc in self.loops),
            self.live(),
        )


def _chosen_index(a: object) -> tuple | None:
    """``(c, i, j)`` for an index atom that is ``c ? i : j`` with an index condition ``c`` and
    integer index values ``i``, ``j`` (a ternary choosing the element), else None."""
    if not isinstance(a, af.OpaqueAtom) or not isinstance(a.payload, V.Select):
        return None
    sel = a.payload
    if not isinstance(sel.cond, V.Pred) or not (_int_data(sel.then) and _int_data(sel.else_)):
        return None
    return sel.cond.cond, _data_index(sel.then), _data_index(sel.else_)
