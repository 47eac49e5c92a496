"""The host functions a launch is written in, read for its launch site: the ``dim3``
variables and integer constants a launch names, looked up where the launch is (a name declared
in a branch the launch is not in is not visible to it)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend import hosttemplates
from cuda2nki.frontend.cst import COMMENT_IDS, QUALIFIER_IDS, F
from cuda2nki.frontend.lower import BodyLowerer
from cuda2nki.frontend.lowerbase import Sym, _Placeholder, _text
from cuda2nki.frontend.unit import UnitContext, function_name


def host_scope(
    unit: UnitContext,
    fnode: ts.Node | None,
    names: dict[int, str],
    host_low: dict[object, HostScope],
    at: ts.Node | None = None,
) -> HostScope:
    """The host lowering of the function ``fnode`` (``None``: file scope) as seen from the node
    ``at`` (a launch: the declarations in scope there; None: the whole function), made once per
    set of declarations in scope."""
    key: object = fnode.id if fnode is not None else -1
    if at is not None and fnode is not None:
        key = (key, tuple(d.id for d in _declarations(fnode) if _visible(d, at)))
    host = host_low.get(key)
    if host is None:
        name = names.get(fnode.id) if fnode is not None else "<file>"
        host = host_low[key] = HostScope(unit, fnode, name, scopes=(names, host_low), at=at)
    return host


def _visible(decl: ts.Node, at: ts.Node) -> bool:
    """Whether the declaration ``decl`` is in scope at ``at``: it comes before ``at``, in a
    block that holds ``at``."""
    if decl.start_byte >= at.start_byte:
        return False
    p = decl.parent
    return p is None or p.start_byte <= at.start_byte < p.end_byte


_STMT_CONTAINERS = frozenset(
    "compound_statement if_statement else_clause for_statement while_statement do_statement "
    "switch_statement case_statement labeled_statement attributed_statement".split()
)


def function_declarator_of(fnode: ts.Node) -> ts.Node | None:
    d = fnode.child_by_field_id(F.declarator)
    while d is not None and d.type != "function_declarator":
        d = d.child_by_field_id(F.declarator)
    return d


def _declarations(fnode: ts.Node) -> list[ts.Node]:
    """Declarations in a function body (statement level, nested blocks included), in order."""
    out: list[ts.Node] = []
    body = fnode.child_by_field_id(F.body)
    stack = [body] if body is not None else []
    while stack:
        n = stack.pop()
        for c in reversed(n.named_children):
            if c.type == "declaration":
                out.append(c)
            elif c.type in _STMT_CONTAINERS:
                stack.append(c)
    out.sort(key=lambda d: d.start_byte)
    return out


class HostScope:
    """A host function read for launch sites.  Its ``dim3`` variables and integer constants are
    looked up by name when a launch needs them, and only those declarations are lowered."""

    def __init__(
        self,
        unit: UnitContext,
        fnode: ts.Node | None,
        name: str | None,
        *,
        scopes: tuple[dict[int, str], dict[object, HostScope]] | None = None,
        depth: int = 0,
        at: ts.Node | None = None,
    ) -> None:
        if name is None:  # a function the collection did not list (a method...)
            name = (function_name(fnode) or "<host>") if fnode is not None else "<file>"
        self.unit = unit
        self.fnode = fnode
        self.at = at  # declarations not visible here are not looked up (None: all)
        self.low = BodyLowerer(unit, name, host=True)
        if fnode is not None and scopes is not None and hosttemplates.is_template(fnode):
            # a template launcher: its template parameters are what its callers pass
            env = hosttemplates.deduce(fnode, name, self._scope_of(scopes), depth)
            self.low = BodyLowerer(unit, name, dict(env), host=True)
        self._index: dict[str, tuple[ts.Node, ts.Node]] | None = None
        self._dim3: dict[str, tuple[tuple[A.Expr, str], ...] | None] = {}
        self._consts_done: set[str] = set()

    def _decl(self, name: str) -> tuple[ts.Node, ts.Node] | None:
        """(declaration, declarator) of a local of the host function (the last one wins)."""
        if self._index is None:
            self._index = {}
            for d in _declarations(self.fnode) if self.fnode is not None else ():
                if self.at is not None and not _visible(d, self.at):
                    continue
                for c in d.children_by_field_id(F.declarator):
                    n = c.child_by_field_id(F.declarator) if c.type == "init_declarator" else c
                    if n is not None and n.type == "function_declarator":  # `dim3 b(BS)`
                        n = n.child_by_field_id(F.declarator)
                    if n is not None and n.type == "identifier":
                        self._index[_text(n)] = (d, c)
        return self._index.get(name)

    def _scope_of(
        self, scopes: tuple[dict[int, str], dict[object, HostScope]]
    ) -> Callable[[ts.Node | None, int], HostScope]:
        """The host scope of a caller (made once, as :func:`host_scope` does)."""
        names, host_low = scopes

        def get(fnode: ts.Node | None, depth: int) -> HostScope:
            key = fnode.id if fnode is not None else -1
            host = host_low.get(key)
            if host is None:
                name = names.get(key) if fnode is not None else "<file>"
                host = HostScope(self.unit, fnode, name, scopes=scopes, depth=depth)
                host_low[key] = host
            return host

        return get

    def type_argument(self, node: ts.Node) -> A.CType | None:
        """The type a template argument of a call names (None: a value, or unknown)."""
        if node.type != "type_descriptor":
            return None
        try:
            return self.low.type_descriptor(node)
        except _Placeholder:
            return None

    def typed(self, args: tuple[A.Expr, ...]) -> tuple[A.Expr, ...]:
        """The launch's arguments with the declared types of the host's parameters and locals
        they name (a host name is lowered without one); for deducing template parameters."""
        out = []
        for a in args:
            ty = self.declared_type(a.name) if isinstance(a, A.Name) and a.ty is None else None
            out.append(replace(a, ty=ty) if ty is not None else a)
        return tuple(out)

    def declared_type(self, name: str) -> A.CType | None:
        """The type the host function declares ``name`` with (a parameter or a local)."""
        found = self._declaration_of(name)
        if found is None:
            return None
        decl, dn = found
        quals = tuple(c for c in decl.children if c.type == "type_qualifier")
        if dn.type == "reference_declarator":  # `const P& p`: a reference passes a `P`
            dn = next((c for c in dn.named_children if c.type == "identifier"), dn)
        try:
            base = self.low.type_of(decl.child_by_field_id(F.type), quals)
            return self.low._declarator_type(dn, base)[1]
        except _Placeholder:
            return None

    def declaration_of(self, name: str) -> tuple[ts.Node, ts.Node] | None:
        """(declaration, declarator) of the parameter or local ``name``, its type written as in
        the source (``const matrix<T>& m``), for matching template parameters syntactically."""
        return self._declaration_of(name)

    def value_argument(self, node: ts.Node) -> int | None:
        """The integer constant a template argument of a call writes (None: a type, or not
        constant here)."""
        if node.type == "type_descriptor":  # `run<T, wide>`: a name reads as a type
            text = _text(node)
            return self._const_name(text) if text.isidentifier() else None
        self.need_consts(_text(node))
        return self.low.const_int_node(node)

    def _const_name(self, name: str) -> int | None:
        """The integer constant ``name`` is here (a template parameter the callers fix, a
        ``const`` local), None if it is not one."""
        self.need_consts(name)
        v = self.low.env.get(name)
        if v is None or isinstance(v, bool) or not isinstance(v, int):
            s = self.low.lookup(name)
            v = s.const if s is not None else None
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    def type_node(self, node: ts.Node) -> A.CType | None:
        """The type a type specifier or template argument node names (None: unknown)."""
        try:
            if node.type == "type_descriptor":
                return self.low.type_descriptor(node)
            if node.type == "identifier":  # `Put(1.5)`: a constructor call names its type
                return self.low._named(_text(node), node)
            return self.low.type_of(node)
        except _Placeholder:
            return None

    def _declaration_of(self, name: str) -> tuple[ts.Node, ts.Node] | None:
        """(declaration, declarator) of the parameter or local ``name``; the last one wins."""
        if self.fnode is None:
            return None
        fdecl = function_declarator_of(self.fnode)
        params = fdecl.child_by_field_id(F.parameters) if fdecl is not None else None
        cands = [
            (p, p.child_by_field_id(F.declarator))
            for p in (params.named_children if params is not None else ())
        ]
        for d in _declarations(self.fnode):
            if self.at is not None and not _visible(d, self.at):
                continue
            for c in d.children_by_field_id(F.declarator):
                cands.append(
                    (d, c.child_by_field_id(F.declarator) if c.type == "init_declarator" else c)
                )
        decl = dn = None
        for p, d in cands:  # the last declaration of the name wins
            inner = d
            while inner is not None and inner.type != "identifier":
                if inner.type == "reference_declarator":  # `const T& v`: no declarator field
                    inner = next(iter(inner.named_children), None)
                else:
                    inner = inner.child_by_field_id(F.declarator)
            if inner is not None and _text(inner) == name:
                decl, dn = p, d
        if decl is None or dn is None:
            return None
        return decl, dn

    def dim3(self, name: str) -> tuple[tuple[A.Expr, str], ...] | None:
        if name not in self._dim3:
            got = None
            dc = self._decl(name)
            if dc is not None and _text(dc[0].child_by_field_id(F.type) or dc[0]) == "dim3":
                d, c = dc
                if c.type == "init_declarator" and not _members_reassigned(self.fnode, name, d):
                    self.need_consts(_text(c))
                    try:
                        got = dim3_exprs(self.low, c.child_by_field_id(F.value))
                    except _Placeholder:
                        got = None
                elif c.type == "function_declarator":
                    if not _members_reassigned(self.fnode, name, d):
                        got = self._named_dim3(c)
            self._dim3[name] = got
        return self._dim3[name]

    def _named_dim3(self, decl: ts.Node) -> tuple[tuple[A.Expr, str], ...] | None:
        """``dim3 block(BS)`` (read as a function declaration, the most vexing parse) whose
        arguments are names of constants: a template parameter the callers fix, a ``const``
        local; None when one is not constant here."""
        from cuda2nki.frontend.ast import fast as N

        plist = decl.child_by_field_id(F.parameters)
        out = []
        for p in plist.named_children if plist is not None else ():
            if p.kind_id in COMMENT_IDS:
                continue
            t = p.child_by_field_id(F.type)
            if p.type != "parameter_declaration" or p.named_child_count != 1 or t is None:
                return None
            v = self._const_name(_text(t))
            if v is None:
                return None
            lit = N.IntLit(loc=self.unit.placer.at(t), value=v, ty=N.ScalarType(name="int32"))
            out.append((lit, _text(t)))
        return tuple(out) or None

    def need_consts(self, text: str, depth: int = 0) -> None:
        """Declare the integer constants named in ``text`` (for template arguments)."""
        for name in set(re.findall(r"[A-Za-z_]\w*", text)):
            if name in self._consts_done or depth > 8:
                continue
            self._consts_done.add(name)
            dc = self._decl(name)
            if dc is None or dc[1].type != "init_declarator":
                continue
            d, c = dc
            quals = {_text(q) for q in d.children if q.kind_id in QUALIFIER_IDS}
            value = c.child_by_field_id(F.value)
            if not quals & {"const", "constexpr"} or value is None:
                continue
            self.need_consts(_text(value), depth + 1)
            v = self.low.const_int_node(value)
            if v is not None:
                self.low.declare(name, Sym(None, const=v))


def _members_reassigned(fnode: ts.Node | None, name: str, decl: ts.Node) -> bool:
    """Whether the host function assigns ``name.x``, ``.y`` or ``.z`` after declaring the
    ``dim3`` ``name`` with a value (``dim3 grid(1, 1); for (...) { grid.x = ...; k<<<grid,
    b>>>(...); }``): its value at a launch is then the host evaluator's (hostvals)."""
    from cuda2nki.frontend.hostidioms import member_assignments

    if fnode is None:
        return False
    return bool(member_assignments(fnode, name, decl.end_byte, fnode.end_byte))


def dim3_exprs(low: BodyLowerer, value: ts.Node | None) -> tuple[tuple[A.Expr, str], ...] | None:
    if value is None:
        return None
    if value.type in ("argument_list", "initializer_list"):
        items = [c for c in value.named_children if c.kind_id not in COMMENT_IDS]
    elif value.type == "call_expression" and _text(value.child_by_field_id(F.function)) == "dim3":
        items = [
            c
            for c in value.child_by_field_id(F.arguments).named_children
            if c.kind_id not in COMMENT_IDS
        ]
    else:
        return None
    return tuple([(low.expr(c), span_text(low.src, c)) for c in items])


def span_text(src: bytes, node: ts.Node) -> str:
    """``_text(node)`` for a node of a tree parsed from ``src`` (a slice, not ``node.text``)."""
    return src[node.start_byte : node.end_byte].decode()  # UTF-8, cut on characters
