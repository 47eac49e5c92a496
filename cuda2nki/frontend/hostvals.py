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

import math
import re
from dataclasses import dataclass
from typing import Any

import tree_sitter as ts

from cuda2nki.frontend import cmdline, declindex
from cuda2nki.frontend.cst import COMMENT_IDS
from cuda2nki.frontend.hostalloc import alloc_bytes
from cuda2nki.frontend.hostbranch import BranchArm, arms, enclosing_if, mentions
from cuda2nki.frontend.hostcalls import host_calls
from cuda2nki.frontend.hostidioms import (
    half_round,
    member_assignments,
    occupancy_output,
    remainder_ceil,
    rounded_up_after,
    static_member,
    type_alias,
)
from cuda2nki.frontend.hostmembers import member_values
from cuda2nki.frontend.hostouts import (
    ACTIVE_BLOCKS_CALLS,
    DEVICE_COUNT_CALLS,
    OutputCall,
    device_attribute,
    output_call,
)
from cuda2nki.frontend.hosttext import joined

Number = int | float

_MAX_DEPTH = 12
#: ``cudaDeviceProp`` fields a host reads to size a grid that fills the GPU, with the values of
#: a nominal small device: a grid-stride kernel computes the same whatever the grid, and a small
#: grid keeps a check fast
NOMINAL_DEVICE = {
    "multiProcessorCount": 2,
    "maxThreadsPerMultiProcessor": 1024,
    "maxBlocksPerMultiProcessor": 4,
    "maxThreadsPerBlock": 1024,
    "warpSize": 32,
}
#: threads per block taken for a launcher's block-size parameter that no call in the file gives
DEFAULT_BLOCK = 128
#: a helper dividing rounding up, by its name: ``ceil_div``, ``iDivUp``, ``intCeilDiv``,
#: ``DIV_ROUND_UP``, ``divideCeil``, ``cdiv`` (case and underscores aside)
_CEIL_DIV_RE = re.compile(
    r"^[a-z]*?(?:ceil(?:ing)?div(?:ide|ision)?|div(?:ide|ision)?(?:round)?(?:up|ceil(?:ing)?)"
    r"|cdiv)(?:int|[0-9]*)$"
)


def _ceil_div_name(name: str) -> bool:
    """Whether a two-argument helper called ``name`` is a rounding-up division."""
    return _CEIL_DIV_RE.match(name.replace("_", "").lower()) is not None


_SIZEOF = {
    "float": 4,
    "double": 8,
    "int": 4,
    "unsigned": 4,
    "half": 2,
    "__half": 2,
    "__nv_bfloat16": 2,
    "nv_bfloat16": 2,
    "char": 1,
    "short": 2,
    "long": 8,
    "size_t": 8,
    "float2": 8,
    "float4": 16,
    "int2": 8,
    "int4": 16,
    "int64_t": 8,
    "int32_t": 4,
    "uint32_t": 4,
    "uint8_t": 1,
    "int8_t": 1,
    "unsigned int": 4,
    "signed int": 4,
    "unsigned char": 1,
    "signed char": 1,
    "unsigned short": 2,
    "short int": 2,
    "unsigned long": 8,
    "long int": 8,
    "long long": 8,
    "long long int": 8,
    "unsigned long long": 8,
    "unsigned long long int": 8,
    "uint16_t": 2,
    "int16_t": 2,
    "uint64_t": 8,
    "bool": 1,
    "float3": 12,
    "int3": 12,
    "double2": 16,
    "uchar4": 4,
}
_FLOAT_TYPES = frozenset({"float", "double", "half", "__half"})
#: calls whose value is never a size a launch could use
_NOT_SIZES = frozenset(
    "rand random drand48 clock time malloc calloc new cudaGetLastError cudaGetErrorString "
    "printf sqrt sqrtf pow powf log logf exp expf".split()
)


@dataclass(frozen=True)
class HostExpr:
    """One host value: ``text`` in kernel parameter names (None: it uses a host value that is not
    a parameter and not constant), ``value`` when constant, and where it came from."""

    text: str | None
    value: Number | None
    evidence: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class HostFacts:
    """The launch site's grid, block and arguments as host values."""

    grid: tuple[HostExpr, ...]
    block: tuple[HostExpr, ...]
    args: tuple[HostExpr, ...]
    #: the dynamic shared memory bytes (third launch argument), None when not given
    shared: HostExpr | None = None
    #: per argument, the allocation size in bytes of the pointer it passes (None: not a pointer
    #: the host code allocates; see :mod:`cuda2nki.frontend.hostalloc`)
    allocs: tuple[HostExpr | None, ...] = ()
    #: per argument, a struct passed by value: what the host says about each of its members, in
    #: the order the kernel's parameters take them (see :mod:`cuda2nki.frontend.hoststructs`);
    #: None for any other argument
    members: tuple[Any, ...] = ()


class _NoValue(Exception):
    pass


@dataclass(frozen=True)
class _V:
    """An evaluation: C text (in parameter names, or None), number, dim3 / array items."""

    text: str | None
    num: Number | None = None
    items: tuple[_V, ...] | None = None
    ev: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def _const(n: Number, ev: tuple[str, ...] = (), notes: tuple[str, ...] = ()) -> _V:
    return _V(_num_text(n), n, None, ev, notes)


def _num_text(n: Number) -> str:
    if isinstance(n, float) and n.is_integer() and abs(n) < 1 << 53:
        return str(int(n))
    return repr(n) if isinstance(n, float) else str(n)


def _txt(n: ts.Node | None) -> str:
    return (n.text or b"").decode() if n is not None else ""


def _kids(n: ts.Node) -> list[ts.Node]:
    return [c for c in n.named_children if c.kind_id not in COMMENT_IDS]


class HostEvaluator:
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
        try:
            return self._facts(call, fnode, cfg, args)
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
        if any(b.value is None for b in block):
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
        return HostFacts(grid, block, vals, shared, allocs)

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
            return _binary(
                op,
                self.eval(n.child_by_field_name("left"), s),
                self.eval(n.child_by_field_name("right"), s),
            )
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
        if t == "conditional_expression":
            try:
                cond = self.eval(n.child_by_field_name("condition"), s)
            except _NoValue:
                cond = _V(None)
            if cond.num is None:
                return self._cmdline_default(n, s)
            return self.eval(n.child_by_field_name("consequence" if cond.num else "alternative"), s)
        raise _NoValue

    def _name(self, name: str, node: ts.Node, s: _Scope) -> _V:
        if name in s.argmap:
            return _V(f"@{s.argmap[name]}")  # a kernel argument: resolved by the caller
        if name in s.bound:
            return s.bound[name]
        if s.fnode is not None and s.fnode == self._guarded[0] and name in self._guarded[1]:
            return self._guarded[1][name]  # `if (name == 16) k<16><<<...>>>`: 16 there
        if s.fnode is not None:
            got = self._local(name, s)
            if got is not None:
                return got
            got = self._param(name, s)
            if got is not None:
                return got
        got = self._global(name, s)
        if got is not None:
            return got
        raise _NoValue

    def _local(self, name: str, s: _Scope) -> _V | None:
        decl = _last_decl(s.fnode, name, s.before)
        if decl is None:
            return None
        kind, d, value = decl
        ev = (f"{self.where(d)}: {_one_line(d)}",)
        inner = _Scope(s.fnode, d.start_byte, s.argmap, s.depth + 1)
        branch_note: tuple[str, ...] = ()
        later = _first_assignment(s.fnode, name, d.end_byte, s.before)
        pick = self._branch_pick(name, later, s) if later is not None else None
        if pick is not None and (pick[0] is not None or value is None):
            value, branch_note = pick[0], (pick[1],)
        elif pick is not None:  # the taken arm leaves the initial value
            branch_note = (pick[1],)
        if value is None:
            value = later if not branch_note else None
            if value is None:
                out = occupancy_output(s.fnode, name, d.end_byte, s.before)
                if out is not None:
                    return _occupancy(out, ev)
                written = output_call(s.fnode, name, d.end_byte, s.before)
                if written is not None:
                    return self._written(name, d, written, s, ev)
                return self._members(name, d, s, ev)
            inner = _Scope(s.fnode, value.start_byte, s.argmap, s.depth + 1)
        up = rounded_up_after(s.fnode, name, value, s.before)
        if up is not None:  # `n = a / b; if (a % b) n++;`
            v = _ceil_div(self.eval(up[0], inner), self.eval(up[1], inner))
        else:
            v = self.eval(value, inner)
        if v.items is not None and kind != "loop":
            v = self._reassigned_members(name, d, s, v)
        if v.num == 0 and v.items is None and kind != "loop":
            v, ev = self._placeholder(name, d, s, v, ev)
        notes = v.notes + branch_note
        if kind == "loop":
            notes += (f"'{name}' taken at its first value {v.text} ({self.where(d)})",)
        return _V(v.text, v.num, v.items, ev + v.ev, notes)

    def _branch_pick(self, name: str, rhs: ts.Node, s: _Scope) -> tuple[ts.Node | None, str] | None:
        """``if (n < 1024) threads = 128; else threads = 256;`` before the launch: the value of
        the arm whose condition holds for the host's values, else the first arm's; with a note
        that says which.  None when ``rhs`` is not assigned in an arm of such an ``if``."""
        ifn = enclosing_if(rhs, s.before)
        if ifn is None:
            return None
        where = f"{self.where(ifn)}: {_one_line(ifn)}"
        chain = arms(ifn, name)
        if any(a.value is not None and mentions(a.value, name) for a in chain):
            return None  # `if (n % b) blocks = blocks + 1;`: a correction, not a choice
        # the condition's host numbers (not kernel-argument names): the same arm for every use
        scope = _Scope(s.fnode, ifn.start_byte, {}, s.depth + 1)
        for arm in chain:
            if arm.condition is None:
                return arm.value, self._arm_note(
                    name, arm, where, "no condition before it holds: the final"
                )
            try:
                held = self.eval(arm.condition, scope).num
            except _NoValue:
                held = None
            if held is None:
                first = next((a for a in chain if a.value is not None), arm)
                return first.value, self._arm_note(
                    name, first, where, "the condition is not known before run time: the first"
                )
            if held:
                cond = _one_line(arm.condition)
                return arm.value, self._arm_note(name, arm, where, f"'{cond}' holds: its")
        return None, (
            f"'{name}' is chosen by a host branch ({where}); no arm's condition holds: "
            "the value before the branch taken (set the launch in the binding for another)"
        )

    def _arm_note(self, name: str, arm: BranchArm, where: str, why: str) -> str:
        got = _one_line(arm.value) if arm.value is not None else "the value before the branch"
        return (
            f"'{name}' is chosen by a host branch ({where}); {why} arm's {got} taken "
            "(set the launch in the binding for another)"
        )

    def _placeholder(
        self, name: str, d: ts.Node, s: _Scope, v: _V, ev: tuple[str, ...]
    ) -> tuple[_V, tuple[str, ...]]:
        """``int n = 0; ... n = atoi(argv[1]);``: a zero initializer is a placeholder for the
        value assigned before the use, when there is one that evaluates."""
        later = _first_assignment(s.fnode, name, d.end_byte, s.before)
        written = output_call(s.fnode, name, d.end_byte, s.before)
        if written is not None and (later is None or written.call.start_byte < later.start_byte):
            try:
                return self._written(name, d, written, s, ev), ev
            except _NoValue:
                return v, ev
        if later is None:
            return v, ev
        try:
            got = self.eval(later, _Scope(s.fnode, later.start_byte, s.argmap, s.depth + 1))
        except _NoValue:
            return v, ev
        return got, ev + (f"{self.where(later)}: {_one_line(later.parent or later)}",)

    def _written(
        self, name: str, d: ts.Node, out: OutputCall, s: _Scope, ev: tuple[str, ...]
    ) -> _V:
        """A local written through ``&name`` by a call (:mod:`cuda2nki.frontend.hostouts`):
        a device query's nominal value, else a default with a note."""
        where = f"{self.where(out.call)}: {_one_line(out.call)}"
        field = device_attribute(out)
        if field is not None:
            value = NOMINAL_DEVICE[field]
            note = f"'{name}', the GPU's {field}, taken as {value}, that of a nominal small GPU"
            return _const(value, ev + (where,), (note,))
        if out.callee in ACTIVE_BLOCKS_CALLS and out.position == 0:
            return self._active_blocks(name, out, s, ev + (where,))
        if out.callee in DEVICE_COUNT_CALLS and out.position == 0:
            note = f"'{name}', the number of GPUs, taken as 1"
            return _const(1, ev + (where,), (note,))
        if not self._guess:
            raise _NoValue
        ty = _txt(d.child_by_field_name("type")).replace("const", "").strip()
        value = cmdline.DEFAULT_FLOAT if ty in _FLOAT_TYPES else cmdline.DEFAULT_INT
        if self._block or self._defaults:
            value = DEFAULT_BLOCK
        note = (
            f"'{name}' is written by {out.callee}() at run time ({self.where(out.call)}); "
            f"{_num_text(value)} taken (set it in the binding if the kernel needs another value)"
        )
        return _const(value, ev + (where,), (note,))

    def _active_blocks(self, name: str, out: OutputCall, s: _Scope, ev: tuple[str, ...]) -> _V:
        """``cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, threads, smem)``: the blocks
        of ``threads`` that fill one multiprocessor of the nominal GPU."""
        per_sm = NOMINAL_DEVICE["maxBlocksPerMultiProcessor"]
        if len(out.args) > 2:
            try:
                t = self.eval(out.args[2], _Scope(s.fnode, out.call.start_byte, {}, s.depth + 1))
            except _NoValue:
                t = None
            if t is not None and isinstance(t.num, int) and t.num > 0:
                per_sm = max(1, NOMINAL_DEVICE["maxThreadsPerMultiProcessor"] // t.num)
        note = (
            f"'{name}', the resident blocks per multiprocessor of an occupancy query, taken as "
            f"{per_sm} for a nominal small GPU (a grid sized to fill the GPU does not change "
            "what the kernel computes)"
        )
        return _const(per_sm, ev, (note,))

    def _cmdline_default(self, n: ts.Node, s: _Scope) -> _V:
        """``argc > 1 ? atoi(argv[1]) : 1024``: the default, with a note."""
        got = cmdline.default_branch(n)
        if got is None:
            raise _NoValue
        v = self.eval(got[0], s)
        note = (
            f"{_one_line(got[1])} read from the command line; its default {v.text} taken "
            f"({self.where(n)})"
        )
        return _V(v.text, v.num, v.items, v.ev, v.notes + (note,))

    def _members(self, name: str, d: ts.Node, s: _Scope, ev: tuple[str, ...]) -> _V:
        """A ``dim3`` declared without a value: its members as last assigned before the use."""
        if _txt(d.child_by_field_name("type")).strip() != "dim3":
            raise _NoValue
        found = member_assignments(s.fnode, name, d.end_byte, s.before)
        if not found:
            raise _NoValue
        items = []
        for field in "xyz":
            right = found.get(field)
            if right is None:
                items.append(_const(1))
                continue
            v = self.eval(right, _Scope(s.fnode, right.start_byte, s.argmap, s.depth + 1))
            line = f"{self.where(right.parent)}: {_one_line(right.parent)}"
            items.append(_V(v.text, v.num, v.items, (line, *v.ev), v.notes))
        vals = tuple(items)
        return _V(None, None, vals, ev + _ev(vals), _notes(vals))

    def _reassigned_members(self, name: str, d: ts.Node, s: _Scope, v: _V) -> _V:
        """A ``dim3`` declared with a value whose members are assigned again before the use
        (``dim3 grid(1, 1); ... grid.x = (n - k) / b;`` in a host loop): the members as last
        assigned, the others as declared."""
        if _txt(d.child_by_field_name("type")).strip() != "dim3" or v.items is None:
            return v
        found = member_assignments(s.fnode, name, d.end_byte, s.before)
        if not found:
            return v
        items = list(v.items) + [_const(1)] * (3 - len(v.items))
        for i, field in enumerate("xyz"):
            right = found.get(field)
            if right is None:
                continue
            got = self.eval(right, _Scope(s.fnode, right.start_byte, s.argmap, s.depth + 1))
            line = f"{self.where(right.parent)}: {_one_line(right.parent)}"
            items[i] = _V(got.text, got.num, got.items, (line, *got.ev), got.notes)
        vals = tuple(items)
        return _V(v.text, v.num, vals, v.ev + _ev(vals), v.notes + _notes(vals))

    def _param(self, name: str, s: _Scope) -> _V | None:
        params = _params(s.fnode)
        if name not in params:
            return None
        idx = params.index(name)
        fname = _function_name(s.fnode)
        own = self.calls(fname or "") + self.pointer_calls(fname or "")
        for call in own:
            args = call.child_by_field_name("arguments")
            items = _kids(args) if args is not None else []
            if idx >= len(items) or _enclosing(call) is s.fnode:
                continue
            caller = _enclosing(call)
            try:
                v = self.eval(items[idx], _Scope(caller, call.start_byte, {}, s.depth + 1))
            except _NoValue:
                continue
            ev = (f"{self.where(call)}: {_one_line(call)}",)
            return _V(v.text, v.num, v.items, ev + v.ev, v.notes)
        if not own:
            got = self._foreign_param(fname or "", idx, s)
            if got is not None:
                return got
        if self._defaults:
            note = (
                f"no call in this file passes '{name}' to '{fname}'; "
                f"{DEFAULT_BLOCK} threads taken (set [launch] block if the kernel needs others)"
            )
            return _const(DEFAULT_BLOCK, (f"{self.where(s.fnode)}: {fname}",), (note,))
        if self._sizes and not own:
            note = (
                f"no call in the tree gives '{name}' of '{fname}' a value; {cmdline.DEFAULT_INT} taken "
                "(set [launch] grid if the kernel needs another)"
            )
            return _const(cmdline.DEFAULT_INT, (f"{self.where(s.fnode)}: {fname}",), (note,))
        raise _NoValue

    def foreign_calls(self, fname: str) -> list[tuple[ts.Node, HostEvaluator]]:
        """The calls of ``fname`` in the other files of the tree, searched once per evaluator
        (see :mod:`cuda2nki.frontend.callers`)."""
        from cuda2nki.frontend.callers import foreign_calls

        memo = self.__dict__.setdefault("_foreign_memo", {})
        if fname not in memo:
            memo[fname] = foreign_calls(self.path, fname)
        return memo[fname]

    def _foreign_param(self, fname: str, idx: int, s: _Scope) -> _V | None:
        """Parameter ``idx`` of ``fname`` as a call in another file of the tree passes it
        (see :mod:`cuda2nki.frontend.callers`)."""
        for call, other in self.foreign_calls(fname):
            args = call.child_by_field_name("arguments")
            items = _kids(args) if args is not None else []
            if idx >= len(items):
                continue
            try:
                v = other.eval(
                    items[idx], _Scope(_enclosing(call), call.start_byte, {}, s.depth + 1)
                )
            except _NoValue:
                continue
            ev = (f"{other.where(call)}: {_one_line(call)}",)
            return _V(v.text, v.num, v.items, ev + v.ev, v.notes)
        return None

    def _global(self, name: str, s: _Scope) -> _V | None:
        decl = _last_decl(self.root, name, s.before if s.fnode is None else 1 << 62, top=True)
        if decl is None:
            return None
        _, d, value = decl
        set_in = self._set_in_function(name, d)
        if set_in is not None:  # `int num_SMs = 0;` set up in main: the value it is set to
            fn, right = set_in
            try:
                v = self.eval(right, _Scope(fn, right.start_byte, {}, s.depth + 1))
            except _NoValue:
                v = None
            if v is not None:
                ev = (f"{self.where(right.parent)}: {_one_line(right.parent)}", *v.ev)
                return _V(v.text, v.num, v.items, ev, v.notes)
        if value is None:
            raise _NoValue
        v = self.eval(value, _Scope(None, d.start_byte, {}, s.depth + 1))
        return _V(v.text, v.num, v.items, (f"{self.where(d)}: {_one_line(d)}", *v.ev), v.notes)

    def _set_in_function(self, name: str, decl: ts.Node) -> tuple[ts.Node, ts.Node] | None:
        """The function and value of the first plain assignment to file-scope ``name`` in the
        file's functions (after its declaration), if a function assigns it."""
        for fn in (f for fs in self._all_functions() for f in fs):
            if fn.start_byte < decl.end_byte:
                continue
            right = _first_assignment(fn, name, fn.start_byte, fn.end_byte)
            if right is not None and not _declares(fn, name):
                return fn, right
        return None

    def _all_functions(self) -> list[list[ts.Node]]:
        if self._funcs is None:
            self._index()
        return sorted(self._funcs.values(), key=lambda fs: fs[0].start_byte)  # type: ignore[union-attr]

    def _sizeof(self, ty: str) -> int:
        """Bytes of a type: a builtin, a template parameter being bound, or a typedef of one."""
        ty = " ".join(ty.split())  # `unsigned  int`
        for _ in range(4):
            size = _SIZEOF.get(ty)
            if size is not None:
                return size
            bound = self._types.get(ty)
            alias = type_alias(self.root, ty) if bound is None else None
            if bound is None and alias is None:
                break
            ty = bound if bound is not None else _txt(alias).replace("const ", "").strip()
        raise _NoValue

    def _static(self, n: ts.Node, s: _Scope) -> _V:
        """``T::member``: a ``static constexpr`` member of struct ``T`` (or of the template
        instance a typedef names, ``typedef Packed128<float> x128;``)."""
        parts = [p.strip() for p in _txt(n).split("::")]
        if len(parts) != 2:
            raise _NoValue
        scope, member = parts
        alias = type_alias(self.root, scope)
        struct, args = scope, []
        if alias is not None and alias.type == "template_type":
            struct = _txt(alias.child_by_field_name("name")).strip()
            targs = alias.child_by_field_name("arguments")
            args = [_txt(a).strip() for a in _kids(targs)] if targs is not None else []
        got = static_member(self.root, struct, member)
        if got is None or got[0] is None:
            raise _NoValue
        value, params = got
        saved = self._types
        self._types = {**saved, **dict(zip(params, args))}
        try:
            v = self.eval(value, _Scope(None, value.start_byte, {}, s.depth + 1))
        finally:
            self._types = saved
        line = f"{self.where(value)}: {_one_line(value.parent)}"
        return _V(v.text, v.num, v.items, (line, *v.ev), v.notes)

    def _member(self, n: ts.Node, s: _Scope) -> _V:
        field = _txt(n.child_by_field_name("field"))
        if field in NOMINAL_DEVICE:  # `prop.multiProcessorCount`: a hardware query
            value = NOMINAL_DEVICE[field]
            note = (
                f"'{_one_line(n)}', a property of the GPU, taken as {value}, that of a nominal "
                "small GPU (a grid sized to fill the GPU does not change what the kernel computes)"
            )
            return _const(value, (f"{self.where(n)}: {_one_line(n)}",), (note,))
        try:
            base = self.eval(n.child_by_field_name("argument"), s)
        except _NoValue:
            base = None
        if base is None or base.items is None:
            if field in ("x", "y", "z") and base is not None:
                raise _NoValue
            return self._struct_member(n, field, s)
        if field not in ("x", "y", "z"):
            raise _NoValue
        i = "xyz".index(field)
        if i >= len(base.items):
            return _const(1, base.ev)
        it = base.items[i]
        return _V(it.text, it.num, None, base.ev + it.ev, base.notes + it.notes)

    def _struct_member(self, n: ts.Node, field: str, s: _Scope) -> _V:
        """``cfg.width``, ``p->n``: the value assigned to the member (in this function, else
        anywhere in the file), its default member initializer, else a default with a note (see
        :mod:`cuda2nki.frontend.hostmembers`)."""
        if s.depth > _MAX_DEPTH:
            raise _NoValue
        base = _txt(n.child_by_field_name("argument"))
        if field in ("x", "y", "z") and self._is_dim3(base, s):
            raise _NoValue  # a dim3 whose value is unknown is not a struct of sizes
        for fn, right in member_values(self.root, s.fnode, base, field, s.before):
            scope = _Scope(fn, right.start_byte, {}, s.depth + 1)
            try:
                v = self.eval(right, scope)
            except _NoValue:
                continue
            if v.items is not None or v.num is None:
                continue
            line = f"{self.where(right)}: {_one_line(right.parent or right)}"
            return _V(v.text, v.num, None, (line, *v.ev), v.notes)
        if not self._guess:
            raise _NoValue
        return self._default_for(n, "is not set in the source before the launch")

    def _default_for(self, n: ts.Node, why: str) -> _V:
        """The default an unknown integer takes (a block size where it sizes the block), with
        the note that says why and how to set another."""
        value = DEFAULT_BLOCK if self._block else cmdline.DEFAULT_INT
        note = (
            f"'{_one_line(n)}' {why}; {value} taken "
            "(set it in the binding if the kernel needs another value)"
        )
        return _const(value, (f"{self.where(n)}: {_one_line(n)}",), (note,))

    def _is_dim3(self, name: str, s: _Scope) -> bool:
        decl = _last_decl(s.fnode, name, s.before) if s.fnode is not None else None
        if decl is None:
            decl = _last_decl(self.root, name, 1 << 62, top=True)
        if decl is None:
            return False
        return _txt(decl[1].child_by_field_name("type")).strip() == "dim3"

    def _subscript(self, n: ts.Node, s: _Scope) -> _V:
        arr = self.eval(n.child_by_field_name("argument"), s)
        idx_node = n.child_by_field_name("index") or n.child_by_field_name("indices")
        if idx_node is not None and idx_node.type == "subscript_argument_list":
            kids = _kids(idx_node)
            idx_node = kids[0] if len(kids) == 1 else None
        if arr.items is None or idx_node is None:
            raise _NoValue
        i = self.eval(idx_node, s)
        if not isinstance(i.num, int) or not 0 <= i.num < len(arr.items):
            raise _NoValue
        it = arr.items[i.num]
        note = ()
        if len(arr.items) > 1:
            vals = ", ".join(x.text or "?" for x in arr.items)
            note = (f"picked {it.text}, item {i.num} of {{{vals}}}",)
        return _V(
            it.text, it.num, None, arr.ev + i.ev + it.ev, arr.notes + i.notes + it.notes + note
        )

    def _call(self, n: ts.Node, s: _Scope) -> _V:
        f = n.child_by_field_name("function")
        name = _txt(f).split("::")[-1].split("<")[0]
        argn = n.child_by_field_name("arguments")
        items = _kids(argn) if argn is not None else []
        if name == "dim3":
            vals = tuple(self.eval(a, s) for a in items)
            return _V(None, None, vals, _ev(vals), _notes(vals))
        if name in ("ceil", "ceilf", "floor", "floorf") and len(items) == 1:
            return _rounding(name.startswith("ceil"), self.eval(items[0], s))
        if name in ("min", "max", "fmin", "fmax", "fminf", "fmaxf") and len(items) == 2:
            a, b = self.eval(items[0], s), self.eval(items[1], s)
            fn = min if "min" in name else max
            num = fn(a.num, b.num) if a.num is not None and b.num is not None else None
            text = (
                None
                if a.text is None or b.text is None
                else f"{name.lstrip('f').rstrip('f') or name}({a.text}, {b.text})"
            )
            return _V(text, num, None, a.ev + b.ev, a.notes + b.notes)
        if _ceil_div_name(name) and len(items) == 2:
            try:
                return _ceil_div(self.eval(items[0], s), self.eval(items[1], s))
            except _NoValue:  # an operand the source does not give: the call's default
                return self._opaque_call(n, name, s)
        if cmdline.conversion(n) is not None:  # `atoi(argv[1])`: no default in the source
            value = cmdline.default_of(n)
            note = (
                f"{_one_line(n)} read from the command line with no default; "
                f"{_num_text(value)} taken ({self.where(n)})"
            )
            return _const(value, (), (note,))
        try:
            return self._inline(name, items, s)
        except _NoValue:
            pass
        size = self._container_size(n, s)
        if size is not None:
            return size
        return self._opaque_call(n, name, s)

    def _is_variable(self, name: str, n: ts.Node, s: _Scope) -> bool:
        if s.fnode is not None and (
            _last_decl(s.fnode, name, s.before) is not None or name in _params(s.fnode)
        ):
            return True
        return _last_decl(self.root, name, 1 << 62, top=True) is not None

    def _array_count(self, n: ts.Node, s: _Scope) -> _V | None:
        """``sizeof(a) / sizeof(a[0])`` (or ``/ sizeof(T)``) of an array declared with its
        length or an initializer list: the number of items."""
        left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
        if _txt(n.child_by_field_name("operator")) != "/" or left is None or right is None:
            return None
        if left.type != "sizeof_expression" or right.type != "sizeof_expression":
            return None
        name = _txt(left).replace("sizeof", "").strip(" ()")
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            return None
        decl = _last_decl(s.fnode, name, s.before) if s.fnode is not None else None
        decl = decl or _last_decl(self.root, name, 1 << 62, top=True)
        if decl is None:
            return None
        count = _declared_count(decl[1], name, decl[2])
        if count is None:
            return None
        note = f"'{_one_line(n)}' is the {count} items of '{name}'"
        return _const(count, (f"{self.where(decl[1])}: {_one_line(decl[1])}",), (note,))

    def _container_size(self, n: ts.Node, s: _Scope) -> _V | None:
        """``v.size()`` of a local ``std::vector<T> v(n)`` (or a thrust vector): ``n``."""
        f = n.child_by_field_name("function")
        if f is None or f.type != "field_expression" or s.fnode is None:
            return None
        if _txt(f.child_by_field_name("field")) not in ("size", "length"):
            return None
        base = f.child_by_field_name("argument")
        if base is None or base.type != "identifier":
            return None
        decl = _last_decl(s.fnode, _txt(base), s.before)
        if decl is None or "vector" not in _txt(decl[1].child_by_field_name("type")):
            return None
        value = decl[2]
        if value is None or value.type not in ("argument_list", "parameter_list"):
            return None
        items = _kids(value)
        if not items:
            return None
        inner = _Scope(s.fnode, decl[1].start_byte, s.argmap, s.depth + 1)
        first = items[0]
        if first.type == "parameter_declaration":  # `std::vector<float> v(n);` read as a prototype
            first = first.child_by_field_name("type") or first
        v = self.eval(first, inner)
        return _V(
            v.text, v.num, None, (f"{self.where(decl[1])}: {_one_line(decl[1])}", *v.ev), v.notes
        )

    def _opaque_call(self, n: ts.Node, name: str, s: _Scope) -> _V:
        """A call whose value the source does not show (a method of a library object, a helper
        defined elsewhere, or one here whose value depends on what it reads): a default, with a
        note; a helper here whose one ``return`` evaluates gives that value."""
        if not self._guess or name in _NOT_SIZES or s.depth > _MAX_DEPTH // 4:
            raise _NoValue  # (deep in a launcher chain: not guessed, which bounds the search)
        for fn in self.functions(name):
            got = self._helper_return(fn, n, s)
            if got is not None:
                return got
        return self._default_for(n, "is computed at run time by code not in this file")

    def _helper_return(self, fn: ts.Node, call: ts.Node, s: _Scope) -> _V | None:
        """A helper defined in the file whose body computes its value (``int load(...) { ...
        return count; }``): its one ``return`` evaluated in it when that gives a positive
        number, else None (the caller takes a default)."""
        if self._in_helper or s.depth > _MAX_DEPTH // 3:  # one helper deep: no search blow-up
            return None
        returns = _walk_type(fn, "return_statement")
        if len(returns) != 1 or not _kids(returns[0]) or not _straight_line(fn):
            return None
        args = call.child_by_field_name("arguments")
        items = _kids(args) if args is not None else []
        bound: dict[str, _V] = {}
        self._in_helper = True  # the arguments are evaluated without entering helpers again
        try:
            vals = []
            for a in items:
                try:
                    vals.append(self.eval(a, s))
                except _NoValue:
                    vals.append(None)
        finally:
            self._in_helper = False
        for p, v in zip(_params(fn), vals):
            if v is not None:
                bound[p] = v
        expr = _kids(returns[0])[0]
        self._guess, self._in_helper = False, True
        try:
            v = self.eval(expr, _Scope(fn, expr.start_byte, {}, s.depth + 1, bound))
        except _NoValue:
            return None
        finally:
            self._guess, self._in_helper = True, False
        if v.items is not None or v.num is None or v.num <= 0:
            return None
        line = f"{self.where(returns[0])}: {_one_line(returns[0])}"
        return _V(v.text if not _uses_args(v) else None, v.num, None, (line, *v.ev), v.notes)

    def _inline(self, name: str, items: list[ts.Node], s: _Scope) -> _V:
        """A call of a function whose body is one ``return e;``: ``e`` with its parameters bound."""
        for fn in self.functions(name):
            ret = _single_return(fn)
            params = _params(fn)
            if ret is None or len(params) != len(items):
                continue
            vals = [self.eval(a, s) for a in items]
            if any(v.items is not None for v in vals):
                continue
            bound = {
                p: (_V(f"({v.text})", v.num, None, v.ev, v.notes) if v.text else v)
                for p, v in zip(params, vals)
            }
            scope = _Scope(fn, ret.start_byte, {}, s.depth + 1, bound)
            v = self.eval(ret, scope)
            if all(v.num is not None for v in vals) or v.text is not None:
                return v
        raise _NoValue


@dataclass
class _Scope:
    fnode: ts.Node | None
    before: int
    argmap: dict[str, int]
    depth: int
    bound: dict[str, _V] | None = None

    def __post_init__(self) -> None:
        if self.bound is None:
            self.bound = {}


# ---------------------------------------------------------------------- arithmetic


def _number(text: str) -> Number:
    t = text.lower().replace("'", "")
    if t.startswith("0x"):
        return int(t.rstrip("ul"), 16)
    if any(c in t for c in ".e") and not t.startswith("0x"):
        return float(t.rstrip("fl"))
    t = t.rstrip("ul")
    if len(t) > 1 and t.startswith("0"):
        return int(t, 8)
    return int(t)


def _is_float_type(ty: str) -> bool:
    return ty.replace("const", "").replace("unsigned", "").strip() in _FLOAT_TYPES


def _round_div(a: _V, b: _V) -> _V:
    """``(int)(a / b + 0.5)`` of integer-valued ``a``, ``b > 0``: the ratio rounded halves up,
    which is ``(2a + b) / (2b)`` in C integer arithmetic (the binding's, and the port's)."""
    if any(v.num is not None and float(v.num) != int(v.num) for v in (a, b)):
        raise _NoValue
    a, b = _cast("int", a), _cast("int", b)
    if b.num is not None and b.num <= 0:
        raise _NoValue
    two = _const(2)
    return _binary("/", _binary("+", _binary("*", two, a), b), _binary("*", two, b))


def _cast(ty: str, v: _V) -> _V:
    if v.items is not None:
        raise _NoValue
    base = ty.replace("const", "").replace("unsigned", "").strip() or "int"
    if base in _FLOAT_TYPES:
        num = None if v.num is None else float(v.num)
        return _V(
            v.text and f"(float){v.text}" if v.num is None else _num_text(num),
            num,
            None,
            v.ev,
            v.notes,
        )
    num = None if v.num is None else int(v.num)
    text = _num_text(num) if num is not None else (_int_of_float(v.text) if v.text else None)
    return _V(text, num, None, v.ev, v.notes)


_FLOAT_LITERAL = re.compile(r"(?<![\w@.])(?:\d+\.\d*|\.\d+|\d+[eE][-+]?\d+)")


def _int_of_float(text: str) -> str:
    """The integer conversion of a host expression: ``(int)((float)n / b)`` truncates like
    ``n / b`` in the binding's C arithmetic, so the float casts just go.  Where a float literal
    takes part (``(int)((float)n * 1.5)``) there is no integer expression of it: no value (the
    rounded ratio ``(int)(n / b + 0.5)`` is restated before this, see ``_round_div``)."""
    plain = _strip_float(text)
    if _FLOAT_LITERAL.search(plain):
        raise _NoValue  # float arithmetic the binding's integer expressions cannot restate
    return plain


def _strip_float(text: str) -> str:
    return text.replace("(float)", "")


def _binary(op: str, a: _V, b: _V) -> _V:
    if a.items is not None or b.items is not None:
        raise _NoValue
    num = None
    if a.num is not None and b.num is not None:
        num = _arith(op, a.num, b.num)
    text = None if a.text is None or b.text is None else joined(a.text, op, b.text)
    if num is not None and not _uses_args(a, b):
        text = _num_text(num)
    return _V(text, num, None, a.ev + b.ev, a.notes + b.notes)


def _uses_args(*vs: _V) -> bool:
    return any(v.text is not None and "@" in v.text for v in vs)


def _arith(op: str, x: Number, y: Number) -> Number:
    from cuda2nki.binding import _c_div, _c_mod

    if op == "+":
        return x + y
    if op == "-":
        return x - y
    if op == "*":
        return x * y
    if op == "/":
        if y == 0:
            raise _NoValue
        return _c_div(x, y)
    if op == "%":
        if y == 0:
            raise _NoValue
        return _c_mod(x, y)
    if op in ("<<", ">>") and isinstance(x, int) and isinstance(y, int):
        if not 0 <= y < 64:  # undefined in C: no value
            raise _NoValue
        return x << y if op == "<<" else x >> y
    cmp = {"<": x < y, ">": x > y, "<=": x <= y, ">=": x >= y, "==": x == y, "!=": x != y}
    if op in cmp:
        return int(cmp[op])
    raise _NoValue


def _ceil_div(a: _V, b: _V) -> _V:
    if a.items is not None or b.items is not None:
        raise _NoValue
    num = None
    if a.num is not None and b.num is not None and (b.num <= 0 or a.num < 0):
        raise _NoValue  # `n / d + (n % d != 0)` is a count of d-sized pieces only for d > 0
    if a.num is not None and b.num is not None:
        num = -(-int(a.num) // int(b.num))
    text = None
    if a.text is not None and b.text is not None:
        text = f"ceil_div({_strip_float(a.text)}, {_strip_float(b.text)})"
    if num is not None and not _uses_args(a, b):
        text = str(num)
    return _V(text, num, None, a.ev + b.ev, a.notes + b.notes)


_DIV_RE = re.compile(r"^\(*(.+?)\)* / \(*(.+?)\)*$")


def _rounding(up: bool, v: _V) -> _V:
    if v.items is not None:
        raise _NoValue
    num = None if v.num is None else (math.ceil(v.num) if up else math.floor(v.num))
    text = None
    if v.text is not None:
        if num is not None and not _uses_args(v):
            text = str(num)
        else:
            parts = _split_div(v.text)
            if parts is None:
                return _V(None, num, None, v.ev, v.notes)
            a, b = (_strip_float(p) for p in parts)
            text = f"ceil_div({a}, {b})" if up else f"({a}) / ({b})"
    return _V(text, num, None, v.ev, v.notes)


def _split_div(text: str) -> tuple[str, str] | None:
    """``a / b`` at depth 0 (outer parentheses removed): (a, b)."""
    t = text.strip()
    while t.startswith("(") and _closing(t, 0) == len(t) - 1:
        t = t[1:-1].strip()
    depth = 0
    for i, ch in enumerate(t):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "/" and depth == 0:
            return t[:i].strip(), t[i + 1 :].strip()
    return None


def _closing(t: str, start: int) -> int:
    depth = 0
    for i in range(start, len(t)):
        depth += t[i] == "("
        depth -= t[i] == ")"
        if depth == 0:
            return i
    return -1


def _ev(items: tuple[_V, ...]) -> tuple[str, ...]:
    return tuple(e for i in items for e in i.ev)


def _notes(items: tuple[_V, ...]) -> tuple[str, ...]:
    return tuple(e for i in items for e in i.notes)


def _host_expr(v: _V, outer: _V) -> HostExpr:
    ev = tuple(dict.fromkeys(outer.ev + v.ev))
    notes = tuple(dict.fromkeys(outer.notes + v.notes))
    if v.items is not None:
        return HostExpr(None, None, ev, notes)
    return HostExpr(v.text, v.num, ev, notes)


# ---------------------------------------------------------------------- syntax helpers


def _enclosing(n: ts.Node) -> ts.Node | None:
    p = n.parent
    while p is not None and p.type != "function_definition":
        p = p.parent
    return p


def _function_name(fn: ts.Node) -> str | None:
    d = fn.child_by_field_name("declarator")
    while d is not None and d.type not in (
        "identifier",
        "field_identifier",
        "qualified_identifier",
    ):
        if d.type == "template_function":
            d = d.child_by_field_name("name")
            continue
        d = d.child_by_field_name("declarator")
    return _txt(d).split("::")[-1] if d is not None else None


def _declared_count(decl: ts.Node, name: str, value: ts.Node | None) -> int | None:
    """The item count of array ``name`` declared by ``decl``: its initializer list's length,
    else the number literal between its brackets."""
    if value is not None and value.type == "initializer_list":
        return len(_kids(value))
    for d in decl.children_by_field_name("declarator"):
        d = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
        if d is None or d.type != "array_declarator":
            continue
        if _txt(d.child_by_field_name("declarator")) != name:
            continue
        size = d.child_by_field_name("size")
        if size is not None and size.type == "number_literal":
            got = _number(_txt(size))
            return got if isinstance(got, int) else None
    return None


_LOOPS = frozenset({"for_statement", "while_statement", "do_statement", "update_expression"})


def _straight_line(fn: ts.Node) -> bool:
    """``fn`` has no loop, no ``++``/``--`` and no compound assignment (``r += 4``): its locals
    keep the value they are declared or assigned with."""
    for n in _walk_type(fn, None):
        if n.type in _LOOPS:
            return False
        if n.type == "assignment_expression" and _txt(n.child_by_field_name("operator")) != "=":
            return False
    return True


def _walk_type(root: ts.Node, kind: str | None) -> list[ts.Node]:
    """The nodes of type ``kind`` (all nodes for None) under ``root``, in source order."""
    out, stack = [], [root]
    while stack:
        n = stack.pop()
        if kind is None or n.type == kind:
            out.append(n)
        stack.extend(reversed(n.children))
    return out


def _bare_name(n: ts.Node) -> str | None:
    """The function ``n`` names when passed as a pointer: ``f``, ``&f``, ``(void*)f``."""
    while n.type in ("cast_expression", "parenthesized_expression", "pointer_expression"):
        if n.type == "pointer_expression" and _txt(n.child_by_field_name("operator")) != "&":
            return None
        inner = n.child_by_field_name("value") or n.child_by_field_name("argument")
        if inner is None:
            kids = _kids(n)
            inner = kids[0] if len(kids) == 1 else None
        if inner is None:
            return None
        n = inner
    return _txt(n) if n.type == "identifier" else None


def parameter_names(fn: ts.Node) -> list[str]:
    """The names of the parameters of function definition ``fn`` ('' for an unnamed one)."""
    return _params(fn)


def _params(fn: ts.Node) -> list[str]:
    d = fn.child_by_field_name("declarator")
    while d is not None and d.type != "function_declarator":
        d = d.child_by_field_name("declarator")
    plist = d.child_by_field_name("parameters") if d is not None else None
    out = []
    for p in _kids(plist) if plist is not None else []:
        name = None
        q = p.child_by_field_name("declarator")
        while q is not None:
            if q.type == "identifier":
                name = _txt(q)
                break
            q = q.child_by_field_name("declarator") or (
                _kids(q)[-1]
                if q.type in ("reference_declarator", "parenthesized_declarator") and _kids(q)
                else None
            )
        out.append(name or "")
    return out


def _single_return(fn: ts.Node) -> ts.Node | None:
    body = fn.child_by_field_name("body")
    stmts = _kids(body) if body is not None else []
    if len(stmts) != 1 or stmts[0].type != "return_statement":
        return None
    kids = _kids(stmts[0])
    return kids[0] if kids else None


def _one_line(n: ts.Node) -> str:
    text = " ".join(_txt(n).split())
    return text if len(text) <= 80 else text[:77] + "..."


def _declared_name(d: ts.Node) -> tuple[str | None, ts.Node | None, bool]:
    """(name, initial value, is an array) of one declarator."""
    value = None
    if d.type == "init_declarator":
        value = d.child_by_field_name("value")
        d = d.child_by_field_name("declarator")
    is_array = False
    if d is not None and d.type == "function_declarator":  # `dim3 block(n)`: most vexing parse
        plist = d.child_by_field_name("parameters")
        value = plist
        d = d.child_by_field_name("declarator")
    while d is not None and d.type in (
        "array_declarator",
        "pointer_declarator",
        "reference_declarator",
    ):
        is_array = is_array or d.type == "array_declarator"
        inner = d.child_by_field_name("declarator")
        d = inner if inner is not None else (_kids(d)[-1] if _kids(d) else None)
    if d is None or d.type != "identifier":
        return None, None, is_array
    return _txt(d), value, is_array


def _last_decl(
    scope: ts.Node | None, name: str, before: int, top: bool = False
) -> tuple[str, ts.Node, ts.Node | None] | None:
    """The last declaration of ``name`` in ``scope`` before byte ``before``: (kind, declaration,
    initial value); kind is ``loop`` for a for-loop's variable."""
    if scope is None:
        return None
    best = None
    for start, got, kind, n, value in declindex.declarations(scope, top, _declared_name):
        if got == name and start < before and (best is None or start > best[1].start_byte):
            best = (kind, n, value)
    return best


def _first_assignment(fn: ts.Node, name: str, after: int, before: int) -> ts.Node | None:
    best = None
    for start, end, left, right in declindex.assignments(fn, _txt):
        if left == name and end > after and start < before and (best is None or start < best[0]):
            best = (start, right)
    return best[1] if best is not None else None


def _occupancy(which: int, ev: tuple[str, ...]) -> _V:
    """The block size (``which`` 1) or minimum grid (0) an occupancy query gives on the nominal
    GPU of :data:`NOMINAL_DEVICE`: :data:`DEFAULT_BLOCK` threads, as many blocks as fill it."""
    blocks = NOMINAL_DEVICE["multiProcessorCount"] * (
        NOMINAL_DEVICE["maxThreadsPerMultiProcessor"] // DEFAULT_BLOCK
    )
    value = DEFAULT_BLOCK if which else blocks
    what = "block size" if which else "minimum grid size"
    note = (
        f"the {what} of an occupancy query taken as {value}, for a nominal small GPU "
        "(a grid sized to fill the GPU does not change what the kernel computes)"
    )
    return _const(value, ev, (note,))


def _declares(fn: ts.Node, name: str) -> bool:
    """Whether ``fn`` has a parameter or local named ``name`` (which hides a file-scope one)."""
    return name in _params(fn) or _last_decl(fn, name, fn.end_byte) is not None


def resolve_args(text: str | None, args: tuple[str, ...]) -> str | None:
    """``@i`` placeholders (kernel argument positions) in ``text`` replaced by parameter names."""
    if text is None:
        return None

    def one(m: re.Match) -> str:
        return args[int(m.group(1))]

    return re.sub(r"@(\d+)", one, text)
