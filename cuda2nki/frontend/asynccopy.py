"""Asynchronous copies to shared memory and the objects that order them.

``cuda::memcpy_async(dst, src, size, pipe_or_barrier)`` and ``__pipeline_memcpy_async(dst, src,
size)`` start a copy that completes by the matching wait.  Completing it at once is one of the
executions the program allows (a correct kernel never reads the destination, nor writes the
source, between the copy and its wait), so the front end lowers the copy to a plain copy: an
assignment of the copied type when ``size`` is a constant that matches the destination's
element or a short vector of it (``sizeof(float4)`` into a ``float*``), else ``__c2n_memcpy``.

The objects that order the copies become what they mean for a block of threads:

* ``cuda::pipeline<cuda::thread_scope_thread>`` (``cuda::make_pipeline()``): a thread waits for
  its own copies only, which are complete already: ``producer_acquire``, ``producer_commit``,
  ``consumer_wait``, ``consumer_release`` and ``cuda::pipeline_consumer_wait_prior<N>`` do
  nothing; ``__pipeline_commit`` / ``__pipeline_wait_prior`` likewise.  A pipeline shared by a
  group (``cuda::make_pipeline(group, &shared_state, role)``), whose consumers wait for other
  threads' copies, is refused (C2N1018).
* ``cuda::barrier<cuda::thread_scope_block>`` initialised for the whole block: ``init`` does
  nothing, ``bar.arrive_and_wait()`` and ``bar.wait(token)`` are ``__syncthreads()``,
  ``bar.arrive()`` gives a token that ``wait`` takes.
* ``cg::block_tile_memory<N>`` is scratch space the runtime uses for large tiles; nothing reads
  it.
* A copy made by a group (``cg::memcpy_async(group, dst, src, n)``,
  ``cuda::memcpy_async(group, dst, src, n, bar)``) is made whole by each of its threads (the
  same bytes), and ``cg::wait(group)`` / ``cg::wait_prior<N>(group)`` is the group's barrier.

These objects are typed as one-word vectors named after them (so that pointers, references and
copies of them work as for any value), and ``cuda::aligned_size_t<A>(n)`` is the size ``n``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.lowerbase import Sym, _text
from cuda2nki.frontend.typesys import INT, LONG, ULONG, VECTOR_TYPES, VOID, sizeof, unqualified

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer

    _Base = BodyLowerer
else:
    _Base = object

PIPELINE = A.VectorType(name="cuda::pipeline", base=INT, width=1, align=4)
BARRIER = A.VectorType(name="cuda::barrier", base=LONG, width=1, align=8)
TILE_MEMORY = A.VectorType(name="cg::block_tile_memory", base=INT, width=1, align=4)
SYNC_OBJECTS = {
    "pipeline": PIPELINE,
    "pipeline_shared_state": PIPELINE,
    "barrier": BARRIER,
    "block_tile_memory": TILE_MEMORY,
}
_NAMESPACES = ("cuda", "std", "cg", "cooperative_groups", "experimental")

ASYNC_CALLS = frozenset(
    "memcpy_async __pipeline_memcpy_async __pipeline_commit __pipeline_wait_prior make_pipeline "
    "pipeline_consumer_wait_prior pipeline_producer_commit".split()
)
NO_OP_METHODS = frozenset(
    "producer_acquire producer_commit consumer_wait consumer_wait_for consumer_release quit "
    "arrive_and_drop".split()
)
BARRIER_METHODS = frozenset("arrive_and_wait wait".split())
SYNC_METHODS = NO_OP_METHODS | BARRIER_METHODS | {"arrive"}


def sync_object_type(text: str) -> A.VectorType | None:
    """The type a spelling such as ``cuda::barrier<cuda::thread_scope_block>`` names, or
    ``ULONG`` for ``cuda::aligned_size_t<16>``; else None."""
    head = text.replace(" ", "").split("<")[0]
    parts = head.split("::")
    if len(parts) < 2 or parts[-2] not in _NAMESPACES:
        return None
    if parts[-1] == "aligned_size_t":
        return ULONG  # type: ignore[return-value]
    return SYNC_OBJECTS.get(parts[-1])


def is_sync_object(t: A.CType | None) -> bool:
    t = unqualified(t)
    if isinstance(t, A.PointerType):
        t = unqualified(t.pointee)
    return isinstance(t, A.VectorType) and t in (PIPELINE, BARRIER, TILE_MEMORY)


def _const_bytes(e: A.Expr) -> int | None:
    while isinstance(e, A.Cast):
        e = e.operand
    if isinstance(e, A.IntLit):
        return e.value
    if isinstance(e, A.SizeOf):
        return sizeof(e.of)
    return None


class AsyncCopyLowering(_Base):
    def _sync_type(self, type_node: ts.Node) -> A.CType | None:
        if type_node.type not in ("qualified_identifier", "template_type"):
            return None
        t = sync_object_type(_text(type_node))
        if t is PIPELINE and "pipeline_shared_state" in _text(type_node):
            self.error("C2N1018", type_node, what="cuda::pipeline_shared_state (shared by a group)")
        return t

    def _noop(self, node: ts.Node) -> A.Expr:
        return N.IntLit(loc=(node.byte_range, self.placer), value=0, ty=INT)

    def _barrier(self, node: ts.Node) -> A.Expr:
        return N.Call(loc=(node.byte_range, self.placer), func="__syncthreads", args=(), ty=VOID)

    def async_call(self, node: ts.Node, short: str, arg_nodes: list[ts.Node]) -> A.Expr:
        """``cuda::memcpy_async``, ``__pipeline_memcpy_async``, ``cuda::make_pipeline`` and the
        pipeline's free functions."""
        loc = (node.byte_range, self.placer)
        if short == "make_pipeline":
            if arg_nodes:
                raise self.fail("C2N1018", node, what="cuda::make_pipeline shared by a group")
            return N.Call(
                loc=loc, func="make_cuda::pipeline", args=(self._noop(node),), ty=PIPELINE
            )
        if short in ("memcpy_async", "__pipeline_memcpy_async"):
            if short == "memcpy_async" and len(arg_nodes) == 5 and self._is_group_arg(arg_nodes[0]):
                self._cg_value(arg_nodes[0])  # a copy by a group: each thread copies it all
                arg_nodes = arg_nodes[1:]
            want = 4 if short == "memcpy_async" else (3, 4)
            if len(arg_nodes) not in ((want,) if isinstance(want, int) else want):
                what = f"{short} with {len(arg_nodes)} arguments"
                raise self.fail("C2N1018", node, what=what)
            dst, src, size = (self.expr(a) for a in arg_nodes[:3])
            if short == "memcpy_async":
                sync = self.expr(arg_nodes[3])
                if not is_sync_object(sync.ty):
                    raise self.fail("C2N1018", node, what="cuda::memcpy_async without a pipeline")
            return self._copy(node, dst, src, size)
        for a in arg_nodes:  # evaluated for their diagnostics; nothing to wait for
            self.expr(a)
        return self._noop(node)

    def _copy(self, node: ts.Node, dst: A.Expr, src: A.Expr, size: A.Expr) -> A.Expr:
        """``size`` bytes from ``src`` to ``dst``, now."""
        loc = (node.byte_range, self.placer)
        dst, src = _as_pointer(dst, loc), _as_pointer(src, loc)
        dt, st = unqualified(dst.ty), unqualified(src.ty)
        if not isinstance(dt, A.PointerType) or not isinstance(st, A.PointerType):
            raise self.fail("C2N1030", node, what="an asynchronous copy between non-pointers")
        elem = unqualified(dt.pointee)
        n = _const_bytes(size)
        if n is None and isinstance(size, A.Name):  # `const auto shape = aligned_size_t<16>(16)`
            sym = self.lookup(size.name)
            n = sym.const if sym is not None and isinstance(sym.const, int) else None
        copied = _copied_type(elem, n)
        if copied is not None and copied == elem and unqualified(st.pointee) == elem:
            target = N.Unary(loc=loc, op="*", operand=dst, ty=copied)  # `*dst = *src`
            value = N.Unary(loc=loc, op="*", operand=src, ty=copied)
            return N.Assign(loc=loc, op="=", target=target, value=value, ty=copied)
        if copied is not None:
            to = A.PointerType(pointee=copied)
            src_to = A.PointerType(pointee=replace(copied, const=True))
            target = N.Unary(
                loc=loc,
                op="*",
                operand=N.Cast(loc=loc, to=to, operand=dst, kind="reinterpret", ty=to),
                ty=copied,
            )
            value = N.Unary(
                loc=loc,
                op="*",
                operand=N.Cast(loc=loc, to=src_to, operand=src, kind="reinterpret", ty=src_to),
                ty=copied,
            )
            return N.Assign(loc=loc, op="=", target=target, value=value, ty=copied)
        return N.Call(loc=loc, func="__c2n_memcpy", args=(dst, src, size), ty=VOID)

    def group_copy_call(self, node: ts.Node, short: str, arg_nodes: list[ts.Node]) -> A.Expr:
        """``cg::memcpy_async(group, dst, src, bytes)`` and ``cg::wait(group)`` /
        ``cg::wait_prior<N>(group)``: every thread of the group makes the whole copy (the same
        bytes the group copies between them), and the wait is the group's barrier, after which
        every thread sees every byte."""
        if not arg_nodes or not self._is_group_arg(arg_nodes[0]):
            raise self.fail("C2N1018", node, what=f"cg::{short} without a group")
        k, n = self._cg_value(arg_nodes[0])
        if short != "memcpy_async":
            return self._cg_method(Sym(None, cg=k, tile=n), "sync", [], node)
        if len(arg_nodes) != 4:
            raise self.fail(
                "C2N1018", node, what=f"cg::memcpy_async with {len(arg_nodes)} arguments"
            )
        dst, src, size = (self.expr(a) for a in arg_nodes[1:])
        return self._copy(node, dst, src, size)

    def is_barrier_init(self, args: list[A.Expr]) -> bool:
        """``init(&bar, count)`` of a ``cuda::barrier``."""
        return len(args) == 2 and is_sync_object(args[0].ty)

    def sync_method(
        self, node: ts.Node, obj: A.Expr, method: str, arg_nodes: list[ts.Node]
    ) -> A.Expr | None:
        """A method of a pipeline or barrier (None: ``obj`` is not one)."""
        if not is_sync_object(obj.ty) or method not in SYNC_METHODS:
            return None
        for a in arg_nodes:
            self.expr(a)
        if method in BARRIER_METHODS:
            return self._barrier(node)
        return self._noop(node)


def _as_pointer(e: A.Expr, loc) -> A.Expr:  # noqa: ANN001
    """An array argument (``stage``) as the pointer to its first scalar it decays to."""
    t = unqualified(e.ty)
    if not isinstance(t, A.ArrayType):
        return e
    elem = t.elem
    while isinstance(elem, A.ArrayType):
        elem = elem.elem
    to = A.PointerType(pointee=elem)
    return N.Cast(loc=loc, to=to, operand=e, kind="c", ty=to)


def _copied_type(elem: A.CType | None, n: int | None) -> A.CType | None:
    """The type one assignment copies ``n`` bytes as, into an array of ``elem``."""
    size = sizeof(elem)
    if n is None or not size or n % size:
        return None
    k = n // size
    if k == 1:
        return elem
    if isinstance(elem, A.ScalarType) and k in (2, 4):
        base = {"float32": "float", "float64": "double", "int32": "int", "uint32": "uint"}
        name = base.get(elem.name)
        if name is not None and f"{name}{k}" in VECTOR_TYPES:
            return VECTOR_TYPES[f"{name}{k}"]
    return None
