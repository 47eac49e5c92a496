"""Which CUDA block and thread wrote each output element: mapping port divergence back to CUDA.

The kernel's AST is rewritten so that every plain store to an output pointer (``out[i] = v`` and
vector-lane stores through it) stores the writer's linear block id -- or, in a second run, its
linear thread id within the block -- instead of ``v``; the rewritten kernel runs in the SIMT
interpreter on the same inputs (so guards and control flow are the original's).  Elements no
thread writes stay at -1.  A compound assignment (``y[j] /= s``) is one thread's read-modify-write, so its thread is the
element's writer too; atomics accumulate from many threads and have no single writer: a kernel
that writes an output that way gets no mapping.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from cuda2nki.frontend import ast as A

_I32 = A.ScalarType(name="int32")


def _linear(kind: str, loc: Any) -> A.Expr:
    """``x + dim.x * (y + dim.y * z)`` over blockIdx/gridDim or threadIdx/blockDim."""
    idx, dim = ("blockIdx", "gridDim") if kind == "block" else ("threadIdx", "blockDim")

    def b(name: str, d: str) -> A.Expr:
        return A.Builtin(loc=loc, ty=A.ScalarType(name="uint32"), name=name, dim=d)  # type: ignore[arg-type]

    def mul(x: A.Expr, y: A.Expr) -> A.Expr:
        return A.Binary(loc=loc, ty=A.ScalarType(name="uint32"), op="*", left=x, right=y)

    def add(x: A.Expr, y: A.Expr) -> A.Expr:
        return A.Binary(loc=loc, ty=A.ScalarType(name="uint32"), op="+", left=x, right=y)

    inner = add(b(idx, "y"), mul(b(dim, "y"), b(idx, "z")))
    return add(b(idx, "x"), mul(b(dim, "x"), inner))


def _is_element(target: A.Expr) -> bool:
    """``p[i]``, ``*p`` or a lane of them (``p[i].x``): a store to memory.  A bare name is a
    variable (a pointer moved on, or an unrelated local that shares an alias's name)."""
    while isinstance(target, A.Member):
        target = target.base
    return isinstance(target, A.Index) or (isinstance(target, A.Unary) and target.op == "*")


def _root_name(e: A.Expr) -> str | None:
    while isinstance(e, A.Index | A.Member | A.Cast | A.Unary):
        e = e.base if isinstance(e, A.Index | A.Member) else e.operand
    return e.name if isinstance(e, A.Name) else None


class _Rewriter:
    def __init__(self, outputs: set[str], kind: str):
        self.outputs, self.kind = outputs, kind
        self.unsupported = False

    def visit(self, node: Any) -> Any:
        if isinstance(node, tuple):
            return tuple(self.visit(n) for n in node)
        if (
            isinstance(node, A.Assign)
            and _is_element(node.target)
            and _root_name(node.target) in self.outputs
        ):
            # a compound assignment (y[j] /= sum) is a read-modify-write by one thread: the
            # thread doing it is the element's last writer, as for a plain store
            ty = node.target.ty if node.target.ty is not None else _I32
            value = A.Cast(loc=node.loc, ty=ty, to=ty, operand=_linear(self.kind, node.loc))
            return dataclasses.replace(node, op="=", value=value)
        if isinstance(node, A.Call) and node.func.startswith("atomic") and node.args:
            if _root_name(node.args[0]) in self.outputs:
                self.unsupported = True
        if isinstance(node, A.Node):
            changes = {}
            for f in dataclasses.fields(node):
                if f.name in ("loc", "ty"):
                    continue
                old = getattr(node, f.name)
                if isinstance(old, A.Node | tuple):
                    new = self.visit(old)
                    if new is not old:
                        changes[f.name] = new
            return dataclasses.replace(node, **changes) if changes else node
        return node


def _names(node: Any, acc: set[str]) -> set[str]:
    if isinstance(node, A.Name):
        acc.add(node.name)
    elif isinstance(node, tuple):
        for n in node:
            _names(n, acc)
    elif isinstance(node, A.Node):
        for f in dataclasses.fields(node):
            if f.name not in ("loc", "ty"):
                _names(getattr(node, f.name), acc)
    return acc


def _pointer_decls(node: Any, acc: list[A.VarDecl]) -> list[A.VarDecl]:
    if isinstance(node, A.VarDecl) and isinstance(node.ty, A.PointerType) and node.init is not None:
        acc.append(node)
    if isinstance(node, tuple):
        for n in node:
            _pointer_decls(n, acc)
    elif isinstance(node, A.Node):
        for f in dataclasses.fields(node):
            if f.name not in ("loc", "ty"):
                _pointer_decls(getattr(node, f.name), acc)
    return acc


def _aliases(fn: A.Function, outputs: set[str]) -> set[str]:
    """Output parameters plus local pointers derived from them (``float* y = out + r * C``)."""
    names = set(outputs)
    decls = _pointer_decls(fn.body, [])
    changed = True
    while changed:
        changed = False
        for d in decls:
            if d.name not in names and _names(d.init, set()) & names:
                names.add(d.name)
                changed = True
    return names


def store_locations(tu: Any, kernel: str, output: str) -> list[Any]:
    """Where the CUDA kernel stores to ``output`` (directly, or through a local pointer derived
    from it), in source order; the kernel's own line when no store is found (the writes happen
    in a ``__device__`` function, or through atomics)."""
    from cuda2nki.frontend.visit import walk

    fn = tu.function(kernel)
    if fn is None:
        return []
    names = _aliases(fn, {output})
    locs = []
    for node in walk(fn.body):
        stored = isinstance(node, A.Assign) and _is_element(node.target)
        if stored and _root_name(node.target) in names:
            locs.append(node.loc)
        elif isinstance(node, A.Call) and node.func.startswith("atomic") and node.args:
            if _root_name(node.args[0]) in names:
                locs.append(node.loc)
    return sorted(set(locs)) or [fn.loc]


def writer_maps(
    tu: A.TranslationUnit,
    name: str,
    resolved: Any,
    arrays: dict[str, np.ndarray],
    outputs: list[str],
) -> dict[str, tuple[np.ndarray, np.ndarray]] | None:
    """Per output: (block id, thread id) of the thread that last wrote each element, -1 where none.
    None when the kernel's stores cannot be attributed to single writers."""
    from cuda2nki import simt
    from cuda2nki.diagnostics import DiagnosticError

    if any(not _holds_marker(arrays[o].dtype) for o in outputs if o in arrays):
        return None  # an unsigned output cannot hold the -1 of "no writer"
    maps: dict[str, list[np.ndarray]] = {o: [] for o in outputs}
    for kind in ("block", "thread"):
        fn = tu.function(name)
        if fn is None:
            return None
        rw = _Rewriter(_aliases(fn, set(outputs)), kind)
        functions = tuple(rw.visit(f) if f.name == name else f for f in tu.functions)
        if rw.unsupported:
            return None
        args: dict[str, Any] = {**resolved.scalars}
        for k, v in arrays.items():
            args[k] = np.full(v.shape, -1, dtype=v.dtype) if k in outputs else v.copy()
        try:
            out = simt.run_kernel(
                dataclasses.replace(tu, functions=functions),
                name,
                grid=resolved.grid,
                block=resolved.block,
                shared_bytes=resolved.shared_bytes,
                args=args,
            )
        except (DiagnosticError, TypeError, ValueError, KeyError):
            return None
        for o in outputs:
            maps[o].append(np.asarray(out[o]).astype(np.float64).reshape(resolved.shapes[o]))
    return {o: (m[0], m[1]) for o, m in maps.items()}


def _holds_marker(dtype: np.dtype) -> bool:
    """Whether an output of ``dtype`` can hold -1 and the block and thread ids."""
    return bool(np.issubdtype(dtype, np.floating) or np.issubdtype(dtype, np.signedinteger))


def describe(
    blocks: np.ndarray, threads: np.ndarray, bad: np.ndarray, grid: tuple[int, int, int]
) -> str:
    """'CUDA blocks (x, y, z) ... and threads ...' for the mismatching elements."""
    sel_b = blocks[bad]
    sel_t = threads[bad]
    sel_b = sel_b[sel_b >= 0].astype(np.int64)
    sel_t = sel_t[sel_t >= 0].astype(np.int64)
    if not sel_b.size:
        return "no CUDA thread writes the mismatching elements"
    ub = np.unique(sel_b)
    gx, gy = grid[0], grid[1]
    coords = [f"({b % gx}, {b // gx % gy}, {b // (gx * gy)})" for b in ub[:6]]
    more = f" and {ub.size - 6} more" if ub.size > 6 else ""
    return (
        f"written by CUDA block{'s' if ub.size > 1 else ''} {', '.join(coords)}{more} "
        f"(threads {int(sel_t.min())}..{int(sel_t.max())} of their blocks)"
    )
