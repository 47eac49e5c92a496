"""How the host evaluator reads the terms that are not plain names or arithmetic: ``sizeof``,
static and struct members, subscripts of constant arrays, calls (helpers with a single return,
``ceil_div``-style helpers, ``min`` / ``max``, occupancy queries, container sizes) and the
defaults taken for a value the source does not give.  A mixin of
:class:`cuda2nki.frontend.hostvals.HostEvaluator`."""

from __future__ import annotations

import re
from collections.abc import Callable

import tree_sitter as ts

from cuda2nki.frontend import cmdline
from cuda2nki.frontend.hostcasts import functional_cast
from cuda2nki.frontend.hostidioms import static_member, type_alias
from cuda2nki.frontend.hostmembers import member_values
from cuda2nki.frontend.hostreturns import taken_return
from cuda2nki.frontend.hostsyntax import (
    _declared_count,
    _kids,
    _last_decl,
    _one_line,
    _params,
    _single_return,
    _straight_line,
    _txt,
    _walk_type,
    declarator_start,
)
from cuda2nki.frontend.hostvalue import (
    _MAX_DEPTH,
    _NOT_SIZES,
    _SIZEOF,
    _V,
    NOMINAL_DEVICE,
    _ceil_div,
    _ceil_div_name,
    _const,
    _ev,
    _notes,
    _NoValue,
    _num_text,
    _rounding,
    _Scope,
    _uses_args,
)
from cuda2nki.frontend.tagdispatch import lambda_tag

#: the remembered outcome of an evaluation that found no value
_FAILED = _V(None)


class HostTerms:
    """Terms of :class:`~cuda2nki.frontend.hostvals.HostEvaluator` other than names."""

    _assigned_memo: dict[tuple[object, ...], _V]
    _block_default: int
    #: bytes of the file's structs (:mod:`cuda2nki.frontend.hostsizeof`); None: unknown
    struct_bytes: Callable[[str], int | None] | None = None

    def _sizeof(self, ty: str) -> int:
        """Bytes of a type: a builtin, a template parameter being bound, or a typedef of one."""
        ty = " ".join(ty.split())  # `unsigned  int`
        for _ in range(4):
            size = _SIZEOF.get(ty)
            if size is None and self.struct_bytes is not None:  # a struct of the file: the
                size = self.struct_bytes(ty.removeprefix("struct "))  # kernel side's layout
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
        elif alias is None and scope.endswith(">"):  # `Pack<float>::size`, written in place
            struct, args = _written_instance(scope)
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
        if field == "value":  # `tag.value` of a generic lambda called with constant tags
            got = self._lambda_tag(n.child_by_field_name("argument"))
            if got is not None:
                return got
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

    def _lambda_tag(self, base: ts.Node | None) -> _V | None:
        """The tag value taken for ``base`` (an ``auto`` parameter of a generic lambda called
        with ``std::integral_constant`` tags, see :mod:`cuda2nki.frontend.tagdispatch`)."""
        pick = lambda_tag(base) if base is not None and base.type == "identifier" else None
        if pick is None:
            return None
        where = self.where(pick.at)
        return _const(pick.value, (f"{where}: {_one_line(pick.at)}",), (pick.note(where),))

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
            try:
                v = self.assigned(fn, right, s.depth + 1)
            except _NoValue:
                continue
            if v.items is not None or v.num is None:
                continue
            line = f"{self.where(right)}: {_one_line(right.parent or right)}"
            return _V(v.text, v.num, None, (line, *v.ev), v.notes)
        if not self._guess:
            raise _NoValue
        return self._default_for(n, "is not set in the source before the launch")

    def assigned(self, fn: ts.Node | None, right: ts.Node, depth: int) -> _V:
        """The value stored by an assignment whose right side is ``right`` (in function ``fn``),
        read at ``depth``.  A member's value is looked for among every assignment to a member
        of that name in the file, each of which may read members in turn: the outcome of each
        (assignment, depth, evaluator state) is remembered, so that the search is polynomial in
        the file's assignments instead of exponential in the depth."""
        key = (right.id, right.start_byte, fn.id if fn is not None else None, depth, self._mode())
        got = self._assigned_memo.get(key)
        if got is None:
            try:
                got = self.eval(right, _Scope(fn, right.start_byte, {}, depth))
            except _NoValue:
                got = _FAILED
            self._assigned_memo[key] = got
        if got is _FAILED:
            raise _NoValue
        return got

    def _mode(self) -> tuple[object, ...]:
        """What an evaluation depends on besides the node and its scope: the evaluator's flags,
        the template types bound and the launch's guarded names."""
        gfn, eqs = self._guarded
        return (
            self._guess,
            self._in_helper,
            self._block,
            self._defaults,
            self._sizes,
            self._block_default,
            tuple(sorted(self._types.items())),
            gfn.id if gfn is not None else None,
            tuple(sorted((k, v.text, v.num) for k, v in eqs.items())),
        )

    def _default_for(self, n: ts.Node, why: str) -> _V:
        """The default an unknown integer takes (a block size where it sizes the block), with
        the note that says why and how to set another."""
        value = self._block_default if self._block else cmdline.DEFAULT_INT
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
        return self._item(arr, self.eval(idx_node, s))

    def _item(self, arr: _V, i: _V) -> _V:
        """Item ``i`` of the array value ``arr``, with a note when it has several."""
        if arr.items is None or not isinstance(i.num, int) or not 0 <= i.num < len(arr.items):
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
        cast = functional_cast(self, n, items, s)  # `float(0.5)`, `T(2.0)`
        if cast is not None:
            return cast
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
        inner = _Scope(s.fnode, declarator_start(decl[1], decl[2]), s.argmap, s.depth + 1)
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
        if not returns or not _straight_line(fn):
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
        self._guess, self._in_helper = False, True
        try:
            ret = returns[0] if len(returns) == 1 else self._taken(fn, s.depth + 1, bound)
            if ret is None or not _kids(ret):
                return None
            expr = _kids(ret)[0]
            v = self.eval(expr, _Scope(fn, expr.start_byte, {}, s.depth + 1, bound))
        except _NoValue:
            return None
        finally:
            self._guess, self._in_helper = True, False
        if v.items is not None or v.num is None or v.num <= 0:
            return None
        line = f"{self.where(ret)}: {_one_line(ret)}"
        return _V(v.text if not _uses_args(v) else None, v.num, None, (line, *v.ev), v.notes)

    def _taken(self, fn: ts.Node, depth: int, bound: dict[str, _V]) -> ts.Node | None:
        """The ``return`` of helper ``fn`` (several, behind ``if``s) its bound arguments reach
        (see :mod:`cuda2nki.frontend.hostreturns`)."""

        def truth(cond: ts.Node) -> int | None:
            try:
                v = self.eval(cond, _Scope(fn, cond.start_byte, {}, depth, bound))
            except _NoValue:
                return None
            return int(bool(v.num)) if v.items is None and v.num is not None else None

        return taken_return(fn, truth)

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


def _written_instance(text: str) -> tuple[str, list[str]]:
    """``Pack<float, 4>`` -> (``Pack``, [``float``, ``4``]): a template instance's name and its
    arguments, split at the commas outside brackets."""
    name, _, rest = text.partition("<")
    args, depth, cur = [], 0, ""
    for ch in rest[:-1]:
        depth += (ch in "<([") - (ch in ">)]")
        if ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return name.strip(), [*args, cur.strip()] if cur.strip() else args
