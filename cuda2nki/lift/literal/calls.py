"""The literal lowering of calls: math functions, atomics, warp shuffles and reductions, and
device functions inlined into the caller (a mixin of :class:`~cuda2nki.lift.literal.lower.Lowerer`)."""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.lift import mathcompose
from cuda2nki.lift.collective import collective_reason
from cuda2nki.lift.literal.classify import Classifier, is_float
from cuda2nki.lift.literal.program import Instr
from cuda2nki.lift.literal.shared import (
    _ATOMICS,
    _CONVERT,
    _MATH1,
    _MATH2,
    _NOOP_CALLS,
    _NP1,
    _SHUFFLES,
    Binding_,
    Scope,
    _callee,
    _is_scalar,
    _is_void,
    _kind,
)
from cuda2nki.lift.literal.single_exit import single_exit
from cuda2nki.lift.literal.values import (
    DynPtr,
    Idx,
    Lin,
    Ptr,
    Tile,
    Uni,
    Value,
    as_lin,
    is_int,
    lin_add,
    lin_scale,
    lin_sub,
    mul,
)


class CallsMixin:
    """Calls of the kernel body, lowered by the methods of the :class:`Lowerer` it is mixed into."""

    def call(self, e: A.Call, scope: Scope) -> Value:  # noqa: PLR0911
        f = e.func
        if f in _NOOP_CALLS:
            self.emit("comment", e.loc.line, text=f"{f}: the block runs in lockstep")
            return Uni("0", "int")
        if e.target is not None:
            return self.inline(e, scope)
        if f.startswith("atomic"):
            why = "whose old value is used" if f in _ATOMICS else "(an atomic read-modify-write)"
            raise self.refuse(f"{f} {why}", e)
        if f in _SHUFFLES or f.startswith("__c2n_warp_reduce_"):
            return self.shuffle(e, scope)
        if f.startswith(("__shfl", "__any", "__all", "__ballot", "__c2n_warp", "__activemask")):
            raise self.refuse(f"{f} (warp-level exchange)", e)
        args = [self.expr(a, scope) for a in e.args]
        if f == "__ldg" and len(args) == 1 and isinstance(args[0], Ptr):
            return self.load_ptr(args[0], e)  # a read through the read-only cache: a load
        if f in _CONVERT and len(args) == 1:
            return self.convert(args[0], e.ty, e)
        if f in ("fmaf", "__fmaf_rn", "fma") and len(args) == 3:
            prod = self.arith("*", args[0], args[1], e.ty, e)
            return self.arith("+", prod, args[2], e.ty, e)
        if (
            f in ("min", "max", "umin", "umax")
            and all(isinstance(a, Uni | Lin | Idx) for a in args)
            and all(_kind(a) == "int" for a in args)
            and not all(isinstance(a, Uni) for a in args)
        ):
            fn = "np.minimum" if "min" in f else "np.maximum"
            return Idx(f"{fn}({', '.join(self.np_spell(a) for a in args)})")
        if f in ("min", "max", "umin", "umax") and all(isinstance(a, Uni) for a in args):
            fn = "min" if "min" in f else "max"
            return Uni(f"{fn}({', '.join(a.expr for a in args)})", _kind(args[0]))  # type: ignore[union-attr]
        composed = mathcompose.formula(f, len(args)) if is_float(e.ty) else None
        if composed is not None:
            return self.composed(composed, args, e)
        if f in _MATH2 and len(args) == 2:
            ty = "float" if is_float(e.ty) else "int"
            if all(isinstance(a, Uni) for a in args):
                fn = {"maximum": "max", "minimum": "min"}.get(_MATH2[f])
                if fn is None:
                    raise self.refuse(f"{f} of uniform values", e)
                return Uni(f"{'np.float32' if ty == 'float' else ''}({fn}({args[0].expr}, "  # type: ignore[union-attr]
                           f"{args[1].expr}))", ty)  # type: ignore[union-attr]  # fmt: skip
            ta, tb = self.tile(args[0], ty, e), self.tile(args[1], ty, e)
            if _is_scalar(args[0]) and _is_scalar(args[1]):
                ta = self.full_tile(args[0], ty, e)
            return self.op(_MATH2[f], [ta, tb], ty)
        if f in _MATH1 and len(args) == 1:
            name = _MATH1[f]
            if isinstance(args[0], Uni):
                fn = _NP1.get(name)
                if fn is None:
                    raise self.refuse(f"{f} of a uniform value", e)
                return Uni(f"np.float32({fn}(np.float32({args[0].expr})))", "float")
            ty = "int" if name == "abs" and _kind(args[0]) == "int" else "float"
            return self.op(name, [self.tile(args[0], ty, e)], ty)
        raise self.refuse(collective_reason(e) or f"call to '{f}'", e)

    def composed(self, f: mathcompose.Formula, args: list[Value], e: A.Call) -> Tile:
        """A math function NKI has no instruction for, as its composition of those it has
        (see :mod:`cuda2nki.lift.mathcompose`), computed on tiles."""
        if all(_is_scalar(a) for a in args):  # a uniform argument: one tile of its value
            args = [Tile(self.full_tile(args[0], "float", e), "float"), *args[1:]]
        tiles = tuple(self.tile(a, "float", e) for a in args)
        return Tile(
            mathcompose.build(
                f,
                tiles,
                repr,
                lambda op, xs: self.op(mathcompose.nki_name(op), list(xs), "float").expr,
            ),
            "float",
        )

    def load_ptr(self, ptr: Ptr, node: A.Node) -> Tile:
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
        if op not in ("add", "subtract"):
            raise self.refuse(f"{e.func} at an address that depends on data (only add)", e)
        pointee = e.args[0].ty.pointee if isinstance(e.args[0].ty, A.PointerType) else None
        v = self.convert(self.expr(e.args[1], scope), pointee, e)
        val = self.full_tile(v, ptr.ty, e)
        if op == "subtract":
            val = self.op("negative", [val], ptr.ty).expr
        self.emit("call", e.loc.line, expr=f"_c2n_scatter_add({ptr.tensor}, {ptr.addr}, {val}, "
                  f"{self.store_mask(scope)})")  # fmt: skip

    # ------------------------------------------------------------------ warp shuffles
    def linear_tid(self) -> Lin:
        return lin_add(self.tx, lin_scale(self.ty_, str(self.block_dims[0])))

    def exchange(self, ty: str) -> str:
        """The scratch buffer through which the threads of a block exchange shuffled values."""
        name = f"_xch_{ty}"
        if name not in self.names:
            self.names.add(name)
            size = str(self.block_dims[0] * self.block_dims[1] * self.block_dims[2])
            dt = "nl.float32" if ty == "float" else "nl.int32"
            self.scratch.append(Instr("scratch", (("dst", name), ("size", size), ("dtype", dt))))
        return name

    def lane_read(self, scr: str, src: Lin, ty: str, line: int) -> str:
        dst = self.fresh("ld")
        self.emit("load", line, dst=dst, tensor=scr, base=src.b, cp=src.p, cf=src.f,
                  dtype=self.dt(ty))  # fmt: skip
        return dst

    def shuffle(self, e: A.Call, scope: Scope) -> Value:
        """Warp shuffles through a scratch buffer: every thread writes its value at its linear
        thread id, then reads the source lane's; a source outside the lane's segment of
        ``width`` lanes keeps the thread's own value (CUDA's rule)."""
        f = e.func
        if f.startswith("__c2n_warp_reduce_"):
            return self.warp_reduce(e, scope)
        args = [self.expr(a, scope) for a in e.args]
        if len(args) < 3:
            raise self.refuse(f"{f} with {len(args)} arguments", e)
        v, x = args[1], args[2]
        width = args[3] if len(args) > 3 else Uni("32", "int")
        if not (isinstance(width, Uni) and is_int(width.expr)) or int(width.expr) & (
            int(width.expr) - 1
        ):
            raise self.refuse(f"{f} with a width that is not a constant power of two", e)
        if not isinstance(x, Uni):
            raise self.refuse(f"{f} with a per-thread lane or offset", e)
        return self.shuffle_value(f, v, x, int(width.expr), e)

    def shuffle_value(self, f: str, v: Value, x: Uni, w: int, e: A.Node) -> Value:
        ty = "float" if _kind(v) == "float" else "int"
        vt = self.full_tile(v, ty, e)
        tid = self.linear_tid()
        lane = self.arith("%", tid, Uni(str(w), "int"), A.ScalarType(name="int32"), e)
        scr = self.exchange(ty)
        self.emit("store", e.loc.line, tensor=scr, base=tid.b, cp=tid.p, cf=tid.f, value=vt,
                  mask="None")  # fmt: skip
        line = e.loc.line
        if f == "__shfl_down_sync":
            got = self.lane_read(scr, lin_add(tid, as_lin(x)), ty, line)
            ok = self.arith("<", self.arith("+", lane, x, None, e), Uni(str(w), "int"), None, e)
        elif f == "__shfl_up_sync":
            got = self.lane_read(scr, lin_sub(tid, as_lin(x)), ty, line)
            ok = self.arith(">=", lane, x, None, e)
        elif f == "__shfl_xor_sync":
            # lane ^ m for a power of two m < width: lane + m where bit m of the lane is 0,
            # else lane - m (a mask known only at trace time is checked there)
            if is_int(x.expr):
                m = int(x.expr)
                if m <= 0 or m & (m - 1) or m >= w:
                    raise self.refuse(f"{f} with a lane mask that is not a power of two < {w}", e)
            else:
                self.emit("call", line, expr=f"_c2n_lane_mask({x.expr}, {w})")
            up = self.lane_read(scr, lin_add(tid, as_lin(x)), ty, line)
            down = self.lane_read(scr, lin_sub(tid, as_lin(x)), ty, line)
            two = Uni(mul("2", x.expr), "int")
            bit = self.arith("%", lane, two, A.ScalarType(name="int32"), e)
            low = self.cond_tile(self.arith("<", bit, x, None, e), e)
            name = self.fresh("s")
            self.emit("where", line, dst=name, mask=low, a=up, b=down, dtype=self.dt(ty))
            return Tile(name, ty)
        else:  # __shfl_sync: every lane reads lane x of its segment
            if not isinstance(lane, Lin):
                raise self.refuse(f"{f} in a thread layout where the lane is not affine", e)
            return Tile(self.lane_read(scr, lin_add(lin_sub(tid, lane), as_lin(x)), ty, line), ty)
        ct = self.cond_tile(ok, e)
        name = self.fresh("s")
        self.emit("where", line, dst=name, mask=ct, a=got, b=vt, dtype=self.dt(ty))
        return Tile(name, ty)

    def warp_reduce(self, e: A.Call, scope: Scope) -> Value:
        """``cg::reduce`` over aligned groups of N lanes: a butterfly of xor shuffles."""
        op = e.func.removeprefix("__c2n_warp_reduce_")
        combine = {"add": "+", "max": "max", "min": "min", "and": "&", "or": "|", "xor": "^"}
        if op not in combine or len(e.args) != 2:
            raise self.refuse(f"{e.func}", e)
        v = self.expr(e.args[0], scope)
        n = self.expr(e.args[1], scope)
        if not (isinstance(n, Uni) and is_int(n.expr)):
            raise self.refuse(f"{e.func} over a non-constant group", e)
        m = int(n.expr) // 2
        while m >= 1:
            other = self.shuffle_value("__shfl_xor_sync", v, Uni(str(m), "int"), 32, e)
            if combine[op] in ("max", "min"):
                ty = "float" if _kind(v) == "float" else "int"
                fn = "maximum" if op == "max" else "minimum"
                v = self.op(fn, [self.tile(v, ty, e), self.tile(other, ty, e)], ty)
            else:
                v = self.arith(combine[op], v, other, e.ty, e)
            m //= 2
        return v

    def inline(self, e: A.Call, scope: Scope) -> Value:
        fn = _callee(self.tu, e.target or "")
        if fn is None:
            raise self.refuse(f"call to '{e.func}' (no definition)", e)
        fn = single_exit(fn)  # several returns: a result variable and a done flag
        if self.inline_depth > 8:
            raise self.refuse(f"recursive call to '{e.func}'", e)
        args = [self.expr(a, scope) for a in e.args]
        seeds = {}
        frame: dict[str, Binding_] = {}
        for p, v in zip(fn.params, args):
            if isinstance(v, Ptr):
                frame[p.name] = Binding_(v, "P", scope.depth)
                continue
            k = "U" if isinstance(v, Uni) else ("L" if isinstance(v, Lin) else "T")
            seeds[p.name] = k
        classes = Classifier(seeds, self.thread_kind, lambda n: _callee(self.tu, n)).run(fn.body)
        saved_classes, saved_env = self.classes, self.env
        self.classes = {**self.classes, **classes}
        self.env = [*self.env, frame]
        for p, v in zip(fn.params, args):
            if isinstance(v, Ptr):
                continue
            ty = "float" if is_float(p.ty) else "int"
            name = self.pyname(p.name)
            b = Binding_(Uni(name, ty), self.classes.get(p.name, "T"), scope.depth, ty)
            frame[p.name] = b
            self.write_var(b, name, self.convert(v, p.ty, e), scope, e, fresh=True)
        self.ret_slot.append("ret" if not _is_void(fn.return_type) else None)
        self.entry_scope.append(scope)
        self.entry_nest.append(len(self.out))
        self.ret_value = Uni("0", "int")
        self.inline_depth += 1
        try:
            self.block(fn.body.body, scope)
            self.dead = False
            return self.ret_value
        finally:
            self.inline_depth -= 1
            self.ret_slot.pop()
            self.entry_scope.pop()
            self.entry_nest.pop()
            self.classes, self.env = saved_classes, saved_env

    ret_value: Value = Uni("0", "int")
