"""Kernel parameters of a vector or record type passed by value, read as small input tensors.

``__global__ void fit(const float2* xy, float mean, const float2 coef, float2* out)`` takes
``coef`` by value: two floats the host computed.  A port receives its data as tensors and
scalars; a vector is neither, so such a parameter becomes a pointer to its ``W`` lanes (a
tensor of ``W`` elements, ``Param.extent``, ``Param.by_value``) and each use of ``coef`` is the
vector there (``reinterpret_cast<const float2*>(coef)[0]``): the interpreter, binding
inference, the lifter and the literal lowering then read it as any input buffer, and ``check``
fills it like one.  A parameter the kernel writes (its own copy: ``coef.x = 0``, ``&coef``) is
left as it is (and refused later by name).
"""

from __future__ import annotations

import dataclasses

from cuda2nki.frontend import ast as A
from cuda2nki.rewrite import transform


def vector_params_as_tensors(tu: A.TranslationUnit) -> A.TranslationUnit:
    """``tu`` with the read-only by-value vector parameters of its kernels made tensors."""
    fns = tuple(_kernel(f) if f.kind == "global" else f for f in tu.functions)
    if all(a is b for a, b in zip(fns, tu.functions)):
        return tu
    return dataclasses.replace(tu, functions=fns)


def _kernel(fn: A.Function) -> A.Function:
    names = {
        p.name
        for p in fn.params
        if isinstance(p.ty, A.VectorType) and p.ty.width > 0 and not _changed(fn.body, p.name)
    }
    if not names:
        return fn
    params = tuple(_param(p) if p.name in names else p for p in fn.params)
    kinds = {p.name: p.ty for p in fn.params if p.name in names}

    def use(x: object) -> object:
        if isinstance(x, A.Name) and x.name in kinds:
            v: A.VectorType = kinds[x.name]  # type: ignore[assignment]
            flat = A.PointerType(pointee=dataclasses.replace(v.base, const=True))
            vp = A.PointerType(pointee=dataclasses.replace(v, const=True))
            base = dataclasses.replace(x, ty=flat)
            cast = A.Cast(loc=x.loc, to=vp, operand=base, kind="reinterpret", ty=vp)
            zero = A.IntLit(loc=x.loc, value=0, ty=A.ScalarType(name="int32"))
            return A.Index(loc=x.loc, base=cast, index=zero, ty=dataclasses.replace(v, const=True))
        return x

    body = transform(fn.body, use)
    return dataclasses.replace(fn, params=params, body=body)


def _param(p: A.Param) -> A.Param:
    v: A.VectorType = p.ty  # type: ignore[assignment]
    ptr = A.PointerType(pointee=dataclasses.replace(v.base, const=True))
    return dataclasses.replace(p, ty=ptr, extent=v.width, by_value=True)


def _changed(body: A.Block, name: str) -> bool:
    """Whether ``body`` may change its copy of ``name``: assigns it or one of its lanes,
    increments one, takes its address, or declares another ``name`` (shadowing)."""
    hit = False

    def mentions(e: object) -> bool:
        found = False

        def look(x: object) -> object:
            nonlocal found
            found = found or (isinstance(x, A.Name) and x.name == name)
            return x

        transform(e, look)
        return found

    def visit(x: object) -> object:
        nonlocal hit
        if isinstance(x, A.Assign) and mentions(x.target):
            hit = True
        elif isinstance(x, A.Unary) and x.op in ("&", "pre++", "pre--", "post++", "post--"):
            hit = hit or mentions(x.operand)
        elif isinstance(x, A.VarDecl) and x.name == name:
            hit = True
        return x

    transform(body, visit)
    return hit
