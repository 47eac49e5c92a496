"""Typed CUDA AST: what the front end produces and the SIMT interpreter and lifter consume.

Every node is a frozen dataclass with a :class:`SourceLoc` (``loc``) that points into the user's
original file (the preprocessor's line map is applied by the front end).  Fields are keyword-only so
that node construction is explicit.  Expressions carry their C type in ``ty`` once the front end has
resolved it (``None`` only where C gives no type, e.g. an initializer list).

Conventions
-----------
* Scalar type names are canonical: ``bool int8 uint8 int16 uint16 int32 uint32 int64 uint64
  float16 bfloat16 float32 float64``.  ``size_t`` is ``uint64``; ``half``/``__half`` is
  ``float16``; ``__nv_bfloat16`` is ``bfloat16``.
* ``threadIdx.x`` and friends are :class:`Builtin` (``name="threadIdx", dim="x"``); ``warpSize`` is
  ``Builtin(name="warpSize", dim="")``.
* Intrinsics, CUDA math and device functions are :class:`Call` by name; ``Call.target`` names the
  device function when the callee is user code (``None`` for intrinsics).  ``__syncthreads()`` is
  an :class:`ExprStmt` holding a ``Call``.  Cooperative-groups block/warp operations are lowered
  by the front end to the equivalent intrinsic calls (``__syncthreads``, ``__shfl_*_sync``...).
* ``a[i][j]`` on a 2-D array is ``Index(base=Index(base=Name(a), index=i), index=j)``.
* A declaration with several declarators becomes several consecutive :class:`VarDecl`.
* Template kernels: :class:`Function.template_params` lists the parameters; an instantiated kernel
  has them substituted and ``template_args`` records the values (in parameter order; a value
  parameter's value converted to its declared type, which its substituted literals carry:
  ``unsigned int N`` -> ``IntLit(ty=uint32)``, ``bool B`` -> ``BoolLit``).  A kernel instantiated
  once keeps its plain name; several instantiations of one kernel are several ``Function`` named
  ``name<args>`` like device instances (``reduce<128>``, ``scale<256, float32>``), and
  ``rejected`` uses the same names (see :mod:`cuda2nki.frontend.select`).
  An uninstantiated template keeps ``template_params`` and an empty ``template_args``; inside its
  body an ``int`` template parameter is a ``Name`` (``int32``) and a ``typename`` parameter is an
  :class:`OpaqueType` -- it cannot be executed until instantiated.
* Templated ``__device__`` functions are instantiated on demand at their call sites (explicit
  template arguments, or deduced from argument types); the instance is a ``Function`` named
  ``name<args>`` (e.g. ``warp_sum<float32>``, ``tile_load<16, float32>``) and the ``Call`` has
  ``func`` = the spelled name and ``target`` = the instance name.
* C++ references are lowered to pointers: a non-const ``T&`` parameter is a ``T*`` ``Param``
  (each use in the body is ``Unary('*', Name)``, and each call passes ``Unary('&', arg)``); a
  local ``T& r = lv;`` is ``VarDecl(r, T*, init=Unary('&', lv))`` read through ``*r``.  A
  ``const T&`` parameter (or a const reference bound to a temporary) is a plain copy.  The
  address taken may therefore be that of a local variable.
* Overloaded ``__device__`` functions (one name, several definitions) are named after their
  parameter types, ``twice(float32)`` / ``twice(float64)``; the ``Call`` keeps ``func`` = the
  spelled name and ``target`` = the chosen overload (same arity, most exact argument types).
* Cooperative groups (``namespace cg = cooperative_groups``) are erased: group objects are not
  variables (a ``thread_block``/``thread_block_tile<N>`` declaration or parameter produces no
  ``VarDecl``/``Param``, and the argument is dropped at the call site), and their operations become:

  - ``block.sync()``, ``cg::sync(block)``, ``__syncthreads()``          -> ``Call("__syncthreads")``
  - ``tile.sync()`` (tile of N <= 32 lanes)                            -> ``Call("__syncwarp")``
  - ``tile.shfl_down(v, d)`` / ``shfl_up`` / ``shfl_xor`` / ``shfl(v, src)`` ->
    ``Call("__shfl_down_sync", (IntLit(0xffffffff), v, d, IntLit(N)))`` (and the ``_up``/``_xor``/
    plain forms; the 4th argument is the width, as in CUDA)
  - ``tile.any(p)`` / ``all`` / ``ballot`` -> ``__any_sync`` / ``__all_sync`` / ``__ballot_sync``
    with mask ``0xffffffff`` (for N < 32 the result still spans the whole warp)
  - ``block.thread_rank()`` -> linear thread id ``(threadIdx.z * blockDim.y + threadIdx.y) *
    blockDim.x + threadIdx.x`` (``uint32``); ``tile.thread_rank()`` -> that ``% N``;
    ``tile.meta_group_rank()`` -> that ``/ N``; ``tile.meta_group_size()`` -> block size ``/ N``; ``block.size()``/``num_threads()`` ->
    ``blockDim.x * blockDim.y * blockDim.z``; ``tile.size()``/``num_threads()`` -> ``IntLit(N)``;
    ``block.group_index().x`` -> ``blockIdx.x``; ``block.thread_index().y`` -> ``threadIdx.y``.
  - ``cg::reduce(tile, v, cg::plus<T>())`` (or ``cg::plus<T>{}``) -> ``Call("__c2n_warp_reduce_add", (v, IntLit(N)))``;
    ``cg::greater`` -> ``__c2n_warp_reduce_max``, ``cg::less`` -> ``__c2n_warp_reduce_min``,
    ``cg::bit_and``/``bit_or``/``bit_xor`` -> ``__c2n_warp_reduce_and``/``_or``/``_xor``.
    Semantics: every lane of each aligned group of N consecutive lanes (lane = linear thread id
    % 32) receives the reduction of ``v`` over the active lanes of its group; the result type is
    ``v``'s type (arithmetic done in that type, fp32 for float).
* Grid groups (``cg::this_grid()``) are erased the same way: ``grid.sync()`` is
  ``Call("__c2n_grid_sync")`` and the ranks and sizes are builtin arithmetic (see
  :mod:`cuda2nki.frontend.gridgroup`).  Coalesced and labeled groups are a hidden ``uint32`` lane
  mask ``__c2n_group_<name>`` with ``__popc``/``__shfl_sync``/``__c2n_mask_reduce_<op>`` uses (see
  :mod:`cuda2nki.frontend.coalesced`).  Tiles of more than 32 threads reduce with
  ``__c2n_warp_reduce_<op>(v, N)`` over N consecutive linear thread ids and sync as a block.
* wmma fragments are per-thread arrays (``ArrayType(elem, (num_elements,))``) and their
  operations ``Call("__c2n_wmma_fill" / "_load" / "_store" / "_mma")``; the element mapping and
  the numerics are in :mod:`cuda2nki.frontend.wmma`.
* ``Cast(kind="reinterpret")`` of a pointer is a pointer cast (``reinterpret_cast<float4*>(p)``);
  of a scalar to a scalar of the same width (``reinterpret_cast<unsigned&>(f)``) it reinterprets
  the bits, like ``__float_as_uint``.
* A sign written on a numeric literal is a ``Unary('-')`` around the literal (C has no negative
  literals): ``-1`` is ``Unary(op='-', operand=IntLit(1))``.
* File-scope integer/float constants (``const int N = 4;``, ``constexpr``, enumerators) are folded
  to literals at their uses; ``__constant__``/``__device__`` variables stay ``Name`` and are listed
  in ``TranslationUnit.globals``.
* Dynamic parallelism: a launch in device code is a :class:`Launch` expression; the device
  runtime calls ``cudaDeviceSynchronize``, ``cudaGetLastError``, ``cudaPeekAtLastError``,
  ``cudaMalloc``, ``cudaFree``, ``cudaStreamCreateWithFlags`` and ``cudaStreamDestroy`` are
  ``Call`` by name (``int32`` results, ``cudaError_t``), ``cudaStream_t`` and ``cudaEvent_t`` are
  ``void*``.  The SIMT interpreter runs a child grid to completion where a thread launches it
  (see :mod:`cuda2nki.simt.devlaunch`).
* ``printf`` calls are dropped (an ``Empty`` statement) with a note diagnostic.
* Well-known constants from system headers (``FLT_MAX``, ``INFINITY``, ``M_PI``, ``INT_MAX``,
  ``CUDART_INF_F``...) are lowered to literals.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Union

from cuda2nki.diagnostics import Diagnostic, SourceLoc

# --------------------------------------------------------------------------- types

SCALAR_NAMES = (
    "void",
    "bool",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
)


@dataclass(frozen=True, kw_only=True)
class ScalarType:
    name: str  # one of SCALAR_NAMES
    const: bool = False

    @property
    def is_float(self) -> bool:
        return self.name in ("float16", "bfloat16", "float32", "float64")

    @property
    def is_signed(self) -> bool:
        return self.name.startswith("int") or self.is_float

    @property
    def bits(self) -> int:
        return {"void": 0, "bool": 8}.get(self.name) or int(
            "".join(c for c in self.name if c.isdigit())
        )


@dataclass(frozen=True, kw_only=True)
class VectorType:
    """``float2``, ``float4``, ``int4``, ``half2``...: ``base`` scalar, ``width`` lanes (x, y, z, w)."""

    name: str
    base: ScalarType
    width: int
    const: bool = False
    align: int = 0  # bytes; 0: the vector's size (CUDA's vector types); a record struct: its base's


@dataclass(frozen=True, kw_only=True)
class PointerType:
    pointee: CType
    const: bool = False  # the pointer itself is const
    restrict: bool = False
    space: Literal["generic", "global", "shared", "constant", "local"] = "generic"


@dataclass(frozen=True, kw_only=True)
class ArrayType:
    elem: CType
    dims: tuple[int | None, ...]  # None: unsized (extern __shared__ x[])


@dataclass(frozen=True, kw_only=True)
class OpaqueType:
    """A type the front end cannot resolve: a ``typename`` parameter of an uninstantiated template."""

    name: str
    const: bool = False


CType = Union[ScalarType, VectorType, PointerType, ArrayType, OpaqueType]

# --------------------------------------------------------------------------- expressions


@dataclass(frozen=True, kw_only=True)
class Node:
    loc: SourceLoc

    def __getstate__(self) -> dict[str, object]:
        """Pickled and copied with its location (a pending one is placed first)."""
        d = self.__dict__
        if "_at" in d:
            self.loc  # noqa: B018 - reading it replaces the pending location
        return d


@dataclass(frozen=True, kw_only=True)
class Expr(Node):
    ty: CType | None = None


@dataclass(frozen=True, kw_only=True)
class IntLit(Expr):
    value: int


@dataclass(frozen=True, kw_only=True)
class FloatLit(Expr):
    value: float  # already rounded to the literal's type (f suffix -> float32)


@dataclass(frozen=True, kw_only=True)
class BoolLit(Expr):
    value: bool


@dataclass(frozen=True, kw_only=True)
class Name(Expr):
    name: str


@dataclass(frozen=True, kw_only=True)
class Builtin(Expr):
    name: Literal["threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize"]
    dim: Literal["x", "y", "z", ""]


@dataclass(frozen=True, kw_only=True)
class Unary(Expr):
    # '-', '+', '!', '~', '*' (deref), '&' (address-of), 'pre++', 'pre--', 'post++', 'post--'
    op: str
    operand: Expr


@dataclass(frozen=True, kw_only=True)
class Binary(Expr):
    # arithmetic + - * / %, shifts << >>, bitwise & | ^, comparisons < <= > >= == !=,
    # logical && || (short-circuit)
    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, kw_only=True)
class Assign(Expr):
    op: str  # '=', '+=', '-=', '*=', '/=', '%=', '<<=', '>>=', '&=', '|=', '^='
    target: Expr
    value: Expr


@dataclass(frozen=True, kw_only=True)
class Ternary(Expr):
    cond: Expr
    then: Expr
    else_: Expr


@dataclass(frozen=True, kw_only=True)
class Call(Expr):
    func: str
    args: tuple[Expr, ...]
    template_args: tuple[Expr | CType, ...] = ()
    target: str | None = None  # name of the user __device__ function, None for intrinsics


@dataclass(frozen=True, kw_only=True)
class Launch(Expr):
    """A kernel launch from device code (dynamic parallelism): ``child<<<grid, block, shared_bytes,
    stream>>>(args)``.  ``grid``/``block`` are the spelled expressions (an integer or a ``dim3``
    value); ``kernel`` is the launched kernel's name as spelled (template arguments included).
    The value is ``void``."""

    kernel: str
    grid: Expr
    block: Expr
    shared_bytes: Expr | None
    stream: Expr | None
    args: tuple[Expr, ...]


@dataclass(frozen=True, kw_only=True)
class Index(Expr):
    base: Expr
    index: Expr


@dataclass(frozen=True, kw_only=True)
class Member(Expr):
    base: Expr
    field: str  # vector lanes: x y z w
    arrow: bool = False


@dataclass(frozen=True, kw_only=True)
class Cast(Expr):
    to: CType
    operand: Expr
    kind: Literal["c", "static", "reinterpret", "const", "functional"] = "c"


@dataclass(frozen=True, kw_only=True)
class SizeOf(Expr):
    of: CType


@dataclass(frozen=True, kw_only=True)
class Comma(Expr):
    exprs: tuple[Expr, ...]


@dataclass(frozen=True, kw_only=True)
class InitList(Expr):
    items: tuple[Expr, ...]


# --------------------------------------------------------------------------- statements


@dataclass(frozen=True, kw_only=True)
class Stmt(Node):
    pass


@dataclass(frozen=True, kw_only=True)
class Block(Stmt):
    body: tuple[Stmt, ...]


@dataclass(frozen=True, kw_only=True)
class VarDecl(Stmt):
    name: str
    ty: CType
    init: Expr | None = None
    storage: Literal["local", "shared", "extern_shared", "static"] = "local"
    constexpr: bool = False


@dataclass(frozen=True, kw_only=True)
class ExprStmt(Stmt):
    expr: Expr


@dataclass(frozen=True, kw_only=True)
class If(Stmt):
    cond: Expr
    then: Stmt
    else_: Stmt | None = None


@dataclass(frozen=True, kw_only=True)
class For(Stmt):
    init: tuple[Stmt, ...]  # VarDecls or ExprStmts; empty when absent
    cond: Expr | None
    step: Expr | None
    body: Stmt
    unroll: int | None = None  # #pragma unroll N (0 = plain '#pragma unroll'); informational


@dataclass(frozen=True, kw_only=True)
class While(Stmt):
    cond: Expr
    body: Stmt


@dataclass(frozen=True, kw_only=True)
class DoWhile(Stmt):
    body: Stmt
    cond: Expr


@dataclass(frozen=True, kw_only=True)
class Case(Node):
    values: tuple[int, ...]  # empty tuple: default
    body: tuple[Stmt, ...]  # falls through to the next case unless it ends in Break


@dataclass(frozen=True, kw_only=True)
class Switch(Stmt):
    cond: Expr
    cases: tuple[Case, ...]


@dataclass(frozen=True, kw_only=True)
class Break(Stmt):
    pass


@dataclass(frozen=True, kw_only=True)
class Continue(Stmt):
    pass


@dataclass(frozen=True, kw_only=True)
class Return(Stmt):
    value: Expr | None = None


@dataclass(frozen=True, kw_only=True)
class Empty(Stmt):
    pass


# --------------------------------------------------------------------------- top level


@dataclass(frozen=True, kw_only=True)
class Param(Node):
    name: str
    ty: CType
    #: the declared element count of a host-filled ``__constant__`` table made a parameter
    #: (see :mod:`cuda2nki.frontend.constparams`)
    extent: int | None = None
    #: the extents (outermost first) of a texture object made an array parameter: the names of
    #: the size parameters added with it (see :mod:`cuda2nki.frontend.texture`)
    dims: tuple[str, ...] = ()
    #: memory that outlives the kernel and that a write changes only where it lands (a surface
    #: made an array parameter, see :mod:`cuda2nki.frontend.surface`): written, it is inout
    persistent: bool = False
    #: the array-of-structs parameter this member array stands for (one launch argument for
    #: all its members, see :mod:`cuda2nki.frontend.recordsplit`)
    record: str = ""
    #: its place in that struct's C layout: (byte offset, struct size, elements per struct[,
    #: bytes between them where they are not adjacent])
    record_at: tuple[int, ...] = ()
    #: why an array of structs stays held as its bytes (not one array per member)
    held_as_bytes: str = ""
    #: the extents written on an array parameter, outermost first (``float w[6][5][5]``:
    #: (6, 5, 5); ``float w[][5]``, ``float (*w)[5]``: (0, 5)); empty when not so declared
    #: (see :mod:`cuda2nki.frontend.arrayparams`)
    rows: tuple[int, ...] = ()
    #: it stands for a file-scope ``__device__`` / ``__managed__`` variable of that name (see
    #: :mod:`cuda2nki.frontend.deviceparams`)
    symbol: bool = False
    #: it stands for a vector or record the kernel takes by value, its lanes a tensor of
    #: ``extent`` elements (see :mod:`cuda2nki.frontend.vecparams`)
    by_value: bool = False


@dataclass(frozen=True, kw_only=True)
class TemplateParam(Node):
    name: str
    kind: Literal["int", "typename", "function"]
    default: Expr | CType | None = None


@dataclass(frozen=True, kw_only=True)
class FunctionRef:
    """A device function passed as a template argument (``blockReduce<warpReduceSum>``, a
    parameter ``template <float (*op)(float)>`` or of a function-pointer typedef): calls of the
    parameter call ``name``."""

    name: str


@dataclass(frozen=True, kw_only=True)
class Function(Node):
    name: str
    kind: Literal["global", "device", "host_device", "host"]
    params: tuple[Param, ...]
    return_type: CType
    body: Block
    template_params: tuple[TemplateParam, ...] = ()
    template_args: tuple[tuple[str, int | CType], ...] = ()  # set on an instantiation
    launch_bounds: tuple[int, ...] = ()
    forceinline: bool = False


@dataclass(frozen=True, kw_only=True)
class GlobalVar(Node):
    """File-scope ``__constant__`` / ``__device__`` variable (or a ``const`` host constant)."""

    name: str
    ty: CType
    init: Expr | None = None
    space: Literal["constant", "device", "host_const"] = "constant"


@dataclass(frozen=True, kw_only=True)
class LaunchSite(Node):
    """``kernel<targs><<<grid, block, smem, stream>>>(args)`` in host code.

    ``grid``/``block`` hold up to 3 expressions each (a ``dim3(a, b)`` is expanded, missing
    dimensions are 1); ``*_text`` keep the source spelling (after macro expansion, so that it
    can be evaluated) for messages and binding inference.
    """

    kernel: str
    template_args: tuple[Expr | CType, ...]
    grid: tuple[Expr, ...]
    block: tuple[Expr, ...]
    shared_bytes: Expr | None
    args: tuple[Expr, ...]
    grid_text: str = ""
    block_text: str = ""
    arg_texts: tuple[str, ...] = ()
    #: the kernel function this site launches: ``kernel``, or ``k<256, float32>`` when a template
    #: kernel has several instantiations in the file (set by the front end)
    instance: str = ""
    #: the grid, block and arguments followed through the host code (constants, locals,
    #: launcher parameters): a :class:`cuda2nki.frontend.hostvals.HostFacts`, None if not read
    host: Any = field(default=None, compare=False)


@dataclass(frozen=True, kw_only=True)
class TranslationUnit:
    file: str
    functions: tuple[Function, ...]  # kernels and device functions (instantiated where possible)
    globals: tuple[GlobalVar, ...] = ()
    #: file-scope ``__shared__`` variables: per-block memory of the kernels that use them
    #: (declared at the top of those kernels; see :mod:`cuda2nki.frontend.fileshared`)
    file_shared: tuple[VarDecl, ...] = ()
    launch_sites: tuple[LaunchSite, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    # kernels the front end refused: name -> diagnostics (a bad kernel never rejects a clean one).
    # Only __global__ functions are listed; a refused __device__ function is absent from
    # `functions`, its errors are in `diagnostics` and in the entry of every kernel calling it.
    rejected: dict[str, tuple[Diagnostic, ...]] = field(default_factory=dict)
    # refused __device__ functions: name -> diagnostics.  Those of a function no kernel calls
    # concern no kernel (see :mod:`cuda2nki.frontend.scope`)
    refused_device: dict[str, tuple[Diagnostic, ...]] = field(default_factory=dict)

    @property
    def kernels(self) -> tuple[Function, ...]:
        return tuple(f for f in self.functions if f.kind == "global")

    def function(self, name: str) -> Function | None:
        for f in self.functions:
            if f.name == name:
                return f
        return None


# --------------------------------------------------------------------------- pending locations


class _PendingLoc:
    """``Node.loc`` of a node built (by its class or its factory in :data:`fast`) with a pending
    location -- ``(byte span, placer)`` from the front end's ``Placer.at`` -- instead of a
    :class:`SourceLoc`: the node keeps it as ``_at``, and the first read of ``loc`` makes it
    the placer's location of that span and stores it on the node, where later reads find it
    (a non-data descriptor: the instance's ``loc`` comes first).  Most nodes' locations are
    never read, so most nodes never build one."""

    def __get__(self, node: Node | None, owner: type | None = None) -> object:
        if node is None:
            return self
        d = node.__dict__
        at = d.get("_at")
        if at is None:  # placed meanwhile by another thread (it stores loc before dropping _at)
            try:
                return d["loc"]
            except KeyError:
                raise AttributeError("loc") from None
        loc = d["loc"] = at[1].lazy(at[0])
        d.pop("_at", None)
        return loc


# --------------------------------------------------------------------------- fast construction


def _field_writes(cls: type, ns: dict[str, object]) -> tuple[list[str], list[str]]:
    """The keyword parameters of ``cls``'s fields and the lines writing each into the instance
    dictionary ``d`` (defaults and factories go into ``ns``).  ``loc`` may be a
    :class:`SourceLoc` or a pending location (see :class:`_PendingLoc`)."""
    params, body = [], []
    for f in dataclasses.fields(cls):
        if f.name == "loc":
            params.append("loc")
            body.append("    d['_at' if loc.__class__ is tuple else 'loc'] = loc")
        elif f.default is not dataclasses.MISSING:
            ns[f"_d_{f.name}"] = f.default
            params.append(f"{f.name}=_d_{f.name}")
            body.append(f"    d[{f.name!r}] = {f.name}")
        elif f.default_factory is not dataclasses.MISSING:
            ns[f"_f_{f.name}"] = f.default_factory
            params.append(f"{f.name}=_MISSING")
            body.append(f"    d[{f.name!r}] = _f_{f.name}() if {f.name} is _MISSING else {f.name}")
        else:
            params.append(f.name)
            body.append(f"    d[{f.name!r}] = {f.name}")
    return params, body


def _fast_init(cls: type) -> None:
    """Replace the generated ``__init__`` of a frozen dataclass by one that writes the instance
    dictionary directly (the same state, in field order; about twice as fast: the front end
    builds one node per syntax node).  Same keyword-only signature and defaults."""
    ns: dict[str, object] = {"_MISSING": dataclasses.MISSING}
    params, body = _field_writes(cls, ns)
    src = f"def __init__(self, *, {', '.join(params)}):\n    d = self.__dict__\n" + "\n".join(body)
    exec(src, ns)  # noqa: S102 - generated from the dataclass's own field names
    init = ns["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"  # type: ignore[attr-defined]
    cls.__init__ = init  # type: ignore[misc]


def _factory(cls: type) -> Callable[..., object]:
    """A function with the class's keyword-only signature that builds the same instance as
    ``cls(...)`` (the instance dictionary written in field order) without the type call: the
    front end's hot paths build their nodes with it (``fast.Name(loc=..., ty=..., name=...)``)."""
    ns: dict[str, object] = {"_MISSING": dataclasses.MISSING, "_new": object.__new__, "_cls": cls}
    params, body = _field_writes(cls, ns)
    src = (
        f"def {cls.__name__}(*, {', '.join(params)}):\n    self = _new(_cls)\n"
        "    d = self.__dict__\n" + "\n".join(body) + "\n    return self"
    )
    exec(src, ns)  # noqa: S102 - generated from the dataclass's own field names
    return ns[cls.__name__]  # type: ignore[return-value]


class _Factories:
    """``fast.<Class>(...)``: the factory of each AST class (see :func:`_factory`)."""


fast = _Factories()
for _cls in list(globals().values()):
    if isinstance(_cls, type) and dataclasses.is_dataclass(_cls) and _cls.__module__ == __name__:
        _fast_init(_cls)
        setattr(fast, _cls.__name__, _factory(_cls))
del _cls
Node.loc = _PendingLoc()  # type: ignore[assignment] # after the dataclasses: no field default
