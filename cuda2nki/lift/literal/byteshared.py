"""Byte arrays of shared memory used as one element type.

``extern __shared__ char smem[]; float4* w = reinterpret_cast<float4*>(smem);`` declares block
memory as bytes and uses it as ``float4`` (``float*``, ``x128*``...).  An unsized ``extern
__shared__`` array of another element type (``char* smem[]``, ``int4 smem[]``) is the same
launch-sized bytes, its element type only their alignment.  When every use of such a
``char``/``unsigned char`` (or dynamic) ``__shared__`` array is a cast to a pointer of one scalar type, or of
vectors of that one scalar type, the array is that scalar's array (its size in elements is its
size in bytes divided by the scalar's; a sized one must divide exactly): the literal lowering
then sees the casts as the identity they are (:mod:`cuda2nki.lift.literal.scalarise` spells the
vector pointers as scalar pointers).  An array used otherwise (read as bytes, cast to two element
types) is left as it is.
"""

from __future__ import annotations

import dataclasses

from cuda2nki.frontend import ast as A


def _byte_array(s: object) -> bool:
    """A ``char`` shared array, or an unsized ``extern __shared__`` array of any element type
    (``extern __shared__ char* smem[]``): the launch's dynamic shared bytes, whose declared
    element type only sets their alignment."""
    if not (
        isinstance(s, A.VarDecl)
        and s.storage in ("shared", "extern_shared")
        and isinstance(s.ty, A.ArrayType)
        and len(s.ty.dims) == 1
        and s.init is None
    ):
        return False
    elem = s.ty.elem
    if isinstance(elem, A.ScalarType) and elem.bits == 8:
        return True
    return s.storage == "extern_shared" and s.ty.dims[0] is None


def _scalar_of(t: object) -> A.ScalarType | None:
    if not isinstance(t, A.PointerType):
        return None
    p = t.pointee
    if type(p) is A.VectorType:
        p = p.base
    return p if isinstance(p, A.ScalarType) and p.bits > 8 else None


def _uses(body: A.Stmt, names: set[str]) -> dict[str, set[str] | None]:
    """Per array: the scalar names it is cast to, or None when it is used another way."""
    got: dict[str, set[str] | None] = {n: set() for n in names}

    def visit(x: object, cast_to: A.ScalarType | None) -> None:
        if isinstance(x, A.Name) and x.name in got:
            seen = got[x.name]
            if cast_to is None or seen is None:
                got[x.name] = None
            else:
                seen.add(cast_to.name)
            return
        if isinstance(x, A.Cast):
            visit(x.operand, _scalar_of(x.to))
            return
        if isinstance(x, tuple):
            for y in x:
                visit(y, None)
        elif isinstance(x, A.Node):
            for f in dataclasses.fields(x):
                if f.name not in ("loc", "ty", "to", "of"):
                    visit(getattr(x, f.name), None)

    visit(body, None)
    return got


def typed_byte_shared(fn: A.Function) -> A.Function:
    """``fn`` with each byte ``__shared__`` array used as one element type retyped to it."""
    decls: dict[str, A.VarDecl] = {}

    def collect(x: object) -> None:
        if _byte_array(x):
            decls[x.name] = x  # type: ignore[union-attr]
        if isinstance(x, tuple):
            for y in x:
                collect(y)
        elif isinstance(x, A.Stmt):
            for f in dataclasses.fields(x):
                collect(getattr(x, f.name))

    collect(fn.body)
    if not decls:
        return fn
    elems: dict[str, A.ScalarType] = {}
    for name, seen in _uses(fn.body, set(decls)).items():
        if not seen or len(seen) != 1:
            continue
        elem = A.ScalarType(name=next(iter(seen)))
        d = decls[name].ty.dims[0]  # type: ignore[union-attr]
        if d is not None and d % (elem.bits // 8):
            continue
        elems[name] = elem
    if not elems:
        return fn
    return _retype(fn, elems)  # type: ignore[return-value]


def _retype(x: object, elems: dict[str, A.ScalarType]) -> object:
    if isinstance(x, tuple):
        return tuple(_retype(y, elems) for y in x)
    if not isinstance(x, A.Node):
        return x
    changes = {
        f.name: _retype(getattr(x, f.name), elems)
        for f in dataclasses.fields(x)
        if f.name not in ("loc", "ty", "to", "of")
    }
    x = dataclasses.replace(x, **changes)
    if isinstance(x, A.VarDecl) and x.name in elems and _byte_array(x):
        elem = elems[x.name]
        d = x.ty.dims[0]  # type: ignore[union-attr]
        dims = (None if d is None else d // (elem.bits // 8),)
        return dataclasses.replace(x, ty=A.ArrayType(elem=elem, dims=dims))
    if isinstance(x, A.Name) and x.name in elems and isinstance(x.ty, A.ArrayType):
        return dataclasses.replace(x, ty=A.ArrayType(elem=elems[x.name], dims=x.ty.dims))
    return x
