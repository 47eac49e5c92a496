"""The literal lowering, the per-block program's entry and its statements: declarations, writes,
branches, returns."""

from __future__ import annotations

import dataclasses

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.asynccopy import is_sync_object
from cuda2nki.lift.literal.bindexpr import c_expr_to_py
from cuda2nki.lift.literal.classify import Classifier
from cuda2nki.lift.literal.content import content, decl_key, write_counts
from cuda2nki.lift.literal.deferred import Unset
from cuda2nki.lift.literal.exchange import exchange_store
from cuda2nki.lift.literal.forcedlocals import forced_key, kernel_forced
from cuda2nki.lift.literal.globalnames import constant_scalars
from cuda2nki.lift.literal.helpers import (
    _callee,
    _elem_class,
    _np_and,
    _prod,
    _py,
)
from cuda2nki.lift.literal.knownaddr import drop_unused
from cuda2nki.lift.literal.live import drop_known
from cuda2nki.lift.literal.nullargs import known_truth
from cuda2nki.lift.literal.program import Branch, Instr, Node
from cuda2nki.lift.literal.spelling import (
    _ATOMICS,
    dtype_spelling,
)
from cuda2nki.lift.literal.state import (
    Binding_,
    LiteralRefusal,
    NotAffine,
    Scope,
)
from cuda2nki.lift.literal.statics import read_only_static
from cuda2nki.lift.literal.structure import (
    _has_varying_return,
    _switch_as_if,
)
from cuda2nki.lift.literal.tables import table_items
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
)
from cuda2nki.lift.literal.wide import WIDE_CLASSES, is_wide_type, wide_class
from cuda2nki.lift.literal.widearrays import declare_wide_array


class StatementMixin:
    """The per-block program's entry and its statements: declarations, writes, branches, returns.

    A part of :class:`~.lower.Lowerer`, whose fields it uses."""

    # ------------------------------------------------------------------ entry
    def lower_body(self) -> list[Node]:
        self.classes = Classifier(
            kernel_forced(self.forced), self.thread_kind, lambda n: _callee(self.tu, n)
        ).run(self.fn.body)
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
            klass = self.limb_class(p.name) or _elem_class(p.ty.pointee, p, self)
            return Binding_(
                Ptr(self.tensors[p.name], Lin("0", "0", "0"), klass),
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
                self.expr(_value_unused(s.expr), scope)
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
        if s.storage == "static" and not read_only_static(s):
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
            raise self.refuse(
                f"double-precision variable '{s.name}' (NKI has no fp64 arithmetic, and a float "
                "kernel that computes through double values is not moved to fp32 behind its back: "
                "declare it float where fp32 is enough)",
                s,
            )
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
        ty = self.local_type(s.ty, klass, ty)
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
        if is_wide_type(ty) and not self.wide_mode():  # its locals are no limb pairs here
            raise self.refuse(f"__shared__ '{s.name}' of 64-bit integers", s)
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
        klass = wide_class(ty) or ("float" if ty.is_float else "int")
        if klass in WIDE_CLASSES:  # limb pairs, as a 64-bit buffer's tensor holds them
            size, ty = f"2 * ({size})", A.ScalarType(name="uint32")
        self.scratch.append(
            Instr("scratch", (("dst", name), ("size", size), ("dtype", dtype_spelling(ty.name))))
        )
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
        if is_wide_type(ty) and self.wide_mode():  # its elements are limb pairs
            declare_wide_array(self, s, scope, dims, ty)
            return
        kty = "float" if ty.is_float else "int"
        name = self.pyname(s.name)
        self.emit("tiles", s.loc.line, dst=name, count=str(_prod(dims)), dtype=self.dt(kty))
        loc = Local(name, tuple(int(d) for d in dims), kty)
        self.env[-1][s.name] = Binding_(loc, "A", scope.depth, kty)
        if isinstance(s.init, A.InitList):
            for k, item in enumerate(s.init.items):
                v = self.expr(item, scope)
                self.emit("let", dst=f"{name}[{k}]", value=self.full_tile(v, kty, item))

    def reclass_refusal(
        self, b: Binding_, v: Value, node: A.Node, construct: str
    ) -> LiteralRefusal:
        """The refusal that lowers the kernel again with local ``b`` in the class of ``v``
        (a plain refusal where ``b`` is no named local)."""
        if not b.cname or b.ty not in ("int", "float", "bool"):
            return self.refuse(construct, node)
        klass = "L" if isinstance(v, Lin) else ("I" if isinstance(v, Idx) else "T")
        if b.ty == "float" and klass != "T":
            return self.refuse(construct, node)
        key = forced_key(self.callees, b.cname.split("@")[0])
        return NotAffine(key, node.loc, klass, construct)

    def write_var(
        self, b: Binding_, name: str, v: Value, scope: Scope, node: A.Node, fresh: bool = False
    ) -> None:
        """Assign ``v`` to the local spelled ``name`` according to its class."""
        once = self.writes.get(b.cname, 0) <= 1 and not self.inline_depth
        if b.klass == "U":
            if not isinstance(v, Uni) and not (isinstance(v, Lin) and v.uniform):
                raise self.reclass_refusal(
                    b, v, node, "a per-thread value assigned to a uniform local"
                )
            expr = v.expr if isinstance(v, Uni) else v.b
            self.emit("let", node.loc.line, dst=name, value=expr)
            if once and b.ty == "int":
                self.known[name] = content(expr, self.known)
            b.value = Uni(name, b.ty)
            return
        if b.klass == "L":
            if isinstance(v, Idx) and b.cname:
                raise NotAffine(forced_key(self.callees, b.cname.split("@")[0]), node.loc)
            if not isinstance(v, Uni | Lin):
                raise self.reclass_refusal(
                    b, v, node, "a non-affine value assigned to an affine local"
                )
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
                raise self.reclass_refusal(b, v, node, "a data value assigned to an index local")
            new_np = self.np_spell(v)
            if scope.depth > b.depth and not fresh:
                if scope.np_mask is None:
                    raise self.refuse("an index local assigned under a data condition", node)
                new_np = f"np.where({scope.np_mask}, {new_np}, {name})"
            self.emit("let", node.loc.line, dst=name, value=f"_c2n_np({new_np})")
            b.value = Idx(name)
            return
        masked = scope.depth > b.depth and scope.mask is not None and not fresh
        if b.ty in WIDE_CLASSES:
            b.value = self.wide_write(name, v, scope, masked, b.ty == "wide", node)
            return
        new = self.full_tile(v, b.ty, node)
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
        known = known_truth(c.expr) if isinstance(c, Uni) else None
        if known is not None:  # a constant condition: only the branch C runs
            live = s.then if known else s.else_
            if live is not None:
                self.stmt(A.Block(loc=live.loc, body=(live,)), scope)
            return
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


def _value_unused(e: A.Expr) -> A.Expr:
    """``e`` evaluated for its effect only: ``i++`` as ``++i`` (no copy of the old value is
    kept for a statement that never reads it, so a loop's step stays a plain update)."""
    if isinstance(e, A.Unary) and e.op in ("post++", "post--"):
        return dataclasses.replace(e, op="pre" + e.op[4:])
    return e
