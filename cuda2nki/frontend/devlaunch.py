"""Dynamic parallelism: kernel launches and device-runtime calls in device code.

``child<<<grid, block, smem, stream>>>(args)`` inside a kernel lowers to an
:class:`~cuda2nki.frontend.ast.Launch` expression.  The device runtime's calls keep their names
(``Call``, ``int32`` result: a ``cudaError_t``) and its handle types are ``void*``
(:data:`DEVICE_RUNTIME_TYPES`).  The SIMT interpreter runs each child grid where it is launched
(:mod:`cuda2nki.simt.devlaunch`); the lifter refuses kernels that launch kernels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.cst import COMMENT_IDS, F
from cuda2nki.frontend.dim3 import dim3_call
from cuda2nki.frontend.typesys import INT, VOID

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer

#: handle types of the device runtime
DEVICE_RUNTIME_TYPES: dict[str, A.CType] = {
    "cudaStream_t": A.PointerType(pointee=A.ScalarType(name="void")),
    "cudaEvent_t": A.PointerType(pointee=A.ScalarType(name="void")),
    "cudaError_t": A.ScalarType(name="int32"),
    # a CUDA graph's conditional node (driver_types.h: `typedef unsigned long long ...`)
    "cudaGraphConditionalHandle": A.ScalarType(name="uint64"),
}
DIM3 = A.VectorType(name="uint3", base=A.ScalarType(name="uint32"), width=3)
#: device-runtime functions (``cudaError_t`` results) and their arities
DEVICE_RUNTIME_CALLS: dict[str, tuple[int, ...]] = {
    "cudaDeviceSynchronize": (0,),
    "cudaGetLastError": (0,),
    "cudaPeekAtLastError": (0,),
    "cudaMalloc": (2,),
    "cudaFree": (1,),
    "cudaStreamCreateWithFlags": (2,),
    "cudaStreamDestroy": (1,),
    "cudaEventCreateWithFlags": (2,),
    "cudaEventRecord": (1, 2),
    "cudaEventDestroy": (1,),
    "cudaStreamWaitEvent": (2, 3),
}


def device_launch(low: BodyLowerer, node: ts.Node, ks: ts.Node, fn: ts.Node) -> A.Expr:
    """The :class:`Launch` of ``fn<<<cfg>>>(args)`` written in device code."""
    cfg = [c for c in ks.named_children if c.kind_id not in COMMENT_IDS]
    if not 2 <= len(cfg) <= 4:
        raise low.fail("C2N1014", node, kernel=_name(low, fn))
    parts = [_config(low, c) for c in cfg]
    args_node = node.child_by_field_id(F.arguments)
    arg_nodes = (
        [c for c in args_node.named_children if c.kind_id not in COMMENT_IDS] if args_node else []
    )
    args = tuple([low.expr(a) for a in arg_nodes])
    return N.Launch(
        loc=low.loc(node),
        kernel=_name(low, fn),
        grid=parts[0],
        block=parts[1],
        shared_bytes=parts[2] if len(parts) > 2 else None,
        stream=parts[3] if len(parts) > 3 else None,
        args=args,
        ty=VOID,
    )


def _config(low: BodyLowerer, node: ts.Node) -> A.Expr:
    """A launch configuration value; ``dim3(x[, y[, z]])`` is a ``make_uint3`` (missing axes 1)."""
    if node.type == "call_expression":
        fn = node.child_by_field_id(F.function)
        if fn is not None and low.text(fn) == "dim3":
            return dim3_call(low, node)
    return low.expr(node)


def _name(low: BodyLowerer, fn: ts.Node | None) -> str:
    if fn is None:
        return ""
    return low.text(fn).replace(" ", "").split("::")[-1]


def runtime_call(low: BodyLowerer, node: ts.Node, short: str, arg_nodes: list[ts.Node]) -> A.Expr:
    """``cudaDeviceSynchronize()`` and the other device-runtime calls: a ``Call`` by name."""
    arity = DEVICE_RUNTIME_CALLS[short]
    if len(arg_nodes) not in arity:
        raise low.fail("C2N1028", node, name=short, got=len(arg_nodes), expected=arity[0])
    args = tuple([low.expr(a) for a in arg_nodes])
    return N.Call(loc=low.loc(node), func=short, args=args, ty=INT)
