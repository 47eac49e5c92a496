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

Anything else is refused with C2N2301 naming the construct and its line: plain stores at
data-dependent addresses (their order between threads is not a DMA's), other atomics there or
atomics whose old value is used, warp votes, vector types, double precision, loops whose trip
count depends on data with no counter bounding it, ``break``/``continue`` under a per-thread
condition, 3-D blocks.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass, field

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.asynccopy import is_sync_object
from cuda2nki.lift.collective import collective_reason
from cuda2nki.lift.literal.arith import ArithMixin
from cuda2nki.lift.literal.calls import CallsMixin
from cuda2nki.lift.literal.classify import Classifier
from cuda2nki.lift.literal.content import content, decl_key, write_counts
from cuda2nki.lift.literal.live import drop_known
from cuda2nki.lift.literal.loops import LoopsMixin
from cuda2nki.lift.literal.program import Branch, Instr, Node
from cuda2nki.lift.literal.shared import (  # noqa: F401 - names the lowering's users import
    _ATOMICS,
    _BIN_CMP,
    _CMP,
    _RESERVED,
    Binding_,
    LiteralRefusal,
    Scope,
    _callee,
    _depth,
    _elem_class,
    _flatten,
    _has_break,
    _has_continue,
    _has_varying_return,
    _is_scalar,
    _is_u32,
    _kind,
    _literal_items,
    _np_and,
    _prod,
    _py,
    _sizeof,
    _switch_as_if,
    c_expr_to_py,
    dtype_spelling,
)
from cuda2nki.lift.literal.values import (
    DynPtr,
    Idx,
    Lin,
    Local,
    Ptr,
    Tile,
    Uni,
    Value,
    as_lin,
    const_int,
    is_int,
    lin_add,
    lin_scale,
    lin_sub,
    mul,
    paren,
)


@dataclass
class Lowerer(ArithMixin, CallsMixin, LoopsMixin):
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
        self.classes = Classifier({}, self.thread_kind, lambda n: _callee(self.tu, n)).run(
            self.fn.body
        )
        self.writes, self.reshape = write_counts(self.fn.body)
        params = self.constant_tables()
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
        if not self.live_exact:
            return drop_known(self.out[0], self.live_known)
        return self.out[0]

    def constant_tables(self) -> dict[str, Binding_]:
        """``__constant__`` arrays with a literal initialiser become constant HBM tensors."""
        out: dict[str, Binding_] = {}
        for g in self.tu.globals:
            ty, dims = g.ty, []
            while isinstance(ty, A.ArrayType):
                dims.extend(ty.dims)
                ty = ty.elem
            values = _literal_items(g.init)
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
            if s.init is None:
                raise self.refuse(f"uninitialised pointer '{s.name}'", s)
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
                raise self.refuse(f"global or unknown name '{e.name}'", e)
            if b.klass == "S":
                return self.read_shared_scalar(b.value, e)  # type: ignore[arg-type]
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
            cur = Tile(f"{arr.expr}[{idx}]", arr.ty)
            new = self.full_tile(self.convert(v, target.ty, node), arr.ty, node)
            if scope.mask is not None:
                self.emit("where", node.loc.line, dst=cur.expr, mask=scope.mask, a=new,
                          b=cur.expr, dtype=self.dt(arr.ty))  # fmt: skip
            else:
                self.emit("let", node.loc.line, dst=cur.expr, value=new)
            return
        ptr, off = where
        if isinstance(off, Tile):
            raise self.refuse("a store at an address that depends on data (a scatter)", node)
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
            if not all(isinstance(v, Uni) for v in vals):
                raise self.refuse("a local array indexed by a per-thread value", e)
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
        for v, stride in terms:
            if isinstance(v, Tile) and v.ty == "float":
                raise self.refuse("a floating-point array index", node)
            if not isinstance(v, Uni | Lin | Idx | Tile):
                raise self.refuse("an index that is a pointer or an array", node)
            t = self.tile(v, "int", node)
            if stride != "1":
                t = self.op("multiply", [t, stride], "int").expr
            acc = t if acc == "0" else self.op("add", [acc, t], "int").expr
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
        if e.op == "+" and isinstance(a, Ptr) and isinstance(b, Uni | Lin):
            return Ptr(a.tensor, lin_add(a.off, as_lin(b)), a.ty, a.dims)
        if e.op == "+" and isinstance(b, Ptr) and isinstance(a, Uni | Lin):
            return Ptr(b.tensor, lin_add(b.off, as_lin(a)), b.ty, b.dims)
        if e.op == "-" and isinstance(a, Ptr) and isinstance(b, Uni | Lin):
            return Ptr(a.tensor, lin_sub(a.off, as_lin(b)), a.ty, a.dims)
        raise self.refuse(
            "pointer arithmetic with an offset that depends on data (a gather or scatter)", e
        )


__all__ = ["LiteralRefusal", "Lowerer", "c_expr_to_py", "dtype_spelling"]
