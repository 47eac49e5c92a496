"""Shared-memory accumulators in loops become registers (an AST rewrite before the lift).

A common way to start a block reduction accumulates straight into the thread's own slot of a
shared array, inside a grid- or block-stride loop::

    sdata[tid] = 0.0f;
    while (idx < n) { sdata[tid] += x[idx]; idx += gridDim.x * blockDim.x; }
    for (s = blockDim.x / 2; ...) { __syncthreads(); if (tid < s) sdata[tid] += sdata[tid + s]; }

Within the loop only the thread itself touches ``sdata[tid]`` (no barrier, one element, the same
in every iteration), so the loop is the same computation on a register::

    { float acc = sdata[tid]; while (...) { acc += x[idx]; ... } sdata[tid] = acc; }

which the lifter follows like any per-thread accumulation, where the shared-memory recurrence
is opaque to it.  The rewrite applies to a loop and a shared array when every access of the
array in the loop is a complete element access at one index expression that

* mentions the thread index (directly or through a local initialised from it), so that each
  thread owns its element -- threads sharing one would race in CUDA anyway;
* is invariant in the loop: only names the loop never assigns, built-ins, integer literals and
  arithmetic (no memory reads, no calls);

and the loop holds no barrier, no ``return`` and takes no address of the element.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk

_LOOPS = (A.For, A.While, A.DoWhile)
_BARRIERS = frozenset({"__syncthreads", "__syncwarp", "__syncthreads_count", "__syncthreads_or"})
_PURE_UNARY = frozenset({"-", "+", "~", "!"})


def privatised(fn: A.Function) -> A.Function:
    """``fn`` with every privatisable shared accumulator of a loop held in a register."""
    shared = _shared_arrays(fn.body)
    if not shared or fn.body is None:
        return fn
    ctx = _Ctx(shared, _thread_locals(fn.body))
    body = ctx.stmt(fn.body)
    return fn if body is fn.body else dataclasses.replace(fn, body=body)


@dataclasses.dataclass
class _Ctx:
    shared: dict[str, A.ArrayType]
    thread_locals: frozenset[str]
    count: int = 0

    def stmt(self, s: Any) -> Any:
        if isinstance(s, _LOOPS):
            s = self._children(s)
            for name in sorted(_accessed(s, self.shared)):
                s = self._privatise(s, name)
            return s
        return self._children(s)

    def _children(self, s: Any) -> Any:
        if isinstance(s, A.Block):
            body = _forward_stores(tuple(self.stmt(x) for x in s.body))
            same = len(body) == len(s.body) and all(a is b for a, b in zip(body, s.body))
            return s if same else dataclasses.replace(s, body=body)
        changes = {}
        for f in ("then", "else_", "body"):
            old = getattr(s, f, None)
            if isinstance(old, A.Stmt):
                new = self.stmt(old)
                if new is not old:
                    changes[f] = new
        if isinstance(s, A.Switch):
            cases = tuple(
                dataclasses.replace(c, body=tuple(self.stmt(x) for x in c.body)) for c in s.cases
            )
            changes["cases"] = cases
        return dataclasses.replace(s, **changes) if changes else s

    def _privatise(self, loop: Any, name: str) -> Any:
        """``loop`` with ``name``'s element held in a register, or ``loop`` unchanged when the
        rewrite does not apply (see the module docstring)."""
        if isinstance(loop, A.Block):  # already wrapped for another array: the loop is inside
            inner = loop.body[1]
            new = self._privatise(inner, name)
            if new is inner:
                return loop
            return dataclasses.replace(loop, body=(loop.body[0], new, *loop.body[2:]))
        accesses = _element_accesses(loop, name, _rank(self.shared[name]))
        if not accesses:
            return loop
        keys = {_key(ix) for _, ix in accesses}
        if len(keys) != 1 or not _safe_loop(loop, name):
            return loop
        index = accesses[0][1]
        assigned = _assigned(loop)
        if not all(_invariant(e, assigned) for e in index):
            return loop
        if not any(_mentions_thread(e, self.thread_locals) for e in index):
            return loop
        self.count += 1
        reg = f"__c2n_priv{self.count}_{name}"
        elem = self.shared[name]
        while isinstance(elem, A.ArrayType):
            elem = elem.elem
        first = accesses[0][0]
        loc = loop.loc
        ref = A.Name(name=reg, ty=first.ty or elem, loc=loc)
        targets = {id(node) for node, _ in accesses}
        body = _replace(loop, targets, ref)
        load = A.VarDecl(name=reg, ty=elem, init=first, loc=loc)
        store = A.ExprStmt(
            expr=A.Assign(op="=", target=first, value=ref, ty=first.ty, loc=loc), loc=loc
        )
        return A.Block(body=(load, body, store), loc=loc)


def _forward_stores(body: tuple[Any, ...]) -> tuple[Any, ...]:
    """A store ``s[E] = v;`` before a privatised loop of ``s[E]`` declares the register instead
    (``T reg = v;`` in its place), when the statements in between neither name ``s`` nor hold a
    barrier: the loop's write-back overwrites the element, and no other thread may read it
    before that, so the store is dead."""
    out: list[Any] = list(body)
    for k, st in enumerate(body):
        if not _is_private(st):
            continue
        load = st.body[0]
        array = _chain(load.init)[0].name
        for m in range(k - 1, -1, -1):
            prev = out[m]
            if _is_store_to(prev, load.init):
                out[m] = dataclasses.replace(load, init=prev.expr.value, loc=prev.loc)
                out[k] = dataclasses.replace(st, body=st.body[1:])
                break
            if _names(prev, array) or not _safe_loop(prev, array):
                break
    return tuple(out)


def _is_store_to(st: Any, element: A.Index) -> bool:
    return (
        isinstance(st, A.ExprStmt)
        and isinstance(st.expr, A.Assign)
        and st.expr.op == "="
        and isinstance(st.expr.target, A.Index)
        and _strip(st.expr.target) == _strip(element)
    )


def _names(node: Any, name: str) -> bool:
    return any(isinstance(n, A.Name) and n.name == name for n in walk(node))


def _is_private(st: Any) -> bool:
    return (
        isinstance(st, A.Block)
        and len(st.body) == 3
        and isinstance(st.body[0], A.VarDecl)
        and st.body[0].name.startswith("__c2n_priv")
    )


# --------------------------------------------------------------------------- analysis


def _rank(t: Any) -> int:
    """How many indices select one element of a (possibly nested) array type."""
    n = 0
    while isinstance(t, A.ArrayType):
        n += max(1, len(t.dims))
        t = t.elem
    return n


def _shared_arrays(body: Any) -> dict[str, A.ArrayType]:
    return {
        n.name: n.ty
        for n in walk(body)
        if isinstance(n, A.VarDecl)
        and n.storage in ("shared", "extern_shared")
        and isinstance(n.ty, A.ArrayType)
    }


def _thread_locals(body: Any) -> frozenset[str]:
    """Locals whose initialiser reads the thread index (directly or through such a local)."""
    decls = [n for n in walk(body) if isinstance(n, A.VarDecl) and n.init is not None]
    found: set[str] = set()
    grew = True
    while grew:
        grew = False
        for d in decls:
            if d.name not in found and _mentions_thread(d.init, frozenset(found)):
                found.add(d.name)
                grew = True
    return frozenset(found)


def _mentions_thread(e: Any, locals_: frozenset[str]) -> bool:
    return any(
        (isinstance(n, A.Builtin) and n.name == "threadIdx")
        or (isinstance(n, A.Name) and n.name in locals_)
        for n in walk(e)
    )


def _chain(e: A.Index) -> tuple[Any, list[Any]]:
    """The root of an index chain ``a[i][j]`` and its indices, outermost first."""
    idx = []
    while isinstance(e, A.Index):
        idx.append(e.index)
        e = e.base
    return e, idx[::-1]


def _accessed(loop: Any, shared: dict[str, A.ArrayType]) -> set[str]:
    return {n.name for n in walk(loop) if isinstance(n, A.Name) and n.name in shared}


def _element_accesses(loop: Any, name: str, rank: int) -> list[tuple[A.Index, list[Any]]]:
    """Every access of ``name`` in ``loop`` as (node, indices); empty when one of them is not
    a complete element access (a row of a 2-D array, the array as a pointer) or nests
    another access of the array in its index."""
    out: list[tuple[A.Index, list[Any]]] = []
    outer: set[int] = set()  # Index nodes that are bases of an enclosing one
    names = 0
    for n in walk(loop):
        if isinstance(n, A.Name) and n.name == name:
            names += 1
        if not isinstance(n, A.Index) or id(n) in outer:
            continue
        root, idx = _chain(n)
        if not (isinstance(root, A.Name) and root.name == name):
            continue
        b = n.base
        while isinstance(b, A.Index):
            outer.add(id(b))
            b = b.base
        if len(idx) != rank:
            return []
        out.append((n, idx))
    if names != len(out):  # the array used other than as an element (a pointer, an address)
        return []
    for _, idx in out:
        if any(isinstance(m, A.Name) and m.name == name for e in idx for m in walk(e)):
            return []
    return out


def _safe_loop(loop: Any, name: str) -> bool:
    for n in walk(loop):
        if isinstance(n, A.Return):
            return False
        if isinstance(n, A.Call) and (n.func in _BARRIERS or n.func.startswith("__sync")):
            return False
        if isinstance(n, A.Unary) and n.op == "&":
            if any(isinstance(m, A.Name) and m.name == name for m in walk(n.operand)):
                return False
    return True


def _assigned(loop: Any) -> set[str]:
    out: set[str] = set()
    for n in walk(loop):
        if isinstance(n, A.VarDecl):
            out.add(n.name)
        elif isinstance(n, A.Assign) and isinstance(n.target, A.Name):
            out.add(n.target.name)
        elif isinstance(n, A.Unary) and n.op in ("pre++", "pre--", "post++", "post--"):
            if isinstance(n.operand, A.Name):
                out.add(n.operand.name)
    return out


def _invariant(e: Any, assigned: set[str]) -> bool:
    for n in walk(e):
        if isinstance(n, A.Name):
            if n.name in assigned:
                return False
        elif isinstance(n, A.Unary):
            if n.op not in _PURE_UNARY:
                return False
        elif not isinstance(n, A.Builtin | A.IntLit | A.Binary | A.Cast):
            return False
    return True


def _key(idx: list[Any]) -> Any:
    return tuple(_strip(e) for e in idx)


def _strip(n: Any) -> Any:
    """A location-free, hashable form of an expression (for comparing index expressions)."""
    if isinstance(n, tuple):
        return tuple(_strip(x) for x in n)
    if not isinstance(n, A.Node):
        return n if isinstance(n, str | int | float | bool | type(None)) else repr(n)
    return (
        type(n).__name__,
        tuple(
            (f.name, _strip(getattr(n, f.name)))
            for f in dataclasses.fields(n)
            if f.name not in ("loc", "ty")
        ),
    )


def _replace(node: Any, targets: set[int], ref: A.Name) -> Any:
    """``node`` with every node whose id is in ``targets`` replaced by ``ref``."""
    if isinstance(node, tuple):
        items = tuple(_replace(x, targets, ref) for x in node)
        return node if all(a is b for a, b in zip(items, node)) else items
    if not isinstance(node, A.Node):
        return node
    if id(node) in targets:
        return ref
    changes = {}
    for f in dataclasses.fields(node):
        if f.name in ("loc", "ty"):
            continue
        old = getattr(node, f.name)
        if isinstance(old, A.Node | tuple):
            new = _replace(old, targets, ref)
            if new is not old:
                changes[f.name] = new
    return dataclasses.replace(node, **changes) if changes else node
