"""The literal lowering, memory: addresses, loads, stores and atomics on tensors, shared buffers
and locals."""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal import deferred
from cuda2nki.lift.literal.deferred import Unset
from cuda2nki.lift.literal.helpers import (
    _depth,
    _flatten,
    _prod,
)
from cuda2nki.lift.literal.knownaddr import index_address
from cuda2nki.lift.literal.lanearray import lane_index, read_element, write_element
from cuda2nki.lift.literal.serialatomic import serial_atomic
from cuda2nki.lift.literal.spelling import _ATOMICS
from cuda2nki.lift.literal.state import Scope
from cuda2nki.lift.literal.values import (
    DynPtr,
    Idx,
    Lin,
    Local,
    Ptr,
    Tile,
    Uni,
    Value,
    as_lin,
    lin_add,
    lin_scale,
    mul,
)
from cuda2nki.lift.literal.wide import WIDE_CLASSES
from cuda2nki.lift.literal.widearrays import read_wide_element, write_wide_element


class MemoryMixin:
    """Memory: addresses, loads, stores and atomics on tensors, shared buffers and locals.

    A part of :class:`~.lower.Lowerer`, whose fields it uses."""

    def store_to(self, target: A.Expr, v: Value, scope: Scope, node: A.Node) -> None:
        if isinstance(target, A.Name):
            b = self.lookup(target.name)
            if b is None:
                raise self.refuse(f"assignment to unknown '{target.name}'", node)
            if b.klass == "S":
                ptr = b.value
                if ptr.ty in WIDE_CLASSES:  # type: ignore[union-attr]
                    v = self.convert(v, target.ty, node)
                    self.wide_store(ptr, ptr.off, v, scope, node)  # type: ignore[union-attr, arg-type]
                    return
                val = self.tile(self.convert(v, target.ty, node), ptr.ty, node)  # type: ignore[union-attr]
                mask = self.store_mask(scope)
                # the writers known at trace time (``threadIdx.x == 0``): the last one alone
                known = {"known": self.exact[mask]} if mask in self.exact else {}
                self.emit("store", node.loc.line, tensor=ptr.tensor, base="0", cp="0", cf="0",  # type: ignore[union-attr]
                          value=val, mask=mask, **known)  # fmt: skip
                return
            if b.klass == "P":
                if scope.mask is not None or scope.in_varying_loop or not isinstance(v, Ptr):
                    raise self.refuse("pointer reassignment under a per-thread condition", node)
                cur = b.value
                if isinstance(cur, Unset):
                    why = deferred.first_assignment_problem(cur, len(self.out))
                    if why is not None:
                        raise self.refuse(why, node)
                    b.value = self.hold_ptr(target.name, v)
                    return
                if not isinstance(cur, Ptr) or cur.tensor != v.tensor:
                    raise self.refuse(f"pointer '{target.name}' moved to another buffer", node)
                b.value = self.hold_ptr(target.name, v)
                return
            if b.klass == "A":
                raise self.refuse("assignment to an array", node)
            name = (
                b.value.expr if isinstance(b.value, Uni | Tile | Idx) else b.value.b.split("[")[0]
            )
            v = self.convert(v, target.ty, node)
            self.write_var(b, name, v, scope, node)
            return
        where = self.address(target, scope)
        if isinstance(where[0], Local):  # a local array element
            arr, idx = where
            if arr.ty in WIDE_CLASSES:  # limb pairs
                write_wide_element(self, arr, idx, v, target.ty, scope, node)
                return
            new = self.full_tile(self.convert(v, target.ty, node), arr.ty, node)
            if isinstance(idx, Tile):  # chosen per thread
                write_element(self, arr, idx, new, scope.mask, node.loc.line)
                return
            cur = Tile(f"{arr.expr}[{idx}]", arr.ty)
            if scope.mask is not None:
                self.emit("where", node.loc.line, dst=cur.expr, mask=scope.mask, a=new,
                          b=cur.expr, dtype=self.dt(arr.ty))  # fmt: skip
            else:
                self.emit("let", node.loc.line, dst=cur.expr, value=new)
            return
        ptr, off = where
        if isinstance(off, Tile) and off.expr in self.known_addr:
            off = Idx(self.known_addr[off.expr])  # indices only: known when traced
        if ptr.ty in WIDE_CLASSES:
            self.wide_store(ptr, off, self.convert(v, target.ty, node), scope, node)
            return
        if isinstance(off, Tile):  # a scatter: thread by thread, the last one wins
            val = self.full_tile(self.convert(v, target.ty, node), ptr.ty, node)
            self.emit("call", node.loc.line, expr=f"_c2n_scatter({ptr.tensor}, {off.expr}, "
                      f"{val}, {self.store_mask(scope)})")  # fmt: skip
            return
        val = self.tile(self.convert(v, target.ty, node), ptr.ty, node)
        if isinstance(off, Idx):
            self.emit("call", node.loc.line, expr=f"_c2n_store_at({ptr.tensor}, {off.expr}, "
                      f"{val}, {self.store_mask(scope)})")  # fmt: skip
            return
        mask = self.store_mask(scope)
        if mask in self.exact and str(off.p) == "0" and str(off.f) == "0":
            # every active thread writes one element: the last one, known at trace time, wins
            self.emit("call", node.loc.line, expr=f"_c2n_store({ptr.tensor}, {off.b}, 0, 0, "
                      f"{val}, {mask}, known={self.exact[mask]})")  # fmt: skip
            return
        # a guard known at trace time (``i < n``) lets a block whose threads all pass it store
        # without reading the old elements back (and a block none passes skip the store)
        known = {"known": self.exact[mask]} if mask in self.exact else {}
        self.emit(
            "store", node.loc.line, tensor=ptr.tensor, base=off.b, cp=off.p, cf=off.f,
            value=val, mask=mask, **known,
        )  # fmt: skip

    def address(self, e: A.Expr, scope: Scope) -> tuple[Ptr, Lin | Idx | Tile] | tuple[Local, str]:
        """The buffer and element offset an lvalue ``p[i]``, ``a[i][j]`` or ``*p`` designates;
        an offset that depends on data is an int32 :class:`Tile` of flat element addresses."""
        if isinstance(e, A.Unary) and e.op == "*":
            p = self.expr(e.operand, scope)
            if isinstance(p, DynPtr):
                return Ptr(p.tensor, Lin("0", "0", "0"), p.ty), Tile(p.addr, "int")
            if not isinstance(p, Ptr):
                raise self.refuse("dereference of a non-pointer", e)
            return p, p.off
        if not isinstance(e, A.Index):
            raise self.refuse(f"store to {type(e).__name__}", e)
        idxs: list[A.Expr] = []
        base: A.Expr = e
        while isinstance(base, A.Index):
            idxs.insert(0, base.index)
            base = base.base
        obj = self.expr(base, scope)
        vals = [self.wide_index(self.expr(i, scope), i) for i in idxs]
        if isinstance(obj, DynPtr):
            if len(vals) != 1:
                raise self.refuse("too many subscripts", e)
            ptr = Ptr(obj.tensor, Lin("0", "0", "0"), obj.ty)
            return ptr, Tile(self.dyn_address(Tile(obj.addr, "int"), [(vals[0], "1")], e), "int")
        if isinstance(obj, Local):
            if not all(isinstance(v, Uni) for v in vals):  # a select per element
                return obj, lane_index(self, obj, vals, e)  # type: ignore[return-value]
            flat = _flatten([v.expr for v in vals], obj.dims)  # type: ignore[union-attr]
            return obj, flat
        if not isinstance(obj, Ptr):
            raise self.refuse("indexing a non-pointer", e)
        dims = obj.dims
        if len(vals) > 1 + len(dims):
            raise self.refuse("too many subscripts", e)
        if any(isinstance(v, Tile) for v in vals):
            if len(vals) != 1 + len(dims):
                raise self.refuse("a row of an array chosen by data", e)
            terms = [(v, str(_prod(dims[k:]))) for k, v in enumerate(vals)]
            return obj, Tile(self.dyn_address(obj.off, terms, e), "int")
        off: Lin | Idx = obj.off
        for k, v in enumerate(vals):
            if not isinstance(v, Uni | Lin | Idx):
                raise self.refuse(f"an index of this kind ({type(v).__name__})", e)
            stride = str(_prod(dims[k:]))  # row-major: the extents after this subscript
            if isinstance(v, Idx) or isinstance(off, Idx):
                off = Idx(f"({self.np_spell(off)} + {mul(self.np_spell(v), stride)})")
            else:
                off = lin_add(off, lin_scale(as_lin(v), stride))
        return obj, off  # type: ignore[return-value]

    def load(self, e: A.Index, scope: Scope) -> Value:
        run = self.run_read(e) or self.probe_read(e, scope)
        if run is not None:
            return run
        where = self.address(e, scope)
        if isinstance(where[0], Local):
            arr, idx = where
            if arr.ty in WIDE_CLASSES:
                return read_wide_element(self, arr, idx)
            if isinstance(idx, Tile):
                return read_element(self, arr, idx)
            return Tile(f"{arr.expr}[{idx}]", arr.ty)
        ptr, off = where  # type: ignore[misc]
        if isinstance(ptr, Ptr) and ptr.dims and _depth(e) <= len(ptr.dims):
            return Ptr(ptr.tensor, off, ptr.ty, ptr.dims[_depth(e) :])  # a row of a 2-D array
        return self.read(ptr, off, scope, e)

    def read(self, ptr: Ptr, off: Lin | Idx | Tile, scope: Scope, node: A.Node) -> Tile:
        """Every thread's element of ``ptr``'s buffer at ``off``: a strided DMA view (affine
        offsets), views split at trace time (index offsets) or a gather (data offsets)."""
        if ptr.ty in WIDE_CLASSES:
            return self.wide_read(ptr, off, node)
        dst, dt = self.fresh("ld"), self.dt(ptr.ty)
        if isinstance(off, Tile):
            how = "_c2n_gather_data" if self.run_addressed(off.expr) else "_c2n_gather"
            self.emit("let", node.loc.line, dst=dst, value=f"{how}({ptr.tensor}, "
                      f"{off.expr}, {self.store_mask(scope)}, {dt})")  # fmt: skip
        elif isinstance(off, Idx):
            self.emit("let", node.loc.line, dst=dst,
                      value=f"_c2n_load_at({ptr.tensor}, {off.expr}, {dt})")  # fmt: skip
        else:
            self.emit("load", node.loc.line, dst=dst, tensor=ptr.tensor, base=off.b, cp=off.p,
                      cf=off.f, dtype=dt)  # fmt: skip
        return Tile(dst, ptr.ty)

    def dyn_address(
        self, off: Lin | Idx | Tile, terms: list[tuple[Value, str]], node: A.Node
    ) -> str:
        """The int32 tile of flat element addresses ``off + sum(index * stride)`` where an
        index depends on data (the engines compute it in fp32, exact below 2**24; the gather and
        scatter helpers assert that the buffer is smaller)."""
        acc = off.expr if isinstance(off, Tile) else self.tile(off, "int", node)
        known = index_address(self, off, terms)
        for v, stride in terms:
            if isinstance(v, Tile) and v.ty == "float":
                raise self.refuse("a floating-point array index", node)
            if not isinstance(v, Uni | Lin | Idx | Tile):
                raise self.refuse("an index that is a pointer or an array", node)
            t = self.tile(v, "int", node)
            if stride != "1":
                t = self.op("multiply", [t, stride], "int").expr
            acc = t if acc == "0" else self.op("add", [acc, t], "int").expr
        if known is not None:
            self.known_addr[acc] = known
        if any(isinstance(v, Tile) and self.run_addressed(v.expr) for v, _ in terms):
            self.run_addrs.add(acc)
        return acc

    def load_ptr(self, ptr: Ptr, node: A.Node) -> Tile:
        if ptr.ty in WIDE_CLASSES:
            return self.wide_read(ptr, ptr.off, node)
        dst = self.fresh("ld")
        off = ptr.off
        if isinstance(off, Idx):
            self.emit("let", node.loc.line, dst=dst,
                      value=f"_c2n_load_at({ptr.tensor}, {off.expr}, {self.dt(ptr.ty)})")  # fmt: skip
        else:
            self.emit("load", node.loc.line, dst=dst, tensor=ptr.tensor, base=off.b, cp=off.p,
                      cf=off.f, dtype=self.dt(ptr.ty))  # fmt: skip
        return Tile(dst, ptr.ty)

    def read_shared_scalar(self, ptr: Ptr, node: A.Node) -> Tile:
        if ptr.ty in WIDE_CLASSES:
            return self.wide_read(ptr, ptr.off, node)
        dst = self.fresh("ld")
        self.emit("load", node.loc.line, dst=dst, tensor=ptr.tensor, base="0", cp="0", cf="0",
                  dtype=self.dt(ptr.ty))  # fmt: skip
        return Tile(dst, ptr.ty)

    def atomic(self, e: A.Call, scope: Scope) -> None:
        """An atomic whose old value is not used: every active thread's update applied in
        thread order (threads that share an element are combined, then applied one after
        another; threads at distinct elements update them in one read-modify-write)."""
        if len(e.args) != 2:
            raise self.refuse(f"{e.func} with {len(e.args)} arguments", e)
        ptr = self.expr(e.args[0], scope)
        if isinstance(ptr, DynPtr):
            self.scatter_atomic(e, ptr, scope)
            return
        if not isinstance(ptr, Ptr):
            raise self.refuse(f"{e.func} on a non-pointer", e)
        v = self.expr(e.args[1], scope)
        val = self.full_tile(self.convert(v, e.args[0].ty.pointee if isinstance(  # type: ignore[union-attr]
            e.args[0].ty, A.PointerType) else None, e), ptr.ty, e)  # fmt: skip
        off = ptr.off
        if isinstance(off, Idx):
            self.emit("call", e.loc.line, expr=f"_c2n_atomic_at({ptr.tensor}, {off.expr}, {val}, "
                      f"{self.store_mask(scope)}, '{_ATOMICS[e.func]}')")  # fmt: skip
            return
        self.emit("call", e.loc.line, expr=f"_c2n_atomic({ptr.tensor}, {off.b}, {off.p}, "
                  f"{off.f}, {val}, {self.store_mask(scope)}, '{_ATOMICS[e.func]}')")  # fmt: skip

    def scatter_atomic(self, e: A.Call, ptr: DynPtr, scope: Scope) -> None:
        """``atomicAdd``/``atomicSub`` at addresses read from data (a histogram, a scatter-add):
        one scatter-add DMA per thread column that accumulates duplicate addresses."""
        op = _ATOMICS[e.func]
        if op not in ("add", "subtract"):  # max/min: thread by thread
            serial_atomic(self, e, scope)  # type: ignore[arg-type]
            return
        pointee = e.args[0].ty.pointee if isinstance(e.args[0].ty, A.PointerType) else None
        v = self.convert(self.expr(e.args[1], scope), pointee, e)
        val = self.full_tile(v, ptr.ty, e)
        if op == "subtract":
            val = self.op("negative", [val], ptr.ty).expr
        self.emit("call", e.loc.line, expr=f"_c2n_scatter_add({ptr.tensor}, {ptr.addr}, {val}, "
                  f"{self.store_mask(scope)})")  # fmt: skip
