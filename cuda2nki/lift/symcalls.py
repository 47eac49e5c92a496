"""Calls in the symbolic execution: math and conversion intrinsics, packed words,
warp shuffles and votes, atomics and inlined device functions (a mixin of
:class:`cuda2nki.lift.symexec.Executor`)."""

from __future__ import annotations

import dataclasses

from cuda2nki.frontend import ast as A
from cuda2nki.lift import affine as af
from cuda2nki.lift import argfold, bitcasts, bytedots, mathselect, movetree, online, warpvotes
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Cond, Poly
from cuda2nki.lift.collective import collective_reason
from cuda2nki.lift.legacyshfl import LEGACY_SHUFFLES as _LEGACY_SHUFFLES
from cuda2nki.lift.legacyshfl import legacy_shuffle
from cuda2nki.lift.symbase import (
    _ATOMIC,
    _CONVERT,
    _MATH1,
    _MATH2,
    _PACKED,
    _PLACE,
    _ROUNDED_CONVERT,
    UNDEFER_UNITS,
    PtrVal,
    Refusal,
    VecVal,
    _block_uniform,
    _cast_to,
    _composed,
    _math_name,
    dtype_of,
)


class CallExecution:
    """Calls in the symbolic execution: math and conversion intrinsics, packed words,"""

    # ------------------------------------------------------------------ calls
    def e_Call(self, e: A.Call) -> object:
        f = e.func
        if f.startswith("__c2n_") and (why := collective_reason(e)) is not None:
            raise Refusal("C2N2010", e.loc, what=why)
        if f in ("__syncthreads", "__syncwarp"):
            if f == "__syncthreads" and not _block_uniform(self.guard()):
                raise Refusal(
                    "C2N2015", e.loc, what="__syncthreads under a thread-dependent condition"
                )
            self.epoch += 1
            if f == "__syncwarp":
                self.warp_epochs.add(self.epoch)
            return None
        if f in ("__threadfence", "__threadfence_block"):
            return None
        if f == "assert":  # a check of the CUDA run (the SIMT interpreter makes it): no value
            return None
        if f in _LEGACY_SHUFFLES and len(e.args) in (2, 3):
            e = legacy_shuffle(e)  # pre-CUDA 9 ``__shfl_down(v, d)``: the whole warp's mask
            f = e.func
        if f in ("__shfl_down_sync", "__shfl_up_sync", "__shfl_xor_sync", "__shfl_sync"):
            return self.shuffle(e)
        if (kind := warpvotes.vote_of(f, len(e.args))) is not None:
            return warpvotes.vote(self, e, kind)  # type: ignore[arg-type]
        if f in warpvotes.COUNTS and (n := warpvotes.count(self, e)) is not None:  # type: ignore[arg-type]
            return n
        if f.startswith("__c2n_warp_reduce_") and f[18:] in ("add", "max", "min"):
            return self.warp_reduce(e, f[18:])
        if (
            f.startswith("__shfl")
            or f.startswith("__c2n_warp_reduce")
            or f in ("__ballot_sync", "__any_sync", "__all_sync", "__reduce_add_sync")
        ):
            raise Refusal("C2N2015", e.loc, what=f"warp-cooperative '{f}'")
        if f.removesuffix("_block").removesuffix("_system") in _ATOMIC:
            return self.atomic(e)
        if f.removesuffix("_block").removesuffix("_system") == "atomicInc" and len(e.args) == 2:
            return self.atomic_inc(e)
        if f.startswith("atomic"):
            raise Refusal("C2N2022", e.loc, what=f)
        if f in ("__ldg", "__ldcg", "__ldca", "__ldcs", "__ldlu", "__ldcv"):
            return self.deref(self.eval(e.args[0]), af.ZERO, e.loc)
        if e.target is not None:
            return self.inline(e)
        args = [self.eval(a) for a in e.args]
        if f.startswith("make_"):
            dt = dtype_of(e.ty)
            return VecVal(tuple(_cast_to(self.as_data(a, e.loc, dt), dt) for a in args), dt)
        if f in _PACKED:
            return self.packed(e, args)
        if f in ("min", "max") and all(isinstance(a, Poly) for a in args):
            a, b = args
            if (a - b).is_const:
                return a if ((a - b).const_value <= 0) == (f == "min") else b
            c = V.simplify_cond(Cond.of(af.compare("<=", a, b)))
            if c.kind in ("true", "false"):  # decided over the known ranges
                return a if (c.kind == "true") == (f == "min") else b
            # a clamped index (``max(r - 1, 0)``): a load through it becomes a select between
            # the two loads (see ``load``)
            return Poly.atom(af.OpaqueAtom(f"clamp:{f}({a}, {b})", (f, a, b)))
        if mathselect.formula(f, len(args)) is not None:  # composed with selects
            tree = mathselect.lifted(f, [self.as_data(a, e.loc, "float32") for a in args])
            return _cast_to(tree, dtype_of(e.ty))  # type: ignore[arg-type]
        dt = dtype_of(e.ty)
        data = [self.as_data(a, e.loc, dt) for a in args]
        if f in bitcasts.BITCAST_CALLS and len(args) == 1:
            source, target = bitcasts.BITCAST_CALLS[f]
            return bitcasts.bits_of(_cast_to(self.as_data(args[0], e.loc, source), source),
                                    target, e.loc)  # fmt: skip
        if f in _CONVERT:
            return V.Cast(_CONVERT[f], data[0])
        if f in _ROUNDED_CONVERT and len(args) == 1:
            to, rounding = _ROUNDED_CONVERT[f]
            x = self.as_data(args[0], e.loc, "float32")
            return V.Cast(to, V.Op(x.dtype, rounding, (x,)) if rounding else x)
        dot = bytedots.byte_dot(f, e.args, lambda k, t: self.as_data(args[k], e.loc, t), dt)
        if dot is not None:  # __dp4a, __dp2a_lo/_hi: integer operations
            return dot
        composed = _composed(f, data, dt)
        if composed is not None:
            return composed
        name = _math_name(f.lstrip("_") if f.startswith("__") and f not in _MATH2 else f)
        if f in _MATH2:
            name = f
        if name in _MATH1 and len(data) == 1:
            return V.Op(dt, _MATH1[name], (_cast_to(data[0], dt),))
        if name in _MATH2 and len(data) == 2:
            return self.combine(_MATH2[name], dt, *(_cast_to(x, dt) for x in data))
        if name in ("fma", "__fmaf_rn", "fmaf") and len(data) == 3:
            a, b, c = (_cast_to(x, dt) for x in data)
            return V.Op(dt, "add", (V.Op(dt, "mul", (a, b)), c))
        if name == "__saturate" or f == "__saturatef":
            x = data[0]
            return V.Op(dt, "min", (V.Op(dt, "max", (x, V.Const(dt, 0.0))), V.Const(dt, 1.0)))
        raise Refusal("C2N2010", e.loc, what=f"call to '{f}'")

    def packed(self, e: A.Call, args: list) -> object:
        """Packed two-lane intrinsics (``__hmul2``, ``__float2half2_rn``, ``__low2float``...):
        lane by lane, in the lanes' own dtype."""
        kind, arg = _PACKED[e.func]
        dt = dtype_of(e.ty)
        if kind == "lane":  # one lane of a pair, converted to float
            v = args[0]
            if not isinstance(v, VecVal):
                raise Refusal("C2N2010", e.loc, what=f"'{e.func}' of a non-vector")
            return _cast_to(v.lanes[arg], dt)
        if kind == "pair":  # two scalars (or one, broadcast) into a pair
            xs = [self.as_data(a, e.loc, dt) for a in args]
            xs = xs * 2 if len(xs) == 1 else xs
            return VecVal(tuple(_cast_to(x, dt) for x in xs), dt)
        if kind == "convert":  # float2 <-> half2
            v = args[0]
            if not isinstance(v, VecVal):
                raise Refusal("C2N2010", e.loc, what=f"'{e.func}' of a non-vector")
            return VecVal(tuple(_cast_to(x, dt) for x in v.lanes), dt)
        vecs = [a if isinstance(a, VecVal) else None for a in args]
        if any(v is None or len(v.lanes) != 2 for v in vecs):
            raise Refusal("C2N2010", e.loc, what=f"'{e.func}' of a non-pair")
        if kind == "fma":
            a, b, c = vecs
            lanes = tuple(
                V.Op(dt, "add", (V.Op(dt, "mul", (a.lanes[k], b.lanes[k])), c.lanes[k]))
                for k in range(2)
            )
        elif len(vecs) == 1:
            lanes = tuple(V.Op(dt, arg, (vecs[0].lanes[k],)) for k in range(2))
        else:
            lanes = tuple(V.Op(dt, arg, (vecs[0].lanes[k], vecs[1].lanes[k])) for k in range(2))
        return VecVal(lanes, dt)

    def combine(self, op: str, dt: str, a: V.DExpr, b: V.DExpr) -> V.DExpr:
        """``op(a, b)``; ``v op shfl(v, o)`` steps are tracked as a ladder and, once the offsets
        cover the warp (xor: every lane; down: lane 0), replaced by a fold over the lanes."""
        generic = V.Op(dt, op, (a, b))
        if op not in ("add", "max", "min"):
            return generic
        if op == "add":
            merged = self._online_ladder(a, b, generic)
            if merged is not None:
                return merged
        for x, y in ((a, b), (b, a)):
            info = self.shfl_info.get(id(y))
            if info is None or info[3] is not y or not (info[2] is x or info[2] == x):
                continue
            kind, o, _, _, width = info
            st = self.ladder.get(id(x))
            if st is not None and st[5] is x and st[0] == op and st[1] == kind and st[4] == width:
                offsets, base = st[2] | {o}, st[3]
            else:
                offsets, base = frozenset({o}), x
            full = frozenset(1 << k for k in range(width.bit_length() - 1))
            result = generic
            if offsets == full:
                result = self._lane_fold(op, kind, base, width, dt)
            self.ladder[id(result)] = (op, kind, offsets, base, width, result)
            return result
        return generic

    def _online_ladder(self, a: V.DExpr, b: V.DExpr, generic: V.DExpr) -> V.DExpr | None:
        """One step of online-softmax normalisers merged across lanes (see
        :mod:`cuda2nki.lift.online`); once complete, the sum over the lanes."""
        st = online.step(self.shfl_info, self.ladder, self.online_ladders, a, b)
        if st is None:
            return None
        result = generic
        if online.complete(st):
            d, m = st.base
            total = self._lane_fold("max", st.kind, m, st.width, m.dtype)
            big = total.then if isinstance(total, V.Select) else total
            scaled = V.Op(
                d.dtype, "mul", (d, V.Op(d.dtype, "exp", (V.Op(d.dtype, "sub", (m, _PLACE)),)))
            )
            result = self._lane_fold("add", st.kind, scaled, st.width, d.dtype)
            result = V.transform(result, lambda x: big if x == _PLACE else None)
        self.online_ladders[id(result)] = online.Online(
            st.kind, st.width, st.offsets, st.base, result
        )
        return result

    def _lane_fold(self, op: str, kind: str, base: V.DExpr, width: int, dt: str) -> V.DExpr:
        tid = af.sym("threadIdx.x")
        t = self.fresh("lane")
        lane = af.mod(tid, width)
        if kind == "__shfl_xor_sync":  # every lane of the group gets the whole group
            group = width * af.floordiv(tid, width)
            body = V.subs_poly(base, {"threadIdx.x": group + af.sym(t)})
            return V.Fold(dt, op, t, af.ZERO, Poly.const(width), af.ONE, body)
        body = V.subs_poly(base, {"threadIdx.x": tid + af.sym(t)})
        fold = V.Fold(dt, op, t, af.ZERO, Poly.const(width), af.ONE, body)
        # only the group's first lane holds the whole group; other lanes hold partial sums
        return V.Select(dt, V.Pred("bool", Cond.of(af.Cmp(lane, "=="))), fold, V.Undef(dt))

    def _arg_ladder(self, before: dict) -> None:
        """``if (lex(other, mine)) { mine = other; mine_i = other_i; }`` over shuffled pairs:
        once the offsets cover the warp, the value is a lane fold and the index the matching
        index fold (see :mod:`cuda2nki.lift.argfold`)."""
        changed = [n for n, v in self.env.items() if n in before and v is not before[n]]
        if len(changed) != 2:
            return
        for a, b in (changed, changed[::-1]):
            new_a, new_b = self.env[a], self.env[b]
            st = argfold.ladder_step(
                self.shfl_info, self.arg_ladders, new_a, before[a], new_b, before[b]
            )
            if st is None:
                continue
            if not argfold.complete(st):
                self.arg_ladders[id(new_a)] = st
                return
            base = st.base[0]
            value = self._lane_fold(st.op, st.kind, base, st.width, base.dtype)
            total = value.then if isinstance(value, V.Select) else value
            self.env[a] = value
            self.env[b] = self._lane_index(st, total, new_b.dtype)
            return

    def _lane_index(self, st: argfold.Ladder, total: V.DExpr, dt: str) -> V.DExpr:
        tid = af.sym("threadIdx.x")
        t = self.fresh("lane")
        down = st.kind != "__shfl_xor_sync"
        origin = tid if down else st.width * af.floordiv(tid, st.width)

        def subs(e: V.DExpr) -> V.DExpr:
            return V.subs_poly(e, {"threadIdx.x": origin + af.sym(t)})

        def fold_lanes(op: str, body: V.DExpr) -> V.DExpr:
            return V.Fold(body.dtype, op, t, af.ZERO, Poly.const(st.width), af.ONE, body)

        if st.tie == "shape":  # equal values settled by the ladder's shape
            reader = Poly.const(0) if down else af.mod(tid, st.width)
            idx = movetree.lane_index(st, origin, reader, total, dt, self.fresh)
        else:
            idx = argfold.lane_index(st, subs, fold_lanes, total, dt)
        if not down:
            return idx
        first = V.Pred("bool", Cond.of(af.Cmp(af.mod(tid, st.width), "==")))
        return V.Select(dt, first, idx, V.Undef(dt))

    def _warp_lanes(self, e: A.Call) -> Poly:
        b = self.block
        if not b or not (b[0] % 32 == 0 or (b[1] == 1 and b[2] == 1)):
            raise Refusal(
                "C2N2015",
                e.loc,
                what=f"'{e.func}' needs a launch block whose warps "
                "run along threadIdx.x (block size unknown or x not a multiple of 32)",
            )
        return af.sym("threadIdx.x")

    def shuffle(self, e: A.Call) -> V.DExpr:
        """The value another lane holds, as this thread's value at a shifted threadIdx.x."""
        tid = self._warp_lanes(e)
        v = self.as_data(self.eval(e.args[1]), e.loc, dtype_of(e.ty))
        if V.has_carried(v):
            raise Refusal("C2N2015", e.loc, what="a shuffle of a loop-carried value")
        d = self.as_poly(self.eval(e.args[2]), e.args[2].loc)
        width = self.as_poly(self.eval(e.args[3]), e.loc) if len(e.args) > 3 else Poly.const(32)
        if not width.is_const:
            raise Refusal("C2N2015", e.loc, what="a shuffle width that is not a constant")
        lane = af.mod(tid, width)
        self.templates.append(v)
        f = e.func
        if f == "__shfl_sync":
            group = width * af.floordiv(tid, width)
            return V.subs_poly(v, {"threadIdx.x": group + af.mod(d, width)})
        if not d.is_const:
            raise Refusal("C2N2015", e.loc, what="a shuffle offset that is not a constant")
        if f == "__shfl_xor_sync":
            k = d.const_value
            if k <= 0 or k & (k - 1) or k >= width.const_value:
                raise Refusal("C2N2015", e.loc, what="a xor shuffle with a non-power-of-two mask")
            bit = af.mod(af.floordiv(tid, k), 2)
            out = self._shifted(v, tid + k - 2 * k * bit)
        else:
            if f == "__shfl_down_sync":
                ok, src = af.compare("<", lane + d, width), tid + d
            else:
                ok, src = af.compare(">=", lane, d), tid - d
            moved = self._shifted(v, src)
            out = V.Select(v.dtype, V.Pred("bool", Cond.of(ok)), moved, v)
        if f in ("__shfl_xor_sync", "__shfl_down_sync"):
            self.shfl_info[id(out)] = (f, d.const_value, v, out, width.const_value)
        return out

    def _shifted(self, v: V.DExpr, src: Poly) -> V.DExpr:
        """``v`` as lane ``src`` holds it.  The lane is a fresh symbol standing for ``src``
        (substituted in :meth:`_undefer`): a shuffle ladder usually ends in a lane fold that
        never uses the shifted values, and composing the lane formulas of five ladder steps
        costs seconds.  Lane symbols already in ``v`` are re-based on the new lane."""
        lane = self.fresh("lane@")
        mapping = {"threadIdx.x": af.sym(lane)}
        # every lane symbol ``v`` depends on, through the lanes they are defined by, is re-based
        # at once: a symbol defined by another (a lane of a lane) must see it re-based too
        olds = set(V.index_atoms_dag(v, self.atoms_memo) & self.deferred.keys())
        todo = list(olds)
        while todo:
            for b in self.deferred[todo.pop()].atoms() & self.deferred.keys():
                if b not in olds:
                    olds.add(b)
                    todo.append(b)
        order = sorted(olds, key=lambda a: int(a.rsplit("#", 1)[1]))
        for a in order:
            mapping[a] = af.sym(self.fresh("lane@"))
        for a in order:
            self.deferred[next(iter(mapping[a].atoms()))] = self.deferred[a].subs(mapping)
        self.deferred[lane] = src
        return V.subs_poly_dag(v, mapping)

    def _undefer(self) -> None:
        """Replace the lane symbols left in stores and shared writes by their lanes (within a
        work budget: values merged across lanes step by step can grow without bound)."""
        if not self.deferred:
            return
        saved = V.WORK[0]
        V.WORK[0] = UNDEFER_UNITS
        try:
            self._undefer_all()
        except V.BudgetExceeded:
            raise Refusal(
                "C2N2015",
                self.fn.loc,
                what="values exchanged between lanes too large to analyse within the work budget",
            ) from None
        finally:
            V.WORK[0] = saved

    def _undefer_all(self) -> None:
        full: dict = {}
        for k in sorted(self.deferred, key=lambda a: int(a.rsplit("#", 1)[1])):
            full[k] = self.deferred[k].subs(full)

        def used(*polys) -> bool:
            return any(p.atoms() & full.keys() for p in polys)

        memo: dict = {}

        def fix(e: V.DExpr) -> V.DExpr:
            has = V.index_atoms_dag(e, self.atoms_memo) & full.keys()
            return V.subs_poly_dag(e, full, memo) if has else e

        for k, st in enumerate(self.stores):
            if used(st.index) or used(*[c.poly for c in st.guard.conjuncts() or []]):
                st = dataclasses.replace(st, index=st.index.subs(full), guard=st.guard.subs(full))
            self.stores[k] = dataclasses.replace(st, value=fix(st.value))
        for arr in self.shared.values():
            for w in arr.writes:
                w.index = tuple(p.subs(full) for p in w.index)
                w.guard = w.guard.subs(full)
                w.value = fix(w.value)
        # a template holding a lane symbol is a partial ladder sum: a hint for tree folding that
        # no leaf is an instance of once the ladder folded; dropped rather than re-based
        self.templates = [
            t for t in self.templates if not (V.index_atoms_dag(t, self.atoms_memo) & full.keys())
        ]

    def warp_reduce(self, e: A.Call, op: str) -> V.DExpr:
        tid = self._warp_lanes(e)
        v = self.as_data(self.eval(e.args[0]), e.loc, dtype_of(e.ty))
        n = self.as_poly(self.eval(e.args[1]), e.loc) if len(e.args) > 1 else Poly.const(32)
        if not n.is_const or V.has_carried(v):
            raise Refusal("C2N2015", e.loc, what="a group reduction of unknown size")
        t = self.fresh("lane")
        body = V.subs_poly(v, {"threadIdx.x": n * af.floordiv(tid, n) + af.sym(t)})
        return V.Fold(v.dtype, op, t, af.ZERO, n, af.ONE, body)

    def atomic(self, e: A.Call) -> object:
        f = e.func.removesuffix("_block").removesuffix("_system")
        op = _ATOMIC[f]
        ptr = self.eval(e.args[0])
        val = self.eval(e.args[1])
        if not isinstance(ptr, PtrVal):
            raise Refusal("C2N2022", e.loc, what="atomic on a non-pointer")
        if ptr.seen_as:
            raise Refusal("C2N2022", e.loc, what="an atomic through a pointer of another type")
        d = self.as_data(val, e.loc, ptr.dtype)
        if f == "atomicSub":
            d = V.Op(d.dtype, "neg", (d,))
        if ptr.shared:
            if any(
                isinstance(a, af.OpaqueAtom) and not isinstance(a.payload, V.DExpr)
                for a in ptr.offset.atoms()
            ):
                raise Refusal(
                    "C2N2022",
                    e.loc,
                    what=f"{e.func} on shared memory at an index read from data (a histogram)",
                )
            self.write_shared(self.shared[ptr.tensor], (ptr.offset,), d, e.loc, accumulate=op)
            return None
        self.store(ptr, af.ZERO, d, e.loc, accumulate=op)
        return None

    def atomic_inc(self, e: A.Call) -> object:
        """``atomicInc(p, limit)`` stores ``old >= limit ? 0 : old + 1``: with the limit
        ``0xffffffff`` that is ``old + 1`` modulo 2**32, an ``atomicAdd(p, 1u)``; other limits
        (a counter modulo limit + 1) are refused."""
        limit = self.eval(e.args[1])
        if not (
            isinstance(limit, Poly) and limit.is_const and limit.const_value % 2**32 == 2**32 - 1
        ):
            raise Refusal("C2N2022", e.loc, what="atomicInc below the 32-bit limit")
        ptr = self.eval(e.args[0])
        if not isinstance(ptr, PtrVal) or ptr.shared:
            raise Refusal("C2N2022", e.loc, what="atomicInc on shared memory")
        self.store(ptr, af.ZERO, V.Const(ptr.dtype, 1), e.loc, accumulate="add")
        return None

    def _file_shared_in_scope(self) -> dict[str, object]:
        """File-scope ``__shared__`` arrays of this block, visible to every callee by name."""
        names = {d.name for d in getattr(self.tu, "file_shared", ())}
        return {n: arr for n, arr in self.shared.items() if n in names}

    def inline(self, e: A.Call) -> object:
        fn = self.tu.function(e.target)
        if fn is None or fn.kind == "global":
            raise Refusal("C2N2010", e.loc, what=f"call to '{e.func}'")
        args = [self.eval(a) for a in e.args]
        saved_env, saved_depth = self.env, dict(self.decl_depth)
        env = dict(self.globals)
        env.update(self._file_shared_in_scope())
        for p, a in zip(fn.params, args):
            env[p.name] = self.convert(a, p.ty, e.loc) if isinstance(p.ty, A.ScalarType) else a
        self.env = env
        nguards = len(self.guards)
        for p in fn.params:
            self.decl_depth[p.name] = nguards
        frame: list = []
        self.ret_value.append(frame)
        self.exec_block(fn.body)
        self.ret_value.pop()
        self.env, self.decl_depth = saved_env, saved_depth
        if not frame:
            return None
        (g, v), *rest = frame[::-1]
        if rest or g != af.conj(self.guards):
            # a single final return is all we inline without control flow
            if len(frame) == 1 and g == af.conj(self.guards):
                return v
            raise Refusal(
                "C2N2010", e.loc, what=f"device function '{fn.name}' with several returns"
            )
        return v
