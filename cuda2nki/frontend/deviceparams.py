"""File-scope ``__device__`` / ``__managed__`` variables as kernel parameters.

Kernels of one program often share state through global memory declared at file scope
instead of passing pointers:

    __device__ float scores[ROWS * COLS];
    __device__ int found;
    __global__ void mark(float limit) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (scores[i] > limit) atomicAdd(&found, 1);
    }

For one kernel such a variable is memory like any buffer it is given: the host or an earlier
kernel filled it, and what the kernel writes there outlives it.  A port receives its data only
as tensors, so each such variable a kernel uses, directly or through the device functions it
calls, becomes a trailing parameter of that kernel (and of those device functions), under the
variable's own name, and its launch sites pass the symbol:

* an array of a scalar type becomes a pointer to its elements, its declared element count kept
  as the evidence of its shape (``Param.extent``; ``Param.rows`` for a multi-dimensional one,
  whose subscript chains are linearised);
* a scalar becomes a pointer to one element; its uses read and write that element (``found``
  is ``found[0]``, ``&found`` is ``&found[0]``).

The parameter is ``persistent`` (an element the kernel does not write keeps its value, so a
written variable is ``inout``) and carries ``Param.symbol``, so that a port says which of its
tensors stand for such variables.  Binding inference, the interpreter, the lifter and ``check``
then give the CUDA kernel and the port the same memory.  A variable stays a global where the
rewrite would not be faithful: one with an initialiser (its start value is program state, a
ticket counter that the last block resets, not memory a caller fills), an element type that is
not a scalar, a name that a parameter or local also declares, a multi-dimensional array used
other than by full subscripts, or a use in a kernel that device code launches.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.arrayparams import _chain, _linear, chain_uses
from cuda2nki.frontend.visit import walk
from cuda2nki.rewrite import transform

_INT = A.ScalarType(name="int32")


def device_globals_as_parameters(tu: A.TranslationUnit) -> A.TranslationUnit:
    """``tu`` with the ``__device__`` variables its kernels use made their parameters."""
    candidates = _candidates(tu)
    if not candidates:
        return tu
    funcs = [f for f in tu.functions if f.kind != "host"]
    need = _needs(funcs, candidates)
    moved = _movable(tu, funcs, need, candidates)
    if not moved:
        return tu
    need = {f: tuple(n for n in names if n in moved) for f, names in need.items()}
    functions = tuple(
        _rewritten(f, need.get(f.name, ()), moved, need) if f.kind != "host" else f
        for f in tu.functions
    )
    sites = tuple(_with_args(s, need.get(s.instance or s.kernel, ())) for s in tu.launch_sites)
    return dataclasses.replace(
        tu,
        functions=functions,
        launch_sites=sites,
        globals=tuple(g for g in tu.globals if g.name not in moved),
    )


def _candidates(tu: A.TranslationUnit) -> dict[str, A.GlobalVar]:
    """The file's ``__device__`` scalars and arrays of scalars with constant extents and no
    initialiser (memory the host or other kernels fill)."""
    out = {}
    for g in tu.globals:
        if g.space != "device" or g.init is not None:  # a start value: program state
            continue
        if isinstance(g.ty, A.ScalarType):
            out[g.name] = g
        elif (
            isinstance(g.ty, A.ArrayType)
            and isinstance(g.ty.elem, A.ScalarType)
            and g.ty.dims
            and all(isinstance(d, int) and d > 0 for d in g.ty.dims)
        ):
            out[g.name] = g
    return out


def _needs(funcs: list[A.Function], cands: dict[str, A.GlobalVar]) -> dict[str, tuple[str, ...]]:
    """Per function, the candidates it uses itself or through the functions it calls (in the
    order of their declarations)."""
    direct = {f.name: {n.name for n in walk(f.body) if isinstance(n, A.Name)} & set(cands)
              for f in funcs}  # fmt: skip
    callees = {
        f.name: {n.target for n in walk(f.body) if isinstance(n, A.Call) and n.target in direct}
        for f in funcs
    }
    changed = True
    while changed:
        changed = False
        for name, used in direct.items():
            more = set().union(*(direct[c] for c in callees[name])) - used
            if more:
                used |= more
                changed = True
    order = list(cands)
    return {f: tuple(sorted(used, key=order.index)) for f, used in direct.items() if used}


def _movable(
    tu: A.TranslationUnit,
    funcs: list[A.Function],
    need: dict[str, tuple[str, ...]],
    cands: dict[str, A.GlobalVar],
) -> dict[str, A.GlobalVar]:
    """The candidates that every function using them can take as a parameter."""
    declared = {p.name for f in funcs for p in f.params}
    declared |= {n.name for f in funcs for n in walk(f.body) if isinstance(n, A.VarDecl)}
    declared |= {v.name for v in tu.file_shared}
    launched = {
        n.kernel.split("<")[0] for f in funcs for n in walk(f.body) if isinstance(n, A.Launch)
    }
    blocked = {n for f, names in need.items() if f.split("<")[0] in launched for n in names}
    out = {}
    for name, g in cands.items():
        if name in declared or name in blocked:
            continue
        if isinstance(g.ty, A.ArrayType) and len(g.ty.dims) > 1:
            if not all(_full_chains(f.body, name, len(g.ty.dims)) for f in funcs):
                continue
        out[name] = g
    return out


def _full_chains(body: A.Block, name: str, depth: int) -> bool:
    """Whether every use of ``name`` in ``body`` is a subscript chain ``depth`` deep."""
    uses, full = chain_uses(body, name, depth)
    return uses == full


def _rewritten(
    f: A.Function,
    names: tuple[str, ...],
    moved: dict[str, A.GlobalVar],
    need: dict[str, tuple[str, ...]],
) -> A.Function:
    """``f`` taking ``names`` as trailing parameters, its uses of them and its calls of the
    functions that need them rewritten."""
    calls = any(isinstance(n, A.Call) and need.get(n.target or "") for n in walk(f.body))
    if not names and not calls:
        return f
    ptrs = {n: _pointer(moved[n]) for n in names}

    def swap(e: object) -> object:
        if isinstance(e, A.Call) and need.get(e.target or ""):
            extra = tuple(A.Name(loc=e.loc, name=n, ty=ptrs[n]) for n in need[e.target or ""])
            return dataclasses.replace(e, args=(*e.args, *extra))
        if isinstance(e, A.Index):
            return _flat(e, moved, ptrs)
        if isinstance(e, A.Name) and e.name in ptrs:
            g = moved[e.name]
            name = dataclasses.replace(e, ty=ptrs[e.name])
            if isinstance(g.ty, A.ScalarType):  # the one element
                zero = A.IntLit(loc=e.loc, value=0, ty=_INT)
                return A.Index(loc=e.loc, base=name, index=zero, ty=g.ty)
            return name
        return e

    body = transform(f.body, swap)
    params = tuple(_param(moved[n], ptrs[n]) for n in names)
    return dataclasses.replace(f, params=(*f.params, *params), body=body)


def _flat(e: A.Index, moved: dict[str, A.GlobalVar], ptrs: dict[str, A.PointerType]) -> A.Expr:
    """A full subscript chain of a multi-dimensional variable as one flat subscript."""
    base, indices = _chain(e)
    if not isinstance(base, A.Name) or base.name not in ptrs:
        return e
    ty = moved[base.name].ty
    if not isinstance(ty, A.ArrayType) or len(ty.dims) < 2 or len(indices) != len(ty.dims):
        return e
    dims = tuple(int(d) for d in ty.dims[1:] if d is not None)
    name = dataclasses.replace(base, ty=ptrs[base.name])
    return A.Index(loc=e.loc, base=name, index=_linear(indices, dims), ty=e.ty)


def _pointer(g: A.GlobalVar) -> A.PointerType:
    elem = g.ty.elem if isinstance(g.ty, A.ArrayType) else g.ty
    assert isinstance(elem, A.ScalarType)
    return A.PointerType(pointee=dataclasses.replace(elem, const=False))


def _param(g: A.GlobalVar, ptr: A.PointerType) -> A.Param:
    if isinstance(g.ty, A.ArrayType) and len(g.ty.dims) > 1:
        rows = tuple(int(d) for d in g.ty.dims if d is not None)
        return A.Param(loc=g.loc, name=g.name, ty=ptr, rows=rows, persistent=True, symbol=True)
    count = (
        math.prod(int(d) for d in g.ty.dims if d is not None)
        if isinstance(g.ty, A.ArrayType)
        else 1
    )
    return A.Param(loc=g.loc, name=g.name, ty=ptr, extent=count, persistent=True, symbol=True)


def _with_args(site: A.LaunchSite, names: Iterable[str]) -> A.LaunchSite:
    names = tuple(names)
    if not names:
        return site
    args = tuple(A.Name(loc=site.loc, name=n) for n in names)
    texts = site.arg_texts + names if site.arg_texts else site.arg_texts
    return dataclasses.replace(site, args=(*site.args, *args), arg_texts=texts)


def global_memory_params(fn: A.Function) -> tuple[str, ...]:
    """The parameters of ``fn`` that stand for file-scope ``__device__`` variables."""
    return tuple(p.name for p in fn.params if p.symbol)


__all__ = ["device_globals_as_parameters", "global_memory_params"]
