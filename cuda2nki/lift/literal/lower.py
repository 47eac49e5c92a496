"""CUDA AST -> literal program: the generic SIMT-vectorised lowering (issue 4 §2).

Choices (each one keeps the port a faithful, if slow, copy of the CUDA kernel):

* **Grid.** The current NKI API has no N-D launch grid, so the port loops over every block of the
  launch grid (``for by: for bx:``) and calls one per-block function; the grid extents are the
  binding's launch expressions, evaluated from the tensor shapes when the kernel is traced.
* **Threads.** The threads of a block are the elements of one (P, F) tile.  A 1-D block of B
  threads uses P = the largest divisor of B not above 128, F = B / P and thread ``tx = F*p + f``
  (consecutive threads are consecutive elements of a partition); a 2-D block (Bx, By <= 128) puts
  ``ty`` on the partition axis and ``tx`` on the free axis.  Both make threadIdx affine in the
  tile position, so an index affine in threadIdx, blockIdx, loop counters and scalars is a
  strided access pattern ``base + cp*p + cf*f`` on the flat tensor (one DMA per CUDA load/store).
* **Values.** Uniform values are Python values at trace time; per-thread values are fp32 (int32
  for integers) tiles computed with elementwise ``nl`` ops; see :mod:`.values` and
  :mod:`.classify`.
* **Divergence.** A branch whose condition differs between threads evaluates both sides under
  masks; a local assigned under a mask becomes ``nl.where(mask, new, old)``; a store writes only
  where its mask holds (read-modify-write of the view); a return under a mask clears the threads
  from a ``live`` mask.  Uniform branches and loops stay Python control flow (specialised at
  trace time).  A loop whose trip count differs between threads but whose condition is affine in
  the thread runs until no thread satisfies it (decided at trace time, the values are indices,
  not data) with the condition as a mask.
* **Memory.** ``__shared__`` arrays become HBM scratch buffers accessed with the same strided DMA
  views: threads exchange values through memory as they do in CUDA.  ``__syncthreads`` needs no
  instruction: the tile program runs the threads of a block in lockstep, statement by statement,
  which is the order the SIMT interpreter defines.  Outputs start as zeros (the value the
  interpreter's buffers hold) or as a copy of their input (inout).  Several threads storing to one
  element write in thread order, so the last active thread wins, as in the interpreter.

* **Reads.** A read repeated with no write in between reuses the first tile, a read a loop
  does not change is loaded in front of it, and the reads of a counted loop that walk a row are
  loaded in runs of iterations (:mod:`.reuse`, :mod:`.runs`); a guarded store whose guard is an
  index condition writes without reading back in blocks whose threads all pass it.

* **Warps.** Shuffles go through an exchange buffer (write at the linear thread id, read the
  source lane's element); a kernel that computes with lanes gets one warp per partition.
* **Index arithmetic** that is not affine (``i / w``, ``max(r - 1, 0)``) is evaluated with NumPy
  when the kernel is traced (it depends on indices only) and its accesses are split into as few
  strided DMAs as the values allow.
* **Atomics** whose old value is unused apply every active thread's update in thread order
  (threads at one element combined first).
* **Addresses read from data.** An index or pointer offset that depends on data becomes an int32
  tile of flat element addresses (:class:`~.values.DynPtr` for a pointer).  A read is a gather:
  one indirect DMA per thread column (``vector_select`` with a per-partition row offset; legacy:
  an index tile on the partition dim of the flattened tensor).  ``atomicAdd``/``atomicSub`` there
  (histograms, scatter-adds) is one scatter read-modify-write DMA per column that accumulates
  repeated addresses (``nisa.dma_compute``; legacy ``nl.atomic_rmw``); the DMA engine adds in
  fp32, so integer totals are exact below 2**24.  Inactive threads and addresses outside the
  buffer read element 0 or add the identity; buffers must have fewer than 2**24 elements.
* **Integers** on the engines are fp32 arithmetic (exact below 2**24), so C's 32-bit
  ``+ - * / %``, ``>>`` (logical for unsigned, arithmetic for signed) and comparisons of
  per-thread integers are spelled with helpers that split values into 16-bit halves and bytes
  and reassemble them with bit operations: bit-exact, with C's wraparound (``/`` and ``%`` are
  restoring division, one compare-and-subtract per quotient bit).
  Integer tiles hold 32-bit patterns (unsigned loads and stores keep them; an unsigned value
  entering float arithmetic or a cast is converted as unsigned) and selects between them are
  bitwise.
* **Loops bounded by a counter.** A loop whose condition depends on data is ported when a
  conjunct ``c < K`` (``<=``, mirrored) bounds it: ``c`` starts at a literal, is stepped by one
  exactly once per iteration and ``K`` is uniform (:mod:`.bound`).  It runs that many
  iterations at trace time with a per-thread active mask that the condition clears.

* **Loop exits.** ``break``/``continue`` under a per-thread condition are lowered again as
  per-thread flags that mask the threads that left (:mod:`.flow`); locals that reuse a name are
  given one name per declaration first when a lowering is refused (:mod:`.rename`).  A store
  through a pointer moved by index arithmetic that is not affine (an address tile, like data)
  stores at a trace-time snapshot of the addresses (:mod:`.knownaddr`), not as a scatter.
* **Local arrays** indexed by a per-thread value select each thread's element (reads) or
  update the element each thread names (writes), one compare per element (:mod:`.lanearray`).

* **Scatter stores.** A plain store at addresses read from data writes thread by thread in
  thread order (read the element, select, write it back: ``_c2n_scatter``).  Where several
  active threads store to one element CUDA leaves one of their values, unspecified which; the
  port leaves the last one in launch order (blocks in order, then thread ids), the outcome the
  SIMT interpreter's lockstep order gives, so that ``check`` compares it with that one legal
  outcome (a port that keeps another writer's value is reported as a mismatch).

Anything else is refused with C2N2301 naming the construct and its line: atomics other than
add/sub at data-dependent addresses, atomics whose old value is used, warp votes, vectors
:mod:`.scalarise` cannot split into lanes, double precision, loops whose trip count depends on
data with no counter bounding it, 3-D blocks.
"""

from __future__ import annotations

import ast as pyast
import keyword
from dataclasses import dataclass, field

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.asynccopy import is_sync_object
from cuda2nki.ir.ops import DTYPE_BYTES
from cuda2nki.lift import mathcompose
from cuda2nki.lift.collective import collective_reason
from cuda2nki.lift.literal import deferred, intcalls, mathnames, rounding
from cuda2nki.lift.literal.bound import trip_bound
from cuda2nki.lift.literal.classify import Classifier, is_float, is_intlike
from cuda2nki.lift.literal.content import content, decl_key, divides, write_counts
from cuda2nki.lift.literal.deferred import Unset
from cuda2nki.lift.literal.exchange import atomic_refusal, exchange_store
from cuda2nki.lift.literal.globalnames import constant_scalars, unbound_name_reason
from cuda2nki.lift.literal.knownaddr import drop_unused, index_address
from cuda2nki.lift.literal.lanearray import lane_index, read_element, write_element
from cuda2nki.lift.literal.live import drop_known
from cuda2nki.lift.literal.program import Branch, Instr, Loop, Node
from cuda2nki.lift.literal.single_exit import single_exit
from cuda2nki.lift.literal.tables import table_items
from cuda2nki.lift.literal.unbounded import unbounded_reason
from cuda2nki.lift.literal.unimath import uniform_math
from cuda2nki.lift.literal.values import (
    DynPtr,
    Idx,
    Lin,
    Local,
    Ptr,
    Tile,
    Uni,
    Value,
    add,
    as_lin,
    const_int,
    is_int,
    lin_add,
    lin_scale,
    lin_sub,
    mul,
    paren,
    sub,
)


class LiteralRefusal(Exception):
    """A construct the literal lowering cannot translate faithfully."""

    def __init__(self, construct: str, loc: object) -> None:
        super().__init__(construct)
        self.construct = construct
        self.loc = loc


class NotAffine(LiteralRefusal):
    """A local classified thread-affine took a value that is not (``r = r % (T * T)``: the
    division is not exact in the thread); lowering again with ``local`` an index local ports it
    (see :func:`lower_kernel_body`)."""

    def __init__(self, local: str, loc: object) -> None:
        super().__init__("a non-affine value assigned to an affine local", loc)
        self.local = local


_FLOAT_DT = {"float32": "nl.float32", "float16": "nl.float16", "bfloat16": "nl.bfloat16"}
_INT_DT = {
    "int32": "nl.int32",
    "uint32": "nl.uint32",
    "int16": "nl.int16",
    "uint16": "nl.uint16",
    "int8": "nl.int8",
    "uint8": "nl.uint8",
    "bool": "nl.uint8",
}
_MATH1 = {
    "expf": "exp", "__expf": "exp", "exp": "exp", "logf": "log", "__logf": "log", "log": "log",
    "sqrtf": "sqrt", "sqrt": "sqrt", "rsqrtf": "rsqrt", "tanhf": "tanh", "tanh": "tanh",
    "fabsf": "abs", "fabs": "abs", "abs": "abs", "sinf": "sin", "__sinf": "sin", "cosf": "cos",
    "__cosf": "cos", "erff": "erf", "floorf": "floor", "ceilf": "ceil", "expf_": "exp",
    "exp2f": "exp2", "log2f": "log2", "truncf": "trunc",
}  # fmt: skip
_MATH2 = {
    "fmaxf": "maximum", "fminf": "minimum", "max": "maximum", "min": "minimum",
    "fmax": "maximum", "fmin": "minimum", "powf": "power", "__fdividef": "divide",
    "fdividef": "divide",
}  # fmt: skip
_NP1 = {
    "exp": "np.exp", "log": "np.log", "sqrt": "np.sqrt", "tanh": "np.tanh", "abs": "abs",
    "sin": "np.sin", "cos": "np.cos", "floor": "np.floor", "ceil": "np.ceil", "trunc": "np.trunc",
}  # fmt: skip
_BIN = {
    "+": "add", "-": "subtract", "*": "multiply", "/": "divide", "<": "less",
    "<=": "less_equal", ">": "greater", ">=": "greater_equal", "==": "equal",
    "!=": "not_equal", "&": "bitwise_and", "|": "bitwise_or", "^": "bitwise_xor",
    "<<": "left_shift", ">>": "right_shift",
}  # fmt: skip
_CMP = {"<", "<=", ">", ">=", "==", "!="}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_NOOP_CALLS = {"__syncthreads", "__syncwarp", "__threadfence", "__threadfence_block", "assert"}
_CONVERT = {
    "__float2half", "__half2float", "__float2bfloat16", "__bfloat162float", "__float2half_rn",
    "__float2bfloat16_rn", "__int2float_rn", "__uint2float_rn",
}  # fmt: skip
_RESERVED = {"nl", "nisa", "np", "nki", "range", "min", "max", "abs", "len"}


def dtype_spelling(name: str) -> str:
    if name in _FLOAT_DT:
        return _FLOAT_DT[name]
    if name in _INT_DT:
        return _INT_DT[name]
    raise KeyError(name)


@dataclass
class Scope:
    """What the lowering knows at one point of the per-block program."""

    mask: str | None = None  # the threads executing here (None: all live threads)
    depth: int = 0  # nesting of per-thread conditions (see classify)
    in_varying_loop: bool = False
    np_mask: str | None = None  # the index-only conditions among them, as a trace-time array


@dataclass
class Binding_:
    value: Value
    klass: str  # U L T P A
    depth: int
    ty: str = "float"
    cname: str = ""


@dataclass
class Lowerer:
    tu: A.TranslationUnit
    fn: A.Function
    binding: object
    partitions: int
    free: int
    tx: Lin
    ty_: Lin
    tensors: dict[str, str]  # CUDA pointer parameter -> tensor variable of the port
    out: list[list[Node]] = field(default_factory=lambda: [[]])
    env: list[dict[str, Binding_]] = field(default_factory=lambda: [{}])
    names: set[str] = field(default_factory=set)
    counter: int = 0
    scratch: list[Instr] = field(default_factory=list)
    classes: dict[str, str] = field(default_factory=dict)
    live: bool = False
    # whether every early return cleared threads by a condition known at trace time, so that
    # ``_klive`` is exactly ``_live`` (else the known masks made from it are dropped at the end)
    live_exact: bool = True
    live_known: set[str] = field(default_factory=set)  # known masks made from ``_klive``
    dead: bool = False
    inline_depth: int = 0
    ret_slot: list[str | None] = field(default_factory=list)
    block_dims: tuple[int, int, int] = (1, 1, 1)
    entry_scope: list[Scope] = field(default_factory=list)
    entry_nest: list[int] = field(default_factory=list)  # len(out) where each inlining began
    known: dict[str, int] = field(default_factory=dict)  # spelled name -> known divisor
    # mask tile -> the trace-time boolean array it was made from (the exact active threads)
    exact: dict[str, str] = field(default_factory=dict)
    writes: dict[str, int] = field(default_factory=dict)
    reshape: dict[str, int] = field(default_factory=dict)
    # statements done since the innermost loop began, per block level (None: a loop boundary)
    trail: list[list[A.Stmt] | None] = field(default_factory=list)
    # locals known to hold index values that are not affine in the thread (class I at least)
    forced: dict[str, str] = field(default_factory=dict)
    # address tile -> the trace-time array of the same addresses, where they depend on indices
    # only (a snapshot taken when the address was formed; see :mod:`.knownaddr`)
    known_addr: dict[str, str] = field(default_factory=dict)
    snapshots: int = 0  # how many were taken (their own numbering: unused ones are dropped)

    # ------------------------------------------------------------------ emission helpers
    def emit(self, kind: str, line: int = 0, **operands: str) -> None:
        self.out[-1].append(Instr(kind, tuple(operands.items()), line))

    def fresh(self, base: str = "t") -> str:
        self.counter += 1
        return f"_{base}{self.counter}"

    def pyname(self, name: str) -> str:
        base = name if not keyword.iskeyword(name) and name not in _RESERVED else name + "_"
        cand, k = base, 1
        while cand in self.names:
            k += 1
            cand = f"{base}_{k}"
        self.names.add(cand)
        return cand

    def lookup(self, name: str) -> Binding_ | None:
        for frame in reversed(self.env):
            if name in frame:
                return frame[name]
        return None

    def refuse(self, what: str, node: A.Node) -> LiteralRefusal:
        return LiteralRefusal(what, node.loc)

    def per_thread(self, name: str) -> bool:
        """Whether local ``name`` holds a per-thread tile here."""
        b = self.lookup(name)
        return b is not None and isinstance(b.value, Tile)

    # ------------------------------------------------------------------ per-thread helpers
    def tile(self, v: Value, ty: str | None = None, node: A.Node | None = None) -> str:
        """Spell ``v`` as an operand of an elementwise op (a tile, or a scalar if uniform)."""
        if isinstance(v, Uni):
            if ty == "float" and v.ty != "float":
                return f"np.float32({v.expr})"
            return v.expr
        if isinstance(v, Lin):
            if v.uniform:
                return f"np.float32({v.b})" if ty == "float" else v.b
            name = self.fresh("i")
            dt = "nl.float32" if ty == "float" else "nl.int32"
            self.emit("iota", dst=name, base=v.b, cp=v.p, cf=v.f, dtype=dt)
            return name
        if isinstance(v, Idx):
            name = self.fresh("x")
            # a condition is a 0/1 float mask, unless it takes part in integer arithmetic
            # (C promotes it to int: ``(a > b) * 2 - (i % 3 == 0)``)
            flt = ty == "float" or (v.ty == "bool" and ty != "int")
            dt = "nl.float32" if flt else "nl.int32"
            self.emit("let", dst=name, value=f"_c2n_const({v.expr}, {dt})")
            return name
        if isinstance(v, Tile):
            if ty == "float" and v.ty == "int":
                name = self.fresh("c")
                self.emit("op", dst=name, op="copy", args=v.expr, dtype="nl.float32")
                return name
            if ty == "int" and v.ty == "bool":  # a 0/1 mask in integer arithmetic: an int
                return self.op("copy", [v.expr], "int").expr
            return v.expr
        raise self.refuse("a pointer or array used as a value", node or self.fn)

    def full_tile(self, v: Value, ty: str, node: A.Node) -> str:
        s = self.tile(v, ty, node)
        if isinstance(v, Uni) or (isinstance(v, Lin) and v.uniform):
            name = self.fresh("k")
            value = s if ty == "float" or is_int(s) and abs(int(s)) < 2**24 else f"_c2n_u32({s})"
            self.emit("full", dst=name, value=value, dtype=self.dt(ty))
            return name
        return s

    @staticmethod
    def dt(ty: str) -> str:
        return "nl.int32" if ty == "int" else "nl.float32"

    def op(self, name: str, args: list[str], ty: str) -> Tile:
        dst = self.fresh()
        self.emit("op", dst=dst, op=name, args=", ".join(args), dtype=self.dt(ty))
        return Tile(dst, "bool" if name in _BIN_CMP else ty)

    def mask_and(self, a: str | None, b: str | None) -> str | None:
        if a is None or b is None:
            return a if b is None else b
        out = self.op("multiply", [a, b], "float").expr
        if a in self.exact and b in self.exact:
            self.known_mask(out, f"{self.exact[a]} & {self.exact[b]}")
            if {a, b} & {"_live"} or {self.exact[a], self.exact[b]} & self.live_known:
                self.live_known.add(self.exact[out])
        return out

    def mask_not(self, a: str) -> str:
        out = self.op("subtract", ["1.0", a], "float").expr
        if a in self.exact:
            self.known_mask(out, f"~{self.exact[a]}")
        return out

    def known_mask(self, tile: str, cond: str) -> None:
        """Record that the mask ``tile`` is the per-thread condition ``cond``, known at trace
        time (a snapshot: later changes of the index locals it reads do not reach it)."""
        name = self.fresh("km")
        self.emit("let", dst=name, value=f"_c2n_known({cond})")
        self.exact[tile] = name

    def cond_tile(self, v: Value, node: A.Node) -> str:
        """A 0/1 mask tile for a per-thread condition value."""
        if isinstance(v, Tile) and v.ty == "bool":
            return v.expr
        if isinstance(v, Idx) and v.parts:
            mask = None
            for opname, d in v.parts:
                t = self.tile(d, None, node)
                if isinstance(d, Lin) and d.uniform:  # a counter the threads share: a tile of it
                    t = self.fresh("i")
                    self.emit("iota", dst=t, base=d.b, cp=d.p, cf=d.f, dtype="nl.int32")
                mask = self.mask_and(mask, self.op(opname, [t, "0"], "float").expr)
            if mask is not None and mask not in self.exact:
                self.known_mask(mask, f"{v.expr} != 0")
            return mask  # type: ignore[return-value]
        if isinstance(v, Idx):
            name = self.fresh("m")
            self.emit("let", dst=name, value=f"_c2n_const({v.expr} != 0, nl.float32)")
            self.known_mask(name, f"{v.expr} != 0")
            return name
        if _is_scalar(v):
            return self.full_tile(Uni(f"float(bool({self.tile(v, None, node)}))", "float"),
                                  "float", node)  # fmt: skip
        t = self.tile(v, None, node)
        return self.op("not_equal", [t, "0"], "float").expr

    def store_mask(self, scope: Scope) -> str:
        m = scope.mask
        if self.live:
            m = self.mask_and(m, "_live")
        return "None" if m is None else m

    # ------------------------------------------------------------------ entry
    def lower_body(self) -> list[Node]:
        self.classes = Classifier(self.forced, self.thread_kind, lambda n: _callee(self.tu, n)).run(
            self.fn.body
        )
        self.writes, self.reshape = write_counts(self.fn.body)
        params = self.constant_tables()
        for name, (value, ty) in constant_scalars(self.tu).items():
            params[name] = Binding_(Uni(value, ty), "U", 0, ty)
        for p in self.fn.params:
            params[p.name] = self.param_binding(p)
        self.env = [params]
        self.out = [[]]
        if _has_varying_return(self.fn.body, self):
            self.live = True
            self.emit("full", dst="_live", value="1.0", dtype="nl.float32")
            self.emit("let", dst="_klive", value="_c2n_known(True)")
            self.exact["_live"] = "_klive"
            self.live_known.add("_klive")
        self.block(self.fn.body.body, Scope())
        body = drop_unused(self.out[0]) if self.snapshots else self.out[0]
        if not self.live_exact:
            return drop_known(body, self.live_known)
        return body

    def constant_tables(self) -> dict[str, Binding_]:
        """``__constant__`` arrays with a literal initialiser become constant HBM tensors."""
        out: dict[str, Binding_] = {}
        for g in self.tu.globals:
            ty, dims = g.ty, []
            while isinstance(ty, A.ArrayType):
                dims.extend(ty.dims)
                ty = ty.elem
            values = table_items(g.init, dims)
            if not dims or values is None or not isinstance(ty, A.ScalarType):
                continue
            if ty.name == "float64" or any(d is None for d in dims):
                continue
            values = values + ["0"] * (_prod(dims) - len(values))
            np_dt = "np.float32" if ty.is_float else "np.int32"
            name = self.pyname("_cst_" + g.name)
            self.scratch.append(Instr("let", (("dst", name), (
                "value", f"nl.shared_constant(np.array([{', '.join(values)}], dtype={np_dt}))"))))  # fmt: skip
            klass = "float" if ty.is_float else "int"
            out[g.name] = Binding_(
                Ptr(name, Lin("0", "0", "0"), klass, tuple(int(d) for d in dims[1:])), "P", 0
            )
        return out

    def param_binding(self, p: A.Param) -> Binding_:
        if isinstance(p.ty, A.PointerType):
            if p.name not in self.tensors:
                raise self.refuse(f"pointer parameter '{p.name}' without a binding", p)
            return Binding_(
                Ptr(self.tensors[p.name], Lin("0", "0", "0"), _elem_class(p.ty.pointee, p, self)),
                "P",
                0,
            )
        if isinstance(p.ty, A.ScalarType):
            if p.ty.name in ("float64", "int64", "uint64") and p.ty.is_float:
                raise self.refuse(f"double-precision parameter '{p.name}'", p)
            ty = "float" if p.ty.is_float else "int"
            return Binding_(Uni(_py(p.name), ty), "U", 0, ty)
        raise self.refuse(f"parameter '{p.name}' of type {type(p.ty).__name__}", p)

    def thread_kind(self, b: A.Builtin) -> str:
        if b.name == "threadIdx":
            lin = {"x": self.tx, "y": self.ty_, "z": Lin("0", "0", "0")}[b.dim]
            return "U" if lin.uniform else "L"
        return "U"

    # ------------------------------------------------------------------ statements
    def block(self, items: tuple[A.Stmt, ...], scope: Scope) -> None:
        self.env.append({})
        self.trail.append([])
        try:
            for s in items:
                if self.dead:
                    break
                self.stmt(s, scope)
                self.trail[-1].append(s)  # type: ignore[union-attr]
        finally:
            self.trail.pop()
            self.env.pop()

    def preceding(self) -> list[A.Stmt]:
        """The statements done since the innermost enclosing loop began, in order."""
        out: list[A.Stmt] = []
        for frame in reversed(self.trail):
            if frame is None:
                break
            out[:0] = frame
        return out

    def stmt(self, s: A.Stmt, scope: Scope) -> None:  # noqa: PLR0912
        line = s.loc.line
        if isinstance(s, A.Block):
            self.block(s.body, scope)
        elif isinstance(s, A.Empty):
            return
        elif isinstance(s, A.VarDecl):
            self.decl(s, scope)
        elif isinstance(s, A.ExprStmt):
            self.emit("comment", line, text=f"from line {line}")
            if isinstance(s.expr, A.Call) and s.expr.func in _ATOMICS:
                self.atomic(s.expr, scope)
            elif isinstance(s.expr, A.Call) and exchange_store(s.expr) is not None:
                self.expr(exchange_store(s.expr), scope)  # the last thread's value stays
            else:
                self.expr(s.expr, scope)
        elif isinstance(s, A.If):
            self.if_(s, scope)
        elif isinstance(s, A.For):
            self.for_(s, scope)
        elif isinstance(s, A.While):
            self.while_(s.cond, s.body, (), scope, s)
        elif isinstance(s, A.DoWhile):
            self.do_while(s, scope)
        elif isinstance(s, A.Switch):
            self.stmt(_switch_as_if(s, self), scope)
        elif isinstance(s, A.Return):
            self.return_(s, scope)
        elif isinstance(s, A.Break):
            if scope.mask is not None or scope.in_varying_loop:
                raise self.refuse("break under a per-thread condition", s)
            self.emit("brk", line)
        elif isinstance(s, A.Continue):
            raise self.refuse("continue statement", s)
        else:
            raise self.refuse(f"statement {type(s).__name__}", s)

    def decl(self, s: A.VarDecl, scope: Scope) -> None:
        if is_sync_object(s.ty) and not isinstance(s.ty, A.PointerType):
            return  # a pipeline or barrier holds no data: its waits are barriers or nothing
        if s.storage in ("shared", "extern_shared"):
            self.shared_decl(s)
            return
        if s.storage == "static":
            raise self.refuse(f"static local '{s.name}'", s)
        if isinstance(s.ty, A.ArrayType):
            self.local_array(s, scope)
            return
        if isinstance(s.ty, A.PointerType):
            if s.init is None:  # bound by its first assignment
                unset = Unset(s.name, len(self.out))
                self.env[-1][s.name] = Binding_(unset, "P", scope.depth)  # type: ignore[arg-type]
                return
            v = self.expr(s.init, scope)
            if isinstance(v, DynPtr):
                self.env[-1][s.name] = Binding_(v, "P", scope.depth)
                return
            if not isinstance(v, Ptr):
                raise self.refuse(f"pointer '{s.name}' initialised from a non-pointer", s)
            self.env[-1][s.name] = Binding_(self.hold_ptr(s.name, v), "P", scope.depth)
            return
        if not isinstance(s.ty, A.ScalarType):
            raise self.refuse(f"variable '{s.name}' of vector or class type", s)
        if s.ty.name == "float64":
            raise self.refuse(f"double-precision variable '{s.name}'", s)
        ty = "float" if s.ty.is_float else "int"
        klass = self.classes.get(s.name, "T")
        name = self.pyname(s.name)
        if s.init is None:
            init: Value = Uni("0" if ty == "int" else "np.float32(0.0)", ty)
        else:
            init = self.convert(self.expr(s.init, scope), s.ty, s)
            if self.writes.get(decl_key(s), 0) == 1 and not self.inline_depth:
                # written only here: its class is the class of the value it holds
                klass = {Uni: "U", Lin: "L", Idx: "I"}.get(type(init), "T")
                if isinstance(init, Lin) and init.uniform:
                    klass, init = "U", Uni(init.b, "int")
        if klass == "I" and ty != "int":
            klass = "T"
        b = Binding_(Uni(name, ty), klass, scope.depth, ty, decl_key(s))
        self.env[-1][s.name] = b
        self.write_var(b, name, init, scope, s, fresh=True)

    def hold_ptr(self, cname: str, v: Ptr) -> Ptr:
        name = self.pyname(cname + "_off")
        off = v.off
        if isinstance(off, Idx):  # a row chosen by index arithmetic (``b = r / (H * T)``)
            self.emit("let", dst=name, value=f"_c2n_np({off.expr})")
            return Ptr(v.tensor, Idx(name), v.ty, v.dims)
        if off.uniform:
            self.emit("let", dst=name, value=off.b)
            return Ptr(v.tensor, Lin(name, "0", "0"), v.ty, v.dims)
        self.emit("let", dst=name, value=f"({off.b}, {off.p}, {off.f})")
        return Ptr(v.tensor, Lin(f"{name}[0]", f"{name}[1]", f"{name}[2]"), v.ty, v.dims)

    def shared_decl(self, s: A.VarDecl) -> None:
        ty, dims = s.ty, []
        while isinstance(ty, A.ArrayType):
            dims.extend(ty.dims)
            ty = ty.elem
        if not isinstance(ty, A.ScalarType) or ty.name == "float64":
            raise self.refuse(f"__shared__ '{s.name}' of this element type", s)
        if s.storage == "extern_shared" or any(d is None for d in dims):
            nbytes = self.shared_bytes()
            known = const_int(nbytes)
            size = (
                str(max(1, known // (ty.bits // 8)))
                if known is not None
                else f"max(1, {nbytes} // {ty.bits // 8})"
            )
            dims = [0]
        else:
            size = str(_prod(dims))
        name = self.pyname("_sh_" + s.name)
        self.scratch.append(
            Instr("scratch", (("dst", name), ("size", size), ("dtype", dtype_spelling(ty.name))))
        )
        klass = "float" if ty.is_float else "int"
        ptr = Ptr(name, Lin("0", "0", "0"), klass, tuple(int(d) for d in dims[1:]))
        # a __shared__ scalar is one element of block memory, read and written by name
        self.env[-1][s.name] = Binding_(ptr, "P" if isinstance(s.ty, A.ArrayType) else "S", 0)

    def shared_bytes(self) -> str:
        sb = getattr(self.binding, "shared_bytes", None)
        return "0" if sb is None else c_expr_to_py(str(sb))

    def local_array(self, s: A.VarDecl, scope: Scope) -> None:
        ty, dims = s.ty, []
        while isinstance(ty, A.ArrayType):
            dims.extend(ty.dims)
            ty = ty.elem
        if any(d is None for d in dims) or not isinstance(ty, A.ScalarType):
            raise self.refuse(f"local array '{s.name}' of unknown size or vector type", s)
        kty = "float" if ty.is_float else "int"
        name = self.pyname(s.name)
        self.emit("tiles", s.loc.line, dst=name, count=str(_prod(dims)), dtype=self.dt(kty))
        loc = Local(name, tuple(int(d) for d in dims), kty)
        self.env[-1][s.name] = Binding_(loc, "A", scope.depth, kty)
        if isinstance(s.init, A.InitList):
            for k, item in enumerate(s.init.items):
                v = self.expr(item, scope)
                self.emit("let", dst=f"{name}[{k}]", value=self.full_tile(v, kty, item))

    def write_var(
        self, b: Binding_, name: str, v: Value, scope: Scope, node: A.Node, fresh: bool = False
    ) -> None:
        """Assign ``v`` to the local spelled ``name`` according to its class."""
        once = self.writes.get(b.cname, 0) <= 1 and not self.inline_depth
        if b.klass == "U":
            if not isinstance(v, Uni) and not (isinstance(v, Lin) and v.uniform):
                raise self.refuse("a per-thread value assigned to a uniform local", node)
            expr = v.expr if isinstance(v, Uni) else v.b
            self.emit("let", node.loc.line, dst=name, value=expr)
            if once and b.ty == "int":
                self.known[name] = content(expr, self.known)
            b.value = Uni(name, b.ty)
            return
        if b.klass == "L":
            if isinstance(v, Idx) and b.cname and not self.inline_depth:
                raise NotAffine(b.cname.split("@")[0], node.loc)
            if not isinstance(v, Uni | Lin):
                raise self.refuse("a non-affine value assigned to an affine local", node)
            lin = as_lin(v)
            stable = self.reshape.get(b.cname, 0) <= 1 and not self.inline_depth
            if stable and is_int(lin.p) and is_int(lin.f):
                self.emit("let", node.loc.line, dst=name, value=lin.b)
                if once:
                    self.known[name] = content(lin.b, self.known)
                b.value = Lin(name, lin.p, lin.f)
                return
            self.emit("let", node.loc.line, dst=name, value=f"({lin.b}, {lin.p}, {lin.f})")
            b.value = Lin(f"{name}[0]", f"{name}[1]", f"{name}[2]")
            return
        if b.klass == "I":
            if not isinstance(v, Uni | Lin | Idx):
                raise self.refuse("a data value assigned to an index local", node)
            new_np = self.np_spell(v)
            if scope.depth > b.depth and not fresh:
                if scope.np_mask is None:
                    raise self.refuse("an index local assigned under a data condition", node)
                new_np = f"np.where({scope.np_mask}, {new_np}, {name})"
            self.emit("let", node.loc.line, dst=name, value=f"_c2n_np({new_np})")
            b.value = Idx(name)
            return
        new = self.full_tile(v, b.ty, node)
        masked = scope.depth > b.depth and scope.mask is not None and not fresh
        if masked:
            self.emit(
                "where", node.loc.line, dst=name, mask=scope.mask, a=new, b=name,
                dtype=self.dt(b.ty),
            )  # fmt: skip
        elif new != name:
            self.emit("op", node.loc.line, dst=name, op="copy", args=new, dtype=self.dt(b.ty))
        b.value = Tile(name, b.ty)

    def if_(self, s: A.If, scope: Scope) -> None:
        c = self.expr(s.cond, scope)
        if isinstance(c, Uni):
            then = self.sub_block(s.then, scope)
            else_ = self.sub_block(s.else_, scope) if s.else_ is not None else []
            self.out[-1].append(Branch(c.expr, tuple(then), tuple(else_), s.loc.line))
            return
        ct = self.cond_tile(c, s.cond)
        m_then = self.mask_and(scope.mask, ct)
        cnp = self.index_np(s.cond)
        inner = Scope(m_then, scope.depth + 1, scope.in_varying_loop,
                      _np_and(scope.np_mask, None if cnp is None else f"({cnp} != 0)"))  # fmt: skip
        self.emit("comment", s.loc.line, text=f"line {s.loc.line}: both branches, masked")
        self.stmt_dead_scoped(s.then, inner)
        if s.else_ is not None:
            m_else = self.mask_and(scope.mask, self.mask_not(ct))
            np_else = _np_and(scope.np_mask, None if cnp is None else f"({cnp} == 0)")
            self.stmt_dead_scoped(
                s.else_, Scope(m_else, scope.depth + 1, scope.in_varying_loop, np_else)
            )

    def stmt_dead_scoped(self, s: A.Stmt, scope: Scope) -> None:
        self.stmt(s, scope)
        self.dead = False  # a return inside a masked branch ends only that branch

    def sub_block(self, s: A.Stmt | None, scope: Scope) -> list[Node]:
        self.out.append([])
        try:
            if s is not None:
                self.stmt(s, scope)
        finally:
            body = self.out.pop()
        self.dead = False
        return body or [Instr("comment", (("text", "nothing"),))]

    def return_(self, s: A.Return, scope: Scope) -> None:
        if self.ret_slot:
            slot = self.ret_slot[-1]
            entry = self.entry_scope[-1]
            if scope.mask != entry.mask or scope.in_varying_loop != entry.in_varying_loop:
                raise self.refuse("return under a per-thread condition in a device function", s)
            if len(self.out) != self.entry_nest[-1]:  # the port's code would run past it
                raise self.refuse("return inside a branch or loop of a device function", s)
            if s.value is not None and slot is not None:
                v = self.expr(s.value, scope)
                self.ret_value = v
            self.dead = True
            return
        if s.value is not None:
            raise self.refuse("a kernel returning a value", s)
        if scope.mask is None and not scope.in_varying_loop:
            self.emit("ret", s.loc.line, value="None")
            self.dead = True
            return
        if not self.live:
            raise self.refuse("return under a per-thread condition", s)
        keep = self.mask_not(scope.mask) if scope.mask is not None else "0.0"
        self.emit("op", s.loc.line, dst="_live", op="multiply", args=f"_live, {keep}",
                  dtype="nl.float32")  # fmt: skip
        if scope.mask is None:
            self.emit("let", dst="_klive", value="_c2n_known(_klive & False)")
        elif scope.mask in self.exact:
            self.emit("let", dst="_klive", value=f"_c2n_known(_klive & ~{self.exact[scope.mask]})")
        else:
            self.live_exact = False
        self.dead = True

    def for_(self, s: A.For, scope: Scope) -> None:
        self.env.append({})
        self.trail.append([])
        try:
            for i in s.init:
                self.stmt(i, scope)
                self.trail[-1].append(i)  # type: ignore[union-attr]
            step = (A.ExprStmt(loc=s.step.loc, expr=s.step),) if s.step is not None else ()
            cond = s.cond if s.cond is not None else A.BoolLit(loc=s.loc, value=True)
            self.while_(cond, s.body, step, scope, s)
        finally:
            self.trail.pop()
            self.env.pop()

    def while_(
        self, cond: A.Expr, body: A.Stmt, step: tuple[A.Stmt, ...], scope: Scope, s: A.Stmt
    ) -> None:
        if _has_continue(body):
            raise self.refuse("continue statement", s)
        # lower the condition once to learn its kind, inside a scratch list that is discarded
        self.out.append([])
        c = self.expr(cond, scope)
        self.out.pop()
        if isinstance(c, Uni):
            self.out.append([])
            c = self.expr(cond, scope)
            pre = self.out.pop()
            if pre:
                raise self.refuse("a loop condition with side effects", cond)
            self.out.append([])
            self.trail.append(None)
            self.stmt(body, scope)
            self.dead = False
            for st in step:
                self.stmt(st, scope)
            self.trail.pop()
            inner = self.out.pop()
            self.out[-1].append(Loop("while", c.expr, tuple(inner), s.loc.line))
            return
        terms = self.affine_terms(cond, scope)
        if terms is None and isinstance(c, Idx):
            terms = [f"_c2n_term({c.expr})"]
        if terms is None and self.counted_loop(cond, body, step, scope, s, do=False):
            return
        if terms is None:
            raise self.refuse(unbounded_reason("a loop", cond, self.per_thread), s)
        self.out.append([])
        ct = self.cond_tile(self.expr(cond, scope), cond)
        cnp = self.index_np(cond)
        np_inner = _np_and(scope.np_mask, None if cnp is None else f"({cnp} != 0)")
        inner_scope = Scope(self.mask_and(scope.mask, ct), scope.depth + 1, True, np_inner)
        self.trail.append(None)
        self.stmt(body, inner_scope)
        self.dead = False
        for st in step:
            self.stmt(st, scope)
        self.trail.pop()
        inner = self.out.pop()
        header = f"_c2n_any([{', '.join(terms)}])"
        self.out[-1].append(Loop("while", header, tuple(inner), s.loc.line))

    def counted_loop(
        self,
        cond: A.Expr,
        body: A.Stmt,
        step: tuple[A.Stmt, ...],
        scope: Scope,
        s: A.Stmt,
        *,
        do: bool,
    ) -> bool:
        """A loop whose condition depends on data but whose trip count a counter bounds (see
        :mod:`.bound`): that many iterations at trace time, every statement under a per-thread
        active mask that the condition clears (a thread that left keeps its values)."""
        if _has_break(body):
            return False

        def uniform(e: A.Expr) -> bool:
            self.out.append([])
            try:
                v = self.expr(e, scope)
            except LiteralRefusal:
                return False
            finally:
                pre = self.out.pop()
            return isinstance(v, Uni) and v.ty == "int" and not pre

        tb = trip_bound(cond, body, step, self.preceding(), uniform)
        if tb is None:
            return False
        self.out.append([])
        limit, start = self.expr(tb.limit, scope), self.expr(tb.start, scope)
        if self.out.pop() or not isinstance(limit, Uni) or not isinstance(start, Uni):
            return False
        trips = sub(add(limit.expr, "1" if tb.inclusive else "0"), start.expr)
        trips = f"max({1 if do else 0}, {trips})"
        act = self.fresh("act")
        self.emit("comment", text=f"at most {trips} trips: the counter '{tb.counter}' bounds "
                  "the loop; threads leave it under a mask")  # fmt: skip
        if scope.mask is None:
            self.emit("full", dst=act, value="1.0", dtype="nl.float32")
        else:
            self.emit("op", dst=act, op="copy", args=scope.mask, dtype="nl.float32")
        inner = Scope(act, scope.depth + 1, True, scope.np_mask)
        self.out.append([])
        self.trail.append(None)
        try:
            if not do:
                self.leave_unless(cond, act, inner)
            self.stmt(body, inner)
            self.dead = False
            for st in step:
                self.stmt(st, inner)
            if do:
                self.leave_unless(cond, act, inner)
        finally:
            self.trail.pop()
        loop = self.out.pop()
        self.out[-1].append(Loop("for", f"{self.fresh('trip')} in range({trips})", tuple(loop),
                                 s.loc.line))  # fmt: skip
        return True

    def leave_unless(self, cond: A.Expr, act: str, scope: Scope) -> None:
        """Clear the threads whose loop condition fails from the active mask ``act``."""
        ct = self.cond_tile(self.expr(cond, scope), cond)
        self.emit("op", dst=act, op="multiply", args=f"{act}, {ct}", dtype="nl.float32")

    def affine_terms(self, cond: A.Expr, scope: Scope) -> list[str] | None:
        """A per-thread loop condition as (base, cp, cf, op, bound) terms, if it is a conjunction
        of comparisons between affine per-thread integers and uniform values."""
        if isinstance(cond, A.Binary) and cond.op == "&&":
            a = self.affine_terms(cond.left, scope)
            b = self.affine_terms(cond.right, scope)
            return None if a is None or b is None else a + b
        if not (isinstance(cond, A.Binary) and cond.op in _CMP):
            return None
        self.out.append([])
        try:
            left, right = self.expr(cond.left, scope), self.expr(cond.right, scope)
        finally:
            self.out.pop()
        if not isinstance(left, Uni | Lin) or not isinstance(right, Uni | Lin):
            return None
        if isinstance(left, Uni) and isinstance(right, Uni):
            return [f"(0, 0, 0, '==', 0 if {left.expr} {cond.op} {right.expr} else 1)"]
        d = lin_sub(as_lin(left), as_lin(right))
        return [f"({d.b}, {d.p}, {d.f}, '{cond.op}', 0)"]

    def do_while(self, s: A.DoWhile, scope: Scope) -> None:
        self.out.append([])
        c = self.expr(s.cond, scope)
        self.out.pop()
        if not isinstance(c, Uni) and self.counted_loop(s.cond, s.body, (), scope, s, do=True):
            return
        if not isinstance(c, Uni):
            raise self.refuse(unbounded_reason("a do-while loop", s.cond, self.per_thread), s)
        self.out.append([])
        self.trail.append(None)
        self.stmt(s.body, scope)
        self.trail.pop()
        self.dead = False
        c = self.expr(s.cond, scope)
        brk = Branch(f"not ({c.expr})", (Instr("brk", ()),), (), s.loc.line)
        self.out[-1].append(brk)
        inner = self.out.pop()
        self.out[-1].append(Loop("while", "True", tuple(inner), s.loc.line))

    # ------------------------------------------------------------------ expressions
    def expr(self, e: A.Expr, scope: Scope) -> Value:
        v = self._expr(e, scope)
        if isinstance(v, Tile) and v.ty == "int" and _is_u32(e.ty):
            return Tile(v.expr, v.ty, unsigned=True)  # converts to float as unsigned
        return v

    def _expr(self, e: A.Expr, scope: Scope) -> Value:  # noqa: PLR0911, PLR0912
        if isinstance(e, A.IntLit):
            return Uni(str(e.value), "int")
        if isinstance(e, A.BoolLit):
            return Uni("1" if e.value else "0", "int")
        if isinstance(e, A.FloatLit):
            text = repr(float(e.value))
            if text in ("inf", "-inf", "nan"):
                text = text.replace("inf", "np.inf").replace("nan", "np.nan")
            return Uni(f"np.float32({text})", "float")
        if isinstance(e, A.Name):
            b = self.lookup(e.name)
            if b is None:
                raise self.refuse(unbound_name_reason(self.tu, e.name), e)
            if b.klass == "S":
                return self.read_shared_scalar(b.value, e)  # type: ignore[arg-type]
            if isinstance(b.value, Unset):
                raise self.refuse(deferred.read_problem(e.name), e)
            return b.value
        if isinstance(e, A.Builtin):
            return self.builtin(e)
        if isinstance(e, A.SizeOf):
            return Uni(str(_sizeof(e.of, e, self)), "int")
        if isinstance(e, A.Assign):
            return self.assign(e, scope)
        if isinstance(e, A.Unary):
            return self.unary(e, scope)
        if isinstance(e, A.Binary):
            return self.binary(e, scope)
        if isinstance(e, A.Ternary):
            return self.ternary(e, scope)
        if isinstance(e, A.Cast):
            return self.cast(e, scope)
        if isinstance(e, A.Call):
            return self.call(e, scope)
        if isinstance(e, A.Index):
            return self.load(e, scope)
        if isinstance(e, A.Comma):
            v: Value = Uni("0", "int")
            for x in e.exprs:
                v = self.expr(x, scope)
            return v
        if isinstance(e, A.Member):
            raise self.refuse(f"member access '.{e.field}' (vector types)", e)
        raise self.refuse(collective_reason(e) or f"expression {type(e).__name__}", e)

    def builtin(self, e: A.Builtin) -> Value:
        if e.name == "threadIdx":
            lin = {"x": self.tx, "y": self.ty_, "z": Lin("0", "0", "0")}[e.dim or "x"]
            return Uni(lin.b, "int") if lin.uniform else lin
        if e.name == "blockIdx":
            return Uni(f"_b{e.dim}", "int")
        if e.name == "blockDim":
            return Uni(str(self.block_dims["xyz".index(e.dim or "x")]), "int")
        if e.name == "gridDim":
            return Uni(f"_g{e.dim}", "int")
        if e.name == "warpSize":
            return Uni("32", "int")
        raise self.refuse(f"builtin {e.name}", e)

    def assign(self, e: A.Assign, scope: Scope) -> Value:
        if e.op == "=":
            v = self.expr(e.value, scope)
        else:
            v = self.arith(e.op[:-1], self.expr(e.target, scope), self.expr(e.value, scope),
                           e.target.ty, e)  # fmt: skip
        self.store_to(e.target, v, scope, e)
        return self.expr(e.target, scope) if isinstance(e.target, A.Name) else v

    def store_to(self, target: A.Expr, v: Value, scope: Scope, node: A.Node) -> None:
        if isinstance(target, A.Name):
            b = self.lookup(target.name)
            if b is None:
                raise self.refuse(f"assignment to unknown '{target.name}'", node)
            if b.klass == "S":
                ptr = b.value
                val = self.tile(self.convert(v, target.ty, node), ptr.ty, node)  # type: ignore[union-attr]
                self.emit("store", node.loc.line, tensor=ptr.tensor, base="0", cp="0", cf="0",  # type: ignore[union-attr]
                          value=val, mask=self.store_mask(scope))  # fmt: skip
                return
            if b.klass == "P":
                if scope.mask is not None or scope.in_varying_loop or not isinstance(v, Ptr):
                    raise self.refuse("pointer reassignment under a per-thread condition", node)
                cur = b.value
                if isinstance(cur, Unset):
                    why = deferred.first_assignment_problem(cur, len(self.out))
                    if why is not None:
                        raise self.refuse(why, node)
                    b.value = self.hold_ptr(target.name, v)
                    return
                if not isinstance(cur, Ptr) or cur.tensor != v.tensor:
                    raise self.refuse(f"pointer '{target.name}' moved to another buffer", node)
                b.value = self.hold_ptr(target.name, v)
                return
            if b.klass == "A":
                raise self.refuse("assignment to an array", node)
            name = (
                b.value.expr if isinstance(b.value, Uni | Tile | Idx) else b.value.b.split("[")[0]
            )
            v = self.convert(v, target.ty, node)
            self.write_var(b, name, v, scope, node)
            return
        where = self.address(target, scope)
        if isinstance(where[0], Local):  # a local array element
            arr, idx = where
            new = self.full_tile(self.convert(v, target.ty, node), arr.ty, node)
            if isinstance(idx, Tile):  # chosen per thread
                write_element(self, arr, idx, new, scope.mask, node.loc.line)
                return
            cur = Tile(f"{arr.expr}[{idx}]", arr.ty)
            if scope.mask is not None:
                self.emit("where", node.loc.line, dst=cur.expr, mask=scope.mask, a=new,
                          b=cur.expr, dtype=self.dt(arr.ty))  # fmt: skip
            else:
                self.emit("let", node.loc.line, dst=cur.expr, value=new)
            return
        ptr, off = where
        if isinstance(off, Tile) and off.expr in self.known_addr:
            off = Idx(self.known_addr[off.expr])  # indices only: known when traced
        if isinstance(off, Tile):  # a scatter: thread by thread, the last one wins
            val = self.full_tile(self.convert(v, target.ty, node), ptr.ty, node)
            self.emit("call", node.loc.line, expr=f"_c2n_scatter({ptr.tensor}, {off.expr}, "
                      f"{val}, {self.store_mask(scope)})")  # fmt: skip
            return
        val = self.tile(self.convert(v, target.ty, node), ptr.ty, node)
        if isinstance(off, Idx):
            self.emit("call", node.loc.line, expr=f"_c2n_store_at({ptr.tensor}, {off.expr}, "
                      f"{val}, {self.store_mask(scope)})")  # fmt: skip
            return
        mask = self.store_mask(scope)
        if mask in self.exact and str(off.p) == "0" and str(off.f) == "0":
            # every active thread writes one element: the last one, known at trace time, wins
            self.emit("call", node.loc.line, expr=f"_c2n_store({ptr.tensor}, {off.b}, 0, 0, "
                      f"{val}, {mask}, known={self.exact[mask]})")  # fmt: skip
            return
        # a guard known at trace time (``i < n``) lets a block whose threads all pass it store
        # without reading the old elements back (and a block none passes skip the store)
        known = {"known": self.exact[mask]} if mask in self.exact else {}
        self.emit(
            "store", node.loc.line, tensor=ptr.tensor, base=off.b, cp=off.p, cf=off.f,
            value=val, mask=mask, **known,
        )  # fmt: skip

    def address(self, e: A.Expr, scope: Scope) -> tuple[Ptr, Lin | Idx | Tile] | tuple[Local, str]:
        """The buffer and element offset an lvalue ``p[i]``, ``a[i][j]`` or ``*p`` designates;
        an offset that depends on data is an int32 :class:`Tile` of flat element addresses."""
        if isinstance(e, A.Unary) and e.op == "*":
            p = self.expr(e.operand, scope)
            if isinstance(p, DynPtr):
                return Ptr(p.tensor, Lin("0", "0", "0"), p.ty), Tile(p.addr, "int")
            if not isinstance(p, Ptr):
                raise self.refuse("dereference of a non-pointer", e)
            return p, p.off
        if not isinstance(e, A.Index):
            raise self.refuse(f"store to {type(e).__name__}", e)
        idxs: list[A.Expr] = []
        base: A.Expr = e
        while isinstance(base, A.Index):
            idxs.insert(0, base.index)
            base = base.base
        obj = self.expr(base, scope)
        vals = [self.expr(i, scope) for i in idxs]
        if isinstance(obj, DynPtr):
            if len(vals) != 1:
                raise self.refuse("too many subscripts", e)
            ptr = Ptr(obj.tensor, Lin("0", "0", "0"), obj.ty)
            return ptr, Tile(self.dyn_address(Tile(obj.addr, "int"), [(vals[0], "1")], e), "int")
        if isinstance(obj, Local):
            if not all(isinstance(v, Uni) for v in vals):  # a select per element
                return obj, lane_index(self, obj, vals, e)  # type: ignore[return-value]
            flat = _flatten([v.expr for v in vals], obj.dims)  # type: ignore[union-attr]
            return obj, flat
        if not isinstance(obj, Ptr):
            raise self.refuse("indexing a non-pointer", e)
        dims = obj.dims
        if len(vals) > 1 + len(dims):
            raise self.refuse("too many subscripts", e)
        if any(isinstance(v, Tile) for v in vals):
            if len(vals) != 1 + len(dims):
                raise self.refuse("a row of an array chosen by data", e)
            terms = [(v, str(_prod(dims[k:]))) for k, v in enumerate(vals)]
            return obj, Tile(self.dyn_address(obj.off, terms, e), "int")
        off: Lin | Idx = obj.off
        for k, v in enumerate(vals):
            if not isinstance(v, Uni | Lin | Idx):
                raise self.refuse(f"an index of this kind ({type(v).__name__})", e)
            stride = str(_prod(dims[k:]))  # row-major: the extents after this subscript
            if isinstance(v, Idx) or isinstance(off, Idx):
                off = Idx(f"({self.np_spell(off)} + {mul(self.np_spell(v), stride)})")
            else:
                off = lin_add(off, lin_scale(as_lin(v), stride))
        return obj, off  # type: ignore[return-value]

    def load(self, e: A.Index, scope: Scope) -> Value:
        where = self.address(e, scope)
        if isinstance(where[0], Local):
            arr, idx = where
            if isinstance(idx, Tile):
                return read_element(self, arr, idx)
            return Tile(f"{arr.expr}[{idx}]", arr.ty)
        ptr, off = where  # type: ignore[misc]
        if isinstance(ptr, Ptr) and ptr.dims and _depth(e) <= len(ptr.dims):
            return Ptr(ptr.tensor, off, ptr.ty, ptr.dims[_depth(e) :])  # a row of a 2-D array
        return self.read(ptr, off, scope, e)

    def read(self, ptr: Ptr, off: Lin | Idx | Tile, scope: Scope, node: A.Node) -> Tile:
        """Every thread's element of ``ptr``'s buffer at ``off``: a strided DMA view (affine
        offsets), views split at trace time (index offsets) or a gather (data offsets)."""
        dst, dt = self.fresh("ld"), self.dt(ptr.ty)
        if isinstance(off, Tile):
            self.emit("let", node.loc.line, dst=dst, value=f"_c2n_gather({ptr.tensor}, "
                      f"{off.expr}, {self.store_mask(scope)}, {dt})")  # fmt: skip
        elif isinstance(off, Idx):
            self.emit("let", node.loc.line, dst=dst,
                      value=f"_c2n_load_at({ptr.tensor}, {off.expr}, {dt})")  # fmt: skip
        else:
            self.emit("load", node.loc.line, dst=dst, tensor=ptr.tensor, base=off.b, cp=off.p,
                      cf=off.f, dtype=dt)  # fmt: skip
        return Tile(dst, ptr.ty)

    def dyn_address(
        self, off: Lin | Idx | Tile, terms: list[tuple[Value, str]], node: A.Node
    ) -> str:
        """The int32 tile of flat element addresses ``off + sum(index * stride)`` where an
        index depends on data (the engines compute it in fp32, exact below 2**24; the gather and
        scatter helpers assert that the buffer is smaller)."""
        acc = off.expr if isinstance(off, Tile) else self.tile(off, "int", node)
        known = index_address(self, off, terms)
        for v, stride in terms:
            if isinstance(v, Tile) and v.ty == "float":
                raise self.refuse("a floating-point array index", node)
            if not isinstance(v, Uni | Lin | Idx | Tile):
                raise self.refuse("an index that is a pointer or an array", node)
            t = self.tile(v, "int", node)
            if stride != "1":
                t = self.op("multiply", [t, stride], "int").expr
            acc = t if acc == "0" else self.op("add", [acc, t], "int").expr
        if known is not None:
            self.known_addr[acc] = known
        return acc

    def unary(self, e: A.Unary, scope: Scope) -> Value:
        if e.op.endswith(("++", "--")):
            one = A.IntLit(loc=e.loc, value=1, ty=A.ScalarType(name="int32"))
            old = self.expr(e.operand, scope)
            if isinstance(old, Tile):
                old = Tile(self.copy_tile(old), old.ty)
            new = self.arith("+" if "++" in e.op else "-", old, self.expr(one, scope),
                             e.operand.ty, e)  # fmt: skip
            self.store_to(e.operand, new, scope, e)
            return old if e.op.startswith("post") else self.expr(e.operand, scope)
        if e.op == "*":
            ptr, off = self.address(e, scope)  # type: ignore[misc]
            return self.read(ptr, off, scope, e)  # type: ignore[arg-type]
        if e.op == "&":
            if isinstance(e.operand, A.Name):
                b = self.lookup(e.operand.name)
                if b is not None and b.klass == "S":
                    return b.value
            if isinstance(e.operand, A.Index):
                where = self.address(e.operand, scope)
                if isinstance(where[0], Ptr) and isinstance(where[1], Tile):
                    return DynPtr(where[0].tensor, where[1].expr, where[0].ty)
                if isinstance(where[0], Ptr):
                    return Ptr(where[0].tensor, where[1], where[0].ty)  # type: ignore[arg-type]
            raise self.refuse("address of a local", e)
        v = self.expr(e.operand, scope)
        if e.op == "+":
            return v
        if isinstance(v, Lin) and e.op == "!":
            return Idx(f"({self.np_spell(v)} == 0)", "bool", (("equal", v),))
        if isinstance(v, Idx) and e.op in ("-", "!", "~"):
            spelled = {"-": f"(-{paren(v.expr)})", "!": f"(~({v.expr} != 0))",
                       "~": f"(~{paren(v.expr)})"}[e.op]  # fmt: skip
            return Idx(spelled, "bool" if e.op == "!" else "int")
        if e.op == "-":
            if isinstance(v, Uni):
                return Uni(f"-{paren(v.expr)}", v.ty)
            if isinstance(v, Lin):
                return lin_scale(v, "-1")
            if _kind(v) == "int":
                return self.int_arith("-", Uni("0", "int"), v, e)
            return self.op("negative", [self.tile(v, None, e)], _kind(v))
        if e.op == "!":
            if isinstance(v, Uni):
                return Uni(f"int(not {paren(v.expr)})", "int")
            return self.op("equal", [self.tile(v, None, e), "0"], "float")
        if e.op == "~":
            if isinstance(v, Uni):
                return Uni(f"~{paren(v.expr)}", "int")
            return self.op("invert", [self.tile(v, "int", e)], "int")
        raise self.refuse(f"unary operator '{e.op}'", e)

    def copy_tile(self, t: Tile) -> str:
        name = self.fresh("o")
        self.emit("op", dst=name, op="copy", args=t.expr, dtype=self.dt(t.ty))
        return name

    def binary(self, e: A.Binary, scope: Scope) -> Value:
        if e.op in ("&&", "||"):
            a, b = self.expr(e.left, scope), self.expr(e.right, scope)
            if isinstance(a, Uni) and isinstance(b, Uni):
                word = "and" if e.op == "&&" else "or"
                return Uni(f"int(bool({a.expr}) {word} bool({b.expr}))", "int")
            if e.op == "&&" and isinstance(a, Idx) and isinstance(b, Idx) and a.parts and b.parts:
                return Idx(f"({a.expr} & {b.expr})", "bool", a.parts + b.parts)
            if all(isinstance(v, Idx | Uni | Lin) for v in (a, b)):
                return self.idx_arith(e.op, a, b, e)
            ta, tb = self.cond_tile(a, e.left), self.cond_tile(b, e.right)
            return self.op("multiply" if e.op == "&&" else "maximum", [ta, tb], "bool")
        a, b = self.expr(e.left, scope), self.expr(e.right, scope)
        if isinstance(a, Ptr | DynPtr) or isinstance(b, Ptr | DynPtr):
            return self.ptr_arith(e, a, b)
        return self.arith(e.op, a, b, e.ty, e)

    def ptr_arith(self, e: A.Binary, a: Value, b: Value) -> Value:
        if isinstance(b, Ptr | DynPtr) and not isinstance(a, Ptr | DynPtr) and e.op == "+":
            a, b = b, a
        # an offset from data, or a thread's index that is no affine form (``b * T * C`` with
        # ``b = idx / (NH * T)``): an address tile either way
        data = isinstance(a, DynPtr) or (isinstance(b, Tile) and b.ty != "float")
        data = data or (isinstance(a, Ptr) and isinstance(b, Idx))
        if e.op in "+-" and isinstance(a, Ptr | DynPtr) and data:
            if not isinstance(b, Uni | Lin | Idx | Tile):
                raise self.refuse("arithmetic between pointers", e)
            if e.op == "-":
                b = self.op("negative", [self.tile(b, "int", e)], "int")
            off = Tile(a.addr, "int") if isinstance(a, DynPtr) else a.off
            return DynPtr(a.tensor, self.dyn_address(off, [(b, "1")], e), a.ty)
        if e.op in "+-" and isinstance(a, Ptr) and isinstance(b, Uni | Lin | Idx):
            if isinstance(b, Idx) or isinstance(a.off, Idx):  # known when the kernel is traced
                off = Idx(f"({self.np_spell(a.off)} {e.op} {self.np_spell(b)})")
                return Ptr(a.tensor, off, a.ty, a.dims)
        if e.op == "+" and isinstance(a, Ptr) and isinstance(b, Uni | Lin):
            return Ptr(a.tensor, lin_add(a.off, as_lin(b)), a.ty, a.dims)
        if e.op == "+" and isinstance(b, Ptr) and isinstance(a, Uni | Lin):
            return Ptr(b.tensor, lin_add(b.off, as_lin(a)), b.ty, b.dims)
        if e.op == "-" and isinstance(a, Ptr) and isinstance(b, Uni | Lin):
            return Ptr(a.tensor, lin_sub(a.off, as_lin(b)), a.ty, a.dims)
        raise self.refuse(
            "pointer arithmetic with an offset that depends on data (a gather or scatter)", e
        )

    def arith(self, op: str, a: Value, b: Value, ty: object, node: A.Node) -> Value:  # noqa: PLR0911
        fl = is_float(ty) or _kind(a) == "float" or _kind(b) == "float"
        if op in _CMP:
            fl = _kind(a) == "float" or _kind(b) == "float"
        if isinstance(a, Uni) and isinstance(b, Uni):
            return self.uni_arith(op, a, b, fl, ty, node)
        if op in _CMP and not fl and all(isinstance(x, Uni | Lin | Idx) for x in (a, b)):
            return self.index_compare(op, a, b)
        if not fl and isinstance(a, Uni | Lin) and isinstance(b, Uni | Lin):
            la, lb = as_lin(a), as_lin(b)
            if op == "+":
                return lin_add(la, lb)
            if op == "-":
                return lin_sub(la, lb)
            if op == "*" and isinstance(b, Uni):
                return lin_scale(la, b.expr)
            if op == "*" and isinstance(a, Uni):
                return lin_scale(lb, a.expr)
            exact = self.lin_divmod(op, a, b) if isinstance(a, Lin) and isinstance(b, Uni) else None
            if exact is not None:
                return exact
            if op == "<<" and isinstance(b, Uni) and is_int(b.expr):
                return lin_scale(la, str(1 << int(b.expr)))
        if not fl and isinstance(a, Uni | Lin | Idx) and isinstance(b, Uni | Lin | Idx):
            return self.idx_arith(op, a, b, node)
        if not fl and op in _EXACT_INT:
            return self.int_arith(op, a, b, node)
        if op == "%":
            raise self.refuse("floating-point remainder of a per-thread value", node)
        name = _BIN.get(op)
        if name is None:
            raise self.refuse(f"operator '{op}' on per-thread values", node)
        want = "float" if fl else "int"
        if fl:
            a, b = self.unsigned_to_float(a), self.unsigned_to_float(b)
        ta, tb = self.tile(a, want, node), self.tile(b, want, node)
        if not fl:  # bit operations: uniform operands as 32-bit patterns
            ta, tb = (f"_c2n_u32({t})" if isinstance(x, Uni) else t for t, x in ((ta, a), (tb, b)))
        if _is_scalar(a) and _is_scalar(b):
            ta = self.full_tile(a, want, node)
        return self.op(name, [ta, tb], "bool" if op in _CMP else want)

    def int_arith(self, op: str, a: Value, b: Value, node: A.Node) -> Tile:
        """C's 32-bit integer ``+ - * / % >>`` and comparisons on per-thread values, bit-exact
        (the engines' arithmetic is fp32, so the helpers split values into 16-bit halves and
        bytes)."""
        unsigned = _unsigned(node)
        if op == ">>":  # the shift's type is its left operand's
            left = _operands(node)[0]
            unsigned = _is_u32(left.ty if left is not None else getattr(node, "ty", None))
        x, y = self.int_operand(a, node), self.int_operand(b, node)
        if op in _CMP:
            expr = f"_c2n_cmp32({x}, {y}, '{_BIN[op]}', {unsigned})"
        elif op in ("/", "%"):
            f = "_c2n_udivmod" if unsigned else "_c2n_sdivmod"
            expr = f"{f}({x}, {y})[{0 if op == '/' else 1}]"
        elif op == ">>":
            expr = f"_c2n_shr({x}, {y}, {unsigned})"
        else:
            expr = {"+": "_c2n_add32", "-": "_c2n_sub32", "*": "_c2n_mul32"}[op] + f"({x}, {y})"
        dst = self.fresh("n")
        self.emit("let", dst=dst, value=expr)
        return Tile(dst, "bool" if op in _CMP else "int")

    def int_operand(self, v: Value, node: A.Node) -> str:
        """An operand of the exact integer helpers: a uniform Python int or an int32 tile."""
        if _is_scalar(v):
            return f"int({self.tile(v, 'int', node)})"
        return self.tile(v, "int", node)

    def unsigned_to_float(self, v: Value) -> Value:
        """An unsigned 32-bit per-thread value entering floating-point arithmetic or converted
        to a float type, as fp32 (its int32 tile holds the bit pattern)."""
        if not (isinstance(v, Tile) and v.ty == "int" and v.unsigned):
            return v
        dst = self.fresh("f")
        self.emit("let", dst=dst, value=f"_c2n_u2f({v.expr})")
        return Tile(dst, "float")

    def index_compare(self, op: str, a: Value, b: Value) -> Idx:
        expr = f"({self.np_spell(a)} {op} {self.np_spell(b)})"
        if isinstance(a, Uni | Lin) and isinstance(b, Uni | Lin):
            d = lin_sub(as_lin(a), as_lin(b))
            return Idx(expr, "bool", ((_BIN[op], d),))
        return Idx(expr, "bool")

    def index_np(self, e: A.Expr) -> str | None:
        """The value of ``e`` as a trace-time NumPy expression when it depends on indices only
        (no loads, no floating point), else None.  Pure: emits nothing."""
        if isinstance(e, A.IntLit):
            return str(e.value)
        if isinstance(e, A.BoolLit):
            return "1" if e.value else "0"
        if isinstance(e, A.Name):
            b = self.lookup(e.name)
            if b is None or b.klass in ("P", "A", "S", "T") or isinstance(b.value, Tile):
                return None
            v = b.value
            return (
                self.np_spell(v) if isinstance(v, Uni | Lin | Idx) and _kind(v) == "int" else None
            )
        if isinstance(e, A.Builtin):
            v = self.builtin(e)
            return self.np_spell(v) if isinstance(v, Uni | Lin) else None
        if isinstance(e, A.Binary):
            x, y = self.index_np(e.left), self.index_np(e.right)
            if x is None or y is None or is_float(e.left.ty) or is_float(e.right.ty):
                return None
            if e.op == "/":
                return f"_c2n_tdiv({x}, {y})"
            if e.op == "%":
                return f"_c2n_tmod({x}, {y})"
            opx = {"&&": "&", "||": "|"}.get(e.op, e.op)
            if e.op in ("&&", "||"):
                return f"(({x} != 0) {opx} ({y} != 0))"
            return f"({x} {opx} {y})"
        if isinstance(e, A.Unary) and e.op in ("-", "!", "~", "+"):
            x = self.index_np(e.operand)
            if x is None:
                return None
            return {"-": f"(-{x})", "!": f"({x} == 0)", "~": f"(~{x})", "+": x}[e.op]
        if isinstance(e, A.Cast) and is_intlike(e.to):
            return self.index_np(e.operand)
        if isinstance(e, A.Ternary):
            c, x, y = (self.index_np(v) for v in (e.cond, e.then, e.else_))
            return None if None in (c, x, y) else f"np.where({c}, {x}, {y})"
        if isinstance(e, A.Call) and e.func in ("min", "max") and len(e.args) == 2:
            x, y = (self.index_np(a) for a in e.args)
            fn = "np.minimum" if e.func == "min" else "np.maximum"
            return None if x is None or y is None else f"{fn}({x}, {y})"
        return None

    @staticmethod
    def np_spell(v: Value) -> str:
        """An integer value as a trace-time NumPy expression."""
        if isinstance(v, Uni):
            return paren(v.expr)
        if isinstance(v, Lin):
            return f"_c2n_grid({v.b}, {v.p}, {v.f})"
        assert isinstance(v, Idx)
        return paren(v.expr)

    def idx_arith(self, op: str, a: Value, b: Value, node: A.Node) -> Value:
        """Index arithmetic that is not affine, evaluated at trace time with C semantics."""
        x, y = self.np_spell(a), self.np_spell(b)
        if _unsigned(node):  # C's unsigned operands: their values modulo 2**32
            x, y = (f"_c2n_wrap({v}, 32, False)" for v in (x, y))
        if op in _CMP:
            return Idx(f"({x} {op} {y})", "bool")
        if op == "/":
            return Idx(f"_c2n_tdiv({x}, {y})")
        if op == "%":
            return Idx(f"_c2n_tmod({x}, {y})")
        if op in ("+", "-", "*", "<<") and _unsigned(node):  # modulo 2**32, as C's unsigned
            return Idx(f"_c2n_wrap({x} {op} {y}, 32, False)")
        if op in ("+", "-", "*", "<<", ">>", "&", "|", "^"):
            return Idx(f"({x} {op} {y})")
        if op in ("&&", "||"):
            return Idx(f"(({x} != 0) {'&' if op == '&&' else '|'} ({y} != 0))", "bool")
        raise self.refuse(f"operator '{op}' on per-thread indices", node)

    def lin_divmod(self, op: str, a: Lin, b: Uni) -> Lin | None:
        """``a / d``, ``a % d``, ``a >> k``, ``a & (2**k - 1)`` kept affine where exact: ``d``
        divides the uniform part and the partition coefficient, and the free part stays below
        ``d`` (so the quotient drops it and the remainder is it).  C's ``/`` and ``%`` truncate,
        so those also get a trace-time check that the value is not negative."""
        if not is_int(b.expr) or not is_int(a.f):
            return None
        k = int(b.expr)
        if op == ">>":
            d, want = 1 << k, "q"
        elif op == "&" and k >= 0 and (k + 1) & k == 0:
            d, want = k + 1, "r"
        elif op in ("/", "%") and k > 0:
            d, want = k, "q" if op == "/" else "r"
        else:
            return None
        cf = int(a.f)
        if not (0 <= cf * (self.free - 1) < d) or cf < 0:
            return None
        if not (divides(d, a.b, self.known) and divides(d, a.p, self.known)):
            return None
        if op in ("/", "%"):
            self.emit("call", expr=f"_c2n_nonneg({a.b}, {a.p})")
        if want == "r":
            return Lin("0", "0", a.f)
        q = Lin(_exact(a.b, d), _exact(a.p, d), "0")
        return q

    def uni_arith(self, op: str, a: Uni, b: Uni, fl: bool, ty: object, node: A.Node) -> Uni:
        x, y = paren(a.expr), paren(b.expr)
        if op in _CMP:
            return Uni(f"int({x} {op} {y})", "int")
        if fl:
            x = x if a.ty == "float" else f"np.float32({a.expr})"
            y = y if b.ty == "float" else f"np.float32({b.expr})"
            if op in ("+", "-", "*", "/"):
                return Uni(f"np.float32({x} {op} {y})", "float")
            raise self.refuse(f"operator '{op}' on floating-point values", node)
        if op == "/":
            return Uni(f"_c2n_idiv({a.expr}, {b.expr})", "int")
        if op == "%":
            return Uni(f"_c2n_imod({a.expr}, {b.expr})", "int")
        if op in ("+", "-", "*", "<<", ">>", "&", "|", "^"):
            if op == "+":
                return Uni(add(a.expr, b.expr), "int")
            if op == "-":
                return Uni(sub(a.expr, b.expr), "int")
            if op == "*":
                return Uni(mul(a.expr, b.expr), "int")
            # binds looser than + and *: parenthesised, as an operand of a sum it stays whole
            return Uni(f"({x} {op} {y})", "int")
        raise self.refuse(f"operator '{op}'", node)

    def ternary(self, e: A.Ternary, scope: Scope) -> Value:
        c = self.expr(e.cond, scope)
        a, b = self.expr(e.then, scope), self.expr(e.else_, scope)
        ty = "float" if is_float(e.ty) or _kind(a) == "float" or _kind(b) == "float" else "int"
        if isinstance(c, Uni):
            if isinstance(a, Uni) and isinstance(b, Uni):
                cast = "np.float32" if ty == "float" else ""
                return Uni(f"({cast}({a.expr}) if {c.expr} else {cast}({b.expr}))", ty)
            ta, tb = self.full_tile(a, ty, e), self.full_tile(b, ty, e)
            name = self.fresh("s")
            self.emit("let", dst=name, value=f"{ta} if {c.expr} else {tb}")
            return Tile(name, ty)
        if ty == "int" and all(isinstance(x, Uni | Lin | Idx) for x in (c, a, b)):
            return Idx(f"np.where({self.np_spell(c)}, {self.np_spell(a)}, {self.np_spell(b)})")
        ct = self.cond_tile(c, e.cond)
        ta, tb = self.full_tile(a, ty, e), self.full_tile(b, ty, e)
        name = self.fresh("s")
        self.emit("where", e.loc.line, dst=name, mask=ct, a=ta, b=tb, dtype=self.dt(ty))
        return Tile(name, ty)

    def convert(self, v: Value, to: object, node: A.Node) -> Value:
        """C's implicit/explicit conversion of ``v`` to type ``to``."""
        if not isinstance(to, A.ScalarType) or isinstance(v, Ptr | Local):
            return v
        if to.name == "float64":
            return v
        if to.is_float:
            v = self.unsigned_to_float(v)
            if isinstance(v, Uni) and v.ty != "float":
                return Uni(f"np.float32({v.expr})", "float")
            if isinstance(v, Lin | Idx):
                return Tile(self.tile(v, "float", node), "float")
            if isinstance(v, Tile) and v.ty == "int":
                return Tile(self.tile(v, "float", node), "float")
            if to.name in ("float16", "bfloat16") and isinstance(v, Tile):
                r = self.fresh("r")
                self.emit("let", dst=r, value=f"nl.copy(nl.copy({v.expr}, dtype="
                          f"{_FLOAT_DT[to.name]}), dtype=nl.float32)")  # fmt: skip
                return Tile(r, "float")
            return v
        if to.name == "bool":
            if isinstance(v, Uni):
                return Uni(f"int(bool({v.expr}))", "int")
            if isinstance(v, Tile) and v.ty == "bool":
                return v
            return Tile(self.cond_tile(v, node), "bool")
        if isinstance(v, Uni) and v.ty == "float":
            return Uni(intcalls.float_to_int_uniform(v.expr, to), "int")
        if isinstance(v, Tile) and v.ty == "float" and intcalls.narrow_bits(to):
            return intcalls.float_to_narrow(self, v, to)
        if isinstance(v, Tile) and v.ty == "float":
            # truncation toward zero (an out-of-range value is undefined in C)
            t = self.op("trunc", [v.expr], "float")
            return self.op("copy", [t.expr], "int")
        return self.int_convert(v, to, node)

    def int_convert(self, v: Value, to: A.ScalarType, node: A.Node) -> Value:
        """C's conversion of an integer to the integer type ``to``: modulo 2**bits.

        A uniform value is wrapped in Python; a per-thread index value (computed at trace time
        as an unbounded integer) becomes an int32 tile, where the 32-bit helpers give C's
        semantics; conversions to types narrower than 32 bits wrap with bit operations
        (:mod:`cuda2nki.lift.literal.intcalls`)."""
        if DTYPE_BYTES.get(to.name, 4) > 4:
            return v  # 64-bit index arithmetic (size_t) is left as computed
        bits = 8 * DTYPE_BYTES.get(to.name, 4)
        signed = not to.name.startswith("uint")
        if isinstance(v, Uni):
            known = _int_literal(v.expr)
            if known is not None:  # a constant: wrapped here, not in the port
                wrapped = known % (1 << bits)
                if signed and wrapped >= 1 << (bits - 1):
                    wrapped -= 1 << bits
                return Uni(str(wrapped), "int")
            if bits == 32 and not signed:
                return Uni(f"(({v.expr}) % 4294967296)", "int")
            half = 1 << (bits - 1)
            if signed:
                return Uni(f"((({v.expr}) + {half}) % {2 * half} - {half})", "int")
            return Uni(f"(({v.expr}) % {2 * half})", "int")
        if bits < 32:
            return intcalls.narrow(self, v, to, node)
        if isinstance(v, Lin) and not signed and "-" not in f"{v.b} {v.p} {v.f}":
            # thread and block indices, loop counters and parameters are non-negative (the
            # index assumption); combined without a minus, so is the value: unchanged
            return v
        if isinstance(v, Lin | Idx) and not signed:  # known when traced: wrapped there
            return Idx(f"_c2n_wrap({self.np_spell(v)}, 32, False)")
        if isinstance(v, Tile) and v.ty == "int" and v.unsigned and signed:
            return Tile(v.expr, "int")  # the same 32-bit pattern, read as signed
        return v

    def cast(self, e: A.Cast, scope: Scope) -> Value:
        v = self.expr(e.operand, scope)
        if isinstance(e.to, A.PointerType):
            if not isinstance(v, Ptr):
                raise self.refuse("cast of an integer to a pointer", e)
            if not isinstance(e.to.pointee, A.ScalarType):
                raise self.refuse("reinterpretation as a vector type", e)
            klass = "float" if e.to.pointee.is_float else "int"
            if klass != v.ty:
                raise self.refuse("reinterpretation of a buffer as another element type", e)
            return v
        if e.kind == "reinterpret":
            raise self.refuse("bit reinterpretation", e)
        return self.convert(v, e.to, e)

    def call(self, e: A.Call, scope: Scope) -> Value:  # noqa: PLR0911
        f = e.func
        if f in _NOOP_CALLS:
            self.emit("comment", e.loc.line, text=f"{f}: the block runs in lockstep")
            return Uni("0", "int")
        if e.target is not None:
            return self.inline(e, scope)
        if f.startswith("atomic"):
            why = atomic_refusal(f, f in _ATOMICS)
            raise self.refuse(f"{f} {why}", e)
        if f in _SHUFFLES or f.startswith("__c2n_warp_reduce_"):
            return self.shuffle(e, scope)
        if f.startswith(("__shfl", "__any", "__all", "__ballot", "__c2n_warp", "__activemask")):
            raise self.refuse(f"{f} (warp-level exchange)", e)
        args = [self.expr(a, scope) for a in e.args]
        if f == "__ldg" and len(args) == 1 and isinstance(args[0], Ptr):
            return self.load_ptr(args[0], e)  # a read through the read-only cache: a load
        if f in _CONVERT and len(args) == 1:
            return self.convert(args[0], e.ty, e)
        if f in intcalls.MUL24 and len(args) == 2:
            return intcalls.mul24(self, e, args)
        if f in rounding.ROUND_AWAY and len(args) == 1 and is_float(e.ty):
            return rounding.round_away(self, args[0], e)
        f = mathnames.literal_name(f, e.ty, _MATH1.keys() | _MATH2.keys())
        if f in ("fmaf", "__fmaf_rn", "fma") and len(args) == 3:
            prod = self.arith("*", args[0], args[1], e.ty, e)
            return self.arith("+", prod, args[2], e.ty, e)
        if (
            f in ("min", "max", "umin", "umax")
            and all(isinstance(a, Uni | Lin | Idx) for a in args)
            and all(_kind(a) == "int" for a in args)
            and not all(isinstance(a, Uni) for a in args)
        ):
            fn = "np.minimum" if "min" in f else "np.maximum"
            return Idx(f"{fn}({', '.join(self.np_spell(a) for a in args)})")
        if f in ("min", "max", "umin", "umax") and all(isinstance(a, Uni) for a in args):
            fn = "min" if "min" in f else "max"
            return Uni(f"{fn}({', '.join(a.expr for a in args)})", _kind(args[0]))  # type: ignore[union-attr]
        spelled = _NP1.get(_MATH1.get(f, "")) or _MATH2.get(f) in ("maximum", "minimum")
        uniform = None if spelled else uniform_math(f, args, is_float(e.ty))
        if uniform is not None:  # computed when traced
            return uniform
        composed = mathcompose.formula(f, len(args)) if is_float(e.ty) else None
        if composed is not None:
            return self.composed(composed, args, e)
        if f in _MATH2 and len(args) == 2:
            ty = "float" if is_float(e.ty) else "int"
            if all(isinstance(a, Uni) for a in args):
                fn = {"maximum": "max", "minimum": "min"}.get(_MATH2[f])
                if fn is None:
                    raise self.refuse(f"{f} of uniform values", e)
                return Uni(f"{'np.float32' if ty == 'float' else ''}({fn}({args[0].expr}, "  # type: ignore[union-attr]
                           f"{args[1].expr}))", ty)  # type: ignore[union-attr]  # fmt: skip
            ta, tb = self.tile(args[0], ty, e), self.tile(args[1], ty, e)
            if _is_scalar(args[0]) and _is_scalar(args[1]):
                ta = self.full_tile(args[0], ty, e)
            return self.op(_MATH2[f], [ta, tb], ty)
        if f in _MATH1 and len(args) == 1:
            name = _MATH1[f]
            if isinstance(args[0], Uni):
                fn = _NP1.get(name)
                if fn is None:
                    raise self.refuse(f"{f} of a uniform value", e)
                return Uni(f"np.float32({fn}(np.float32({args[0].expr})))", "float")
            ty = "int" if name == "abs" and _kind(args[0]) == "int" else "float"
            return self.op(name, [self.tile(args[0], ty, e)], ty)
        raise self.refuse(collective_reason(e) or f"call to '{f}'", e)

    def composed(self, f: mathcompose.Formula, args: list[Value], e: A.Call) -> Tile:
        """A math function NKI has no instruction for, as its composition of those it has
        (see :mod:`cuda2nki.lift.mathcompose`), computed on tiles."""
        if all(_is_scalar(a) for a in args):  # a uniform argument: one tile of its value
            args = [Tile(self.full_tile(args[0], "float", e), "float"), *args[1:]]
        tiles = tuple(self.tile(a, "float", e) for a in args)
        return Tile(
            mathcompose.build(
                f,
                tiles,
                repr,
                lambda op, xs: self.op(mathcompose.nki_name(op), list(xs), "float").expr,
            ),
            "float",
        )

    def load_ptr(self, ptr: Ptr, node: A.Node) -> Tile:
        dst = self.fresh("ld")
        off = ptr.off
        if isinstance(off, Idx):
            self.emit("let", node.loc.line, dst=dst,
                      value=f"_c2n_load_at({ptr.tensor}, {off.expr}, {self.dt(ptr.ty)})")  # fmt: skip
        else:
            self.emit("load", node.loc.line, dst=dst, tensor=ptr.tensor, base=off.b, cp=off.p,
                      cf=off.f, dtype=self.dt(ptr.ty))  # fmt: skip
        return Tile(dst, ptr.ty)

    def read_shared_scalar(self, ptr: Ptr, node: A.Node) -> Tile:
        dst = self.fresh("ld")
        self.emit("load", node.loc.line, dst=dst, tensor=ptr.tensor, base="0", cp="0", cf="0",
                  dtype=self.dt(ptr.ty))  # fmt: skip
        return Tile(dst, ptr.ty)

    def atomic(self, e: A.Call, scope: Scope) -> None:
        """An atomic whose old value is not used: every active thread's update applied in
        thread order (threads that share an element are combined, then applied one after
        another; threads at distinct elements update them in one read-modify-write)."""
        if len(e.args) != 2:
            raise self.refuse(f"{e.func} with {len(e.args)} arguments", e)
        ptr = self.expr(e.args[0], scope)
        if isinstance(ptr, DynPtr):
            self.scatter_atomic(e, ptr, scope)
            return
        if not isinstance(ptr, Ptr):
            raise self.refuse(f"{e.func} on a non-pointer", e)
        v = self.expr(e.args[1], scope)
        val = self.full_tile(self.convert(v, e.args[0].ty.pointee if isinstance(  # type: ignore[union-attr]
            e.args[0].ty, A.PointerType) else None, e), ptr.ty, e)  # fmt: skip
        off = ptr.off
        if isinstance(off, Idx):
            self.emit("call", e.loc.line, expr=f"_c2n_atomic_at({ptr.tensor}, {off.expr}, {val}, "
                      f"{self.store_mask(scope)}, '{_ATOMICS[e.func]}')")  # fmt: skip
            return
        self.emit("call", e.loc.line, expr=f"_c2n_atomic({ptr.tensor}, {off.b}, {off.p}, "
                  f"{off.f}, {val}, {self.store_mask(scope)}, '{_ATOMICS[e.func]}')")  # fmt: skip

    def scatter_atomic(self, e: A.Call, ptr: DynPtr, scope: Scope) -> None:
        """``atomicAdd``/``atomicSub`` at addresses read from data (a histogram, a scatter-add):
        one scatter-add DMA per thread column that accumulates duplicate addresses."""
        op = _ATOMICS[e.func]
        if op not in ("add", "subtract"):
            raise self.refuse(f"{e.func} at an address that depends on data (only add)", e)
        pointee = e.args[0].ty.pointee if isinstance(e.args[0].ty, A.PointerType) else None
        v = self.convert(self.expr(e.args[1], scope), pointee, e)
        val = self.full_tile(v, ptr.ty, e)
        if op == "subtract":
            val = self.op("negative", [val], ptr.ty).expr
        self.emit("call", e.loc.line, expr=f"_c2n_scatter_add({ptr.tensor}, {ptr.addr}, {val}, "
                  f"{self.store_mask(scope)})")  # fmt: skip

    # ------------------------------------------------------------------ warp shuffles
    def linear_tid(self) -> Lin:
        return lin_add(self.tx, lin_scale(self.ty_, str(self.block_dims[0])))

    def exchange(self, ty: str) -> str:
        """The scratch buffer through which the threads of a block exchange shuffled values."""
        name = f"_xch_{ty}"
        if name not in self.names:
            self.names.add(name)
            size = str(self.block_dims[0] * self.block_dims[1] * self.block_dims[2])
            dt = "nl.float32" if ty == "float" else "nl.int32"
            self.scratch.append(Instr("scratch", (("dst", name), ("size", size), ("dtype", dt))))
        return name

    def lane_read(self, scr: str, src: Lin, ty: str, line: int) -> str:
        dst = self.fresh("ld")
        self.emit("load", line, dst=dst, tensor=scr, base=src.b, cp=src.p, cf=src.f,
                  dtype=self.dt(ty))  # fmt: skip
        return dst

    def shuffle(self, e: A.Call, scope: Scope) -> Value:
        """Warp shuffles through a scratch buffer: every thread writes its value at its linear
        thread id, then reads the source lane's; a source outside the lane's segment of
        ``width`` lanes keeps the thread's own value (CUDA's rule)."""
        f = e.func
        if f.startswith("__c2n_warp_reduce_"):
            return self.warp_reduce(e, scope)
        args = [self.expr(a, scope) for a in e.args]
        if len(args) < 3:
            raise self.refuse(f"{f} with {len(args)} arguments", e)
        v, x = args[1], args[2]
        width = args[3] if len(args) > 3 else Uni("32", "int")
        if not (isinstance(width, Uni) and is_int(width.expr)) or int(width.expr) & (
            int(width.expr) - 1
        ):
            raise self.refuse(f"{f} with a width that is not a constant power of two", e)
        if not isinstance(x, Uni):
            raise self.refuse(f"{f} with a per-thread lane or offset", e)
        return self.shuffle_value(f, v, x, int(width.expr), e)

    def shuffle_value(self, f: str, v: Value, x: Uni, w: int, e: A.Node) -> Value:
        ty = "float" if _kind(v) == "float" else "int"
        vt = self.full_tile(v, ty, e)
        tid = self.linear_tid()
        lane = self.arith("%", tid, Uni(str(w), "int"), A.ScalarType(name="int32"), e)
        scr = self.exchange(ty)
        self.emit("store", e.loc.line, tensor=scr, base=tid.b, cp=tid.p, cf=tid.f, value=vt,
                  mask="None")  # fmt: skip
        line = e.loc.line
        if f == "__shfl_down_sync":
            got = self.lane_read(scr, lin_add(tid, as_lin(x)), ty, line)
            ok = self.arith("<", self.arith("+", lane, x, None, e), Uni(str(w), "int"), None, e)
        elif f == "__shfl_up_sync":
            got = self.lane_read(scr, lin_sub(tid, as_lin(x)), ty, line)
            ok = self.arith(">=", lane, x, None, e)
        elif f == "__shfl_xor_sync":
            # lane ^ m for a power of two m < width: lane + m where bit m of the lane is 0,
            # else lane - m (a mask known only at trace time is checked there)
            if is_int(x.expr):
                m = int(x.expr)
                if m <= 0 or m & (m - 1) or m >= w:
                    raise self.refuse(f"{f} with a lane mask that is not a power of two < {w}", e)
            else:
                self.emit("call", line, expr=f"_c2n_lane_mask({x.expr}, {w})")
            up = self.lane_read(scr, lin_add(tid, as_lin(x)), ty, line)
            down = self.lane_read(scr, lin_sub(tid, as_lin(x)), ty, line)
            two = Uni(mul("2", x.expr), "int")
            bit = self.arith("%", lane, two, A.ScalarType(name="int32"), e)
            low = self.cond_tile(self.arith("<", bit, x, None, e), e)
            name = self.fresh("s")
            self.emit("where", line, dst=name, mask=low, a=up, b=down, dtype=self.dt(ty))
            return Tile(name, ty)
        else:  # __shfl_sync: every lane reads lane x of its segment
            if not isinstance(lane, Lin):
                raise self.refuse(f"{f} in a thread layout where the lane is not affine", e)
            return Tile(self.lane_read(scr, lin_add(lin_sub(tid, lane), as_lin(x)), ty, line), ty)
        ct = self.cond_tile(ok, e)
        name = self.fresh("s")
        self.emit("where", line, dst=name, mask=ct, a=got, b=vt, dtype=self.dt(ty))
        return Tile(name, ty)

    def warp_reduce(self, e: A.Call, scope: Scope) -> Value:
        """``cg::reduce`` over aligned groups of N lanes: a butterfly of xor shuffles."""
        op = e.func.removeprefix("__c2n_warp_reduce_")
        combine = {"add": "+", "max": "max", "min": "min", "and": "&", "or": "|", "xor": "^"}
        if op not in combine or len(e.args) != 2:
            raise self.refuse(f"{e.func}", e)
        v = self.expr(e.args[0], scope)
        n = self.expr(e.args[1], scope)
        if not (isinstance(n, Uni) and is_int(n.expr)):
            raise self.refuse(f"{e.func} over a non-constant group", e)
        m = int(n.expr) // 2
        while m >= 1:
            other = self.shuffle_value("__shfl_xor_sync", v, Uni(str(m), "int"), 32, e)
            if combine[op] in ("max", "min"):
                ty = "float" if _kind(v) == "float" else "int"
                fn = "maximum" if op == "max" else "minimum"
                v = self.op(fn, [self.tile(v, ty, e), self.tile(other, ty, e)], ty)
            else:
                v = self.arith(combine[op], v, other, e.ty, e)
            m //= 2
        return v

    def inline(self, e: A.Call, scope: Scope) -> Value:
        fn = _callee(self.tu, e.target or "")
        if fn is None:
            raise self.refuse(f"call to '{e.func}' (no definition)", e)
        fn = single_exit(fn)  # several returns: a result variable and a done flag
        if self.inline_depth > 8:
            raise self.refuse(f"recursive call to '{e.func}'", e)
        args = [self.expr(a, scope) for a in e.args]
        seeds = {}
        frame: dict[str, Binding_] = {}
        for p, v in zip(fn.params, args):
            if isinstance(v, Ptr | DynPtr):
                frame[p.name] = Binding_(v, "P", scope.depth)
                continue
            k = "U" if isinstance(v, Uni) else ("L" if isinstance(v, Lin) else "T")
            seeds[p.name] = k
        classes = Classifier(seeds, self.thread_kind, lambda n: _callee(self.tu, n)).run(fn.body)
        saved_classes, saved_env = self.classes, self.env
        self.classes = {**self.classes, **classes}
        self.env = [*self.env, frame]
        for p, v in zip(fn.params, args):
            if isinstance(v, Ptr | DynPtr):
                continue
            ty = "float" if is_float(p.ty) else "int"
            name = self.pyname(p.name)
            b = Binding_(Uni(name, ty), self.classes.get(p.name, "T"), scope.depth, ty)
            frame[p.name] = b
            self.write_var(b, name, self.convert(v, p.ty, e), scope, e, fresh=True)
        self.ret_slot.append("ret" if not _is_void(fn.return_type) else None)
        self.entry_scope.append(scope)
        self.entry_nest.append(len(self.out))
        self.ret_value = Uni("0", "int")
        self.inline_depth += 1
        try:
            self.block(fn.body.body, scope)
            self.dead = False
            return self.ret_value
        finally:
            self.inline_depth -= 1
            self.ret_slot.pop()
            self.entry_scope.pop()
            self.entry_nest.pop()
            self.classes, self.env = saved_classes, saved_env

    ret_value: Value = Uni("0", "int")


_ATOMICS = {"atomicAdd": "add", "atomicSub": "subtract", "atomicMax": "maximum",
            "atomicMin": "minimum"}  # fmt: skip
_SHUFFLES = ("__shfl_down_sync", "__shfl_up_sync", "__shfl_xor_sync", "__shfl_sync")
_BIN_CMP = {"less", "less_equal", "greater", "greater_equal", "equal", "not_equal"}
_EXACT_INT = {"+", "-", "*", "/", "%", ">>", *_CMP}


def _is_u32(t: object) -> bool:
    return isinstance(t, A.ScalarType) and t.name == "uint32"


def _operands(node: A.Node) -> tuple[A.Expr | None, A.Expr | None]:
    """The CUDA operands of a binary expression or compound assignment (None where unknown)."""
    if isinstance(node, A.Binary):
        return node.left, node.right
    if isinstance(node, A.Assign):
        return node.target, node.value
    return None, None


def _unsigned(node: A.Node) -> bool:
    """Whether C's usual arithmetic conversions make the operation unsigned 32-bit."""
    return any(x is not None and _is_u32(x.ty) for x in _operands(node)) or _is_u32(
        getattr(node, "ty", None)
    )


def _np_and(a: str | None, b: str | None) -> str | None:
    if a is None or b is None:
        return a if b is None else b
    return f"({a} & {b})"


def _kind(v: Value) -> str:
    if isinstance(v, Idx):
        return "int"
    if isinstance(v, Uni | Tile):
        return "float" if v.ty == "float" else "int"
    if isinstance(v, Local | Ptr | DynPtr):
        return v.ty
    return "int"


def _is_scalar(v: Value) -> bool:
    return isinstance(v, Uni) or (isinstance(v, Lin) and v.uniform)


def _is_void(t: object) -> bool:
    return isinstance(t, A.ScalarType) and t.name == "void"


def _prod(xs) -> int:  # noqa: ANN001
    n = 1
    for x in xs:
        n *= int(x)
    return n


def _depth(e: A.Expr) -> int:
    n = 0
    while isinstance(e, A.Index):
        n += 1
        e = e.base
    return n


def _flatten(idx: list[str], dims: tuple[int, ...]) -> str:
    off = "0"
    for k, i in enumerate(idx):
        off = add(off, mul(i, str(_prod(dims[k + 1 :]))))
    return off


def _exact(expr: str, d: int) -> str:
    if is_int(expr):
        return str(int(expr) // d)
    return f"({expr}) // {d}"


def _sizeof(t: object, node: A.Node, low: Lowerer) -> int:
    if isinstance(t, A.ScalarType):
        return max(1, t.bits // 8)
    raise low.refuse("sizeof of a non-scalar type", node)


def _elem_class(t: object, node: A.Node, low: Lowerer) -> str:
    if isinstance(t, A.ScalarType):
        if t.name == "float64":
            raise low.refuse("a double-precision buffer (NKI has no fp64 arithmetic)", node)
        return "float" if t.is_float else "int"
    raise low.refuse("a buffer of vector or class type", node)


def _callee(tu: A.TranslationUnit, name: str) -> A.Function | None:
    for f in tu.functions:
        if f.name == name:
            return f
    return None


def _py(name: str) -> str:
    return name + "_" if keyword.iskeyword(name) or name in _RESERVED else name


def _has_continue(s: A.Stmt) -> bool:
    if isinstance(s, A.Continue):
        return True
    if isinstance(s, A.For | A.While | A.DoWhile):
        return False  # a continue in a nested loop belongs to that loop
    for child in _children(s):
        if _has_continue(child):
            return True
    return False


def _children(s: A.Stmt) -> list[A.Stmt]:
    if isinstance(s, A.Block):
        return list(s.body)
    if isinstance(s, A.If):
        return [s.then] + ([s.else_] if s.else_ is not None else [])
    if isinstance(s, A.Switch):
        return [x for c in s.cases for x in c.body]
    if isinstance(s, A.For | A.While | A.DoWhile):
        return [s.body]
    return []


def _has_varying_return(body: A.Stmt, low: Lowerer) -> bool:
    """Whether some return may run under a per-thread condition (conservative: any nested
    return, or any return inside a loop)."""

    def walk(s: A.Stmt, nested: bool) -> bool:
        if isinstance(s, A.Return):
            return nested
        if isinstance(s, A.Block):
            return any(walk(c, nested) for c in s.body)
        return any(walk(c, True) for c in _children(s))

    return walk(body, False)


def _switch_as_if(s: A.Switch, low: Lowerer) -> A.Stmt:
    """``switch`` as an if/else chain (cases ending in ``break``; empty cases fall through)."""
    groups: list[tuple[list[int], bool, tuple[A.Stmt, ...]]] = []
    pending: list[int] = []
    pending_default = False
    for c in s.cases:
        if not c.values:
            pending_default = True
        pending.extend(c.values)
        if not c.body:
            continue
        body = c.body
        if isinstance(body[-1], A.Break):
            body = body[:-1]
        elif c is not s.cases[-1]:
            raise low.refuse("a switch case that falls through into the next", c)
        if any(_has_break(x) for x in body):
            raise low.refuse("a break inside a switch case body", c)
        groups.append((pending, pending_default, body))
        pending, pending_default = [], False
    default = next((g for g in groups if g[1]), None)
    chain: A.Stmt | None = (
        A.Block(loc=s.loc, body=default[2]) if default is not None and default[2] else None
    )
    int_t = A.ScalarType(name="int32")
    bool_t = A.ScalarType(name="bool")
    for values, is_default, body in reversed(groups):
        if is_default:
            continue
        cond: A.Expr | None = None
        for v in values:
            test = A.Binary(loc=s.loc, op="==", left=s.cond,
                            right=A.IntLit(loc=s.loc, value=v, ty=int_t), ty=bool_t)  # fmt: skip
            cond = test if cond is None else A.Binary(
                loc=s.loc, op="||", left=cond, right=test, ty=bool_t)  # fmt: skip
        if cond is None:
            continue
        chain = A.If(loc=s.loc, cond=cond, then=A.Block(loc=s.loc, body=body), else_=chain)
    return chain if chain is not None else A.Empty(loc=s.loc)


def _has_break(s: A.Stmt) -> bool:
    if isinstance(s, A.Break):
        return True
    if isinstance(s, A.For | A.While | A.DoWhile | A.Switch):
        return False
    return any(_has_break(c) for c in _children(s))


# --------------------------------------------------------------------------- binding expressions


#: functions a binding's size expressions may call that Python has under the same name
_BINDING_FUNCS = frozenset({"min", "max", "int", "float"})


class _CToPy(pyast.NodeTransformer):
    def visit_BinOp(self, node: pyast.BinOp) -> pyast.AST:  # noqa: N802
        self.generic_visit(node)
        helper = {pyast.Div: "_c2n_idiv", pyast.Mod: "_c2n_imod"}.get(type(node.op))
        if helper is None:
            return node
        return pyast.Call(pyast.Name(helper, pyast.Load()), [node.left, node.right], [])

    def visit_Call(self, node: pyast.Call) -> pyast.AST:  # noqa: N802
        # the functions of a binding's expressions (cuda2nki.binding) are Python's own, under
        # their own names: only their arguments are renamed (a size called `min` would be)
        node.args = [self.visit(a) for a in node.args]
        if isinstance(node.func, pyast.Name) and node.func.id == "ceil_div":
            node.func = pyast.Name("_c2n_ceil_div", pyast.Load())
        elif not (isinstance(node.func, pyast.Name) and node.func.id in _BINDING_FUNCS):
            node.func = self.visit(node.func)
        return node

    def visit_Name(self, node: pyast.Name) -> pyast.AST:  # noqa: N802
        if node.id.startswith("_c2n_"):
            return node
        return pyast.Name(_py(node.id), node.ctx)


def c_expr_to_py(text: str) -> str:
    """A binding's C expression (``ceil_div(N, 256)``, ``n / 2``) as Python with C semantics."""
    tree = pyast.parse(text.strip(), mode="eval")
    return pyast.unparse(_CToPy().visit(tree))


__all__ = ["LiteralRefusal", "Lowerer", "c_expr_to_py", "dtype_spelling"]


def _int_literal(expr: str) -> int | None:
    """The value of an integer literal spelled as ``expr`` (``32``, ``-4``, ``(0)``), else None."""
    text = expr.strip()
    while text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip()
    try:
        return int(text, 10)
    except ValueError:
        return None
