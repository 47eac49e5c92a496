"""Host values at a launch site: what the grid, the block and each argument evaluate to.

A launch such as ``k<<<grid, block>>>(n, alpha, p)`` names host values.  This module follows
each name as far as the source allows and returns, per grid/block component and per argument, a
:class:`HostExpr`: its C text in the kernel's parameter names (a host name passed as an argument
is that parameter) and its number when every name it uses has a constant value.  What is
followed, in the (preprocessed, so ``#define``d sizes are numbers) source:

* literals, casts (``(float)n``, ``(size_t)x``), arithmetic, ``sizeof(T)``, ``ceil`` / ``floor``
  of a float division (``ceil((float)n / (float)b)`` is ``ceil_div(n, b)``), ``min`` / ``max``,
  ``ceil_div``-style helpers and any function whose body is a single ``return``;
* ``dim3`` variables of 1-3 components and their members (``block.x``);
* locals of the host function: the initializer of their last declaration before the launch, else
  their first assignment; a loop variable is taken at its first value, so ``sizes[j]`` inside
  ``for (j = 0; ...)`` over a constant array is its first element (a note says which);
* parameters of the host function: the argument its first caller in the file passes, evaluated
  in the caller (launcher chains, several levels deep);
* file-scope constants;
* launchers reached as methods (``ops[i].run(...)``), templates (``bench<float>(...)``) or
  through a function pointer passed to a harness (``bench(step, ...)`` calling ``fn(...)``);
* locals written through ``&x`` by a call (:mod:`cuda2nki.frontend.hostouts`), struct members
  (:mod:`cuda2nki.frontend.hostmembers`), ``sizeof(a) / sizeof(a[0])``, ``v.size()`` of a
  ``std::vector<T> v(n)``; a call the file does not define, a member never set and ``sizeof``
  of an unknown type take a default with a note (never while reading an allocation size).

Every value carries its evidence (``file:line: text``) so that a binding can cite it.
"""

from __future__ import annotations

import re
from typing import Any

import tree_sitter as ts

from cuda2nki.frontend.hostalloc import alloc_bytes
from cuda2nki.frontend.hostblock import fitted
from cuda2nki.frontend.hostcalls import host_calls
from cuda2nki.frontend.hostidioms import half_round, remainder_ceil
from cuda2nki.frontend.hostnames import HostNames
from cuda2nki.frontend.hostsyntax import (
    _bare_name,
    _enclosing,
    _function_name,
    _kids,
    _one_line,
    _params,
    _txt,
    parameter_names,
    resolve_args,
)
from cuda2nki.frontend.hostterms import HostTerms
from cuda2nki.frontend.hostvalue import (
    _MAX_DEPTH,
    _V,
    DEFAULT_BLOCK,
    NOMINAL_DEVICE,
    HostExpr,
    HostFacts,
    _binary,
    _cast,
    _ceil_div,
    _const,
    _ev,
    _host_expr,
    _is_float_type,
    _notes,
    _NoValue,
    _number,
    _round_div,
    _Scope,
)
from cuda2nki.frontend.hostzero import zeroed_before
from cuda2nki.frontend.launcheraliases import alias_calls

__all__ = [
    "DEFAULT_BLOCK",
    "NOMINAL_DEVICE",
    "HostEvaluator",
    "HostExpr",
    "HostFacts",
    "parameter_names",
    "resolve_args",
]


class HostEvaluator(HostNames, HostTerms):
    """Evaluates host expressions of one (preprocessed) file; ``where(node)`` gives the original


    ``file:line`` of a node for evidence."""

    def __init__(self, root: ts.Node, where: Any, path: str | None = None) -> None:
        self.root = root
        self.where = where
        self.path = path  # the file, whose neighbours may call its launchers (None: no search)
        self.source = b""
        self._funcs: dict[str, list[ts.Node]] | None = None
        self._calls: dict[str, list[ts.Node]] | None = None
        self._defaults = False  # give uncalled launchers' parameters a default block size
        self._sizes = False  # give uncalled launchers' parameters a default size (a grid's)
        self._types: dict[str, str] = {}  # template type parameters bound while evaluating
        self._pointer_cache: dict[str, list[ts.Node]] = {}
        self._block = False  # evaluating a launch's block: unknown sizes default to a block
        #: a value the source does not give may take a default (not while reading evidence)
        self._guess = True
        self._in_helper = False  # evaluating a helper's return: no helper inside it
        #: names an ``if (name == c)`` around the launch being read fixes, in its function
        self._guarded: tuple[ts.Node | None, dict[str, _V]] = (None, {})
        self._assigned_memo = {}  # see HostTerms.assigned
        self._block_default = DEFAULT_BLOCK  # what an unknown block size takes (hostblock)
        #: per host function, the nodes that may store, allocate or copy a pointer, with their
        #: text (see :func:`cuda2nki.frontend.hostalloc.storing_nodes`)
        self._storing: dict[tuple[int, int], list[tuple[ts.Node, bytes]]] = {}

    # ------------------------------------------------------------------ indexes
    def _index(self) -> None:
        funcs: dict[str, list[ts.Node]] = {}
        calls: dict[str, list[ts.Node]] = {}
        stack = [self.root]
        while stack:
            n = stack.pop()
            if n.type == "function_definition":
                name = _function_name(n)
                if name:
                    funcs.setdefault(name, []).append(n)
            elif n.type == "call_expression":
                f = n.child_by_field_name("function")
                if f is not None and f.type == "field_expression":  # `op.run(...)`, `p->run()`
                    f = f.child_by_field_name("field")
                elif f is not None and f.type == "template_function":  # `bench<float>(4)`
                    f = f.child_by_field_name("name")
                if f is not None and f.type in (
                    "identifier",
                    "qualified_identifier",
                    "field_identifier",
                ):
                    calls.setdefault(_txt(f).split("::")[-1], []).append(n)
            stack.extend(reversed(n.children))
        self._funcs, self._calls = funcs, host_calls(self.root, calls)

    def functions(self, name: str) -> list[ts.Node]:
        if self._funcs is None:
            self._index()
        return self._funcs.get(name, [])  # type: ignore[union-attr]

    def calls(self, name: str) -> list[ts.Node]:
        if self._calls is None:
            self._index()
        return self._calls.get(name, [])  # type: ignore[union-attr]

    def pointer_calls(self, name: str) -> list[ts.Node]:
        """Calls of function ``name`` through a function pointer: ``bench(launch, ...)`` passes
        it to ``bench(int (*run)(float*, int), ...)``, whose calls ``run(...)`` call it."""
        out: list[ts.Node] = []
        if not name:
            return out
        if self._calls is None:
            self._index()
        if name in self._pointer_cache:
            return self._pointer_cache[name]
        self._pointer_cache[name] = out
        out += alias_calls(self.root, name)  # `run = name; run(...)`, `tab[i](...)`
        for callee, calls in list(self._calls.items()):  # type: ignore[union-attr]
            for call in calls:
                args = call.child_by_field_name("arguments")
                items = _kids(args) if args is not None else []
                for j, a in enumerate(items):
                    if _bare_name(a) != name:
                        continue
                    for g in self.functions(callee):
                        params = _params(g)
                        if j < len(params) and params[j] and params[j] != name:
                            out += [c for c in self.calls(params[j]) if _enclosing(c) == g]
        return out

    # ------------------------------------------------------------------ the launch site
    def facts(self, call: ts.Node, cfg: list[Any], args: list[ts.Node]) -> HostFacts:
        """The host values of a launch: ``cfg`` is [grid, block] and the shared bytes if given
        (grid and block: a node, or a tuple of one node per axis), ``args`` its arguments."""
        fnode = _enclosing(call)
        saved, self._guarded = self._guarded, (fnode, self._equalities(call, fnode))
        try:  # a block of defaults too large to launch is read again (frontend.hostblock)
            return fitted(self, lambda: self._facts(call, fnode, cfg, args))
        finally:
            self._guarded = saved

    def _equalities(self, call: ts.Node, fnode: ts.Node | None) -> dict[str, _V]:
        """``name -> value`` for each ``if (name == c)`` whose taken arm holds the launch
        (:mod:`cuda2nki.frontend.hostguards`), with its evidence."""
        from cuda2nki.frontend.hostguards import launch_equalities

        out = {}
        for eq in launch_equalities(call, fnode):
            try:
                value = _number(eq.value)
            except ValueError:
                continue
            cond = eq.test.child_by_field_name("condition")
            ev = (f"{self.where(eq.test)}: if {_one_line(cond) if cond is not None else ''}",)
            note = f"'{eq.name}' is {eq.value} where the launch runs ({self.where(eq.test)})"
            out[eq.name] = _const(value, ev, (note,))
        return out

    def _facts(
        self, call: ts.Node, fnode: ts.Node | None, cfg: list[Any], args: list[ts.Node]
    ) -> HostFacts:
        argmap = {_txt(a): i for i, a in enumerate(args) if a.type == "identifier"}
        scope = _Scope(fnode, call.start_byte, argmap, 0)
        grid = self._dims(cfg[0], scope)
        plain = _Scope(fnode, call.start_byte, {}, 0)
        block = self._block_dims(cfg[1], plain)
        if any(b.value is None for b in block):
            block = self._block_dims(cfg[1], scope)
        defaulted = any(b.value is None for b in block)
        if defaulted:
            # a launcher nobody in the file calls: its block-size parameter gets a default
            self._defaults = True
            try:
                block = self._block_dims(cfg[1], plain)
                if all(b.value is not None for b in block):
                    grid = self._dims(cfg[0], scope)
            finally:
                self._defaults = False
        if any(g.text is None for g in grid) and all(b.value is not None for b in block):
            # a launcher nobody calls sizes its grid by a parameter the kernel is not passed
            self._sizes = True
            try:
                grid = self._dims(cfg[0], scope)
            finally:
                self._sizes = False
        vals = tuple(self._host(a, plain) for a in args)
        shared = self._host(cfg[2], scope) if len(cfg) > 2 and cfg[2] is not None else None
        if shared is not None and shared.text is None and defaulted:
            shared = self._shared_by_block(cfg[2], scope, block) or shared
        self._guess = False  # an allocation size is evidence: a default only when none is found
        try:
            allocs = tuple(alloc_bytes(self, a, call, argmap) for a in args)
        finally:
            self._guess = True
        if any(a is None for a in allocs):  # `cudaMalloc(&p, n * sizeof(int))`, `n` read
            allocs = tuple(  # from a file: the size a default gives, with its note
                b if b is not None else alloc_bytes(self, a, call, argmap)
                for a, b in zip(args, allocs)
            )
        zeroed = tuple(zeroed_before(self, a, call) for a in args)
        return HostFacts(grid, block, vals, shared, allocs, zeroed=zeroed)

    def _block_dims(self, node: Any, scope: _Scope) -> tuple[HostExpr, ...]:
        self._block = True
        try:
            return self._dims(node, scope)
        finally:
            self._block = False

    def _dims(self, node: ts.Node | tuple[ts.Node, ...], scope: _Scope) -> tuple[HostExpr, ...]:
        if isinstance(node, tuple):  # `cuLaunchKernel(f, gx, gy, gz, ...)`: one node per axis
            return tuple(self._host(n, scope) for n in node)
        try:
            v = self.eval(node, scope)
        except _NoValue:
            return (HostExpr(None, None),)
        items = v.items if v.items is not None else (v,)
        return tuple(_host_expr(i, v) for i in items[:3])

    def _shared_by_block(
        self, node: ts.Node, scope: _Scope, block: tuple[HostExpr, ...]
    ) -> HostExpr | None:
        """The shared bytes of a launcher nobody calls, sized by its block-size parameter
        (``<<<g, dim3(tx), tx * sizeof(long)>>>``): that parameter takes the block's default
        here too.  None when the bytes need another parameter's value."""
        self._defaults = True
        try:
            got = self._host(node, scope)
        finally:
            self._defaults = False
        taken = {n for b in block for n in b.notes}
        if got.text is None or any("threads taken" in n and n not in taken for n in got.notes):
            return None
        return got

    def _host(self, node: ts.Node, scope: _Scope) -> HostExpr:
        try:
            v = self.eval(node, scope)
        except _NoValue:
            return HostExpr(None, None)
        if v.items is not None:
            return HostExpr(None, None, v.ev, v.notes)
        return _host_expr(v, v)

    # ------------------------------------------------------------------ evaluation
    def eval(self, n: ts.Node, s: _Scope) -> _V:
        if s.depth > _MAX_DEPTH:
            raise _NoValue
        t = n.type
        if t == "number_literal":
            return _const(_number(_txt(n)))
        if t in ("true", "false"):
            return _const(int(t == "true"))
        if t == "parenthesized_expression":
            inner = _kids(n)
            if len(inner) != 1:
                raise _NoValue
            v = self.eval(inner[0], s)
            return v if v.text is None or v.items else _V(f"({v.text})", v.num, None, v.ev, v.notes)
        if t in ("identifier", "type_identifier"):
            return self._name(_txt(n), n, s)
        if t == "assignment_expression" and _txt(n.child_by_field_name("operator")) == "=":
            return self.eval(n.child_by_field_name("right"), s)  # `n = m = 2048`: the value stored
        if t == "cast_expression":
            ty, value = _txt(n.child_by_field_name("type")), n.child_by_field_name("value")
            half = None if _is_float_type(ty) else half_round(value)
            if half is not None:  # `(int)((float)n / b + 0.5)`
                return _round_div(self.eval(half[0], s), self.eval(half[1], s))
            return _cast(ty, self.eval(value, s))
        if t == "binary_expression":
            count = self._array_count(n, s)
            if count is not None:  # `sizeof(a) / sizeof(a[0])`
                return count
            up = remainder_ceil(n)
            if up is not None:  # `a / b + (a % b ? 1 : 0)`
                return _ceil_div(self.eval(up[0], s), self.eval(up[1], s))
            op = _txt(n.child_by_field_name("operator"))
            left = self.eval(n.child_by_field_name("left"), s)
            if op in ("||", "&&") and left.num is not None and bool(left.num) == (op == "||"):
                return _V(str(int(op == "||")), int(op == "||"), None, left.ev, left.notes)
            return _binary(op, left, self.eval(n.child_by_field_name("right"), s))
        if t == "unary_expression":
            op = _txt(n.child_by_field_name("operator"))
            v = self.eval(n.child_by_field_name("argument"), s)
            if op == "-" and v.items is None:
                return _V(
                    None if v.text is None else f"(-{v.text})",
                    None if v.num is None else -v.num,
                    None,
                    v.ev,
                    v.notes,
                )
            if op == "+":
                return v
            raise _NoValue
        if t == "sizeof_expression":
            ty = _txt(n.child_by_field_name("type") or n).replace("sizeof", "").strip(" ()")
            try:
                return _const(self._sizeof(ty.replace("const ", "").strip()))
            except _NoValue:
                if not self._guess or not re.fullmatch(r"[A-Za-z_]\w*", ty):
                    raise
                if self._is_variable(ty, n, s):
                    raise  # `sizeof x` of an expression or a variable
                note = f"sizeof({ty}), a type not known here, taken as 4 bytes"
                return _const(4, (f"{self.where(n)}: {_one_line(n)}",), (note,))
        if t == "qualified_identifier":
            return self._static(n, s)
        if t == "field_expression":
            return self._member(n, s)
        if t == "subscript_expression":
            return self._subscript(n, s)
        if t == "call_expression":
            return self._call(n, s)
        if t in ("argument_list", "initializer_list", "parameter_list"):
            # parameter_list: `dim3 block(bs);` parses as a function declaration
            items = tuple(self.eval(c, s) for c in _kids(n))
            return _V(None, None, items, _ev(items), _notes(items))
        if t == "parameter_declaration" and n.child_by_field_name("declarator") is None:
            return self.eval(n.child_by_field_name("type"), s)
        if t == "parameter_declaration":  # `dim3 b(sizes[0])`: `sizes [0]` read as an array
            return self._subscript_read_as_declarator(n, s)
        if t == "conditional_expression":
            try:
                cond = self.eval(n.child_by_field_name("condition"), s)
            except _NoValue:
                cond = _V(None)
            if cond.num is None:
                return self._cmdline_default(n, s)
            return self.eval(n.child_by_field_name("consequence" if cond.num else "alternative"), s)
        raise _NoValue

    def _subscript_read_as_declarator(self, n: ts.Node, s: _Scope) -> _V:
        """A ``dim3 b(sizes[0], sizes[1])`` parses as a function declaration whose parameters
        are ``sizes`` with an array declarator ``[0]``: each is the item of that array."""
        d = n.child_by_field_name("declarator")
        size = d.child_by_field_name("size") if d is not None else None
        if d is None or d.type != "abstract_array_declarator" or size is None:
            raise _NoValue
        if d.child_by_field_name("declarator") is not None:
            raise _NoValue
        return self._item(self.eval(n.child_by_field_name("type"), s), self.eval(size, s))
