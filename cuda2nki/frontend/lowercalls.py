"""Calls in the body lowering: intrinsics, device functions (templated, overloaded,
by reference), member functions and launches (a mixin of
:class:`cuda2nki.frontend.lower.BodyLowerer`)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.diagnostics import SourceLoc
from cuda2nki.frontend import ast as A
from cuda2nki.frontend import intrinsics as I
from cuda2nki.frontend.aggcopy import plain_memcpy, struct_memcpy
from cuda2nki.frontend.aggregates import AggregateType
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.asynccopy import ASYNC_CALLS, SYNC_METHODS
from cuda2nki.frontend.constfold import numeric_limit as _numeric_limit
from cuda2nki.frontend.cst import (
    COMMENT_IDS,
    QUALIFIER_IDS,
    F,
)
from cuda2nki.frontend.cucomplex import COMPLEX_HELPERS, ComplexCallError, complex_call
from cuda2nki.frontend.devlaunch import (
    DEVICE_RUNTIME_CALLS,
    device_launch,
    runtime_call,
)
from cuda2nki.frontend.dim3 import dim3_call, is_dim3_call
from cuda2nki.frontend.lowerbase import (
    CG_NAMESPACES,
    Sym,
    _text,
)
from cuda2nki.frontend.lowertables import (
    _SPECIAL_CALLS,
    _cache_hinted,
    _tyname,
    _user_param_nodes,
    _vector_ctor,
)
from cuda2nki.frontend.nodekinds import REJECTED_KINDS
from cuda2nki.frontend.typesys import (
    INT,
    NAMED_SCALARS,
    ULONG,
    unqualified,
)

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer

    _Base = BodyLowerer
else:
    _Base = object


class CallLowering(_Base):
    """Calls in the body lowering: intrinsics, device functions (templated, overloaded,"""

    def _qualified_call_name(self, fn: ts.Node) -> tuple[str, list[ts.Node]]:
        """``cg::tiled_partition<32>`` -> ("cg::tiled_partition", [32 node])."""
        targs: list[ts.Node] = []
        parts: list[str] = []
        n = fn
        while n is not None:
            if n.type == "qualified_identifier":
                scope = n.child_by_field_id(F.scope)
                parts.append(_text(scope).replace(" ", "") if scope is not None else "")
                n = n.child_by_field_id(F.name)
            elif n.type == "template_function":
                parts.append(_text(n.child_by_field_id(F.name)))
                al = n.child_by_field_id(F.arguments)
                targs = [c for c in al.named_children if c.kind_id not in COMMENT_IDS] if al else []
                break
            else:  # _text(n), from the bytes this lowerer reads
                text = self.src[n.start_byte : n.end_byte].decode()
                parts.append(text.replace(" ", ""))
                break
        return "::".join(parts), targs

    def _callee_name(self, call: ts.Node) -> str:
        fn = call.child_by_field_id(F.function)
        if fn is None:
            return ""
        return self._qualified_call_name(fn)[0].split("::")[-1]

    def e_call(self, node: ts.Node) -> A.Expr:
        kids = node.children
        if len(kids) == 2:  # function, arguments (no launch configuration, no comment)
            fn, args_node = kids
        else:
            for c in kids:
                if c.type == "kernel_call_syntax":
                    if self.host:
                        return N.Name(loc=(node.byte_range, self.placer), name="<launch>", ty=None)
                    return device_launch(self, node, c, node.child_by_field_id(F.function))
            fn = node.child_by_field_id(F.function)
            args_node = node.child_by_field_id(F.arguments)
        arg_nodes = (
            [c for c in args_node.named_children if c.kind_id not in COMMENT_IDS]
            if args_node
            else []
        )
        loc = self.loc(node)
        ft = fn.type
        if ft == "field_expression":
            return self._method_call(node, fn, arg_nodes)
        if ft in ("primitive_type", "sized_type_specifier", "type_identifier"):
            return self._functional_cast(node, fn, arg_nodes)
        if ft == "identifier" and self.generic and self._function_tparam(_text(fn)):
            return self._opaque_function_call(node, fn, arg_nodes)  # `op(x)`, `op` not known yet
        if ft == "identifier" and is_dim3_call(self, fn):
            return dim3_call(self, node)  # `dim3(x, y)`: missing axes are 1
        if ft == "identifier" and self._names_a_type(_text(fn)):
            return self._functional_cast(node, fn, arg_nodes)  # T(0): a typename, typedef, `uint`
        if ft == "parenthesized_expression":  # `(T)(x)` reads as a call of `(T)`
            cast = self._paren_type_cast(node, fn, arg_nodes)
            if cast is not None:
                return cast
        if ft == "template_function":
            view = self._smem_view_call(node, fn, arg_nodes)
            if view is not None:
                return view
            self._check_misparsed_less(fn)
        elif ft not in ("identifier", "qualified_identifier"):
            if fn.type in REJECTED_KINDS or fn.is_error:
                self._refuse(fn)
            raise self.fail("C2N1010", fn, what="call through a function pointer or expression")
        if ft == "qualified_identifier" and self.u.packed and not self.host:
            fill = self._packed_fill_call(node, fn, arg_nodes)
            if fill is not None:
                return fill
        if ft == "identifier" and not self.host and self.is_lambda_call(node):
            got = self.lambda_result(node)
            if got is not None:  # computed by the statement (see .lambdas)
                return got
            raise self.fail("C2N1010", node, what="lambda call used as a value")
        if ft == "identifier" and self.u.methods and not self.host:
            got = self._identifier_method_call(node, fn, arg_nodes)
            if got is not None:
                return got
        if ft == "identifier" and self.generic and not self.host:
            got = self._opaque_object_call(node, fn, None, arg_nodes)
            if got is not None:  # `payoff(S)` with `Payoff payoff` a template parameter
                return got
        name, targ_nodes = self._qualified_call_name(fn)
        ref = self.env.get(name)
        if isinstance(ref, A.FunctionRef):  # a call of a function template parameter
            name = ref.name
        parts = name.split("::")
        short = parts[-1]
        ns = parts[-2] if len(parts) > 1 else ""
        if ns or short in _SPECIAL_CALLS or "numeric_limits" in name:
            special = self._special_call(node, name, short, ns, targ_nodes, arg_nodes, loc)
            if special is not None:
                return special
        if short in I.CACHE_STORES and len(arg_nodes) == 2 and not ns and not self.host:
            vec = self._word_of(arg_nodes[1])
            if vec is not None:  # `__stcs(reinterpret_cast<int4*>(p), v.get_bits())`
                ptr = self.expr(arg_nodes[0])
                if not isinstance(ptr.ty, A.PointerType):
                    raise self.fail("C2N1030", node, what=f"'{short}' through a non-pointer")
                deref = N.Unary(loc=loc, op="*", operand=ptr, ty=ptr.ty.pointee)
                return self._packed_store(node, deref, vec)
        self.in_assert = short == "assert"
        outs, self.agg_out = self.agg_out, None  # for this call, not for those in its arguments
        old_ok, self.agg_ok = self.agg_ok, not self.host
        try:
            args = [self.expr(a) for a in arg_nodes]
        finally:
            self.in_assert = False
            self.agg_ok = old_ok
        targs: list[A.Expr | A.CType] = [self._template_arg(t) for t in targ_nodes]
        fi = self._callee(parts)
        if fi is None and not ns and short == "init" and self.is_barrier_init(args):
            return N.IntLit(loc=loc, value=0, ty=INT)  # the barrier counts the whole block
        if fi is None and not ns and not self.host and short in COMPLEX_HELPERS:
            try:
                return complex_call(short, args, loc, self._temp_maker(node, "__cx"))
            except ComplexCallError as exc:
                raise self.fail("C2N1010", node, what=str(exc)) from None
        if fi is None and ns not in ("", "std", "cuda::std", "cuda"):
            if self.host:
                return N.Call(loc=loc, func=name, args=tuple(args), template_args=tuple(targs))
            raise self.fail("C2N1021", node, name=name)
        if fi is not None and not self.host and not self._intrinsic_overload(short, args):
            return self._user_call(node, short, fi, args, targs, arg_nodes, outs)
        for a, an in zip(args, arg_nodes):
            if type(a.ty) is AggregateType:
                self.agg_refused_use(an, a.ty)
        if short in I.RULES:
            hinted = None if self.host else _cache_hinted(short, args, loc)
            if hinted is not None:
                return hinted
            lo, hi = I.ARITY[short]
            if not (lo <= len(args) <= hi) and not self.host:
                exp = str(lo) if lo == hi else f"{lo} to {hi}"
                raise self.fail("C2N1028", node, name=short, got=len(args), expected=exp)
            ty = I.result_type(short, [a.ty for a in args])
            return N.Call(loc=loc, func=short, args=tuple(args), template_args=tuple(targs), ty=ty)
        if self.host:
            return N.Call(loc=loc, func=name, args=tuple(args), template_args=tuple(targs))
        raise self.fail("C2N1021", node, name=name)

    def _temp_maker(self, node: ts.Node, prefix: str):
        """A maker of locals declared at the function's start, ``<prefix><offset>_<i>``, for
        values a call's expansion must evaluate once."""
        loc = (node.byte_range, self.placer)

        def temp(i: int, ty: A.CType) -> A.Name:
            name = f"{prefix}{node.start_byte}_{i}"
            self.prologue.append(N.VarDecl(loc=loc, name=name, ty=ty, init=None, storage="local"))  # type: ignore[arg-type]
            return N.Name(loc=loc, name=name, ty=ty)

        return temp

    def _sync_method_call(
        self, node: ts.Node, obj: ts.Node, method: str, arg_nodes: list[ts.Node]
    ) -> A.Expr | None:
        """``bar.arrive_and_wait()``, ``pipe.consumer_wait()``, ``p->arrive_and_wait()``..."""
        if obj.type == "identifier":
            s = self.lookup(_text(obj))
            if s is None or s.cg:
                return None
            value = self.expr(obj)
        elif obj.type in ("parenthesized_expression", "pointer_expression", "subscript_expression"):
            value = self.expr(obj)
        else:
            return None
        return self.sync_method(node, value, method, arg_nodes)

    def _intrinsic_overload(self, short: str, args: list[A.Expr]) -> bool:
        """A header's overloads of an intrinsic (helper_math.h's ``make_float3(float4)``) next
        to a call of the intrinsic itself (``make_float3(x, y, z)``): no user overload takes
        that many arguments, the intrinsic does."""
        if short not in I.RULES:
            return False
        lo, hi = I.ARITY[short]
        if not lo <= len(args) <= hi:
            return False
        defs = self.u.overloads.get(short) or []
        same = [fd for fd in defs if len(_user_param_nodes(fd.node)) == len(args)]
        if not same:
            return True
        # `floorf(v.x)` inside helper_math.h's `floorf(float2 v)`: scalar arguments, and every
        # user overload of that arity takes a vector somewhere
        if not all(isinstance(a.ty, A.ScalarType) for a in args):
            return False
        for fd in same:
            if fd.is_template:
                return False
            _, types = self.u.full_signature(fd, {})
            if all(isinstance(unqualified(t), A.ScalarType) for t in types):
                return False
        return True

    def _smem_view_call(
        self, node: ts.Node, fn: ts.Node, arg_nodes: list[ts.Node]
    ) -> A.Expr | None:
        """``SharedMemory<T>()``: the dynamic shared memory as a ``T`` array (a view struct,
        see :mod:`cuda2nki.frontend.smemview`), else None."""
        name, targs = fn.child_by_field_id(F.name), fn.child_by_field_id(F.arguments)
        if self.host or name is None or _text(name) not in self.u.smem_views:
            return None
        kids = [c for c in targs.named_children if c.kind_id not in COMMENT_IDS] if targs else []
        if len(kids) != 1 or arg_nodes:
            raise self.fail("C2N1030", node, what=f"'{_text(fn)}' with arguments")
        elem = self._template_arg(kids[0])
        if isinstance(elem, A.Expr):
            raise self.fail("C2N1030", node, what=f"'{_text(fn)}' of a value")
        return self.smem_view(node, elem)

    def _smem_view_decl(self, node: ts.Node, type_node: ts.Node) -> list[A.Stmt]:
        """``SharedMemory<T> smem;``: ``smem`` is a ``T*`` to the dynamic shared memory."""
        args = type_node.child_by_field_id(F.arguments)
        kids = [c for c in args.named_children if c.kind_id not in COMMENT_IDS] if args else []
        elem = self._template_arg(kids[0]) if len(kids) == 1 else None
        if elem is None or isinstance(elem, A.Expr):
            raise self.fail("C2N1025", type_node, what=_text(type_node))
        out: list[A.Stmt] = []
        for d in node.children_by_field_id(F.declarator):
            if d.type != "identifier":
                raise self.fail("C2N1030", d, what=f"'{_text(d)}' of {_text(type_node)}")
            name = _text(d)
            view = self.smem_view(node, elem)
            ty = N.PointerType(pointee=unqualified(elem))
            self.declare(name, Sym(ty))
            self.view_vars.add(name)
            out.append(N.VarDecl(loc=self.loc(d), name=name, ty=ty, init=view))
        return out

    def smem_view(self, node: ts.Node, elem: A.CType) -> A.Expr:
        """The launch's dynamic shared memory as an array of ``elem``: an ``extern __shared__``
        array declared at the top of the function (one per element type)."""
        elem = unqualified(elem)
        key = re.sub(r"\W+", "_", _tyname(elem)).strip("_")
        decl = self.smem_arrays.get(key)
        if decl is None:
            ty = N.ArrayType(elem=elem, dims=(None,))
            decl = N.VarDecl(
                loc=self.loc(node), name=f"__c2n_smem_{key}", ty=ty, storage="extern_shared"
            )
            self.smem_arrays[key] = decl
        return N.Name(loc=(node.byte_range, self.placer), name=decl.name, ty=decl.ty)

    def _callee(self, parts: list[str]):
        """The user function ``a::b::f`` (or ``f``) calls: for a qualified name, one defined in
        that namespace; unqualified, one in the caller's namespace if there is one."""
        short = parts[-1]
        if len(parts) > 1:
            defs = self.u.in_namespace(short, "::".join(parts[:-1]))
            return defs[0] if defs else None
        fi = self.u.functions.get(short)
        if fi is None or len(self.u.overloads.get(short, ())) <= 1:
            return fi
        caller = self.u.functions.get(self.func_name.split("<")[0].split("(")[0])
        here = self.u.in_namespace(short, caller.namespace) if caller is not None else []
        return here[0] if here else fi

    def _special_call(
        self,
        node: ts.Node,
        name: str,
        short: str,
        ns: str,
        targ_nodes: list[ts.Node],
        arg_nodes: list[ts.Node],
        loc: SourceLoc,
    ) -> A.Expr | None:
        """Calls that are not plain function calls: C++ casts, cooperative groups, refused
        families (tensor cores, textures, async copies, device-side launches), numeric limits,
        printf.  None: an ordinary call.  (Only names in ``_SPECIAL_CALLS``, qualified names
        and numeric_limits can be one.)"""
        if short in ("static_cast", "reinterpret_cast", "const_cast", "dynamic_cast") and not ns:
            if len(targ_nodes) != 1 or len(arg_nodes) != 1:
                raise self.fail("C2N1030", node, what=short)
            to = (
                self.type_descriptor(targ_nodes[0])
                if targ_nodes[0].type == "type_descriptor"
                else self.type_of(targ_nodes[0])
            )
            operand = self.expr(arg_nodes[0])
            kind = {
                "static_cast": "static",
                "reinterpret_cast": "reinterpret",
                "const_cast": "const",
            }.get(short, "static")
            return N.Cast(loc=loc, to=to, operand=operand, kind=kind, ty=unqualified(to))
        if ns in CG_NAMESPACES or (short in ("this_thread_block", "tiled_partition") and not ns):
            return self._cg_call(node, short, arg_nodes)
        if ns in ("wmma", "nvcuda") or short in I.TENSOR_CORE_FUNCS:
            return self.wmma_call(node, short, arg_nodes)
        if short in I.TEXTURE_FUNCS:
            return self.texture_fetch(node, short, targ_nodes, arg_nodes, loc)
        if short in ASYNC_CALLS and ns in ("", "cuda") and not self.host:
            return self.async_call(node, short, arg_nodes)
        if short in ("move", "forward") and ns == "std" and len(arg_nodes) == 1:
            return self.expr(arg_nodes[0])  # a value category, not a computation
        if (
            short in ("memcpy", "__builtin_memcpy")
            and ns in ("", "std")
            and len(arg_nodes) == 3
            and not self.host
            and short not in self.u.functions
        ):  # a byte copy, as an asynchronous copy completed at once is
            got = struct_memcpy(self, node, arg_nodes)  # to or from a struct's members
            return got if got is not None else plain_memcpy(self, node, arg_nodes)
        if short == "aligned_size_t" and ns == "cuda" and len(arg_nodes) == 1:
            size = self.expr(arg_nodes[0])
            return N.Cast(loc=loc, to=ULONG, operand=size, kind="functional", ty=ULONG)
        if short in I.ASYNC_FUNCS or ns == "pipeline":
            raise self.fail("C2N1018", node, what=name)
        if short in DEVICE_RUNTIME_CALLS and not self.host and not ns:
            return runtime_call(self, node, short, arg_nodes)
        if short in I.DEVICE_RUNTIME_FUNCS and not self.host:
            code = "C2N1016" if "Cooperative" in short else "C2N1014"
            if code == "C2N1016":
                raise self.fail(code, node, what=short)
            raise self.fail(code, node, kernel=short)
        if ns == "numeric_limits" or "numeric_limits" in name:
            k = _numeric_limit(name, self.limits_type)
            if k is not None:
                return k(loc)
            opaque = self._opaque_limit(name, loc)
            if opaque is not None:  # `numeric_limits<K>::max()`, `K` not instantiated yet
                return opaque
        if short == "printf":
            self.note("C2N1019", node)
            return N.IntLit(loc=loc, value=0, ty=INT)
        return None

    def _template_arg(self, node: ts.Node) -> A.Expr | A.CType:
        fn = self._function_arg(node)
        if fn is not None:  # `blockReduce<warpReduceSum>`: a device function
            return N.Name(loc=(node.byte_range, self.placer), name=fn, ty=None)
        if node.type in ("type_descriptor", "type_identifier"):
            # `k<BS>`: the grammar cannot tell a constant's name from a type name
            simple = node if node.type == "type_identifier" else None
            if node.type == "type_descriptor" and node.child_by_field_id(F.declarator) is None:
                t = node.child_by_field_id(F.type)
                quals = [c for c in node.children if c.kind_id in QUALIFIER_IDS]
                if t is not None and t.type == "type_identifier" and not quals:
                    simple = t
            if simple is not None:
                name = _text(simple)
                if isinstance(self.env.get(name), int):  # an enclosing template's constant
                    return self.e_identifier(simple)
                if self._named(name, simple) is None and (
                    self.lookup(name) is not None or name in self.u.consts or self.host
                ):
                    return self.e_identifier(simple)
            scoped = self._enumerator_arg(node)  # `k<Mode::Safe>`: reads as a type too
            if scoped is not None:
                return scoped
            if node.type == "type_descriptor":
                return self.type_descriptor(node)
        if node.type in ("primitive_type", "type_identifier", "sized_type_specifier"):
            return self.type_of(node)
        return self.expr(node)

    def _enumerator_arg(self, node: ts.Node) -> A.Expr | None:
        """A template argument naming a scoped enumerator or a namespace's constant
        (``Mode::Safe``, ``cfg::ROWS``), which the grammar reads as a qualified type: its
        value, else None."""
        t = node.child_by_field_id(F.type) if node.type == "type_descriptor" else None
        if t is None or node.child_by_field_id(F.declarator) is not None:
            return None
        got = self.u.consts.get(_text(t).replace(" ", "").lstrip(":"))
        if got is None or "::" not in _text(t) or not isinstance(got[0], int):
            return None
        return N.IntLit(loc=(node.byte_range, self.placer), value=got[0], ty=got[1])

    def _function_arg(self, node: ts.Node) -> str | None:
        """The device function a template argument names (``f``, ``&f``, a forwarded function
        parameter), else None."""
        if node.type == "pointer_expression" and _text(node.child_by_field_id(F.operator)) == "&":
            node = node.child_by_field_id(F.argument)
        elif node.type == "type_descriptor":
            if node.child_by_field_id(F.declarator) is not None:
                return None
            node = node.child_by_field_id(F.type)
        if node is not None and node.type == "qualified_identifier":  # `act::silu`
            parts = _text(node).replace(" ", "").split("::")
            defs = self.u.in_namespace(parts[-1], "::".join(parts[:-1]))
            defs = [d for d in defs if d.kind in ("device", "host_device")]
            return "::".join(parts) if defs else None
        if node is None or node.type not in ("identifier", "type_identifier"):
            return None
        name = _text(node)
        ref = self.env.get(name)
        if isinstance(ref, A.FunctionRef):
            return ref.name
        if name in self.env or self.lookup(name) is not None or name in self.u.typedefs:
            return None
        fd = self.u.functions.get(name)
        return name if fd is not None and fd.kind in ("device", "host_device") else None

    def _paren_type_cast(
        self, node: ts.Node, fn: ts.Node, arg_nodes: list[ts.Node]
    ) -> A.Expr | None:
        inner = [c for c in fn.named_children if c.kind_id not in COMMENT_IDS]
        if len(inner) != 1 or inner[0].type != "identifier" or len(arg_nodes) != 1:
            return None
        name = _text(inner[0])
        if self.lookup(name) is not None:
            return None
        to = self._named(name, inner[0])
        if to is None:
            return None
        operand = self.expr(arg_nodes[0])
        return N.Cast(
            loc=(node.byte_range, self.placer), to=to, operand=operand, kind="c", ty=unqualified(to)
        )

    def _names_a_type(self, name: str) -> bool:
        """A ``typename`` template parameter or a typedef, not shadowed by a variable."""
        if self.lookup(name) is not None or name in self.u.functions:
            return False
        if name in self.env:
            return not isinstance(self.env[name], (int, A.FunctionRef))
        return name in self.u.typedefs or name in NAMED_SCALARS  # `unsigned(x)`, `uint(x)`

    def _functional_cast(self, node: ts.Node, fn: ts.Node, arg_nodes: list[ts.Node]) -> A.Expr:
        if fn.type == "identifier":
            to = self._named(_text(fn), fn)
            if to is None:
                raise self.fail("C2N1022", fn, name=_text(fn))
        else:
            to = self.type_of(fn)
        if self.packed_of(to) is not None and len(arg_nodes) == 1:
            return self._packed_from_word(node, to, arg_nodes[0])
        args = [self.expr(a) for a in arg_nodes]
        loc = (node.byte_range, self.placer)
        if isinstance(to, A.VectorType):
            return _vector_ctor(to, tuple(args), loc)
        if len(args) != 1:
            raise self.fail("C2N1030", node, what=f"{_text(fn)}(...) with {len(args)} arguments")
        return N.Cast(loc=loc, to=to, operand=args[0], kind="functional", ty=unqualified(to))

    def _method_call(self, node: ts.Node, fn: ts.Node, arg_nodes: list[ts.Node]) -> A.Expr:
        obj = fn.child_by_field_id(F.argument)
        method = _text(fn.child_by_field_id(F.field))
        if obj.type == "identifier":
            s = self.lookup(_text(obj))
            if s is not None and s.cg:
                args = [self.expr(a) for a in arg_nodes]
                return self._cg_method(s, method, args, node)
        if obj.type == "call_expression" and self._auto_cg(obj):
            k, n = self._cg_value(obj)
            args = [self.expr(a) for a in arg_nodes]
            return self._cg_method(Sym(None, cg=k, tile=n), method, args, node)
        if self.host:
            return N.Call(loc=(node.byte_range, self.placer), func=_text(fn), args=())
        got = self.cub_call(node, obj, method, arg_nodes)  # `BlockReduce(tmp).Sum(v)`
        if got is not None:
            return got
        if method in SYNC_METHODS:
            got = self._sync_method_call(node, obj, method, arg_nodes)
            if got is not None:
                return got
        if obj.type == "identifier" and _text(obj) in self.view_vars and not arg_nodes:
            views = self.u.smem_views.values()
            if any(method in v.methods for v in views):  # smem.getPointer()
                return self.expr(obj)
        if self.u.methods:  # a member function of an aggregate struct (see .methods)
            got = self._struct_method_call(node, fn, obj, method, arg_nodes)
            if got is not None:
                return got
        if self.generic and obj.type == "identifier":
            got = self._opaque_object_call(node, obj, method, arg_nodes)
            if got is not None:  # `payoff.is_in_the_money(S)`, `Payoff` a template parameter
                return got
        if self._word_of(node) is not None:
            raise self.fail(
                "C2N1010",
                node,
                what=f"the machine word '.{method}()' of a packed vector other than stored "
                "through a pointer",
            )
        raise self.fail("C2N1010", node, what=f"method call '.{method}()'")

    def _opaque_object_call(
        self, node: ts.Node, obj: ts.Node, method: str | None, arg_nodes: list[ts.Node]
    ) -> A.Expr | None:
        """Inside a template not instantiated yet: a call of (a member function of) an object
        whose type is a template parameter, an opaque value (its instances resolve it)."""
        s = self.lookup(_text(obj))
        ty = s.ty if s is not None else None
        if not isinstance(ty, A.OpaqueType) or self.env.get(ty.name, 0) is not None:
            return None
        args = [self.expr(a) for a in arg_nodes]
        func = _text(obj) if method is None else f"{_text(obj)}.{method}"
        out = N.OpaqueType(name=f"{ty.name}::{method or 'operator()'}")
        self.u.dependent_types.add(out.name)
        return N.Call(loc=(node.byte_range, self.placer), func=func, args=tuple(args), ty=out)

    def _opaque_limit(self, name: str, loc: SourceLoc) -> A.Expr | None:
        """Inside a template not instantiated yet: ``numeric_limits<K>::max()`` with ``K`` a
        type parameter, a value of type ``K`` its instances resolve (to a literal)."""
        m = re.search(r"numeric_limits<\s*(\w+)\s*>::(\w+)", name)
        if m is None or m.group(1) not in self.env or self.lookup(m.group(1)) is not None:
            return None
        ty = self.env[m.group(1)]
        if ty is None and self.generic:
            ty = N.OpaqueType(name=m.group(1))
        if not isinstance(ty, A.OpaqueType):  # a known type: no limit of it is a value
            return None
        return N.Call(loc=loc, func=name, args=(), ty=ty)

    def _function_tparam(self, name: str) -> bool:
        """``name`` is a function template parameter of this function, left uninstantiated."""
        if name not in self.env or self.env[name] is not None or self.lookup(name) is not None:
            return False
        fd = self.u.functions.get(self.func_name)
        params = fd.template_params if fd is not None else ()
        return any(p[0] == name and p[1] == "function" for p in params)

    def _opaque_function_call(self, node: ts.Node, fn: ts.Node, arg_nodes: list[ts.Node]) -> A.Expr:
        """Inside a template not instantiated yet: a call of a function template parameter, of
        a result type its instances resolve."""
        args = [self.expr(a) for a in arg_nodes]
        out = N.OpaqueType(name=f"{_text(fn)}()")
        self.u.dependent_types.add(out.name)
        return N.Call(loc=(node.byte_range, self.placer), func=_text(fn), args=tuple(args), ty=out)

    def _identifier_method_call(
        self, node: ts.Node, fn: ts.Node, arg_nodes: list[ts.Node]
    ) -> A.Expr | None:
        """``f(x)`` with ``f`` a struct variable (its ``operator()``), or, inside a member
        function, another member function of the same struct."""
        name = _text(fn)
        s = self.lookup(name)
        if s is None and self.this_agg is not None and self.has_method(self.this_agg.name, name):
            leaves = self.own_leaves(node)
            return self.method_call(node, self.this_agg, leaves, name, arg_nodes, fn)
        if s is None:
            got = self.this_member(fn, name) if self.this_agg is not None else None
            if got is None:
                return None
            base: A.Expr = got  # a member that is itself a functor: not supported
            return None
        if type(s.ty) is not AggregateType and self.blob_struct(s.ty) is None:
            return None
        base = self.agg_value(fn)
        leaves = self.object_leaves(node, base, False)
        if leaves is None or not self.has_method(leaves[0].name, "operator()"):
            return None
        return self.method_call(node, leaves[0], leaves[1], "operator()", arg_nodes, fn)

    def _struct_method_call(
        self, node: ts.Node, fn: ts.Node, obj: ts.Node, method: str, arg_nodes: list[ts.Node]
    ) -> A.Expr | None:
        arrow = _text(fn.child_by_field_id(F.operator)) == "->"
        if obj.type == "this" and arrow and self.this_agg is not None:
            if not self.has_method(self.this_agg.name, method):
                return None
            leaves = self.own_leaves(node)
            return self.method_call(node, self.this_agg, leaves, method, arg_nodes, obj)
        base = self.expr(obj) if arrow else self.agg_value(obj)
        got = self.object_leaves(node, base, arrow)
        if got is None:
            return None
        if not self.has_method(got[0].name, method):
            raise self.fail("C2N1021", fn, name=f"{got[0].name}::{method}")
        return self.method_call(node, got[0], got[1], method, arg_nodes, obj)
