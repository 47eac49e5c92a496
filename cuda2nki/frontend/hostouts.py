"""Host values written through a pointer by a call: ``scanf("%d", &n)``, ``fread(&n, ...)``,
``read_header(path, &rows, &cols)``, ``cudaDeviceGetAttribute(&sms, ...)``, and through a C++
reference parameter of a function of the file (``launch_size(n, blocks, threads)``, see
:mod:`cuda2nki.frontend.hostrefs`).

:mod:`cuda2nki.frontend.hostvals` asks :func:`output_call` for the call that writes a local
(declared without a value, or with a placeholder such as ``0``) through ``&name`` before the
launch.  What the call writes is known at run time only, except for the device queries, which
take the properties of the nominal small GPU of ``hostvals.NOMINAL_DEVICE``:

* ``cudaDeviceGetAttribute(&v, cudaDevAttrX, dev)``: property ``X``;
* ``cudaOccupancyMaxActiveBlocksPerMultiprocessor(&v, kernel, threads, smem)``: as many blocks
  of ``threads`` as fill one multiprocessor;
* ``cudaGetDeviceCount(&v)``: one device.

Any other call (a file or console read, a helper that parses a header...) gives a default: the
integer or floating default of a size read from the command line (:mod:`cmdline`), with a note
naming the call.  Sizes need no exact value (check chooses its own shape points); a non-size
scalar read this way is best set in the binding, which the note says.
"""

from __future__ import annotations

from dataclasses import dataclass

import tree_sitter as ts

from cuda2nki.frontend.cst import COMMENT_IDS

#: ``cudaDeviceGetAttribute`` attributes and the ``cudaDeviceProp`` field each one reads
DEVICE_ATTRIBUTES = {
    "cudaDevAttrMultiProcessorCount": "multiProcessorCount",
    "cudaDevAttrMaxThreadsPerMultiProcessor": "maxThreadsPerMultiProcessor",
    "cudaDevAttrMaxBlocksPerMultiprocessor": "maxBlocksPerMultiProcessor",
    "cudaDevAttrMaxThreadsPerBlock": "maxThreadsPerBlock",
    "cudaDevAttrWarpSize": "warpSize",
    "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT": "multiProcessorCount",
    "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR": "maxThreadsPerMultiProcessor",
    "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK": "maxThreadsPerBlock",
    "CU_DEVICE_ATTRIBUTE_WARP_SIZE": "warpSize",
}
#: occupancy queries that write the number of resident blocks per multiprocessor first
ACTIVE_BLOCKS_CALLS = frozenset(
    {
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
        "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
        "cuOccupancyMaxActiveBlocksPerMultiprocessor",
    }
)
DEVICE_COUNT_CALLS = frozenset({"cudaGetDeviceCount", "cuDeviceGetCount"})
#: calls that take ``&x`` without writing a value into it that a launch could use
_NOT_WRITERS = frozenset(
    "cudaMalloc cudaMallocManaged cudaMallocHost cudaHostAlloc cudaMallocPitch cudaFree "
    "cudaEventCreate cudaStreamCreate cudaStreamCreateWithFlags cudaStreamCreateWithPriority "
    "cudaEventRecord cudaMemcpy cudaMemcpyAsync cudaMemset printf fprintf memset "
    "cudaMemcpyToSymbol cudaGetSymbolAddress".split()
)


@dataclass(frozen=True)
class OutputCall:
    """A call that writes a host variable through ``&name``: the call, the callee's name, the
    position of ``&name`` among its arguments, and its arguments."""

    call: ts.Node
    callee: str
    position: int
    args: tuple[ts.Node, ...]


def _kids(n: ts.Node) -> list[ts.Node]:
    return [c for c in n.named_children if c.kind_id not in COMMENT_IDS]


def _txt(n: ts.Node | None) -> str:
    return "" if n is None else "".join((n.text or b"").decode("utf-8", "replace").split())


def _callee(call: ts.Node) -> str:
    f = call.child_by_field_name("function")
    if f is None:
        return ""
    if f.type == "field_expression":
        f = f.child_by_field_name("field")
    return _txt(f).split("::")[-1].split("<")[0]


def _strip(n: ts.Node | None) -> ts.Node | None:
    """``n`` without the casts and parentheses around it."""
    while n is not None and n.type in ("cast_expression", "parenthesized_expression"):
        if n.type == "cast_expression":
            n = n.child_by_field_name("value")
            continue
        kids = _kids(n)
        n = kids[0] if len(kids) == 1 else None
    return n


def _address_of(arg: ts.Node, name: str) -> bool:
    """``&name`` (cast or parenthesised: ``(void*)&name``, ``&(name)``)."""
    arg = _strip(arg)
    if arg is None or arg.type != "pointer_expression":
        return False
    if _txt(arg.child_by_field_name("operator")) != "&":
        return False
    target = _strip(arg.child_by_field_name("argument"))
    return target is not None and target.type == "identifier" and _txt(target) == name


def _by_reference(call: ts.Node, callee: str, i: int, arg: ts.Node, name: str) -> bool:
    """``name`` passed as argument ``i`` that ``callee`` takes by reference
    (:mod:`cuda2nki.frontend.hostrefs`)."""
    from cuda2nki.frontend.hostrefs import reference_positions

    arg = _strip(arg)
    if arg is None or arg.type != "identifier" or _txt(arg) != name:
        return False
    return i in reference_positions(call, callee)


def output_call(fn: ts.Node, name: str, after: int, before: int) -> OutputCall | None:
    """The first call in ``fn`` between bytes ``after`` and ``before`` that is passed ``&name``
    (and may write it), else None."""
    best: OutputCall | None = None
    stack = [fn.child_by_field_name("body")]
    while stack:
        n = stack.pop()
        if n is None or n.end_byte <= after or n.start_byte >= before:
            continue
        if n.type == "call_expression" and (best is None or n.start_byte < best.call.start_byte):
            callee = _callee(n)
            argn = n.child_by_field_name("arguments")
            items = tuple(_kids(argn)) if argn is not None else ()
            if callee not in _NOT_WRITERS:
                for i, a in enumerate(items):
                    if _address_of(a, name) or _by_reference(n, callee, i, a, name):
                        best = OutputCall(n, callee, i, items)
                        break
        stack.extend(n.children)
    return best


def device_attribute(out: OutputCall) -> str | None:
    """The ``cudaDeviceProp`` field a ``cudaDeviceGetAttribute(&v, ATTR, dev)`` reads."""
    if out.callee not in ("cudaDeviceGetAttribute", "cuDeviceGetAttribute") or out.position:
        return None
    if len(out.args) < 2:
        return None
    return DEVICE_ATTRIBUTES.get(_txt(out.args[1]).split("::")[-1])
