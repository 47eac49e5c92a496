"""The literal lowering, calls: math functions, conversions, intrinsics and inlined device
functions."""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.lift import mathcompose
from cuda2nki.lift.collective import collective_reason
from cuda2nki.lift.legacyshfl import LEGACY_SHUFFLES, legacy_shuffle
from cuda2nki.lift.literal import (
    bitcalls,
    bitviews,
    bytedots,
    cubcalls,
    fetchadd,
    intcalls,
    mathnames,
    roundcalls,
    rounding,
    selectmath,
    serialatomic,
    votes,
)
from cuda2nki.lift.literal.callreasons import HINTS, call_reason
from cuda2nki.lift.literal.classify import Classifier, is_float, join
from cuda2nki.lift.literal.deferred import Unset
from cuda2nki.lift.literal.exchange import atomic_refusal
from cuda2nki.lift.literal.forcedlocals import callee_forced
from cuda2nki.lift.literal.helpers import (
    _callee,
    _is_scalar,
    _is_void,
    _kind,
)
from cuda2nki.lift.literal.nullargs import with_null_params
from cuda2nki.lift.literal.single_exit import single_exit
from cuda2nki.lift.literal.spelling import (
    _ATOMICS,
    _CONVERT,
    _MATH1,
    _MATH2,
    _NOOP_CALLS,
    _NP1,
    _SHUFFLES,
)
from cuda2nki.lift.literal.state import (
    Binding_,
    Scope,
)
from cuda2nki.lift.literal.unimath import uniform_math
from cuda2nki.lift.literal.values import (
    DynPtr,
    Idx,
    Lin,
    Local,
    Ptr,
    Tile,
    Uni,
    Value,
    const_int,
)
from cuda2nki.lift.literal.widebits import WIDE_BIT_COUNTS, wide_bit_count


class CallMixin:
    """Calls: math functions, conversions, intrinsics and inlined device functions.

    A part of :class:`~.lower.Lowerer`, whose fields it uses."""

    def call(self, e: A.Call, scope: Scope) -> Value:  # noqa: PLR0911
        f = e.func
        if f in _NOOP_CALLS:
            self.emit("comment", e.loc.line, text=f"{f}: the block runs in lockstep")
            return Uni("0", "int")
        if e.target is not None:
            return self.inline(e, scope)
        if f in fetchadd.RUNNING and fetchadd.counts(e):  # the old value of a running total
            return fetchadd.fetch_add(self, e, scope)  # type: ignore[arg-type]
        if f in serialatomic.SERIAL:  # other old values: thread by thread
            return serialatomic.serial_atomic(self, e, scope)  # type: ignore[arg-type]
        if f.startswith("atomic"):
            why = atomic_refusal(f, f in _ATOMICS)
            raise self.refuse(f"{f} {why}", e)
        if f.startswith(cubcalls.PREFIX):
            return cubcalls.cub_collective(self, e, scope)
        if f in _SHUFFLES or f.startswith("__c2n_warp_reduce_"):
            return self.shuffle(e, scope)
        if f in LEGACY_SHUFFLES:  # the whole warp's exchange
            return self.shuffle(legacy_shuffle(e), scope)
        if f in votes.VOTES or f in votes.LANE_MASKS:
            return votes.vote(self, e, scope)
        if f.startswith(("__shfl", "__any", "__all", "__ballot", "__c2n_warp", "__activemask")):
            raise self.refuse(f"{f} (warp-level exchange)", e)
        args = [self.expr(a, scope) for a in e.args]
        if f == "__ldg" and len(args) == 1 and isinstance(args[0], Ptr):
            return self.load_ptr(args[0], e)  # a read through the read-only cache: a load
        if f in HINTS and args:
            return args[0]  # a compiler hint: the value itself
        if (picked := selectmath.function(f, len(args))) is not None:
            return selectmath.lower_call(self, picked, args, e)
        if roundcalls.handles(f, len(args), e.ty):
            return roundcalls.lower_call(self, e, args)
        if bitviews.handles(f, len(args)):
            return bitviews.bit_call(self, e, args[0])
        if f in _CONVERT and len(args) == 1:
            return self.convert(args[0], e.ty, e)
        if f in intcalls.MUL24 and len(args) == 2:
            return intcalls.mul24(self, e, args)
        if f in rounding.ROUND_AWAY and len(args) == 1 and is_float(e.ty):
            return rounding.round_away(self, args[0], e)
        f = mathnames.literal_name(f, e.ty, _MATH1.keys() | _MATH2.keys())
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
        if f in bitcalls.UMINMAX and len(args) == 2:
            return bitcalls.unsigned_minmax(self, e, args)
        if f in bytedots.DOTS and len(args) == 3:
            return bytedots.byte_dot(self, e, args)
        if f == "__popcll" and len(args) == 1:
            return self.wide_popc(args[0], e)
        if f in WIDE_BIT_COUNTS and len(args) == 1:
            return wide_bit_count(self, e, args[0])  # type: ignore[arg-type]
        if f in bitcalls.BIT_COUNTS and len(args) == 1:
            return bitcalls.bit_count(self, e, args[0])
        spelled = _NP1.get(_MATH1.get(f, "")) or _MATH2.get(f) in ("maximum", "minimum")
        uniform = None if spelled else uniform_math(f, args, is_float(e.ty))
        if uniform is not None:  # computed when traced
            return uniform
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
        raise self.refuse(collective_reason(e) or call_reason(f), e)

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

    def inline(self, e: A.Call, scope: Scope) -> Value:
        fn = _callee(self.tu, e.target or "")
        if fn is None:
            raise self.refuse(f"call to '{e.func}' (no definition)", e)
        fn = single_exit(fn)  # several returns: a result variable and a done flag
        if self.inline_depth > 8:
            raise self.refuse(f"recursive call to '{e.func}'", e)
        args = [self.inline_arg(p, a, scope) for p, a in zip(fn.params, e.args)]
        nulls = {p.name for p, v in zip(fn.params, args) if _null(v, p)}
        if nulls:  # optional outputs passed NULL: their guarded stores are dead
            fn = with_null_params(fn, nulls)
        seeds = {}
        frame: dict[str, Binding_] = {}
        for p, v in zip(fn.params, args):
            if isinstance(v, Ptr | DynPtr | Local | Unset):
                frame[p.name] = Binding_(v, "P", scope.depth)  # type: ignore[arg-type]
                continue
            seeds[p.name] = _param_class(v, p.ty)
        for name, k in callee_forced(self.forced, fn.name).items():
            seeds[name] = join(seeds.get(name, "U"), k)  # a parameter too: at least that
        classes = Classifier(seeds, self.thread_kind, lambda n: _callee(self.tu, n)).run(fn.body)
        saved_classes, saved_env = self.classes, self.env
        self.classes = {**self.classes, **classes}
        self.env = [*self.env, frame]
        for p, v in zip(fn.params, args):
            if isinstance(v, Ptr | DynPtr | Local | Unset):
                continue
            klass = self.classes.get(p.name, "T")
            ty = self.local_type(p.ty, klass, "float" if is_float(p.ty) else "int")
            name = self.pyname(p.name)
            b = Binding_(Uni(name, ty), klass, scope.depth, ty, p.name)
            frame[p.name] = b
            self.write_var(b, name, self.convert(v, p.ty, e), scope, e, fresh=True)
        self.ret_slot.append("ret" if not _is_void(fn.return_type) else None)
        self.entry_scope.append(scope)
        self.entry_nest.append(len(self.out))
        self.ret_value = Uni("0", "int")
        self.inline_depth += 1
        self.callees.append(fn.name)
        try:
            self.block(fn.body.body, scope)
            self.dead = False
            return self.ret_value
        finally:
            self.inline_depth -= 1
            self.callees.pop()
            self.ret_slot.pop()
            self.entry_scope.pop()
            self.entry_nest.pop()
            self.classes, self.env = saved_classes, saved_env

    def inline_arg(self, p: A.Param, a: A.Expr, scope: Scope) -> Value | Unset:
        """The value an inlined function's parameter ``p`` starts with; a pointer local not
        assigned yet stays so in the callee (which may set it: a reference output), as C
        copies the indeterminate pointer without reading what it points to."""
        if isinstance(a, A.Name) and isinstance(p.ty, A.PointerType):
            b = self.lookup(a.name)
            if b is not None and isinstance(b.value, Unset):
                return Unset(p.name, len(self.out))
        return self.expr(a, scope)


def _null(v: object, p: A.Param) -> bool:
    """Whether ``v`` passed for the pointer parameter ``p`` is a null constant."""
    return isinstance(p.ty, A.PointerType) and isinstance(v, Uni) and const_int(v.expr) == 0


def _param_class(v: Value, ty: object) -> str:
    """The class an inlined function's parameter of type ``ty`` starts with when passed ``v``:
    an index value converted to a float is a per-thread tile (see :mod:`.classify`)."""
    if isinstance(v, Uni):
        return "U"
    if isinstance(v, Lin) and (v.uniform or not is_float(ty)):
        return "L"
    return "T"
