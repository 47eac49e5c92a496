"""Operators on vector and record values, resolved after the lowering.

CUDA's vector types have no arithmetic of their own: ``a + b`` of two ``float2`` means the
program's (or a header's) ``operator+``.  Where the file defines the operator
(``__device__ float2 operator+(float2, float2)``, ``void operator^=(uchar4&, uchar4)``...), the
expression becomes a call of that function, chosen among the overloads by its operand types:

* ``a OP b`` and ``OP a`` call ``operatorOP``;
* the statement ``t OP= v`` calls ``operatorOP=`` with ``t``'s address (a C++ reference), or,
  where only ``operatorOP`` is defined, assigns ``t = operatorOP(t, v)``.

(A binary operator on a record struct is such a call from the lowering already:
:mod:`.structops`.)  Where the file defines none, the operator is the lane-by-lane one of the CUDA headers
(``cuda_fp16.h``'s ``__half2``, ``helper_math.h``'s ``float4``): ``a OP b`` is
``make_T(a.x OP b.x, ...)``, a scalar operand standing for every lane (``v * 2.0f``), and
``t OP= v`` is ``t = t OP v`` -- where the operands have no side effect (they are read once per
lane).  Comparisons and logical operators of vectors, and operands with side effects, are left
as they are (the consumers refuse them by name).
"""

from __future__ import annotations

import dataclasses

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.constbits import folded
from cuda2nki.frontend.halfvec import as_lanes
from cuda2nki.frontend.typesys import VECTOR_TYPES

#: operators whose lane-by-lane meaning every vector header gives
LANEWISE = frozenset({"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"})
_FIELDS = "xyzw"
_MAKE = {"__half2": "make_half2", "__nv_half2": "make_half2", "nv_bfloat162": "make_bfloat162",
         "__nv_bfloat162": "make_bfloat162"}  # fmt: skip


def resolve_vector_operators(tu: A.TranslationUnit) -> A.TranslationUnit:
    """``tu`` with the operators on vectors in its functions resolved (see the module)."""
    fns = tuple(_Resolver(tu).function(f) for f in tu.functions)
    if all(a is b for a, b in zip(fns, tu.functions)):
        return tu
    return dataclasses.replace(tu, functions=fns)


def _is_vec(t: object) -> bool:
    return isinstance(t, A.VectorType)


def _mentions(t: object) -> bool:
    while isinstance(t, A.PointerType | A.ArrayType):
        t = t.pointee if isinstance(t, A.PointerType) else t.elem
    return _is_vec(t)


def _key(t: object) -> tuple[str, object] | None:
    """What must agree between a parameter and an argument type (qualifiers aside)."""
    if isinstance(t, A.VectorType):
        return ("vec", (t.name, t.width))
    if isinstance(t, A.ScalarType):
        return ("scalar", t.name)
    return None


def _fit(param: A.CType, arg: A.CType | None) -> int:
    """How well ``arg`` fits ``param``: 2 exactly, 1 a scalar conversion, -1 not at all.  A
    pointer parameter (a C++ reference) fits its pointee."""
    ptee = param.pointee if isinstance(param, A.PointerType) else param
    p, a = _key(ptee), _key(arg)
    if p is None or a is None:
        return -1
    if p == a:
        return 2
    return 1 if p[0] == a[0] == "scalar" else -1


def find_operator(tu: A.TranslationUnit, op: str, args: tuple[A.Expr, ...]) -> A.Function | None:
    """The file's ``operator{op}`` that takes ``args`` best, None where none fits."""
    name = f"operator{op}"
    best, best_score = None, -1
    for fn in tu.functions:
        if not (fn.name == name or fn.name.startswith(name + "(")) or fn.kind == "global":
            continue
        if len(fn.params) != len(args):
            continue
        fits = [_fit(p.ty, a.ty) for p, a in zip(fn.params, args)]
        if min(fits, default=-1) < 0:
            continue
        if sum(fits) > best_score:
            best, best_score = fn, sum(fits)
    return best


def _call(fn: A.Function, args: tuple[A.Expr, ...], loc: A.SourceLoc) -> A.Call:
    out = []
    for p, a in zip(fn.params, args):
        if isinstance(p.ty, A.PointerType) and not isinstance(a.ty, A.PointerType):
            a = A.Unary(loc=a.loc, op="&", operand=a, ty=A.PointerType(pointee=a.ty))
        out.append(a)
    return A.Call(loc=loc, func=fn.name, args=tuple(out), target=fn.name, ty=fn.return_type)


#: intrinsics with an effect, or collective (not to be called once per lane)
_EFFECTS = ("atomic", "__shfl", "__ballot", "__any", "__all", "__activemask", "__match",
            "__reduce", "__sync", "__threadfence", "curand", "clock", "printf", "__nanosleep",
            "asm", "__st", "__trap", "cooperative", "cg::")  # fmt: skip


def _pure(e: A.Expr) -> bool:
    """No call of a device function or of an intrinsic with an effect, no assignment,
    increment or decrement in ``e``."""
    if isinstance(e, A.Assign) or (isinstance(e, A.Unary) and e.op.endswith(("++", "--"))):
        return False
    if isinstance(e, A.Call) and not (e.target is None and not e.func.startswith(_EFFECTS)):
        return False
    for fl in dataclasses.fields(e):
        x = getattr(e, fl.name)
        xs = x if isinstance(x, tuple) else (x,)
        if any(isinstance(y, A.Expr) and not _pure(y) for y in xs):
            return False
    return True


def _lane(e: A.Expr, k: int, v: A.VectorType) -> A.Expr:
    base = dataclasses.replace(v.base, const=False)
    if _is_make(e, v.width):  # a lane of a constructor: its argument
        e = e.args[k]  # type: ignore[union-attr]
    elif _is_vec(e.ty):
        return A.Member(loc=e.loc, base=e, field=_FIELDS[k], ty=base)
    return e if e.ty == base else A.Cast(loc=e.loc, to=base, operand=e, ty=base)


def _is_make(e: A.Expr, width: int) -> bool:
    return (
        isinstance(e, A.Call)
        and e.target is None
        and e.func.startswith("make_")
        and len(e.args) == width
        and _is_vec(e.ty)
    )


def _lanewise(e: A.Binary | A.Unary, v: A.VectorType) -> A.Expr | None:
    """``make_T`` of the lanes of ``e``, None where that would not be faithful."""
    if v.name not in VECTOR_TYPES or not _pure(e):  # a record has no header operator
        return None
    if isinstance(e, A.Binary):
        if not (e.op in LANEWISE and _compatible(e.left.ty, v) and _compatible(e.right.ty, v)):
            return None
        lanes = [
            A.Binary(
                loc=e.loc,
                op=e.op,
                left=_lane(e.left, k, v),
                right=_lane(e.right, k, v),
                ty=dataclasses.replace(v.base, const=False),
            )  # fmt: skip
            for k in range(v.width)
        ]
    elif e.op in ("-", "+", "~") and _compatible(e.operand.ty, v):
        lanes = [
            A.Unary(
                loc=e.loc,
                op=e.op,
                operand=_lane(e.operand, k, v),
                ty=dataclasses.replace(v.base, const=False),
            )  # fmt: skip
            for k in range(v.width)
        ]
    else:
        return None
    ty = dataclasses.replace(v, const=False)
    return A.Call(loc=e.loc, func=_MAKE.get(v.name, f"make_{v.name}"), args=tuple(lanes), ty=ty)


def _compatible(t: object, v: A.VectorType) -> bool:
    """A scalar, or a vector of ``v``'s width and element type."""
    if isinstance(t, A.ScalarType):
        return True
    return isinstance(t, A.VectorType) and t.width == v.width and t.base.name == v.base.name


class _Resolver:
    def __init__(self, tu: A.TranslationUnit) -> None:
        self.tu = tu

    def function(self, fn: A.Function) -> A.Function:
        body = self.node(fn.body)
        return fn if body is fn.body else dataclasses.replace(fn, body=body)  # type: ignore[arg-type]

    def node(self, x: object) -> object:
        if isinstance(x, tuple):
            got = tuple(self.node(y) for y in x)
            return x if all(a is b for a, b in zip(got, x)) else got
        if not isinstance(x, A.Node) or isinstance(x, A.Function):
            return x
        changes = {}
        for fl in dataclasses.fields(x):
            if fl.name == "loc":
                continue
            old = getattr(x, fl.name)
            new = self.node(old)
            if new is not old:
                changes[fl.name] = new
        if changes:
            x = dataclasses.replace(x, **changes)
        return self.rewrite(x)

    def rewrite(self, x: A.Node) -> A.Node:
        if isinstance(x, A.ExprStmt) and isinstance(x.expr, A.Assign):
            got = self.compound(x.expr)
            return x if got is None else dataclasses.replace(x, expr=got)
        if isinstance(x, A.ExprStmt) and isinstance(x.expr, A.Call):
            return _lane_atomics(x, x.expr) or x
        if isinstance(x, A.Call):  # constant bits of a vector's lane, and of any other value
            return folded(x) or as_lanes(x, _pure) or x
        if isinstance(x, A.Binary) and (_is_vec(x.left.ty) or _is_vec(x.right.ty)):
            return self.operator(x, (x.left, x.right))
        if isinstance(x, A.Unary) and x.op in ("-", "+", "~", "!") and _is_vec(x.operand.ty):
            return self.operator(x, (x.operand,))
        return x

    def operator(self, e: A.Binary | A.Unary, args: tuple[A.Expr, ...]) -> A.Expr:
        fn = find_operator(self.tu, e.op, args)
        if fn is not None:
            return _call(fn, args, e.loc)
        if _is_vec(e.ty):
            return _lanewise(e, e.ty) or e  # type: ignore[arg-type]
        return e

    def compound(self, e: A.Assign) -> A.Expr | None:
        """The statement ``t OP= v`` of a vector ``t`` resolved, None where it stays."""
        if e.op == "=" or not _is_vec(e.target.ty) or not _pure(e.target):
            return None
        args = (e.target, e.value)
        fn = find_operator(self.tu, e.op, args)
        if fn is not None and fn.params and isinstance(fn.params[0].ty, A.PointerType):
            return _call(fn, args, e.loc)
        op = e.op[:-1]
        fn = find_operator(self.tu, op, args)
        if fn is not None and _is_vec(fn.return_type):
            return dataclasses.replace(e, op="=", value=_call(fn, args, e.loc))
        v: A.VectorType = e.target.ty  # type: ignore[assignment]
        got = _lanewise(A.Binary(loc=e.loc, op=op, left=e.target, right=e.value, ty=v), v)
        return None if got is None else dataclasses.replace(e, op="=", value=got)


def _lane_atomics(s: A.ExprStmt, e: A.Call) -> A.Stmt | None:
    """The statement ``atomicAdd(p, v)`` of a vector ``v`` (``__half2``, ``float2``...): one
    ``atomicAdd`` per lane -- CUDA makes each lane's add atomic on its own, not the vector's --
    where ``p`` and ``v`` have no side effect; None otherwise."""
    if e.func != "atomicAdd" or e.target is not None or len(e.args) != 2:
        return None
    ptr, val = e.args
    v = val.ty
    if not (isinstance(v, A.VectorType) and v.width <= len(_FIELDS)) or not all(map(_pure, e.args)):
        return None
    pt = ptr.ty
    if not (isinstance(pt, A.PointerType) and _compatible(pt.pointee, v)):
        return None
    elem = ptr.operand if isinstance(ptr, A.Unary) and ptr.op == "&" else None
    if elem is None:
        elem = A.Unary(loc=ptr.loc, op="*", operand=ptr, ty=pt.pointee)
    base = dataclasses.replace(v.base, const=False)
    out: list[A.Stmt] = []
    for k in range(v.width):
        lane = A.Member(loc=ptr.loc, base=elem, field=_FIELDS[k], ty=base)
        addr = A.Unary(loc=ptr.loc, op="&", operand=lane, ty=A.PointerType(pointee=base))
        call = dataclasses.replace(e, args=(addr, _lane(val, k, v)), ty=base)
        out.append(A.ExprStmt(loc=s.loc, expr=call))
    return A.Block(loc=s.loc, body=tuple(out))
