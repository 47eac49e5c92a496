"""Tile IR nodes: the intent layer and the scheduled-tile layer, in one node family.

Every node is a frozen, hashable dataclass compared by value, so ``parse(print(k)) == k`` can be
asserted.  Statements, declarations and value expressions carry a :class:`SourceLoc` (``loc``, last
field, default ``UNKNOWN_LOC``) pointing at the CUDA source they came from; the printer writes a
known loc as ``@file:line:col`` and the parser reads it back.  Pure symbolic arithmetic
(:class:`SizeExpr`), :class:`Domain` and the dims of a :class:`View` carry no loc.

Construction is forgiving: lists become tuples, a plain ``int`` where a size is expected becomes
:class:`Const`, a plain ``str`` becomes :class:`Sym`, and enum fields accept their string spelling
(``Binary("add", a, b)``).  ``SizeExpr`` supports ``+ - * // %`` with ints and other sizes.

The model
=========

**Sizes and indices** (:class:`SizeExpr`): integer expression trees over named integer symbols --
scalar parameters (``N``), intent axis variables (``i``) and scheduled loop variables -- with
:class:`Const`, :class:`Add`, :class:`Sub`, :class:`Mul`, :class:`FloorDiv`, :class:`CeilDiv`,
:class:`Mod`, :class:`Min`, :class:`Max`.  :meth:`SizeExpr.evaluate` works on ints and on NumPy
arrays.  A data-dependent index (a gather ``x[idx[i]]``) is the leaf :class:`Dyn` wrapping a value
expression; it never appears in a shape.

**Intent layer** -- *what* is computed, free of CUDA's thread decomposition.  A :class:`Kernel` has
parameters (:class:`TensorDecl` with role ``in``/``out``/``inout``; :class:`ScalarDecl`), temporary
tensors (``temps``, role ``temp``) and a body of :class:`Compute` statements executed in order.  A
``Compute`` assigns ``target[index] = expr`` for every point of its :class:`Domain` (ordered
:class:`Axis` list, kinds ``parallel`` or ``scan``) where the optional ``guard`` holds; all reads
of one Compute happen before its writes.  An axis extent may use earlier axes of the same
domain (``j < i + 1``: a triangular domain) and, in a reduction, the enclosing axes.  With ``accumulate=op`` the assignment is
``target[index] = op(target[index], expr)`` combining duplicate indices (scatter-add, histogram).
Reduction axes are *not* domain axes: they are bound by the :class:`Reduce` that sums over them.
:class:`Scan` is an inclusive/exclusive prefix combination along a domain axis of kind ``scan``.
``idiom`` records which recogniser produced the Compute; ``attrs`` holds free-form string pairs.

Value types: a :class:`Read` has its tensor's dtype, :class:`Lit` its own, arithmetic promotes
(see :func:`cuda2nki.ir.types.dtype_of`), :class:`Cast` converts explicitly (the lifter makes C's
implicit conversions explicit), ``Reduce.acc_dtype`` is the accumulator's dtype (``None``: the
body's).  Assignment rounds to the target's dtype.  Literals and scalar parameters hold the value
their dtype can represent (``0.1`` as float32 is ``0.100000001...``).

**Scheduled layer** -- maps one-to-one onto NKI.  The kernel body holds :class:`Loop` (``affine`` or
``sequential``), :class:`Alloc` (``sbuf``/``psum`` tiles; dim 0 is the partition dim), DMA
:class:`Load`/:class:`Store` between HBM tensors and tiles, and engine ops whose operands are
:class:`View` s (per-dim :class:`Slice` ``start:size:step``, :class:`At` (drops the dim) or
:class:`Indirect` (rows chosen by an index tile)).  Ragged tails are sizes like
``Min(128, N - i*128)``.  Scalar operands (:data:`Operand`) are a view, a :class:`Lit` or a
:class:`Param`.  :class:`Note` carries a ``C2Nxxxx`` marker for the generated code.

Worked examples (intent layer)
==============================

Vector add ``c[i] = a[i] + b[i]`` -- text: ``c[i] = a[i] + b[i] for i < N [map]``::

    N, i = Sym("N"), Sym("i")
    vadd = Kernel("vadd",
        params=(TensorDecl("a", (N,), "float32", Role.IN), TensorDecl("b", (N,), "float32", Role.IN),
                TensorDecl("c", (N,), "float32", Role.OUT), ScalarDecl("N", "int32")),
        body=(Compute(Access("c", (i,)), Domain((Axis("i", N),)),
                      Binary(Op.ADD, Read("a", (i,)), Read("b", (i,))), idiom=Idiom.MAP),))

Row softmax over ``x[R, C]`` as four Computes into temps ``m[R]``, ``e[R, C]``, ``s[R]``::

    R, C, i, j = Sym("R"), Sym("C"), Sym("i"), Sym("j")
    rows, both = Domain((Axis("i", R),)), Domain((Axis("i", R), Axis("j", C)))
    red_j = (Axis("j", C, AxisKind.REDUCTION),)
    x_ij = Read("x", (i, j))
    softmax = Kernel("softmax",
        params=(TensorDecl("x", (R, C), "float32", Role.IN),
                TensorDecl("y", (R, C), "float32", Role.OUT),
                ScalarDecl("R", "int32"), ScalarDecl("C", "int32")),
        temps=(TensorDecl("m", (R,), "float32", Role.TEMP),
               TensorDecl("e", (R, C), "float32", Role.TEMP),
               TensorDecl("s", (R,), "float32", Role.TEMP)),
        body=(
            Compute(Access("m", (i,)), rows, Reduce(Op.MAX, red_j, x_ij), idiom=Idiom.SOFTMAX),
            Compute(Access("e", (i, j)), both,
                    Unary(Op.EXP, Binary(Op.SUB, x_ij, Read("m", (i,)))), idiom=Idiom.SOFTMAX),
            Compute(Access("s", (i,)), rows, Reduce(Op.ADD, red_j, Read("e", (i, j))),
                    idiom=Idiom.SOFTMAX),
            Compute(Access("y", (i, j)), both,
                    Binary(Op.DIV, Read("e", (i, j)), Read("s", (i,))), idiom=Idiom.SOFTMAX),
        ))

Matmul ``C[i, j] = reduce(add, k < K: A[i, k] * B[k, j]; acc float32)`` on bf16 inputs; the
products are exact in float32 (as on TensorE, and as CUDA's ``__bfloat162float(a) * ...``), so the
conversions are explicit::

    M, N, K, i, j, k = (Sym(n) for n in ("M", "N", "K", "i", "j", "k"))
    matmul = Kernel("matmul",
        params=(TensorDecl("A", (M, K), "bfloat16", Role.IN),
                TensorDecl("B", (K, N), "bfloat16", Role.IN),
                TensorDecl("C", (M, N), "float32", Role.OUT),
                ScalarDecl("M", "int32"), ScalarDecl("N", "int32"), ScalarDecl("K", "int32")),
        body=(Compute(Access("C", (i, j)), Domain((Axis("i", M), Axis("j", N))),
                      Reduce(Op.ADD, (Axis("k", K, AxisKind.REDUCTION),),
                             Binary(Op.MUL, Cast("float32", Read("A", (i, k))),
                                    Cast("float32", Read("B", (k, j)))),
                             acc_dtype="float32"),
                      idiom=Idiom.CONTRACT),))

Transpose ``B[j, i] = A[i, j]`` (a guard, e.g. from ``if (i < M && j < N)``, is implied by the
domain extents and need not be repeated)::

    transpose = Kernel("transpose",
        params=(TensorDecl("A", (M, N), "float32", Role.IN),
                TensorDecl("B", (N, M), "float32", Role.OUT),
                ScalarDecl("M", "int32"), ScalarDecl("N", "int32")),
        body=(Compute(Access("B", (j, i)), Domain((Axis("i", M), Axis("j", N))),
                      Read("A", (i, j)), idiom=Idiom.TRANSPOSE),))

Worked example (scheduled layer): the vector add on ``[N, F]`` tiles of 128 rows, ragged tail::

    t, rows = Sym("t"), Min(128, Sym("N") - Sym("t") * 128)
    hbm = View("a", (Slice(t * 128, rows), Slice(0, Sym("F"))))
    tile = View("ta", (Slice(0, rows), Slice(0, Sym("F"))))
    Loop("t", 0, CeilDiv(Sym("N"), 128), body=(
        Alloc("ta", (128, Sym("F")), "float32", Buffer.SBUF),
        Load(tile, hbm),
        ...,  # Alloc("tb"...), Load(...), Alloc("tc"...)
        TensorTensor(View("tc", tile.dims), Op.ADD, tile, View("tb", tile.dims)),
        Store(View("c", hbm.dims), View("tc", tile.dims)),
    ))
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

from cuda2nki.diagnostics import UNKNOWN_LOC, SourceLoc
from cuda2nki.ir.ops import AxisKind, Buffer, Idiom, LoopKind, Op, Role

__all__ = [
    "UNKNOWN_LOC",
    "SourceLoc",
    "Op",
    "Idiom",
    "AxisKind",
    "Role",
    "Buffer",
    "LoopKind",
    # sizes
    "SizeExpr",
    "Sym",
    "Const",
    "Add",
    "Sub",
    "Mul",
    "FloorDiv",
    "CeilDiv",
    "Mod",
    "Min",
    "Max",
    "Dyn",
    "size",
    # declarations
    "TensorDecl",
    "ScalarDecl",
    # expressions
    "Expr",
    "Read",
    "Lit",
    "Param",
    "IndexValue",
    "Unary",
    "Binary",
    "Select",
    "Cast",
    "Bitcast",
    "Reduce",
    "Scan",
    "Iterate",
    "Carry",
    # intent statements
    "Axis",
    "Domain",
    "Access",
    "Compute",
    # scheduled
    "Slice",
    "At",
    "Indirect",
    "Rows",
    "View",
    "Loop",
    "Alloc",
    "Load",
    "Store",
    "Matmul",
    "Activation",
    "TensorTensor",
    "TensorScalar",
    "TensorReduce",
    "TensorTranspose",
    "TensorSelect",
    "TensorGather",
    "TensorCopy",
    "TensorBitcast",
    "TensorScan",
    "IntArith",
    "Memset",
    "Iota",
    "Note",
    "Kernel",
    # type aliases
    "SizeLike",
    "DimSel",
    "Operand",
    "IntentStmt",
    "ScheduledStmt",
    "Stmt",
]


# --------------------------------------------------------------------------- coercion base


class _Node:
    """Mixin giving every node light argument coercion (see module docstring).

    Subclasses name fields in ``_sizes`` (coerce int/str -> SizeExpr, also inside tuples) and in
    ``_enums`` (field -> enum class, coerce its string spelling).
    """

    _sizes: tuple[str, ...] = ()
    _enums: tuple[tuple[str, type[enum.Enum]], ...] = ()

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            nv = tuple(v) if isinstance(v, list) else v
            if f.name in self._sizes:
                nv = tuple(size(x) for x in nv) if isinstance(nv, tuple) else size(nv)
            if nv is not v:
                object.__setattr__(self, f.name, nv)
        for name, cls in self._enums:
            v = getattr(self, name)
            if v is not None and not isinstance(v, cls):
                object.__setattr__(self, name, cls(v))

    def replace(self, **changes: Any) -> Any:
        """A copy with some fields changed (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]


# --------------------------------------------------------------------------- symbolic sizes


class SizeExpr(_Node):
    """Integer expression over named symbols (params, axis vars, loop vars).  No loc."""

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        """Value under ``env`` (name -> int or integer NumPy array); KeyError on a free symbol."""
        raise NotImplementedError

    def free_syms(self) -> frozenset[str]:
        out: set[str] = set()
        _collect_syms(self, out)
        return frozenset(out)

    # arithmetic sugar (folds only Const op Const, so trees stay as written)
    def __add__(self, o: SizeLike) -> SizeExpr:
        return _fold(Add, self, size(o))

    def __radd__(self, o: SizeLike) -> SizeExpr:
        return _fold(Add, size(o), self)

    def __sub__(self, o: SizeLike) -> SizeExpr:
        return _fold(Sub, self, size(o))

    def __rsub__(self, o: SizeLike) -> SizeExpr:
        return _fold(Sub, size(o), self)

    def __mul__(self, o: SizeLike) -> SizeExpr:
        return _fold(Mul, self, size(o))

    def __rmul__(self, o: SizeLike) -> SizeExpr:
        return _fold(Mul, size(o), self)

    def __floordiv__(self, o: SizeLike) -> SizeExpr:
        return _fold(FloorDiv, self, size(o))

    def __rfloordiv__(self, o: SizeLike) -> SizeExpr:
        return _fold(FloorDiv, size(o), self)

    def __mod__(self, o: SizeLike) -> SizeExpr:
        return _fold(Mod, self, size(o))

    def __rmod__(self, o: SizeLike) -> SizeExpr:
        return _fold(Mod, size(o), self)


@dataclass(frozen=True)
class Sym(SizeExpr):
    """A named integer: scalar parameter, intent axis variable or scheduled loop variable."""

    name: str

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        return env[self.name]


@dataclass(frozen=True)
class Const(SizeExpr):
    value: int

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        return self.value


@dataclass(frozen=True)
class _BinSize(SizeExpr):
    a: SizeExpr
    b: SizeExpr
    _sizes = ("a", "b")

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        return self.apply(self.a.evaluate(env), self.b.evaluate(env))

    @staticmethod
    def apply(x: Any, y: Any) -> Any:
        raise NotImplementedError


@dataclass(frozen=True)
class Add(_BinSize):
    @staticmethod
    def apply(x: Any, y: Any) -> Any:
        return x + y


@dataclass(frozen=True)
class Sub(_BinSize):
    @staticmethod
    def apply(x: Any, y: Any) -> Any:
        return x - y


@dataclass(frozen=True)
class Mul(_BinSize):
    @staticmethod
    def apply(x: Any, y: Any) -> Any:
        return x * y


@dataclass(frozen=True)
class FloorDiv(_BinSize):
    """Floor division (Python ``//``); equals C ``/`` for non-negative operands."""

    @staticmethod
    def apply(x: Any, y: Any) -> Any:
        return x // y


@dataclass(frozen=True)
class CeilDiv(_BinSize):
    @staticmethod
    def apply(x: Any, y: Any) -> Any:
        return -((-x) // y)


@dataclass(frozen=True)
class Mod(_BinSize):
    """Python ``%`` (floor modulo); equals C ``%`` for non-negative operands."""

    @staticmethod
    def apply(x: Any, y: Any) -> Any:
        return x % y


@dataclass(frozen=True)
class Min(_BinSize):
    @staticmethod
    def apply(x: Any, y: Any) -> Any:
        if isinstance(x, int) and isinstance(y, int):
            return min(x, y)
        return np.minimum(x, y)


@dataclass(frozen=True)
class Max(_BinSize):
    @staticmethod
    def apply(x: Any, y: Any) -> Any:
        if isinstance(x, int) and isinstance(y, int):
            return max(x, y)
        return np.maximum(x, y)


@dataclass(frozen=True)
class Dyn(SizeExpr):
    """A data-dependent integer index: the value of ``expr`` (e.g. ``Read("idx", (i,))``).

    Only valid in indices (gather/scatter), never in shapes or extents.  Evaluated by the IR
    evaluator; :meth:`evaluate` here refuses.
    """

    expr: Expr

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        raise ValueError("a data-dependent index needs the IR evaluator")


SizeLike = Union[SizeExpr, int, str]

_FOLD = {
    Add: lambda x, y: x + y,
    Sub: lambda x, y: x - y,
    Mul: lambda x, y: x * y,
    FloorDiv: lambda x, y: x // y if y else None,
    Mod: lambda x, y: x % y if y else None,
    CeilDiv: lambda x, y: -((-x) // y) if y else None,
}


def _fold(cls: type[_BinSize], a: SizeExpr, b: SizeExpr) -> SizeExpr:
    if isinstance(a, Const) and isinstance(b, Const):
        v = _FOLD[cls](a.value, b.value)
        if v is not None:
            return Const(v)
    return cls(a, b)


def size(x: SizeLike) -> SizeExpr:
    """Coerce an int (:class:`Const`) or a name (:class:`Sym`) to a :class:`SizeExpr`."""
    if isinstance(x, SizeExpr):
        return x
    if isinstance(x, bool):
        raise TypeError("a size cannot be a bool")
    if isinstance(x, (int, np.integer)):
        return Const(int(x))
    if isinstance(x, str):
        return Sym(x)
    raise TypeError(f"not a size expression: {x!r}")


def _collect_syms(e: SizeExpr, out: set[str]) -> None:
    if isinstance(e, Sym):
        out.add(e.name)
    elif isinstance(e, _BinSize):
        _collect_syms(e.a, out)
        _collect_syms(e.b, out)


# --------------------------------------------------------------------------- declarations


@dataclass(frozen=True)
class TensorDecl(_Node):
    """A tensor: kernel parameter (HBM; role in/out/inout) or intent temporary (role temp)."""

    name: str
    shape: tuple[SizeExpr, ...]
    dtype: str
    role: Role = Role.IN
    loc: SourceLoc = UNKNOWN_LOC
    _sizes = ("shape",)
    _enums = (("role", Role),)

    @property
    def rank(self) -> int:
        return len(self.shape)


@dataclass(frozen=True)
class ScalarDecl(_Node):
    """A scalar kernel parameter (sizes like ``N``, or values like ``alpha``, ``eps``)."""

    name: str
    dtype: str = "int32"
    loc: SourceLoc = UNKNOWN_LOC


# --------------------------------------------------------------------------- value expressions


class Expr(_Node):
    """Base of value expressions (intent layer; :class:`Lit`/:class:`Param` also as operands)."""


@dataclass(frozen=True)
class Read(Expr):
    """``tensor[index...]``; one index per dim, each a :class:`SizeExpr` (maybe :class:`Dyn`)."""

    tensor: str
    index: tuple[SizeExpr, ...]
    loc: SourceLoc = UNKNOWN_LOC
    _sizes = ("index",)


@dataclass(frozen=True)
class Lit(Expr):
    """A literal of a given dtype (``float('inf')``/``nan`` allowed for floats)."""

    value: float | int | bool
    dtype: str = "float32"
    loc: SourceLoc = UNKNOWN_LOC

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.value, np.generic):  # keep plain Python scalars (printing, hashing)
            object.__setattr__(self, "value", self.value.item())

    def __eq__(self, other: object) -> bool:  # NaN literals compare equal to themselves
        if not isinstance(other, Lit):
            return NotImplemented
        same = self.value == other.value or (
            isinstance(self.value, float)
            and isinstance(other.value, float)
            and math.isnan(self.value)
            and math.isnan(other.value)
        )
        return (
            same
            and type(self.value) is type(other.value)
            and self.dtype == other.dtype
            and self.loc == other.loc
        )

    def __hash__(self) -> int:
        v = "nan" if isinstance(self.value, float) and math.isnan(self.value) else self.value
        return hash((Lit, v, type(self.value).__name__, self.dtype, self.loc))


@dataclass(frozen=True)
class Param(Expr):
    """The value of a scalar parameter (any dtype: ``alpha``, ``eps``, ``N``)."""

    name: str
    loc: SourceLoc = UNKNOWN_LOC


@dataclass(frozen=True)
class IndexValue(Expr):
    """An integer index expression (over axis vars and params) used as a value, e.g. iota."""

    expr: SizeExpr
    dtype: str = "int32"
    loc: SourceLoc = UNKNOWN_LOC
    _sizes = ("expr",)


@dataclass(frozen=True)
class Unary(Expr):
    op: Op
    x: Expr
    loc: SourceLoc = UNKNOWN_LOC
    _enums = (("op", Op),)


@dataclass(frozen=True)
class Binary(Expr):
    op: Op
    a: Expr
    b: Expr
    loc: SourceLoc = UNKNOWN_LOC
    _enums = (("op", Op),)


@dataclass(frozen=True)
class Select(Expr):
    """``cond ? a : b`` elementwise."""

    cond: Expr
    a: Expr
    b: Expr
    loc: SourceLoc = UNKNOWN_LOC


@dataclass(frozen=True)
class Cast(Expr):
    dtype: str
    x: Expr
    loc: SourceLoc = UNKNOWN_LOC


@dataclass(frozen=True)
class Bitcast(Expr):
    """The bits of ``x`` read as ``dtype``, a type of the same width (``__float_as_int``, a
    buffer read through a pointer of another element type): no conversion."""

    dtype: str
    x: Expr
    loc: SourceLoc = UNKNOWN_LOC


@dataclass(frozen=True)
class Axis(_Node):
    """An iteration axis ``name`` over ``0 <= name < extent``."""

    name: str
    extent: SizeExpr
    kind: AxisKind = AxisKind.PARALLEL
    loc: SourceLoc = UNKNOWN_LOC
    _sizes = ("extent",)
    _enums = (("kind", AxisKind),)


@dataclass(frozen=True)
class Reduce(Expr):
    """Combine ``body`` with ``op`` over the reduction ``axes`` (bound here, kind reduction).

    ``where`` (optional) masks contributions; ``acc_dtype`` is the accumulator dtype (``None``:
    the body's dtype).  An empty reduction yields the op's identity.
    """

    op: Op
    axes: tuple[Axis, ...]
    body: Expr
    acc_dtype: str | None = None
    where: Expr | None = None
    loc: SourceLoc = UNKNOWN_LOC
    _enums = (("op", Op),)


@dataclass(frozen=True)
class Scan(Expr):
    """Prefix combination of ``body`` along domain axis ``axis`` (kind scan).

    At position ``a`` of the axis: ``op`` over ``body`` evaluated at ``a' <= a`` (inclusive) or
    ``a' < a`` (exclusive; the identity at ``a = 0``).
    """

    op: Op
    axis: str
    body: Expr
    exclusive: bool = False
    acc_dtype: str | None = None
    loc: SourceLoc = UNKNOWN_LOC
    _enums = (("op", Op),)


@dataclass(frozen=True)
class Carry(Expr):
    """The value of variable ``name`` of the enclosing :class:`Iterate` at the start of an
    iteration (only inside its ``update`` and ``cond``)."""

    name: str
    dtype: str = "float32"
    loc: SourceLoc = UNKNOWN_LOC


@dataclass(frozen=True)
class Iterate(Expr):
    """An elementwise loop-carried iteration with a data-dependent exit a counter bounds
    (``do { ... } while (err > tol && it < 60)``); the value is variable ``result``'s at the end.

    Per element: the variables ``names`` (dtypes ``dtypes``) start at ``init``; the element is
    active if ``enter`` holds (None: always -- a do-while loop).  Then ``trips`` times: ``update``
    and ``cond`` are evaluated on the current values (:class:`Carry`), an active element takes
    the updated values, and stays active while ``cond`` holds (``cond`` is the loop test after the
    body, spelled in the values before it).  ``trips`` bounds the trip count (the counter's
    conjunct in ``cond`` fails by then), so every element has left the loop when it ends: what a
    CUDA thread computes, each after its own number of iterations."""

    names: tuple[str, ...]
    dtypes: tuple[str, ...]
    init: tuple[Expr, ...]
    update: tuple[Expr, ...]
    cond: Expr
    trips: SizeExpr
    result: str
    enter: Expr | None = None
    loc: SourceLoc = UNKNOWN_LOC
    _sizes = ("trips",)

    def with_result(self, result: str) -> Iterate:
        return self.replace(result=result)


# --------------------------------------------------------------------------- intent statements


@dataclass(frozen=True)
class Domain(_Node):
    """Ordered iteration axes (parallel or scan) and an optional boolean guard."""

    axes: tuple[Axis, ...]
    guard: Expr | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.axes)


@dataclass(frozen=True)
class Access(_Node):
    """A write target ``tensor[index...]``."""

    tensor: str
    index: tuple[SizeExpr, ...]
    loc: SourceLoc = UNKNOWN_LOC
    _sizes = ("index",)


@dataclass(frozen=True)
class Compute(_Node):
    """``target = expr`` over ``domain`` (see the module docstring for the exact semantics)."""

    target: Access
    domain: Domain
    expr: Expr
    accumulate: Op | None = None
    idiom: Idiom = Idiom.MAP
    attrs: tuple[tuple[str, str], ...] = ()
    loc: SourceLoc = UNKNOWN_LOC
    _enums = (("accumulate", Op), ("idiom", Idiom))

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "attrs", tuple(tuple(p) for p in self.attrs))


# --------------------------------------------------------------------------- scheduled layer


@dataclass(frozen=True)
class Slice(_Node):
    """Elements ``start, start+step, ...`` (``size`` of them) of one dim.  No loc."""

    start: SizeExpr
    size: SizeExpr
    step: int = 1
    _sizes = ("start", "size")


@dataclass(frozen=True)
class At(_Node):
    """A single index; the dim is dropped from the view's shape.  No loc."""

    index: SizeExpr
    _sizes = ("index",)


@dataclass(frozen=True)
class Indirect(_Node):
    """Rows of this dim chosen by the int32 values of ``index`` (a ``(P, 1)`` tile view).

    ``flat``: the values are element offsets into the whole tensor read as a column of its
    elements (an element gather: one element per partition, the only dim of the view)."""

    index: View
    flat: bool = False


@dataclass(frozen=True)
class Rows(_Node):
    """Rows of a tensor's elements, read as one flat vector (the only dim of its view): row ``r``
    holds the ``width`` elements from ``start + r * stride``; with ``width > stride``
    neighbouring rows share elements (a flat chunk loaded with its halo, one DMA).  A DMA
    source, or a DMA destination whose rows do not overlap (``width <= stride``: the rows of a
    transposed block stored into merged axes).  No loc."""

    start: SizeExpr
    count: SizeExpr
    stride: SizeExpr
    width: SizeExpr
    _sizes = ("start", "count", "stride", "width")


DimSel = Union[Slice, At, Indirect, Rows]


@dataclass(frozen=True)
class View(_Node):
    """A strided window of a tensor or tile; ``dims == ()`` is the whole tensor."""

    tensor: str
    dims: tuple[DimSel, ...] = ()


Operand = Union[View, Lit, Param]


@dataclass(frozen=True)
class Loop(_Node):
    """``for var in range(start, stop, step)`` (``affine``: independent iterations)."""

    var: str
    start: SizeExpr
    stop: SizeExpr
    step: int = 1
    kind: LoopKind = LoopKind.AFFINE
    body: tuple[Stmt, ...] = ()
    loc: SourceLoc = UNKNOWN_LOC
    #: a condition on scalar parameters, decided when the kernel is traced: the loop runs only
    #: where it holds (a statement the CUDA kernel guards with a flag); None: always
    cond: Expr | None = None
    _sizes = ("start", "stop")
    _enums = (("kind", LoopKind),)


@dataclass(frozen=True)
class Alloc(_Node):
    """An on-chip tile; ``shape[0]`` is the partition dim."""

    name: str
    shape: tuple[SizeExpr, ...]
    dtype: str
    buffer: Buffer = Buffer.SBUF
    loc: SourceLoc = UNKNOWN_LOC
    _sizes = ("shape",)
    _enums = (("buffer", Buffer),)


@dataclass(frozen=True)
class Load(_Node):
    """DMA HBM -> SBUF: ``dst`` (tile view) = ``src`` (HBM view), converting dtype."""

    dst: View
    src: View
    loc: SourceLoc = UNKNOWN_LOC


@dataclass(frozen=True)
class Store(_Node):
    """DMA SBUF -> HBM: ``dst`` (HBM view) = ``src`` (or ``op(dst, src)`` with ``accumulate``)."""

    dst: View
    src: View
    accumulate: Op | None = None
    loc: SourceLoc = UNKNOWN_LOC
    _enums = (("accumulate", Op),)


@dataclass(frozen=True)
class Matmul(_Node):
    """``dst[M, N] (+)= stationary[K, M].T @ moving[K, N]``; dst in PSUM (fp32)."""

    dst: View
    stationary: View
    moving: View
    accumulate: bool = False
    loc: SourceLoc = UNKNOWN_LOC


@dataclass(frozen=True)
class Activation(_Node):
    """``dst = op(src * scale + bias)``; ``reduce_dst`` (P,1) gets the row sums of dst if set."""

    dst: View
    op: Op
    src: View
    bias: Operand | None = None
    scale: Operand | None = None
    reduce_dst: View | None = None
    loc: SourceLoc = UNKNOWN_LOC
    _enums = (("op", Op),)


@dataclass(frozen=True)
class TensorTensor(_Node):
    """``dst = op(a, b)`` elementwise."""

    dst: View
    op: Op
    a: View
    b: View
    loc: SourceLoc = UNKNOWN_LOC
    _enums = (("op", Op),)


@dataclass(frozen=True)
class TensorScalar(_Node):
    """``t = op0(src, operand0)`` then optionally ``dst = op1(t, operand1)``.

    Operands are immediates (:class:`Lit`/:class:`Param`) or ``(P, 1)`` views broadcast along the
    free dims; ``reverse`` swaps an op's arguments (``operand op src``).
    """

    dst: View
    src: View
    op0: Op
    operand0: Operand
    reverse0: bool = False
    op1: Op | None = None
    operand1: Operand | None = None
    reverse1: bool = False
    loc: SourceLoc = UNKNOWN_LOC
    _enums = (("op0", Op), ("op1", Op))


@dataclass(frozen=True)
class TensorReduce(_Node):
    """``dst = reduce(op, src, axes)`` over free axes (never 0); dst keeps rank (size-1 dims)."""

    dst: View
    op: Op
    src: View
    axes: tuple[int, ...] = (1,)
    negate: bool = False
    loc: SourceLoc = UNKNOWN_LOC
    _enums = (("op", Op),)


@dataclass(frozen=True)
class TensorTranspose(_Node):
    """2-D transpose of partition vs free dim (TensorE: SBUF -> PSUM, <= 128x128)."""

    dst: View
    src: View
    loc: SourceLoc = UNKNOWN_LOC


@dataclass(frozen=True)
class TensorSelect(_Node):
    """``dst = pred ? on_true : on_false`` elementwise (pred nonzero = true)."""

    dst: View
    pred: View
    on_true: Operand
    on_false: Operand
    loc: SourceLoc = UNKNOWN_LOC


@dataclass(frozen=True)
class TensorCopy(_Node):
    """On-chip copy with dtype conversion (PSUM -> SBUF evacuation, casts)."""

    dst: View
    src: View
    loc: SourceLoc = UNKNOWN_LOC


@dataclass(frozen=True)
class TensorBitcast(_Node):
    """``dst`` = the bits of ``src`` read as ``dst``'s dtype (same width): a copy of ``src``
    through a dtype view of it (``src.view(dtype)``, NKI's zero-cost reinterpretation), on the
    Vector engine, which copies equal dtypes bit-exactly."""

    dst: View
    src: View
    loc: SourceLoc = UNKNOWN_LOC


@dataclass(frozen=True)
class TensorGather(_Node):
    """``dst[p, j] = data[p, indices[p, j]]``: each partition picks elements of its own row of
    ``data`` (GpSimd ``nc_n_gather``; ``indices`` a uint32 tile shaped like ``dst``)."""

    dst: View
    data: View
    indices: View
    loc: SourceLoc = UNKNOWN_LOC


@dataclass(frozen=True)
class TensorScan(_Node):
    """Per-partition running combination along the free axis: ``r = op(r, src[:, i]); dst[:, i] = r``
    starting from ``initial`` (immediate or ``(P, 1)`` view: carries between tiles)."""

    dst: View
    src: View
    op: Op
    initial: Operand
    loc: SourceLoc = UNKNOWN_LOC
    _enums = (("op", Op),)


@dataclass(frozen=True)
class BnStats(_Node):
    """Per-partition batch-norm statistics of ``src`` (free size <= 512, ``bn_stats_fmax``):
    ``dst`` (6 elements per partition) = ``[count, mean, var*count]`` of the even free positions,
    then the same of the odd positions (population variance)."""

    dst: View
    src: View
    loc: SourceLoc = UNKNOWN_LOC


@dataclass(frozen=True)
class BnAggr(_Node):
    """Per-partition ``[mean, var]`` (``dst``, 2 elements) of the ``(count, mean, var*count)``
    triples in ``src`` (the :class:`BnStats` of a row's chunks); population variance."""

    dst: View
    src: View
    loc: SourceLoc = UNKNOWN_LOC


@dataclass(frozen=True)
class IntArith(_Node):
    """``dst = a op b`` with C's semantics on 32-bit integers, bit-exact (``unsigned``: the
    operation's C type is ``unsigned``): ``add``/``sub``/``mul`` wrap modulo 2**32, ``div``/``mod``
    truncate, ``shr`` is arithmetic for signed values, comparisons yield a 0/1 float32 mask and
    ``max``/``min`` select an operand.  The engines compute arithmetic in fp32 (exact below 2**24),
    so the generated code spells it with the shared 32-bit helpers
    (``templates/int32_common.py.j2``: 16-bit halves and bytes reassembled with bit operations);
    bitwise ops and shifts by a count need no helper and are plain engine instructions.  Operands
    are integer tiles of the same partitions or immediates; ``dst`` is an integer tile (a float32
    tile for a comparison)."""

    dst: View
    op: Op
    a: Operand
    b: Operand
    unsigned: bool = False
    loc: SourceLoc = UNKNOWN_LOC
    _enums = (("op", Op),)


@dataclass(frozen=True)
class Memset(_Node):
    dst: View
    value: Lit
    loc: SourceLoc = UNKNOWN_LOC


@dataclass(frozen=True)
class Iota(_Node):
    """``dst[p, f...] = offset + p*channel_multiplier + sum(step_d * f_d)``; pattern = ((step, n)...)."""

    dst: View
    pattern: tuple[tuple[int, int], ...]
    offset: int = 0
    channel_multiplier: int = 0
    loc: SourceLoc = UNKNOWN_LOC

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "pattern", tuple(tuple(p) for p in self.pattern))


@dataclass(frozen=True)
class Note(_Node):
    """A ``# C2Nxxxx: text`` marker for the generated code (a decision a human should check)."""

    code: str
    text: str
    loc: SourceLoc = UNKNOWN_LOC


IntentStmt = Compute
ScheduledStmt = Union[
    Loop,
    Alloc,
    Load,
    Store,
    Matmul,
    Activation,
    TensorTensor,
    TensorScalar,
    TensorReduce,
    TensorTranspose,
    TensorSelect,
    TensorCopy,
    TensorBitcast,
    TensorScan,
    BnStats,
    BnAggr,
    IntArith,
    Memset,
    Iota,
    Note,
]
Stmt = Union[Compute, ScheduledStmt]


@dataclass(frozen=True)
class Kernel(_Node):
    """A kernel at either layer: intent (body of :class:`Compute`) or scheduled."""

    name: str
    params: tuple[TensorDecl | ScalarDecl, ...]
    body: tuple[Stmt, ...] = ()
    temps: tuple[TensorDecl, ...] = ()
    attrs: tuple[tuple[str, str], ...] = ()
    loc: SourceLoc = UNKNOWN_LOC

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "attrs", tuple(tuple(p) for p in self.attrs))

    @property
    def tensors(self) -> dict[str, TensorDecl]:
        """Parameter and temporary tensors by name."""
        out = {p.name: p for p in self.params if isinstance(p, TensorDecl)}
        out.update((t.name, t) for t in self.temps)
        return out

    @property
    def scalars(self) -> dict[str, ScalarDecl]:
        return {p.name: p for p in self.params if isinstance(p, ScalarDecl)}

    @property
    def inputs(self) -> tuple[TensorDecl, ...]:
        return tuple(
            p for p in self.params if isinstance(p, TensorDecl) and p.role in (Role.IN, Role.INOUT)
        )

    @property
    def outputs(self) -> tuple[TensorDecl, ...]:
        return tuple(
            p for p in self.params if isinstance(p, TensorDecl) and p.role in (Role.OUT, Role.INOUT)
        )

    @property
    def is_scheduled(self) -> bool:
        return any(not isinstance(s, Compute) for s in self.body)
