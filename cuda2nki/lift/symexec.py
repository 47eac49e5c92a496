"""Symbolic execution of one CUDA kernel for a generic thread.

The kernel body is executed once with ``threadIdx``/``blockIdx``/sizes/scalar parameters as symbols.
Integer locals fold to :class:`~cuda2nki.lift.affine.Poly`; data values become
:mod:`~cuda2nki.lift.values` trees over loads of the pointer parameters.  Control flow on indices
becomes guards (:class:`~cuda2nki.lift.affine.Cond`), early returns guard what follows, loops
become parallel axes (when they write) or folds (when they carry a local: ``acc = acc op f(k)``),
and shared memory is resolved by inverting the writing thread's index (``tile[ty][tx] = A[...]``;
``tile[k][tx]`` read later is the value thread ``(k, tx)`` wrote).  Anything the analysis cannot
prove ends in :class:`Refusal` naming the construct.

The result, :class:`ThreadProgram`, lists every global write with its index, value, guard and the
loops around it: the recognisers turn that into intent IR.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping

from cuda2nki.diagnostics import SourceLoc
from cuda2nki.frontend import ast as A
from cuda2nki.lift import affine as af
from cuda2nki.lift import bitcasts, control, earlyexit, iterate, shortcirc, warpvotes
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Cond, Poly
from cuda2nki.lift.collective import collective_reason
from cuda2nki.lift.forwarding import LoopCtx, StoreRec
from cuda2nki.lift.localref import LocalRef
from cuda2nki.lift.symbase import (
    _BINOPS,
    EXECUTE_UNITS,
    LANES,
    CondVal,
    PtrVal,
    Refusal,
    SharedArr,
    SharedWrite,
    ThreadProgram,
    VecVal,
    _assigned_names,
    _cast_to,
    _composed,
    _const_elems,
    _data_index,
    _floor_mod_fixup,
    _has_return,
    _int_cast_keeps,
    _int_data,
    _poly_binop,
    _rewrapped,
    _shared_1d,
    _varying,
    _vec_width,
    dtype_of,
    is_float_dtype,
    promote,
)
from cuda2nki.lift.symcalls import CallExecution
from cuda2nki.lift.symloops import LoopExecution
from cuda2nki.lift.symmemory import MemoryExecution
from cuda2nki.lift.usedglobals import device_names

# --------------------------------------------------------------------------- executor


class Executor(LoopExecution, MemoryExecution, CallExecution):
    def __init__(
        self,
        tu: A.TranslationUnit,
        fn: A.Function,
        block: tuple | None = None,
        reroll: bool = True,
        ties: Mapping[str, af.Poly] | None = None,
    ):
        self.tu, self.fn = tu, fn
        self.ties = dict(ties or {})  # tied sizes (binding ``M = { tie = "K" }``) -> their value
        self.reroll, self.rerolled = reroll, False
        self.block = block
        self.env: dict[str, object] = {}
        self.decl_depth: dict[str, int] = {}
        self.guards: list[Cond] = []  # enclosing index-level conditions
        self.dguards: list[V.DExpr] = []  # enclosing data-level conditions
        self.returned: list[Cond] = []
        self.loops: list[LoopCtx] = []
        self.stores: list[StoreRec] = []
        self.reads: set[str] = set()
        self.shared: dict[str, SharedArr] = {}
        self.epoch = 0
        self.warp_epochs: set = set()
        self.counter = itertools.count()
        self.tensors: dict[str, str] = {}
        self.scalars: dict[str, str] = {}
        self.carry_scope: list[dict[str, object]] = []  # locals visible to a loop being folded
        self.ret_value: list = []
        self.templates: list = []
        self.promoted: dict = {}  # (tensor, index) -> local carrying the element in a loop
        self.promoted_init: dict = {}  # that local's value before the loop
        self.shfl_info: dict = {}  # id(shuffle result) -> (kind, offset, source, result, width)
        self.deferred: dict = {}  # lane symbol -> the source lane it stands for (see _shifted)
        self.atoms_memo: dict = {}
        V.reset_memos()  # work charged for this kernel must not depend on earlier kernels
        self.ladder: dict = {}  # id(value) -> (op, kind, offsets, base, width, value)
        self.arg_ladders: dict = {}  # id(value) -> argfold.Ladder (argmax across lanes)
        self.online_ladders: dict = {}  # id(value) -> online.Online (softmax across lanes)
        for p in fn.params:
            if isinstance(p.ty, A.PointerType):
                self.tensors[p.name] = dtype_of(p.ty)
                self.env[p.name] = PtrVal(p.name, af.ZERO, dtype_of(p.ty), _vec_width(p.ty))
            elif isinstance(p.ty, A.ScalarType):
                self.scalars[p.name] = p.ty.name
                self.env[p.name] = (
                    self.ties[p.name]
                    if p.name in self.ties
                    else af.sym(p.name)
                    if not p.ty.is_float
                    else V.Scalar(p.ty.name, p.name)
                )
            else:
                raise Refusal("C2N2010", p.loc, what=f"parameter '{p.name}' of this type")
        named = device_names(tu, fn)  # a host-only global is nothing to the kernel
        for g in tu.globals:
            if g.name not in named:
                continue
            if g.init is not None and isinstance(g.ty, A.ScalarType) and g.space != "device":
                v = self.eval(g.init)
                self.env[g.name] = v
            elif isinstance(g.ty, A.ArrayType):
                if g.init is None or not (g.space != "device" or _const_elems(g.ty)):
                    raise Refusal(
                        "C2N2010",
                        g.loc,
                        what=f"global array '{g.name}' (only statically initialised "
                        "__constant__ tables are lifted)",
                    )
                self.init_array(g.name, g.ty, g.init, g.loc)  # a table of literal constants
                for k in [k for k in self.env if k.startswith(g.name + "[")]:
                    if not isinstance(self.env[k], V.Const):
                        raise Refusal(
                            "C2N2010", g.loc, what=f"global array '{g.name}' of non-constants"
                        )
        # file-scope names (and table elements) stay visible in inlined device functions
        names = tuple(g.name for g in tu.globals)
        self.globals = {k: v for k, v in self.env.items() if k in names or k.split("[")[0] in names}

    # ------------------------------------------------------------------ helpers
    def fresh(self, base: str) -> str:
        return f"%{base}#{next(self.counter)}"

    def guard(self) -> Cond:
        return af.conj(self.guards)

    def live(self) -> Cond:
        return af.conj([self.guard()] + [r.negate() for r in self.returned])

    def run(self) -> ThreadProgram:
        known = {f"threadIdx.{d}": b for d, b in zip("xyz", self.block or ())}
        saved = V.WORK[0]
        V.WORK[0] = min(saved, EXECUTE_UNITS)
        try:
            with af.bounds(known):
                self.exec_block(self.fn.body, new_scope=True)
                self._undefer()
        except V.BudgetExceeded:
            raise Refusal(
                "C2N2015", self.fn.loc, what="code too large to analyse within the work budget"
            ) from None
        finally:
            V.WORK[0] = saved
        return ThreadProgram(
            self.fn,
            self.tensors,
            self.scalars,
            self.stores,
            self.reads,
            self.block or (),
            self.shared,
            self.templates,
            self.rerolled,
            frozenset(self.warp_epochs),
        )

    # ------------------------------------------------------------------ conversions
    def as_poly(self, v: object, loc: SourceLoc) -> Poly:
        if isinstance(v, Poly):
            return v
        if isinstance(v, V.IntVal):
            return v.poly
        if (
            isinstance(v, V.Cast)
            and isinstance(v.operand, V.IntVal)
            and _int_cast_keeps(v.operand.poly, v.dtype)
        ):
            return v.operand.poly
        if isinstance(v, V.DExpr) and not is_float_dtype(v.dtype):
            return _data_index(v)
        raise Refusal("C2N2013", loc, what="a non-integer value used as an index")

    def as_data(self, v: object, loc: SourceLoc, dtype: str = "int32") -> V.DExpr:
        if isinstance(v, V.DExpr):
            return v
        if isinstance(v, Poly):
            if v.is_const:
                return V.Const(dtype, v.const_value)
            return V.IntVal(dtype, v)
        if isinstance(v, CondVal):
            return V.Pred("bool", v.cond)
        if isinstance(v, warpvotes.BallotVal):  # only its count is lifted
            raise Refusal("C2N2015", loc, what="a ballot's bit mask used as a number")
        raise Refusal("C2N2010", loc, what="a pointer or vector used as a scalar value")

    def as_cond(self, v: object, loc: SourceLoc) -> Cond | V.DExpr:
        if isinstance(v, CondVal):
            return v.cond
        if isinstance(v, Poly):
            return Cond.of(af.Cmp(v, "!="))
        if isinstance(v, V.DExpr):
            if v.dtype == "bool":
                return v
            return V.Op("bool", "ne", (v, V.Const(v.dtype, 0)))
        raise Refusal("C2N2010", loc, what="a pointer used as a condition")

    # ------------------------------------------------------------------ statements
    def exec_block(self, b: A.Stmt, new_scope: bool = True) -> None:
        stmts = b.body if isinstance(b, A.Block) else (b,)
        saved = dict(self.env) if new_scope else None
        declared: list[str] = []
        nguards = len(self.guards)
        for s in stmts:
            if isinstance(s, A.VarDecl):
                declared.append(s.name)
            self.exec_stmt(s)
        del self.guards[nguards:]
        if saved is not None:
            for n in declared:  # end of scope: restore shadowed outer bindings
                if n in saved:
                    self.env[n] = saved[n]
                else:
                    self.env.pop(n, None)

    def exec_stmt(self, s: A.Stmt) -> None:
        if isinstance(s, A.Block):
            self.exec_block(s)
        elif isinstance(s, A.VarDecl):
            self.exec_decl(s)
        elif isinstance(s, A.ExprStmt):
            self.eval(s.expr, stmt=True)
        elif isinstance(s, A.If):
            self.exec_if(s)
        elif isinstance(s, A.For):
            self.exec_for(s)
        elif isinstance(s, A.Return):
            self.exec_return(s)
        elif isinstance(s, A.Empty):
            pass
        elif isinstance(s, (A.While, A.DoWhile)) and iterate.exec_bounded(self, s):
            pass  # an elementwise iteration with a data-dependent exit a counter bounds
        elif isinstance(s, A.While) and control.while_to_for(s) is not None:
            loop, name = control.while_to_for(s)
            self.exec_for(loop)
            if name in self.env:  # its value after the loop is not tracked
                self.env[name] = None
        elif isinstance(s, (A.While, A.DoWhile)):
            raise Refusal(
                "C2N2019",
                s.loc,
                what="a while loop whose body does not end by stepping a variable of its condition"
                if isinstance(s, A.While)
                else "a do-while loop (trip count decided by the data)",
            )
        elif isinstance(s, (A.Break, A.Continue)):
            raise Refusal("C2N2019", s.loc, what="break/continue inside a loop")
        elif isinstance(s, A.Switch):
            try:
                chain = control.switch_to_ifs(s, self.fresh("switch"))
            except control.SwitchShape as exc:
                raise Refusal("C2N2010", s.loc, what=f"switch statement with {exc}") from None
            self.exec_block(chain)
        else:
            raise Refusal("C2N2010", s.loc, what=type(s).__name__)

    def exec_decl(self, d: A.VarDecl) -> None:
        if d.storage in ("shared", "extern_shared"):
            dims = d.ty.dims if isinstance(d.ty, A.ArrayType) else (1,)
            scalar = not isinstance(d.ty, A.ArrayType)
            self.shared[d.name] = SharedArr(d.name, dims, dtype_of(d.ty), scalar=scalar)
            self.env[d.name] = self.shared[d.name]
            return
        if isinstance(d.ty, A.ArrayType):
            if d.init is not None:
                self.init_array(d.name, d.ty, d.init, d.loc)
                return
            self.env[d.name] = ("localarr", d.ty.dims, dtype_of(d.ty))
            return
        self.decl_depth[d.name] = len(self.guards)
        if d.init is None:
            if isinstance(d.ty, A.VectorType):
                self.env[d.name] = VecVal(
                    tuple(V.Const(d.ty.base.name, 0) for _ in range(d.ty.width)), d.ty.base.name
                )
            else:
                self.env[d.name] = None
            return
        v = self.eval(d.init)
        self.env[d.name] = self.convert(v, d.ty, d.loc)

    def init_array(self, name: str, ty: A.ArrayType, init: A.Expr, loc: SourceLoc) -> None:
        """A local array (or constant table) with an initialiser list: one local per element,
        the elements the list leaves out zero, as in C."""
        dims = ty.dims
        if not isinstance(init, A.InitList) or any(d is None for d in dims):
            raise Refusal("C2N2010", loc, what="array initialiser of this form")
        arr = ("localarr", dims, dtype_of(ty))
        self.env[name] = arr
        items = control.flatten_init(init, dims)
        if items is None:
            raise Refusal("C2N2010", loc, what="array initialiser of this form")
        dt = dtype_of(ty)
        for flat, item in enumerate(items):
            idx, rest = [], flat
            for d in reversed(dims):
                idx.insert(0, rest % d)
                rest //= d
            key = name + "".join(f"[{i}]" for i in idx)
            v = self.eval(item) if item is not None else Poly.const(0)
            self.decl_depth[key] = len(self.guards)
            d = self.as_data(v, loc, dt)
            if isinstance(d, V.Op) and d.op == "neg" and isinstance(d.args[0], V.Const):
                d = V.Const(d.dtype, -d.args[0].value)  # a negative literal
            self.env[key] = _cast_to(d, dt)

    def convert(self, v: object, ty: A.CType, loc: SourceLoc) -> object:
        """Value of ``v`` stored in a local of type ``ty`` (implicit conversions)."""
        if isinstance(ty, A.ScalarType):
            if ty.is_float:
                if isinstance(v, (Poly, CondVal)):
                    return V.Cast(ty.name, self.as_data(v, loc))
                if isinstance(v, V.DExpr) and v.dtype != ty.name:
                    return V.Cast(ty.name, v)
                return v
            if isinstance(v, V.DExpr) and is_float_dtype(v.dtype):
                return V.Cast(ty.name, v)
            if isinstance(v, CondVal):
                return v if ty.name == "bool" else V.Cast(ty.name, V.Pred("bool", v.cond))
            return v
        return v

    def exec_if(self, s: A.If) -> None:
        split = shortcirc.rewrite_if(s)
        if split is not None:  # C's short-circuit: the index part guards the memory reads
            for part in split:
                self.exec_if(part)
            return
        c = self.as_cond(self.eval(s.cond), s.cond.loc)
        if isinstance(c, Cond):
            self.guards.append(c)
            self.exec_block(s.then)
            self.guards.pop()
            if s.else_ is not None:
                self.guards.append(c.negate())
                self.exec_block(s.else_)
                self.guards.pop()
            return
        if self._data_return(s, c):
            return
        # data-dependent branch: only assignments/stores, no returns inside
        if _has_return(s.then) or (s.else_ is not None and _has_return(s.else_)):
            raise Refusal("C2N2018", s.loc, what="return under a data-dependent condition")
        self.dguards.append(c)
        before = dict(self.env)
        facts = shortcirc.implied_index(c)  # the index part of ``c``: a guard of the branch
        self.guards.append(facts if facts is not None else af.TRUE)
        self.exec_block(s.then)
        self.guards.pop()
        self.dguards.pop()
        if s.else_ is None:
            self._arg_ladder(before)
        else:
            self.dguards.append(V.Op("bool", "lnot", (c,)))
            self.exec_block(s.else_)
            self.dguards.pop()

    def _data_return(self, s: A.If, c: V.DExpr) -> bool:
        """``if (data) return;`` at the top level of the kernel (no loop, no enclosing data
        condition): everything after it runs only where the condition is false -- a data-level
        guard for the rest of the kernel."""
        body = s.then.body if isinstance(s.then, A.Block) else (s.then,)
        if s.else_ is not None or not body or not isinstance(body[-1], A.Return):
            return False
        if body[-1].value is not None or self.loops or self.carry_scope or self.dguards:
            return False
        if self.ret_value or any(_has_return(b) for b in body[:-1]):  # inlined function
            return False
        if len(body) > 1:  # ``if (data) { stores; return; }``: the stores where it holds
            earlyexit.run_before_exit(self, dataclasses.replace(s.then, body=body[:-1]), c)
        self.dguards.append(V.Op("bool", "lnot", (c,)))
        return True

    def exec_return(self, s: A.Return) -> None:
        if self.ret_value is not None and self.ret_value and self.ret_value[-1] is not None:
            # inside an inlined device function
            frame = self.ret_value[-1]
            v = self.eval(s.value) if s.value is not None else None
            frame.append((self.guard(), v))
            return
        if self.loops or self.carry_scope:
            raise Refusal("C2N2019", s.loc, what="return inside a loop")
        if self.dguards:
            raise Refusal("C2N2018", s.loc, what="return under a data-dependent condition")
        self.returned.append(self.guard())

    # ------------------------------------------------------------------ expressions
    def eval(self, e: A.Expr, stmt: bool = False) -> object:
        m = getattr(self, "e_" + type(e).__name__, None)
        if m is None:
            why = collective_reason(e) or f"expression {type(e).__name__}"
            raise Refusal("C2N2010", e.loc, what=why)
        return m(e) if not stmt else m(e, stmt=True) if isinstance(e, (A.Unary,)) else m(e)

    def e_IntLit(self, e: A.IntLit) -> Poly:
        return Poly.const(e.value)

    def e_FloatLit(self, e: A.FloatLit) -> V.DExpr:
        return V.Const(dtype_of(e.ty) if e.ty else "float32", float(e.value))

    def e_BoolLit(self, e: A.BoolLit) -> CondVal:
        return CondVal(af.TRUE if e.value else af.FALSE)

    def e_Name(self, e: A.Name) -> object:
        if e.name not in self.env:
            raise Refusal("C2N2010", e.loc, what=f"name '{e.name}'")
        v = self.env[e.name]
        if v is None:
            raise Refusal("C2N2010", e.loc, what=f"read of uninitialised '{e.name}'")
        if isinstance(v, SharedArr) and v.scalar:
            return self.read_shared(v, (af.ZERO,), e.loc)
        return v

    def e_Builtin(self, e: A.Builtin) -> Poly:
        if e.name == "warpSize":
            return Poly.const(32)
        if e.name == "blockDim" and self.block:
            return Poly.const(self.block["xyz".index(e.dim)])
        if e.name == "threadIdx" and self.block and self.block["xyz".index(e.dim)] == 1:
            return af.ZERO
        return af.sym(f"{e.name}.{e.dim}")

    def e_Cast(self, e: A.Cast) -> object:
        from cuda2nki.lift.retyped import retyped

        v = self.eval(e.operand)
        if isinstance(e.to, A.PointerType):
            if isinstance(v, PtrVal):
                w = _vec_width(e.to)
                if w != v.width:
                    if v.width != 1:
                        raise Refusal("C2N2010", e.loc, what="re-casting a vector pointer")
                    return PtrVal(v.tensor, v.offset, dtype_of(e.to), w, v.shared)
                if retyped(v.seen_as or v.dtype, e.to):  # the same bytes read as another type
                    return bitcasts.viewed(v, dtype_of(e.to), e.loc)
                return v
            if isinstance(v, LocalRef) and retyped(self.as_data(v.value, e.loc).dtype, e.to):
                bits = bitcasts.bits_of(self.as_data(v.value, e.loc), dtype_of(e.to), e.loc)
                return LocalRef(v.name, bits)  # ``*(int*)&f``: f's bits
            raise Refusal("C2N2010", e.loc, what="cast of a non-pointer to a pointer")
        if e.kind == "reinterpret" and isinstance(e.to, A.ScalarType):
            return bitcasts.bits_of(self.as_data(v, e.loc), e.to.name, e.loc)
        if isinstance(e.to, A.ScalarType):
            if e.to.is_float:
                d = self.as_data(v, e.loc)
                return d if d.dtype == e.to.name else V.Cast(e.to.name, d)
            if isinstance(v, Poly):
                if _int_cast_keeps(v, e.to.name):
                    return v
                return V.Cast(e.to.name, self.as_data(v, e.loc))  # C wraps: data, not an index
            if isinstance(v, V.DExpr):
                return V.Cast(e.to.name, v)
        return v

    def e_Unary(self, e: A.Unary, stmt: bool = False) -> object:
        if e.op in ("pre++", "post++", "pre--", "post--"):
            one = A.IntLit(loc=e.loc, value=1)
            op = "+=" if "++" in e.op else "-="
            return self.e_Assign(A.Assign(loc=e.loc, op=op, target=e.operand, value=one))
        if e.op == "&":
            return self.address_of(e.operand)
        if e.op == "*":
            return self.deref(self.eval(e.operand), af.ZERO, e.loc)
        v = self.eval(e.operand)
        if e.op == "+":
            return v
        if e.op == "-":
            if isinstance(v, Poly):
                return -v
            d = self.as_data(v, e.loc)
            return V.Op(d.dtype, "neg", (d,))
        if e.op == "!":
            c = self.as_cond(v, e.loc)
            return CondVal(c.negate()) if isinstance(c, Cond) else V.Op("bool", "lnot", (c,))
        if e.op == "~":
            d = self.as_data(v, e.loc)
            return V.Op(d.dtype, "bitnot", (d,))
        raise Refusal("C2N2010", e.loc, what=f"unary '{e.op}'")

    def e_Binary(self, e: A.Binary) -> object:
        a, b = self.eval(e.left), self.eval(e.right)
        op = e.op
        if op in "+-" and _shared_1d(a):  # ``s + k``: the address of s[k]
            a = PtrVal(a.name, af.ZERO, a.dtype, 1, True)
        if op == "+" and _shared_1d(b):
            b = PtrVal(b.name, af.ZERO, b.dtype, 1, True)
        if isinstance(a, PtrVal) and op in "+-" and _int_data(b):
            b = _data_index(b)  # an offset computed from memory (scatter, gather)
        if isinstance(b, PtrVal) and op == "+" and _int_data(a):
            a = _data_index(a)
        # the offset counts scalars: a step of a float4 pointer moves it by 4
        if isinstance(a, PtrVal) and op in "+-" and isinstance(b, Poly):
            step = (b if op == "+" else -b) * a.width
            return dataclasses.replace(a, offset=a.offset + step)
        if isinstance(b, PtrVal) and op == "+" and isinstance(a, Poly):
            return dataclasses.replace(b, offset=b.offset + a * b.width)
        if op in ("&&", "||"):
            ca, cb = self.as_cond(a, e.loc), self.as_cond(b, e.loc)
            if isinstance(ca, Cond) and isinstance(cb, Cond):
                return CondVal(ca & cb if op == "&&" else af.disj([ca, cb]))
            if isinstance(ca, Cond):  # C evaluates the right side only where the left decides
                cb = shortcirc.guard_loads(cb, ca if op == "&&" else ca.negate())
            da = ca if isinstance(ca, V.DExpr) else V.Pred("bool", ca)
            db = cb if isinstance(cb, V.DExpr) else V.Pred("bool", cb)
            return V.Op("bool", _BINOPS[op], (da, db))
        # integer data combined with an index stays data (C's wraparound); where it addresses
        # memory, _data_index turns it into an index over the values read
        if op == "%" and _int_data(a) and isinstance(b, Poly):
            wrapped = _rewrapped(_data_index(a), b)
            if wrapped is not None:
                return wrapped
        if isinstance(a, Poly) and isinstance(b, Poly):
            r = _poly_binop(op, a, b)
            if r is not None:
                return r
        da = self.as_data(a, e.left.loc, dtype_of(e.left.ty))
        db = self.as_data(b, e.right.loc, dtype_of(e.right.ty))
        if op not in _BINOPS:
            raise Refusal("C2N2010", e.loc, what=f"operator '{op}'")
        if op in ("<", "<=", ">", ">=", "==", "!="):
            return V.Op("bool", _BINOPS[op], (da, db))
        dt = dtype_of(e.ty) if e.ty is not None else promote(da.dtype, db.dtype)
        return self.combine(_BINOPS[op], dt, _cast_to(da, dt), _cast_to(db, dt))

    def e_Ternary(self, e: A.Ternary) -> object:
        c = self.as_cond(self.eval(e.cond), e.cond.loc)
        a, b = self.eval(e.then), self.eval(e.else_)
        if isinstance(c, Cond) and isinstance(a, Poly) and isinstance(b, Poly) and a == b:
            return a
        dt = dtype_of(e.ty) if e.ty is not None else "float32"
        da, db = self.as_data(a, e.loc, dt), self.as_data(b, e.loc, dt)
        wrapped = _floor_mod_fixup(c, da, db)
        if wrapped is not None:
            return wrapped
        cd = V.Pred("bool", c) if isinstance(c, Cond) else c
        return V.Select(dt, cd, _cast_to(da, dt), _cast_to(db, dt))

    def e_Comma(self, e: A.Comma) -> object:
        v = None
        for x in e.exprs:
            v = self.eval(x)
        return v

    def e_SizeOf(self, e: A.SizeOf) -> Poly:
        t = e.of
        if isinstance(t, A.ScalarType):
            return Poly.const(max(t.bits // 8, 1))
        if isinstance(t, A.VectorType):
            return Poly.const(t.base.bits // 8 * t.width)
        raise Refusal("C2N2010", e.loc, what="sizeof of this type")

    def e_Member(self, e: A.Member) -> object:
        v = self.eval(e.base)
        if isinstance(v, VecVal) and e.field in LANES:
            return v.lanes[LANES.index(e.field)]
        raise Refusal("C2N2010", e.loc, what=f"member access '.{e.field}'")


def execute(
    tu: A.TranslationUnit,
    fn: A.Function,
    block: tuple | None = None,
    reroll: bool = True,
    ties: Mapping[str, af.Poly] | None = None,
) -> ThreadProgram:
    """``reroll=False`` keeps the stores of loops unrolled for local arrays one per iteration;
    ``ties`` gives size parameters tied to others their value (a polynomial in the others)."""
    return Executor(tu, fn, block, reroll, ties).run()


#: re-exported: the values and records other lift modules take from here
__all__ = [
    "CondVal",
    "Executor",
    "LoopCtx",
    "PtrVal",
    "Refusal",
    "SharedArr",
    "SharedWrite",
    "StoreRec",
    "ThreadProgram",
    "VecVal",
    "_assigned_names",
    "_composed",
    "_varying",
    "dtype_of",
    "execute",
]
