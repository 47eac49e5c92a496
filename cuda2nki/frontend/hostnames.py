"""How the host evaluator finds the value of a name: a kernel argument, a bound or guarded name,
a local (its declaration, an assignment, a branch's arm, a call writing it through ``&x``, a
struct's members), a parameter of the host function (through its callers, in this file or
others), or a file-scope constant.  A mixin of :class:`cuda2nki.frontend.hostvals.HostEvaluator`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import cmdline
from cuda2nki.frontend.hostbranch import (
    BranchArm,
    arms,
    enclosing_if,
    mentions,
    reaching_assignment,
)
from cuda2nki.frontend.hostidioms import member_assignments, occupancy_output, rounded_up_after
from cuda2nki.frontend.hostouts import (
    ACTIVE_BLOCKS_CALLS,
    DEVICE_COUNT_CALLS,
    OutputCall,
    device_attribute,
    output_call,
)
from cuda2nki.frontend.hostsyntax import (
    _declares,
    _enclosing,
    _first_assignment,
    _function_name,
    _kids,
    _last_decl,
    _one_line,
    _params,
    _txt,
    declarator_start,
)
from cuda2nki.frontend.hostvalue import (
    _FLOAT_TYPES,
    _V,
    NOMINAL_DEVICE,
    _ceil_div,
    _const,
    _ev,
    _notes,
    _NoValue,
    _num_text,
    _occupancy,
    _Scope,
)

if TYPE_CHECKING:
    from cuda2nki.frontend.hostvals import HostEvaluator


class HostNames:
    """Name lookup of :class:`~cuda2nki.frontend.hostvals.HostEvaluator`."""

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
        inner = _Scope(s.fnode, declarator_start(d, value), s.argmap, s.depth + 1)
        branch_note: tuple[str, ...] = ()
        later = _first_assignment(s.fnode, name, d.end_byte, s.before)
        reach = reaching_assignment(s.fnode, name, d.end_byte, s.before)
        if reach is not None:  # assigned again on the way: its latest value reaches the use
            value, later = reach, None
            inner = _Scope(s.fnode, reach.start_byte, s.argmap, s.depth + 1)
            ev += (f"{self.where(reach)}: {_one_line(reach.parent or reach)}",)
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
            value = self._block_default
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
        """``argc > 1 ? atoi(argv[1]) : 1024``: the default, with a note; another ``c ? a : b``
        whose condition is not known before run time: see :meth:`_unknown_choice`."""
        got = cmdline.default_branch(n)
        if got is None:
            return self._unknown_choice(n, s)
        v = self.eval(got[0], s)
        note = (
            f"{_one_line(got[1])} read from the command line; its default {v.text} taken "
            f"({self.where(n)})"
        )
        return _V(v.text, v.num, v.items, v.ev, v.notes + (note,))

    def _unknown_choice(self, n: ts.Node, s: _Scope) -> _V:
        """``c ? a : b`` with ``c`` known only at run time (``zeros > 1024 ? 1024 : zeros``, a
        count read back from the device): the first arm whose value is known here, with a note
        that says so, as for a host ``if`` (:meth:`_branch_pick`).  Only where defaults may be
        guessed."""
        if not self._guess:
            raise _NoValue
        for field in ("consequence", "alternative"):
            arm = n.child_by_field_name(field)
            if arm is None:
                continue
            try:
                v = self.eval(arm, s)
            except _NoValue:
                continue
            cond = _one_line(n.child_by_field_name("condition") or n)
            note = (
                f"'{cond}' is not known before run time ({self.where(n)}); the arm "
                f"'{_one_line(arm)}' taken (set it in the binding for another)"
            )
            return _V(v.text, v.num, v.items, v.ev, v.notes + (note,))
        raise _NoValue

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
                f"{self._block_default} threads taken (set [launch] block if the kernel needs "
                "others)"
            )
            return _const(self._block_default, (f"{self.where(s.fnode)}: {fname}",), (note,))
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
        v = self.eval(value, _Scope(None, declarator_start(d, value), {}, s.depth + 1))
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
