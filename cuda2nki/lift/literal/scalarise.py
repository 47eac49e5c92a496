"""Scalarisation of vector and record values before the literal lowering.

The literal lowering computes with scalars (one tile per thread value).  CUDA's vector types
(``float2/3/4``, ``int2/4``, ``uchar4``...) and record structs (plain structs whose members share
one scalar type, which the front end types as vectors: see :mod:`cuda2nki.frontend.records`) are
rewritten here, on the CUDA AST, into their lanes:

* a local ``float3 m`` becomes the scalar locals ``m__x``, ``m__y``, ``m__z``; ``m.y`` is
  ``m__y``; ``make_float3(a, b, c)`` and ``{a, b, c}`` give lane ``k`` its ``k``-th item (missing
  items are zero); copies, ``?:`` and assignments go lane by lane (through temporaries when the
  value reads the assigned vector);
* ``v[k]`` of a vector value (record structs of more than four members, packed vectors) is its
  lane; an index that is not a literal selects among the lanes (a chain of ``?:``, an ``if``
  chain for a store);
* a pointer to vectors is a pointer to its scalars: ``p[i]`` is lanes ``p[W*i + k]``,
  ``p + i`` is ``p + W*i``, ``p->y`` is ``p[1]``, and ``reinterpret_cast<float4*>(q)`` (or a C
  cast) of a ``float`` pointer ``q`` is ``q`` itself (CUDA requires vector accesses aligned, so
  the lanes are the scalars there).  A ``float4*`` kernel parameter is the flat ``float`` tensor
  the binding gives it (``4*n`` scalars);
* arrays of vectors, in registers or ``__shared__``, are arrays of scalars whose last extent is
  ``W`` times longer; a single ``__shared__`` vector is an array of its ``W`` lanes;
* a ``__device__`` function taking vectors or pointers to vectors takes their lanes / scalar
  pointers instead; one returning a vector is cloned once per lane, each clone returning that
  lane; one that stores to memory (the clones would repeat its stores) or writes through
  reference parameters is inlined once per call (:mod:`.inline_refs`) where the call is a whole
  statement (``T v = f(...)``, ``v = f(...)``), the references aliasing the caller's locals.

What cannot be scalarised faithfully is refused naming the construct: a vector whose address is
taken, a vector passed by value to the kernel or to a function that is not a ``__device__``
function of the file, a reinterpretation between element types (``int4*`` over a ``float``
buffer), vector arithmetic with no user operator.
"""

from __future__ import annotations

import dataclasses

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk
from cuda2nki.lift.literal import pairlanes, vecdots
from cuda2nki.lift.literal.byteshared import typed_byte_shared
from cuda2nki.lift.literal.cubcalls import PREFIX as CUB_PREFIX
from cuda2nki.lift.literal.hoistrefs import hoist_calls
from cuda2nki.lift.literal.inline_refs import (
    alias_only,
    inline_call,
    lvalue_aliases,
    writes_through,
)
from cuda2nki.lift.literal.single_exit import needs_single_exit, single_exit
from cuda2nki.lift.literal.state import LiteralRefusal
from cuda2nki.lift.literal.vecscan import (
    arrows_as_derefs,
    blob_use,
    children,
    int_lit,
    is_vec,
    lane_name,
    mentions_vectors,
    names_in,
    scalar_of,
    scaled,
    uses_vectors,
    vec_array,
    vec_ptr,
    writes_memory,
)
from cuda2nki.lift.literal.vecviews import retyped

_LANES = {"x": 0, "y": 1, "z": 2, "w": 3}
_MAX_SELECT = 16  # lanes a non-literal lane index may choose among
_MAX_INLINE = 16  # nested inlined calls (a recursive function is refused)


class Scalariser:
    """Rewrites one function (and, through clones, the device functions it calls)."""

    def __init__(self, tu: A.TranslationUnit) -> None:
        self.tu = tu
        self.clones: dict[str, A.Function] = {}
        self.env: list[dict[str, tuple[str, A.VectorType | None]]] = [{}]
        self.counter = 0
        # reference-returning accessors read as values (see :meth:`read_through`)
        self.readers: dict[str, A.Function] = {}

    # ------------------------------------------------------------------ names
    def bind(self, name: str, kind: str, v: A.VectorType | None) -> None:
        self.env[-1][name] = (kind, v)

    def kind_of(self, name: str) -> tuple[str, A.VectorType | None] | None:
        for frame in reversed(self.env):
            if name in frame:
                return frame[name]
        return None

    def fresh(self, base: str) -> str:
        self.counter += 1
        return f"{base}__t{self.counter}"

    # ------------------------------------------------------------------ functions
    def function(
        self,
        fn: A.Function,
        lane: int | None = None,
        by_value: frozenset[str] = frozenset(),
    ) -> A.Function:
        """``fn`` with its vectors scalarised; ``lane``: the clone returning that lane;
        ``by_value``: reference parameters taken by value."""
        saved, saved_lane, saved_vec = self.env, self.ret_lane, self.ret_vec
        self.env = [{}]
        try:
            params: list[A.Param] = []
            for p in fn.params:
                if p.name in by_value:
                    params.extend(self.ref_param(p))
                else:
                    params.extend(self.param(p, fn.kind == "global"))
            ret = fn.return_type
            self.ret_lane, self.ret_vec = lane, ret
            if lane is not None:
                ret = scalar_of(ret)  # type: ignore[arg-type]
            elif is_vec(ret):
                raise LiteralRefusal(f"function '{fn.name}' returning a vector", fn.loc)
            body = self.block(fn.body)
            return dataclasses.replace(fn, params=tuple(params), return_type=ret, body=body)
        finally:
            self.env, self.ret_lane, self.ret_vec = saved, saved_lane, saved_vec

    def ref_param(self, p: A.Param) -> list[A.Param]:
        """A reference (pointer) parameter taken by value: its pointee's lanes or scalar."""
        pointee = p.ty.pointee  # type: ignore[union-attr]
        if is_vec(pointee):
            self.bind(p.name, "ref", pointee)
            return [
                dataclasses.replace(
                    p, name=lane_name(p.name, k, pointee.width), ty=scalar_of(pointee)
                )
                for k in range(pointee.width)
            ]
        self.bind(p.name, "ref", None)
        return [dataclasses.replace(p, ty=dataclasses.replace(pointee, const=False))]

    def param(self, p: A.Param, kernel: bool) -> list[A.Param]:
        vp = vec_ptr(p.ty)
        if vp is not None:
            self.bind(p.name, "ptr", vp)
            ty = A.PointerType(pointee=dataclasses.replace(scalar_of(vp), const=vp.const))
            return [dataclasses.replace(p, ty=ty)]
        if is_vec(p.ty):
            if kernel:
                raise LiteralRefusal(f"kernel parameter '{p.name}' of vector or struct type", p.loc)
            v: A.VectorType = p.ty  # type: ignore[assignment]
            self.bind(p.name, "vec", v)
            return [
                dataclasses.replace(p, name=lane_name(p.name, k, v.width), ty=scalar_of(v))
                for k in range(v.width)
            ]
        if mentions_vectors(p.ty):
            raise LiteralRefusal(f"parameter '{p.name}' of this vector type", p.loc)
        return [p]

    def callee(self, e: A.Call) -> A.Function:
        fn = self.readers.get(e.target or "") or next(
            (f for f in self.tu.functions if f.name == e.target), None
        )
        if fn is None:
            raise LiteralRefusal(f"a vector passed to '{e.func}' (no definition)", e.loc)
        return arrows_as_derefs(fn)

    def clone(
        self,
        e: A.Call,
        lane: int | None,
        by_value: frozenset[str] = frozenset(),
    ) -> str:
        fn = self.callee(e)
        tag = "".join(sorted(by_value))
        name = f"{fn.name}__c2n{'' if lane is None else lane}{tag}"
        if name not in self.clones:
            if lane is not None and writes_memory(fn, by_value, self.tu):
                raise LiteralRefusal(f"function '{fn.name}' returning a vector and writing "
                                     "memory", e.loc)  # fmt: skip
            self.clones[name] = fn  # a recursive call finds the name taken
            got = self.function(fn, lane, by_value)
            self.clones[name] = dataclasses.replace(got, name=name)
        return name

    def callee_of(self, e: A.Call) -> A.Function | None:
        """The device function ``e`` calls, None where it has no definition."""
        try:
            return self.callee(e)
        except LiteralRefusal:
            return None

    def ref_args(self, e: A.Call) -> dict[str, str]:
        """Parameter -> caller's local, for the arguments ``&local`` of a reference parameter."""
        fn = self.callee(e)
        out: dict[str, str] = {}
        for p, a in zip(fn.params, e.args):
            if isinstance(p.ty, A.PointerType) and isinstance(a, A.Unary) and a.op == "&":
                got = self.kind_of(a.operand.name) if isinstance(a.operand, A.Name) else None
                if got is not None and got[0] in ("vec", "local", "ref"):
                    if not alias_only(fn.body, p.name):
                        raise LiteralRefusal(f"reference parameter '{p.name}' used as a pointer",
                                             e.loc)  # fmt: skip
                    out[p.name] = a.operand.name  # type: ignore[union-attr]
        if len(set(out.values())) < len(out):
            raise LiteralRefusal("one local passed to two reference parameters", e.loc)
        return out

    def call_args(self, e: A.Call, by_value: frozenset[str] = frozenset()) -> tuple[A.Expr, ...]:
        fn = self.callee(e)
        out: list[A.Expr] = []
        for p, a in zip(fn.params, e.args):
            if p.name in by_value:
                local: A.Expr = a.operand  # type: ignore[union-attr]
                if is_vec(local.ty):
                    out.extend(self.lane(local, k) for k in range(local.ty.width))  # type: ignore[union-attr]
                else:
                    out.append(self.rw(local))
            elif is_vec(p.ty):
                out.extend(self.lane(a, k, p.ty) for k in range(p.ty.width))  # type: ignore[union-attr]
            elif vec_ptr(p.ty) is not None:
                out.append(self.sptr(a))
            else:
                out.append(self.rw(a))
        return tuple(out)

    def helper_call(self, e: A.Call, lane: int | None) -> A.Call:
        refs = self.ref_args(e)
        fn = self.callee(e)
        outs = [p for p in refs if writes_through(fn, p, self.callee_of)]
        if outs:
            raise LiteralRefusal(f"reference parameter '{outs[0]}' written in an expression",
                                 e.loc)  # fmt: skip
        by_value = frozenset(refs)
        name = self.clone(e, lane, by_value)
        ty = e.ty if lane is None else scalar_of(e.ty)  # type: ignore[arg-type]
        args = self.call_args(e, by_value)
        return dataclasses.replace(e, func=name, target=name, args=args, ty=ty)

    def ref_call(
        self, s: A.Stmt, e: A.Call, refs: dict[str, str], want: bool
    ) -> tuple[list[A.Stmt], list[A.Stmt], A.Expr | None]:
        """A call ``f(&a, &v, x)`` writing through its references: ``f``'s body inlined once
        (:mod:`.inline_refs`), the references aliasing the caller's locals, then scalarised
        here; the statements (``pre``), none after (``post``), and the result's local."""
        fn = self.callee(e)
        if want and not isinstance(fn.return_type, A.ScalarType | A.VectorType):
            raise LiteralRefusal(f"function '{fn.name}' returning this type and writing "
                                 "through references", e.loc)  # fmt: skip
        fn = single_exit(fn)
        if needs_single_exit(fn):
            raise LiteralRefusal(f"function '{fn.name}' returning through references "
                                 "from several places", e.loc)  # fmt: skip
        if self.inlining >= _MAX_INLINE:
            raise LiteralRefusal(f"function '{fn.name}' inlined {_MAX_INLINE} calls deep "
                                 "(recursive?)", e.loc)  # fmt: skip
        aliases = {
            p.name: a.operand  # type: ignore[union-attr]
            for p, a in zip(fn.params, e.args)
            if p.name in refs
        }
        aliases.update(lvalue_aliases(fn, e, set(refs.values())))
        got = inline_call(fn, e, aliases, self.fresh, want)
        self.inlining += 1
        try:
            pre = [x for st in got.stmts for x in self.stmt(st)]
        finally:
            self.inlining -= 1
        return pre, [], got.result

    def written_refs(self, e: A.Expr | None) -> dict[str, str] | None:
        """The reference arguments of call ``e`` when it writes through one, else None."""
        if not isinstance(e, A.Call) or e.target is None:
            return None
        refs = self.ref_args(e)
        fn = self.callee(e)
        changed = any(writes_through(fn, p, self.callee_of) for p in refs)
        if not changed and is_vec(fn.return_type):  # a vector result and stores: inlined
            changed = writes_memory(fn, frozenset(refs), self.tu)
        if not changed:  # `f(v, &arr[k])`: an element of an array written through the pointer
            elems = lvalue_aliases(fn, e, set(refs.values()))
            changed = any(
                _array_element(x) and writes_through(fn, p, self.callee_of)
                for p, x in elems.items()
            )
        return refs if changed else None

    # ------------------------------------------------------------------ vector values
    def lane(self, e: A.Expr, k: int, vt: object = None) -> A.Expr:  # noqa: PLR0911, PLR0912
        """Lane ``k`` of the vector-typed expression ``e`` (of type ``vt`` where ``e`` has
        none: a brace list), a scalar expression."""
        v: A.VectorType = e.ty if is_vec(e.ty) else vt  # type: ignore[assignment]
        if not is_vec(v):
            raise LiteralRefusal("a vector value of unknown type", e.loc)
        base = scalar_of(v)
        if isinstance(e, A.Name):
            got = self.kind_of(e.name)
            if got is not None and got[0] == "svec":  # a __shared__ vector: its lane's element
                arr = A.ArrayType(elem=base, dims=(v.width,))
                return A.Index(loc=e.loc, base=dataclasses.replace(e, ty=arr),
                               index=int_lit(k, e.loc), ty=base)  # fmt: skip
            if got is None or got[0] != "vec":
                raise LiteralRefusal(f"vector '{e.name}' (a global or by-value parameter)", e.loc)
            return A.Name(loc=e.loc, name=lane_name(e.name, k, got[1].width), ty=base)
        if isinstance(e, A.InitList):
            if k < len(e.items):
                return self.conv(self.rw(e.items[k]), base)
            return (
                A.IntLit(loc=e.loc, value=0, ty=base)
                if not base.is_float
                else A.FloatLit(loc=e.loc, value=0.0, ty=base)
            )
        if isinstance(e, A.Call) and e.target is not None:
            return self.helper_call(e, k)
        if isinstance(e, A.Call) and e.func.startswith("make_") and len(e.args) == v.width:
            return self.conv(self.rw(e.args[k]), base)
        if isinstance(e, A.Call) and e.func == "__ldg" and len(e.args) == 1:
            return A.Index(loc=e.loc, base=self.sptr(e.args[0]), index=int_lit(k, e.loc), ty=base)
        if isinstance(e, A.Call) and e.func.startswith(CUB_PREFIX) and e.args:
            # a CUB collective of a vector combines lane by lane (a sum: the lanes' sums)
            rest = tuple(self.rw(a) for a in e.args[1:])
            return dataclasses.replace(e, args=(self.lane(e.args[0], k, v), *rest), ty=base)
        if isinstance(e, A.Index):
            return self.elem_lane(e, k)
        if isinstance(e, A.Unary) and e.op == "*" and self._ref(e.operand) is not None:
            name = e.operand.name  # type: ignore[union-attr]
            return A.Name(loc=e.loc, name=lane_name(name, k, v.width), ty=base)
        if isinstance(e, A.Unary) and e.op == "*":
            return A.Index(loc=e.loc, base=self.sptr(e.operand), index=int_lit(k, e.loc), ty=base)
        if isinstance(e, A.Ternary):
            return dataclasses.replace(
                e, cond=self.rw(e.cond), then=self.lane(e.then, k, v), else_=self.lane(e.else_, k, v),
                ty=base,
            )  # fmt: skip
        if isinstance(e, A.Cast) and is_vec(e.operand.ty) and e.operand.ty.width == v.width:  # type: ignore[union-attr]
            return self.conv(self.lane(e.operand, k), base)
        if isinstance(e, A.Comma):
            return A.Comma(loc=e.loc, exprs=(*map(self.rw, e.exprs[:-1]), self.lane(e.exprs[-1], k)),
                           ty=base)  # fmt: skip
        if (paired := pairlanes.lane_of(self, e, k, base)) is not None:
            return paired
        what = e.func if isinstance(e, A.Call) else type(e).__name__
        raise LiteralRefusal(f"a vector value of this form ({what})", e.loc)

    def elem_lane(self, e: A.Index, k: int) -> A.Expr:
        """Lane ``k`` of the vector element ``b[i]`` of a pointer or array of vectors."""
        v: A.VectorType = e.ty  # type: ignore[assignment]
        w = v.width
        base = e.base
        if vec_ptr(base.ty) is not None:
            return A.Index(loc=e.loc, base=self.sptr(base), index=scaled(self.rw(e.index), w, k),
                           ty=scalar_of(v))  # fmt: skip
        if vec_array(base.ty) is not None:
            return A.Index(loc=e.loc, base=self.arr(base), index=scaled(self.rw(e.index), w, k),
                           ty=scalar_of(v))  # fmt: skip
        raise LiteralRefusal("an element of a vector array of this form", e.loc)

    def arr(self, e: A.Expr) -> A.Expr:
        """The scalar array an array-of-vectors expression (``s``, ``s[i]`` of 2-D) becomes."""
        if isinstance(e, A.Name):
            return e
        if isinstance(e, A.Index):
            return dataclasses.replace(e, base=self.arr(e.base), index=self.rw(e.index))
        raise LiteralRefusal("a vector array of this form", e.loc)

    def sptr(self, e: A.Expr) -> A.Expr:  # noqa: PLR0911
        """The scalar pointer (to lane 0) a pointer-to-vector expression becomes."""
        v = vec_ptr(e.ty) or vec_array(e.ty)
        if v is None:
            raise LiteralRefusal("a vector pointer of this form", e.loc)
        w, sty = v.width, A.PointerType(pointee=scalar_of(v))
        if isinstance(e, A.Name):
            got = self.kind_of(e.name)
            if got is None or got[0] not in ("ptr", "arr"):
                raise LiteralRefusal(f"vector pointer '{e.name}'", e.loc)
            return dataclasses.replace(e, ty=sty)
        if isinstance(e, A.Cast):
            src = e.operand.ty
            sv = vec_ptr(src) or vec_array(src)
            if sv is not None:  # lanes of one vector type read as those of another
                return retyped(self.sptr(e.operand), sv.base, v.base, e.loc)
            pointee = src.pointee if isinstance(src, A.PointerType) else (
                src.elem if isinstance(src, A.ArrayType) else None
            )  # fmt: skip
            if not isinstance(pointee, A.ScalarType):
                raise LiteralRefusal(
                    "a reinterpretation as a vector of another element type", e.loc
                )
            return retyped(self.rw(e.operand), pointee, v.base, e.loc)
        if isinstance(e, A.Binary) and e.op in ("+", "-") and vec_ptr(e.left.ty) is not None:
            return A.Binary(loc=e.loc, op=e.op, left=self.sptr(e.left),
                            right=scaled(self.rw(e.right), w), ty=sty)  # fmt: skip
        if isinstance(e, A.Binary) and e.op == "+" and vec_ptr(e.right.ty) is not None:
            return A.Binary(loc=e.loc, op="+", left=self.sptr(e.right),
                            right=scaled(self.rw(e.left), w), ty=sty)  # fmt: skip
        if isinstance(e, A.Unary) and e.op == "&" and isinstance(e.operand, A.Name):
            raise LiteralRefusal(f"the address of vector '{e.operand.name}'", e.loc)
        if isinstance(e, A.Unary) and e.op == "&" and isinstance(e.operand, A.Index):
            return A.Unary(loc=e.loc, op="&", operand=self.elem_lane(e.operand, 0), ty=sty)
        if isinstance(e, A.Index) and vec_array(e.ty) is not None:
            return self.arr(e)
        if isinstance(e, A.Ternary):
            return dataclasses.replace(e, cond=self.rw(e.cond), then=self.sptr(e.then),
                                       else_=self.sptr(e.else_), ty=sty)  # fmt: skip
        raise LiteralRefusal(f"a vector pointer of this form ({type(e).__name__})", e.loc)

    @staticmethod
    def conv(e: A.Expr, to: A.ScalarType) -> A.Expr:
        if e.ty == to or isinstance(e, A.InitList):
            return e
        return A.Cast(loc=e.loc, to=to, operand=e, ty=to)

    # ------------------------------------------------------------------ scalar expressions
    def rw(self, e: A.Expr) -> A.Expr:  # noqa: PLR0911
        """``e`` (of a scalar or scalar-pointer type) with the vectors in it scalarised."""
        if vecdots.is_vector_dot(e, is_vec):  # __dp4a(char4, char4, int): lane products
            return vecdots.vector_dot(e, self.lane, self.rw(e.args[2]))  # type: ignore[arg-type]
        if isinstance(e, A.Call) and (one := pairlanes.scalar_of_call(self, e)) is not None:
            return one
        if isinstance(e, A.Member) and not e.arrow and is_vec(e.base.ty):
            return self.lane(e.base, self._lane_of(e))
        if isinstance(e, A.Member) and e.arrow and vec_ptr(e.base.ty) is not None:
            k = self._lane_of(e)
            return A.Index(loc=e.loc, base=self.sptr(e.base), index=int_lit(k, e.loc), ty=e.ty)
        if isinstance(e, A.Index) and is_vec(e.base.ty):
            return self.select(e)
        if isinstance(e, A.Index) and (vec := self.viewed_vector(e.base)) is not None:
            return self.select(A.Index(loc=e.loc, base=vec, index=e.index, ty=e.ty))
        if isinstance(e, A.Unary) and e.op == "*" and isinstance(e.operand, A.Call):
            got = self.read_through(e.operand)
            if got is not None:
                return self.rw(got)
        if isinstance(e, A.Unary) and e.op == "*" and self._ref(e.operand) == "scalar":
            return A.Name(loc=e.loc, name=e.operand.name, ty=e.ty)  # type: ignore[union-attr]
        if (
            isinstance(e, A.Call)
            and e.target is not None
            and (self._vector_call(e) or self.ref_args(e) or self._inner_work(e))
        ):
            return self.helper_call(e, None)
        if isinstance(e, A.SizeOf) and is_vec(e.of):
            return int_lit(e.of.base.bits // 8 * e.of.width, e.loc)  # type: ignore[union-attr]
        if isinstance(e, A.Assign) and vec_ptr(e.target.ty) is not None:
            return self.ptr_assign(e)
        if isinstance(e, A.Unary) and e.op.endswith(("++", "--")) and vec_ptr(e.ty):
            one = int_lit(1, e.loc)
            op = "+=" if "++" in e.op else "-="
            return self.ptr_assign(A.Assign(loc=e.loc, op=op, target=e.operand, value=one,
                                            ty=e.ty))  # fmt: skip
        if vec_ptr(e.ty) is not None or vec_array(e.ty) is not None:
            return self.sptr(e)
        if is_vec(e.ty):
            raise LiteralRefusal("a vector value used as a whole here", e.loc)
        return self.map_children(e)

    def map_children(self, e: A.Expr) -> A.Expr:
        changes = {}
        for fl in dataclasses.fields(e):
            x = getattr(e, fl.name)
            if isinstance(x, A.Expr):
                changes[fl.name] = self.rw(x)
            elif isinstance(x, tuple) and x and all(isinstance(y, A.Expr) for y in x):
                changes[fl.name] = tuple(self.rw(y) for y in x)
        return dataclasses.replace(e, **changes) if changes else e

    def _lane_of(self, e: A.Member) -> int:
        v = vec_ptr(e.base.ty) if e.arrow else e.base.ty
        k = _LANES.get(e.field)
        if k is None or not is_vec(v) or k >= v.width:  # type: ignore[union-attr]
            raise LiteralRefusal(f"member '.{e.field}' of a vector", e.loc)
        return k

    def viewed_vector(self, e: A.Expr) -> A.Expr | None:
        """The local vector ``v`` when ``e`` is ``(float*)&v`` (its lanes as an array)."""
        while isinstance(e, A.Cast) and isinstance(e.to, A.PointerType):
            e = e.operand
        if not (isinstance(e, A.Unary) and e.op == "&" and is_vec(e.operand.ty)):
            return None
        v = e.operand
        if isinstance(v, A.Name) and (self.kind_of(v.name) or ("",))[0] == "vec":
            return v
        if isinstance(v, A.Unary) and v.op == "*" and self._ref(v.operand) == "vec":
            return v
        return None

    def read_through(self, e: A.Call) -> A.Call | None:
        """``*f(args)`` read as a value, where ``f`` returns a reference ``return &X;``: a call
        of ``f`` returning ``X``'s value."""
        if e.target is None or not isinstance(e.ty, A.PointerType):
            return None
        fn = self.callee(e)
        body = fn.body.body
        if len(body) != 1 or not isinstance(body[0], A.Return):
            return None
        ret = body[0].value
        if not (isinstance(ret, A.Unary) and ret.op == "&"):
            return None
        pointee = dataclasses.replace(e.ty.pointee, const=False)
        name = f"{fn.name}__c2nread"
        if name not in self.readers:
            rbody = A.Block(loc=fn.body.loc, body=(A.Return(loc=body[0].loc, value=ret.operand),))
            self.readers[name] = dataclasses.replace(fn, name=name, return_type=pointee, body=rbody)
        return dataclasses.replace(e, func=name, target=name, ty=pointee)

    def _ref(self, e: A.Expr) -> str | None:
        """``"vec"``/``"scalar"`` when ``e`` names a reference parameter taken by value."""
        if not isinstance(e, A.Name):
            return None
        got = self.kind_of(e.name)
        if got is None or got[0] != "ref":
            return None
        return "vec" if got[1] is not None else "scalar"

    def _inner_work(self, e: A.Call) -> bool:
        """Whether the function ``e`` calls (defined here) has vectors or addresses of locals
        to scalarise inside it, or in a function it calls: its clone carries them out."""
        fn = self.callee_of(e)
        return fn is not None and fn.kind != "global" and uses_vectors(self.tu, fn)

    def _vector_call(self, e: A.Call) -> bool:
        fn = self.callee(e)
        return any(is_vec(p.ty) or vec_ptr(p.ty) is not None for p in fn.params)

    def select(self, e: A.Index) -> A.Expr:
        """``v[i]`` of a vector value: its lane (a ``?:`` chain for a non-literal index)."""
        v: A.VectorType = e.base.ty  # type: ignore[assignment]
        idx = self.rw(e.index)
        if isinstance(idx, A.IntLit):
            if not 0 <= idx.value < v.width:
                raise LiteralRefusal("a vector lane index out of range", e.loc)
            return self.lane(e.base, idx.value)
        if v.width > _MAX_SELECT or not self._pure(idx):
            raise LiteralRefusal("a vector lane chosen by this index", e.loc)
        out = self.lane(e.base, v.width - 1)
        for k in range(v.width - 2, -1, -1):
            cond = A.Binary(loc=e.loc, op="==", left=idx, right=int_lit(k, e.loc),
                            ty=A.ScalarType(name="bool"))  # fmt: skip
            out = A.Ternary(loc=e.loc, cond=cond, then=self.lane(e.base, k), else_=out, ty=out.ty)
        return out

    @staticmethod
    def _pure(e: A.Expr) -> bool:
        bad = False

        def visit(x: object) -> None:
            nonlocal bad
            if isinstance(x, A.Assign | A.Call) or (
                isinstance(x, A.Unary) and x.op.endswith(("++", "--"))
            ):
                bad = True
            children(x, visit)

        visit(e)
        return not bad

    def ptr_assign(self, e: A.Assign) -> A.Expr:
        v = vec_ptr(e.target.ty)
        assert v is not None
        target = self.sptr(e.target)
        if e.op == "=":
            return dataclasses.replace(e, target=target, value=self.sptr(e.value), ty=target.ty)
        if e.op in ("+=", "-="):
            return dataclasses.replace(e, target=target, value=scaled(self.rw(e.value), v.width),
                                       ty=target.ty)  # fmt: skip
        raise LiteralRefusal(f"operator {e.op} on a vector pointer", e.loc)

    # ------------------------------------------------------------------ statements
    def block(self, b: A.Block) -> A.Block:
        self.env.append({})
        try:
            out: list[A.Stmt] = []
            for s in b.body:
                out.extend(self.stmt(s))
            return dataclasses.replace(b, body=tuple(out))
        finally:
            self.env.pop()

    def one(self, s: A.Stmt | None) -> A.Stmt | None:
        if s is None:
            return None
        if isinstance(s, A.Block):
            return self.block(s)
        self.env.append({})
        try:
            got = self.stmt(s)
        finally:
            self.env.pop()
        return got[0] if len(got) == 1 else A.Block(loc=s.loc, body=tuple(got))

    def stmt(self, s: A.Stmt) -> list[A.Stmt]:  # noqa: PLR0911
        if isinstance(s, A.Block):
            return [self.block(s)]
        if isinstance(s, A.VarDecl):
            return self.decl(s)
        if isinstance(s, A.ExprStmt):
            return self.expr_stmt(s)
        if isinstance(s, A.If | A.Return) and _first_expr(s) is not None:
            pre, hoisted = self.hoisted(_first_expr(s))  # type: ignore[arg-type]
            if pre:  # the condition or returned value: its calls writing references first
                return [*pre, *self.stmt(_with_first_expr(s, hoisted))]
        if isinstance(s, A.If):
            return [dataclasses.replace(s, cond=self.rw(s.cond), then=self.one(s.then),
                                        else_=self.one(s.else_))]  # fmt: skip
        if isinstance(s, A.For):
            self.env.append({})
            try:
                init = [x for i in s.init for x in self.stmt(i)]
                cond = None if s.cond is None else self.rw(s.cond)
                step = None if s.step is None else self.rw(s.step)
                loop = dataclasses.replace(s, init=(), cond=cond, step=step, body=self.one(s.body))
            finally:
                self.env.pop()
            if all(isinstance(i, A.VarDecl | A.ExprStmt) for i in init) and len(init) == len(
                s.init
            ):
                return [dataclasses.replace(loop, init=tuple(init))]
            return [A.Block(loc=s.loc, body=(*init, loop))]
        if isinstance(s, A.While):
            return [dataclasses.replace(s, cond=self.rw(s.cond), body=self.one(s.body))]
        if isinstance(s, A.DoWhile):
            return [dataclasses.replace(s, cond=self.rw(s.cond), body=self.one(s.body))]
        if isinstance(s, A.Switch):
            cases = tuple(
                dataclasses.replace(c, body=tuple(x for y in c.body for x in self.stmt(y)))
                for c in s.cases
            )
            return [dataclasses.replace(s, cond=self.rw(s.cond), cases=cases)]
        if isinstance(s, A.Return):
            if s.value is None:
                return [s]
            if self.ret_lane is not None:
                return [
                    dataclasses.replace(s, value=self.lane(s.value, self.ret_lane, self.ret_vec))
                ]
            return [dataclasses.replace(s, value=self.rw(s.value))]
        return [s]

    def hoisted(self, e: A.Expr) -> tuple[list[A.Stmt], A.Expr]:
        """The calls of ``e`` writing through references, declared first (see .hoistrefs)."""
        decls, got = hoist_calls(e, self._writes_refs, self.fresh)
        return [x for d in decls for x in self.decl(d)], got

    def _writes_refs(self, c: A.Call) -> set[str] | None:
        """The caller's locals the call ``c`` may change through references, or None."""
        if self.callee_of(c) is None or self.written_refs(c) is None:
            return None
        return {
            n.name
            for a in c.args
            if isinstance(a, A.Unary) and a.op == "&"
            for n in walk(a.operand)
            if isinstance(n, A.Name)
        }

    def decl(self, s: A.VarDecl) -> list[A.Stmt]:
        if s.init is not None and not is_vec(s.ty) and s.storage == "local":
            pre, init = self.hoisted(s.init)
            if pre:
                return [*pre, *self.decl(dataclasses.replace(s, init=init))]
        vp, va = vec_ptr(s.ty), vec_array(s.ty)
        if vp is not None:
            self.bind(s.name, "ptr", vp)
            ty = A.PointerType(pointee=dataclasses.replace(scalar_of(vp), const=vp.const))
            init = None if s.init is None else self.sptr(s.init)
            return [dataclasses.replace(s, ty=ty, init=init)]
        if va is not None:
            return [self.array_decl(s, va)]
        if not is_vec(s.ty):
            if mentions_vectors(s.ty):
                raise LiteralRefusal(f"variable '{s.name}' of this vector type", s.loc)
            refs = self.written_refs(s.init)
            if refs is not None:  # `float r = f(&a, x);`
                pre, post, res = self.ref_call(s, s.init, refs, want=True)  # type: ignore[arg-type]
                if isinstance(s.ty, A.ScalarType) and s.storage == "local":
                    self.bind(s.name, "local", None)
                return [*pre, *post, dataclasses.replace(s, init=res)]
            if isinstance(s.ty, A.ScalarType | A.PointerType) and s.storage == "local":
                self.bind(s.name, "local", None)  # a pointer too: a reference output may set it
            return [s if s.init is None else dataclasses.replace(s, init=self.rw(s.init))]
        v: A.VectorType = s.ty  # type: ignore[assignment]
        if s.storage == "shared" and s.init is None:  # one per block: an array of its lanes
            self.bind(s.name, "svec", v)
            return [dataclasses.replace(s, ty=A.ArrayType(elem=scalar_of(v), dims=(v.width,)))]
        if s.storage != "local":
            raise LiteralRefusal(f"{s.storage} vector '{s.name}'", s.loc)
        refs = self.written_refs(s.init)
        if refs is not None:  # `float2 r = f(p, x);` storing: its body inlined here
            pre, post, res = self.ref_call(s, s.init, refs, want=True)  # type: ignore[arg-type]
            return [*pre, *post, *self.decl(dataclasses.replace(s, init=res))]
        out: list[A.Stmt] = []
        if s.init is not None:  # lanes computed before any is declared: `float2 v = f(v)`
            out, lanes = self.lanes_of(s.init, v, set())
        self.bind(s.name, "vec", v)
        for k in range(v.width):
            init = None if s.init is None else lanes[k]
            out.append(A.VarDecl(loc=s.loc, name=lane_name(s.name, k, v.width), ty=scalar_of(v),
                                 init=init))  # fmt: skip
        return out

    def array_decl(self, s: A.VarDecl, v: A.VectorType) -> A.VarDecl:
        t: A.ArrayType = s.ty  # type: ignore[assignment]
        dims = t.dims
        if dims and dims[-1] is not None:
            dims = (*dims[:-1], dims[-1] * v.width)
        self.bind(s.name, "arr", v)
        init = s.init
        if isinstance(init, A.InitList):
            items: list[A.Expr] = []
            for item in init.items:
                items.extend(self.lane(item, k, v) for k in range(v.width))
            init = dataclasses.replace(init, items=tuple(items))
        elif init is not None:
            raise LiteralRefusal(f"vector array '{s.name}' initialised this way", s.loc)
        return dataclasses.replace(s, ty=A.ArrayType(elem=scalar_of(v), dims=dims), init=init)

    def lanes_of(
        self, value: A.Expr, v: A.VectorType, reads: set[str]
    ) -> tuple[list[A.Stmt], list[A.Expr]]:
        """The lanes of ``value``; through temporaries when ``value`` reads any of ``reads`` or
        calls a function (each lane is then computed once, before any is assigned).  The
        leading expressions of a comma (a group reduction's steps) are statements before."""
        if isinstance(value, A.Comma) and len(value.exprs) > 1:
            first = [A.ExprStmt(loc=x.loc, expr=x) for x in value.exprs[:-1]]
            pre = [y for x in first for y in self.stmt(x)]
            more, lanes = self.lanes_of(value.exprs[-1], v, reads)
            return pre + more, lanes
        lanes = [self.lane(value, k, v) for k in range(v.width)]
        if not (names_in(value) & reads):
            return [], lanes
        pre: list[A.Stmt] = []
        out: list[A.Expr] = []
        for k, x in enumerate(lanes):
            t = self.fresh(f"lane{k}")
            pre.append(A.VarDecl(loc=value.loc, name=t, ty=scalar_of(v), init=x))
            out.append(A.Name(loc=value.loc, name=t, ty=scalar_of(v)))
        return pre, out

    def expr_stmt(self, s: A.ExprStmt) -> list[A.Stmt]:
        e = s.expr
        if isinstance(e, A.Assign) and is_vec(e.target.ty) and e.op == "=":
            refs = self.written_refs(e.value)
            if refs is not None:  # `v = f(p, x);` storing: its body inlined here
                pre, post, res = self.ref_call(s, e.value, refs, want=True)  # type: ignore[arg-type]
                done = A.ExprStmt(loc=s.loc, expr=dataclasses.replace(e, value=res))
                return [*pre, *post, *self.expr_stmt(done)]
        if isinstance(e, A.Assign) and is_vec(e.target.ty):
            if e.op != "=":
                raise LiteralRefusal(f"operator {e.op} on vectors", e.loc)
            v: A.VectorType = e.target.ty  # type: ignore[assignment]
            pre, lanes = self.lanes_of(e.value, v, names_in(e.target))
            out = list(pre)
            for k in range(v.width):
                tgt = self.lane(e.target, k)
                out.append(A.ExprStmt(loc=s.loc, expr=A.Assign(
                    loc=e.loc, op="=", target=tgt, value=lanes[k], ty=tgt.ty)))  # fmt: skip
            return [A.Block(loc=s.loc, body=tuple(out))] if pre else out
        if isinstance(e, A.Assign) and isinstance(e.target, A.Index) and is_vec(e.target.base.ty):
            return [self.lane_store(e)]
        pre, hoisted = self.hoisted(e)
        if pre:
            return [*pre, *self.expr_stmt(dataclasses.replace(s, expr=hoisted))]
        refs = self.written_refs(e)
        if refs is not None:  # `f(&a, x);`
            pre, post, _ = self.ref_call(s, e, refs, want=False)  # type: ignore[arg-type]
            return [A.Block(loc=s.loc, body=(*pre, *post))]
        if isinstance(e, A.Assign) and (refs := self.written_refs(e.value)) is not None:
            pre, post, res = self.ref_call(s, e.value, refs, want=True)  # type: ignore[arg-type]
            done = A.ExprStmt(loc=s.loc, expr=self.rw(dataclasses.replace(e, value=res)))
            return [*pre, *post, done]
        return [dataclasses.replace(s, expr=self.rw(e))]

    def lane_store(self, e: A.Assign) -> A.Stmt:
        """``v[i] = x`` of a vector ``v``: the lane's store (an ``if`` chain on ``i``)."""
        t: A.Index = e.target  # type: ignore[assignment]
        v: A.VectorType = t.base.ty  # type: ignore[assignment]
        idx, value = self.rw(t.index), self.rw(e.value)

        def store(k: int) -> A.Stmt:
            tgt = self.lane(t.base, k)
            return A.ExprStmt(loc=e.loc, expr=dataclasses.replace(e, target=tgt, value=value))

        if isinstance(idx, A.IntLit):
            return store(idx.value)
        if v.width > _MAX_SELECT or not self._pure(idx):
            raise LiteralRefusal("a vector lane chosen by this index", e.loc)
        out: A.Stmt | None = None
        for k in range(v.width - 1, -1, -1):
            cond = A.Binary(loc=e.loc, op="==", left=idx, right=int_lit(k, e.loc),
                            ty=A.ScalarType(name="bool"))  # fmt: skip
            out = A.If(loc=e.loc, cond=cond, then=store(k), else_=out)
        assert out is not None
        return out

    ret_lane: int | None = None
    ret_vec: object = None
    inlining: int = 0  # calls writing through references being inlined, nested


def scalarise(tu: A.TranslationUnit, fn: A.Function) -> tuple[A.TranslationUnit, A.Function]:
    """``fn`` with its vector values scalarised and ``tu`` with the scalarised device functions
    it calls (unchanged when ``fn`` and its callees use no vector type); byte ``__shared__``
    arrays used as one element type are typed first (:mod:`.byteshared`).  A form not foreseen
    here (or nested too deeply to walk) is refused, never a crash."""
    try:
        return _scalarise(tu, fn)
    except LiteralRefusal:
        raise
    except Exception as exc:  # noqa: BLE001
        raise LiteralRefusal(
            f"vector or struct values in a form not scalarised ({type(exc).__name__})", fn.loc
        ) from exc


def _scalarise(tu: A.TranslationUnit, fn: A.Function) -> tuple[A.TranslationUnit, A.Function]:
    typed = typed_byte_shared(fn)
    if typed is not fn:
        tu = dataclasses.replace(tu, functions=tuple(typed if f is fn else f for f in tu.functions))
        fn = typed
    if not uses_vectors(tu, fn):
        return tu, fn
    blob = blob_use(fn)
    if blob is not None and getattr(blob[1], "held_as_bytes", ""):
        raise LiteralRefusal(
            f"array of struct '{blob[0]}' with no array per member: {blob[1].held_as_bytes}",  # type: ignore[attr-defined]
            blob[1].loc,  # type: ignore[attr-defined]
        )
    if blob is not None:
        raise LiteralRefusal(
            f"struct '{blob[0]}' (members of different types, a union, a bit field or a "
            "pointer member: held as bytes)",
            blob[1].loc,  # type: ignore[attr-defined]
        )
    sc = Scalariser(tu)
    out = sc.function(arrows_as_derefs(fn))
    if not sc.clones and out == fn:
        return tu, fn
    fns = tuple(out if f is fn else f for f in tu.functions) + tuple(sc.clones.values())
    return dataclasses.replace(tu, functions=fns), out


def _first_expr(s: A.If | A.Return) -> A.Expr | None:
    return s.cond if isinstance(s, A.If) else s.value


def _with_first_expr(s: A.If | A.Return, e: A.Expr) -> A.Stmt:
    if isinstance(s, A.If):
        return dataclasses.replace(s, cond=e)
    return dataclasses.replace(s, value=e)


def _array_element(e: A.Expr) -> bool:
    """``arr[i]`` (or ``arr[i][j]``) of an array variable (not of a pointer), or the lane
    ``v[i]`` of a vector variable."""
    while isinstance(e, A.Index):
        e = e.base
    return isinstance(e, A.Name) and isinstance(e.ty, A.ArrayType | A.VectorType)
