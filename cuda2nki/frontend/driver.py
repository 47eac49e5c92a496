"""Front-end driver: preprocess, parse, collect file-scope items, lower, check the call graph."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import replace

import tree_sitter as ts

from cuda2nki.diagnostics import Diagnostic, Severity, SourceLoc, make
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.apilaunch import ApiLaunch, api_launches
from cuda2nki.frontend.assumedinst import assumed_env, assumed_int, user_templates
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.constfold import convert
from cuda2nki.frontend.cst import (
    COMMENT_IDS,
    F,
    describe_error,
    first_error,
    parse_bytes,
)
from cuda2nki.frontend.fileshared import with_file_shared
from cuda2nki.frontend.fnptr import passed_targets, pointer_base, pointer_targets
from cuda2nki.frontend.globaltemplates import register as register_global_template
from cuda2nki.frontend.groupgen import is_group_generic
from cuda2nki.frontend.hostscope import (
    HostScope,
    dim3_exprs,
    host_scope,
    span_text,
)
from cuda2nki.frontend.hostsizeof import struct_bytes
from cuda2nki.frontend.hostvals import HostEvaluator, HostFacts, parameter_names
from cuda2nki.frontend.lower import BodyLowerer
from cuda2nki.frontend.lowerbase import _Placeholder, _text
from cuda2nki.frontend.partialinst import partial_envs, partial_name
from cuda2nki.frontend.preprocess import preprocess
from cuda2nki.frontend.recordsplit import records_as_members
from cuda2nki.frontend.tagdispatch import with_tag_arguments
from cuda2nki.frontend.unit import (
    FuncDef,
    UnitContext,
    function_kind,
    function_name,
    function_ref,
    instance_name,
    parse_template_value,
)
from cuda2nki.frontend.vartemplates import register as register_var_template

#: a kernel template to instantiate: (kernel, template arguments written, where, the launch's
#: arguments, from which ``typename`` parameters are deduced; none for an explicit instantiation)
_Request = tuple[str, list[A.Expr | A.CType], SourceLoc, tuple[A.Expr, ...]]

_TEMPLATE_PARAM_KINDS = {
    "parameter_declaration": "int",
    "optional_parameter_declaration": "int",
    "type_parameter_declaration": "typename",
    "optional_type_parameter_declaration": "typename",
}


def lower_source(
    text: str,
    filename: str,
    defines: Mapping[str, str] | None = None,
    include_dirs: tuple[str, ...] = (),
    templates: Mapping[str, str] | None = None,
) -> A.TranslationUnit:
    pre = preprocess(text, filename, defines, include_dirs)
    pre.linemap.sources.setdefault(filename, text)
    src = pre.text.encode("utf-8", "replace")
    tree = parse_bytes(src)
    unit = UnitContext(filename, src, pre.linemap)
    unit.diags.extend(pre.diagnostics)
    root = tree.root_node
    funcs = _collect(unit, root)
    funcs += unit.method_defs  # member functions of aggregate structs (see .methods)
    launches, requests = _launch_sites(unit, root, funcs)
    requests += _explicit_instantiations(unit)
    site_instances: dict[SourceLoc, str] = {}
    functions = _lower_all(unit, funcs, requests, dict(templates or {}), site_instances)
    if site_instances:
        launches = [_with_instance(s, site_instances) for s in launches]
    # structs passed by value: their members are known once the kernels are lowered
    calls = unit.launch_calls
    launches = [
        replace(s, host=_with_members(unit, *calls[i], s)) if i < len(calls) else s
        for i, s in enumerate(launches)
    ]
    _lost_kernels(unit, root)
    _check_recursion(unit)
    _propagate_rejections(unit)
    fatal_pre = [d for d in pre.diagnostics if d.code == "C2N1003" and d.severity >= Severity.ERROR]
    accepted, rejected, diags = _verdicts(unit, functions, fatal_pre)
    accepted = with_file_shared(accepted, unit.file_shared, unit.file_shared_uses, unit.graph)
    accepted = records_as_members(accepted, unit.blobs)  # arrays of mixed-type structs
    refused_device = {
        name: tuple(ds) for name, ds in unit.rejected.items() if name not in rejected and ds
    }
    if len(diags) > 1:
        diags.sort(key=lambda d: (d.loc.file != filename, d.loc.file, d.loc.line, d.loc.col))
    return N.TranslationUnit(
        file=filename,
        functions=tuple(accepted),
        globals=tuple(unit.global_vars),
        file_shared=tuple(d for d in unit.file_shared.values() if d is not None),
        launch_sites=tuple(launches),
        diagnostics=tuple(diags),
        rejected=rejected,
        refused_device=refused_device,
    )


def _verdicts(
    unit: UnitContext, functions: list[A.Function], fatal_pre: list[Diagnostic]
) -> tuple[list[A.Function], dict[str, tuple[Diagnostic, ...]], list[Diagnostic]]:
    """The accepted functions, the rejected kernels with their reasons, and the file's
    diagnostics (a refused device function's among them)."""
    if not unit.rejected and not unit.instances and not fatal_pre:  # the common case
        return functions, {}, list(unit.diags)
    accepted = [f for f in functions if f.name not in unit.rejected]
    accepted += [f for n, f in unit.instances.items() if n not in unit.rejected]
    rejected = {name: tuple(ds) for name, ds in unit.rejected.items() if _is_kernel(unit, name)}
    device_errors = [d for n, ds in unit.rejected.items() if n not in rejected for d in ds]
    if fatal_pre:  # an #error or broken directive: nothing in the file is trustworthy
        for f in accepted:
            rejected.setdefault(f.name, tuple(fatal_pre))
        accepted = []
    diags = list(unit.diags)
    for ds in (*rejected.values(), device_errors):
        diags.extend(d for d in ds if d not in diags)
    return accepted, rejected, diags


def _is_kernel(unit: UnitContext, name: str) -> bool:
    """``rejected`` lists kernels only; a refused device function shows in the diagnostics
    and in the rejection of every kernel that calls it."""
    fd = unit.functions.get(re.split(r"[<(]", name)[0])
    return fd is None or fd.kind == "global"


# ---------------------------------------------------------------------- collection


def _collect(
    unit: UnitContext, root: ts.Node, funcs: list[FuncDef] | None = None, salvage: bool = True
) -> list[FuncDef]:
    funcs = [] if funcs is None else funcs
    stack = list(reversed(root.children))
    ns_of: dict[int, str] = {}  # node id -> the namespace it is declared in (not: file scope)
    while stack:
        n = stack.pop()
        k = n.type
        unit.ns = ns_of.get(n.id, "")
        if k == "function_definition":
            fd = _funcdef(unit, n, None, len(funcs))
            if fd is not None:
                funcs.append(fd)
        elif k == "template_declaration":
            register_var_template(unit, n, unit.ns)  # `template <class T> constexpr T k = 1;`
            register_global_template(unit, n)  # `template <class T> __constant__ T m[8];`
            for c in n.named_children:
                if c.type in ("struct_specifier", "class_specifier", "union_specifier"):
                    unit.register_struct(c, n.child_by_field_id(F.parameters))
            inner = [c for c in n.named_children if c.type == "function_definition"]
            if inner:
                fd = _funcdef(unit, inner[0], n.child_by_field_id(F.parameters), len(funcs))
                if fd is not None:
                    funcs.append(fd)
        elif k in ("namespace_definition", "linkage_specification"):
            body = n.child_by_field_id(F.body)
            if body is not None:
                inner = _namespace_of(unit.ns, n)
                kids = body.children if body.type == "declaration_list" else [body]
                for c in kids:
                    ns_of[c.id] = inner
                stack.extend(reversed(kids))
        elif k == "declaration":
            unit.register_global(n)
        elif k in ("type_definition", "alias_declaration"):
            unit.register_typedef(n)
        elif k == "enum_specifier":
            unit.register_enum(n)
        elif k in ("struct_specifier", "class_specifier", "union_specifier"):
            unit.register_struct(n)
        elif k == "template_instantiation":
            unit.explicit.append(n)
        elif k == "ERROR" or n.is_error:
            if salvage:
                _salvage(unit, n, funcs)
            else:
                _top_error(unit, n, funcs)
    return funcs


def _funcdef(unit: UnitContext, n: ts.Node, tparams: ts.Node | None, order: int) -> FuncDef | None:
    name = function_name(n)
    if name is None:
        err = first_error(n) or n
        unit.diags.append(make("C2N1002", unit.loc(err), what=describe_error(err)))
        return None
    kind, forceinline = function_kind(n)
    fd = FuncDef(node=n, name=name, kind=kind, forceinline=forceinline, order=order)
    fd.namespace = unit.ns
    if tparams is not None:
        for p in tparams.named_children:
            pk = _TEMPLATE_PARAM_KINDS.get(p.type)
            if pk is None:
                if p.kind_id not in COMMENT_IDS:
                    fd.template_ok = False
                continue
            if pk == "int":
                dn = p.child_by_field_id(F.declarator)
                fname = _function_param_name(dn)
                tn = p.child_by_field_id(F.type)
                if fname is not None or (tn is not None and _text(tn) in unit.fn_types):
                    pk = "function"  # `float (*op)(float)`, `reduction_func_t op`
                pname = fname or (_text(dn) if dn is not None else "")
            else:
                tn = p.child_by_field_id(F.name) or next(
                    (c for c in p.named_children if c.type == "type_identifier"), None
                )
                pname = _text(tn) if tn is not None else ""
            default = p.child_by_field_id(F.default_value) or p.child_by_field_id(F.default_type)
            fd.template_params.append((pname, pk, default, p))
    if kind != "host":
        unit.functions.setdefault(name, fd)
        unit.overloads.setdefault(name, []).append(fd)
    return fd


def _namespace_of(outer: str, n: ts.Node) -> str:
    """The namespace a ``namespace`` definition opens inside ``outer`` (``namespace a::b {``
    nests two; an anonymous one and ``extern "C"`` open none)."""
    if n.type != "namespace_definition":
        return outer
    name = n.child_by_field_id(F.name)
    if name is None:
        return outer
    text = _text(name).replace(" ", "")
    return f"{outer}::{text}" if outer else text


def _function_param_name(d: ts.Node | None) -> str | None:
    """``op`` of a function-pointer declarator ``(*op)(float)``, else None."""
    if d is None or d.type != "function_declarator":
        return None
    inner = d.child_by_field_id(F.declarator)
    while inner is not None and inner.type in ("parenthesized_declarator", "pointer_declarator"):
        inner = (
            inner.child_by_field_id(F.declarator)
            if inner.type == "pointer_declarator"
            else next((c for c in inner.named_children if c.kind_id not in COMMENT_IDS), None)
        )
    return _text(inner) if inner is not None and inner.type == "identifier" else None


_DEF_RE = re.compile(rb"\b(?:__global__|__device__)\b")
_LINE_RE = re.compile(rb"[^\n]")


def _salvage(unit: UnitContext, n: ts.Node, funcs: list[FuncDef]) -> None:
    """A file-scope ERROR node (broken host code, an unclosed struct...) can swallow the kernels
    after it.  Each ``__global__``/``__device__`` definition in it is parsed again on its own:
    the rest of the file is blanked out (newlines kept), so byte offsets and locations are
    unchanged, and the function is judged by its own text only."""
    src = unit.src
    spans: list[tuple[int, int]] = []
    for m in _DEF_RE.finditer(src, n.start_byte, n.end_byte):
        if spans and m.start() < spans[-1][1]:
            continue
        span = _definition_span(src, m.start(), n.start_byte)
        if span is None:
            continue
        spans.append(span)
        a, b = span
        masked = _LINE_RE.sub(b" ", src[:a]) + src[a:b] + _LINE_RE.sub(b" ", src[b:])
        tree = parse_bytes(masked)
        unit.keep(tree)
        _collect(unit, tree.root_node, funcs, salvage=False)
    err = first_error(n) or n
    if not any(a <= err.start_byte < b for a, b in spans):
        unit.diags.append(make("C2N1002", unit.loc(err), what=describe_error(err)))


def _definition_span(src: bytes, qual: int, lo: int) -> tuple[int, int] | None:
    """Byte span of the function definition whose qualifier is at ``qual``: back to the end of
    the previous declaration, forward to the brace closing its body (None for a prototype)."""
    start = qual
    while start > lo and src[start - 1 : start] not in (b";", b"}", b"{"):
        start -= 1
    i, depth, n = qual, 0, len(src)
    while i < n:  # find the body's opening brace
        c = src[i : i + 1]
        if c == b"(":
            depth += 1
        elif c == b")":
            depth -= 1
        elif depth == 0 and c == b";":
            return None
        elif depth == 0 and c == b"{":
            break
        i += 1
    else:
        return None
    depth = 0
    while i < n:
        c = src[i : i + 1]
        if c in (b'"', b"'"):  # skip a string or character literal
            j = i + 1
            while j < n and src[j : j + 1] not in (c, b"\n"):
                j += 2 if src[j : j + 1] == b"\\" else 1
            i = j
        elif src[i : i + 2] == b"//":
            j = src.find(b"\n", i)
            i = n if j < 0 else j
            continue
        elif src[i : i + 2] == b"/*":
            j = src.find(b"*/", i + 2)
            i = n if j < 0 else j + 1
        elif c == b"{":
            depth += 1
        elif c == b"}":
            depth -= 1
            if depth == 0:
                return start, i + 1
        i += 1
    return start, n


def _top_error(unit: UnitContext, n: ts.Node, funcs: list[FuncDef]) -> None:
    """An ERROR node at file scope: a broken kernel, or broken host code."""
    text = _text(n)
    if "__global__" in text or "__device__" in text:
        for m in re.finditer(r"__global__[^(;{]*?\b(\w+)\s*(?:<[^<>]*>)?\s*\(", text):
            name = m.group(1)
            if name in unit.rejected or any(f.name == name for f in funcs):
                continue
            err = first_error(n) or n
            unit.rejected[name] = [
                make("C2N1001", unit.loc(err), func=name, what=describe_error(err))
            ]
        if any(k for k in unit.rejected):
            return
    err = first_error(n) or n
    unit.diags.append(make("C2N1002", unit.loc(err), what=describe_error(err)))


# ---------------------------------------------------------------------- launch sites


def _enclosing_function(n: ts.Node) -> ts.Node | None:
    p = n.parent
    while p is not None and p.type != "function_definition":
        p = p.parent
    return p


def _launch_sites(
    unit: UnitContext, root: ts.Node, funcs: list[FuncDef]
) -> tuple[list[A.LaunchSite], list[_Request]]:
    sites: list[A.LaunchSite] = []
    requests: list[_Request] = []
    calls = unit.launch_calls  # per site of `kernel<<<...>>>(...)`, its call (see _with_members)
    api = _API_RE.search(unit.src) is not None
    if b"<<" not in unit.src and not api:
        return sites, requests
    caps = _kernel_call_nodes(unit.src, root) if b"<<" in unit.src else []
    # function_kind(fd.node)[0] and function_name(fd.node), already known
    kinds = {fd.node.id: fd.kind for fd in funcs}
    names = {fd.node.id: fd.name for fd in funcs}
    host_low: dict[object, HostScope] = {}
    evaluator = HostEvaluator(root, lambda n: _where(unit, n), unit.filename)
    evaluator.struct_bytes = struct_bytes(unit, root)
    for ks in caps:
        call = ks.parent
        fnode = _enclosing_function(ks)
        if call is None or call.type != "call_expression":
            continue
        if fnode is not None:
            kind = kinds.get(fnode.id)
            if kind is None:
                kind = kinds[fnode.id] = function_kind(fnode)[0]
            if kind != "host":
                continue  # device-side launch: C2N1014 when that function is lowered
        if call.has_error:
            continue
        host = host_scope(unit, fnode, names, host_low, at=call)
        facts: list[HostFacts | None] = []
        for target in _pointer_launch(unit, call, fnode, root, evaluator) or [None]:
            site = _launch_site(unit, host, call, ks, target)
            if site is None:
                continue
            site = with_tag_arguments(unit, site, call, evaluator)  # `k<tag.value><<<...>>>`
            if not facts:
                facts.append(_host_facts(evaluator, call, ks))
            site = replace(site, host=facts[0])
            sites.append(site)
            calls.append((evaluator, call))
            fd = unit.functions.get(site.kernel)
            if site.template_args or (fd is not None and fd.is_template):
                # `k<<<...>>>` / `k<><<<...>>>` of a template: its defaults may instantiate it
                args = host.typed(site.args) if fd is not None and fd.is_template else ()
                requests.append((site.kernel, list(site.template_args), site.loc, args))
    if api:
        sites += _api_sites(unit, root, kinds, names, host_low, evaluator)
    return sites, requests


_API_RE = re.compile(
    rb"\b(?:cudaLaunchKernel|cudaLaunchCooperativeKernel|cuLaunchKernel|\.func\s*=)"
)


def _api_sites(
    unit: UnitContext,
    root: ts.Node,
    kinds: dict[int, str],
    names: dict[int, str],
    host_low: dict[object, HostScope],
    evaluator: HostEvaluator,
) -> list[A.LaunchSite]:
    """Launch sites of the launches written as API calls or graph kernel nodes (see
    :mod:`cuda2nki.frontend.apilaunch`)."""
    out: list[A.LaunchSite] = []
    for launch in api_launches(root):
        fnode = _enclosing_function(launch.anchor)
        if fnode is not None and kinds.get(fnode.id, function_kind(fnode)[0]) != "host":
            continue
        host = host_scope(unit, fnode, names, host_low, at=launch.anchor)
        site = _api_site(unit, host, launch)
        if site is None:
            continue
        cfg = [launch.grid if len(launch.grid) > 1 else launch.grid[0]]
        cfg.append(launch.block if len(launch.block) > 1 else launch.block[0])
        cfg.append(launch.shared)
        try:
            facts = evaluator.facts(launch.anchor, cfg, list(launch.args))
        except RecursionError:
            facts = None
        out.append(replace(site, host=facts))
    return out


def _api_site(unit: UnitContext, host: HostScope, launch: ApiLaunch) -> A.LaunchSite | None:
    low = host.low
    try:
        grid, grid_text = _axes(host, launch.grid)
        block, block_text = _axes(host, launch.block)
        smem = low.expr(launch.shared) if launch.shared is not None else None
        args = tuple([low.expr(a) for a in launch.args])
    except _Placeholder:
        return None
    return N.LaunchSite(
        loc=unit.placer.at(launch.anchor),
        kernel=launch.kernel,
        template_args=(),
        grid=grid,
        block=block,
        shared_bytes=smem,
        args=args,
        grid_text=grid_text,
        block_text=block_text,
        arg_texts=tuple([span_text(unit.src, a) for a in launch.args]),
        instance=launch.kernel,
    )


def _axes(host: HostScope, nodes: tuple[ts.Node, ...]) -> tuple[tuple[A.Expr, ...], str]:
    """A launch's grid or block: one ``dim3`` node, or one node per axis."""
    if len(nodes) == 1:
        return _dims(host, nodes[0])
    return tuple([host.low.expr(n) for n in nodes]), ", ".join(
        span_text(host.low.src, n) for n in nodes
    )


def _pointer_launch(
    unit: UnitContext,
    call: ts.Node,
    fnode: ts.Node | None,
    root: ts.Node,
    evaluator: HostEvaluator,
) -> list[str]:
    """The kernels a launch through a function pointer may call (see
    :mod:`cuda2nki.frontend.fnptr`); empty for a launch that names its kernel."""
    fn = call.child_by_field_id(F.function)
    if fn is None:
        return []
    base = pointer_base(fn)
    if base is None or base in unit.functions:
        return []
    kernels = frozenset(n for n, fd in unit.functions.items() if fd.kind == "global")
    if not kernels:
        return []
    got = pointer_targets(fnode, base, kernels) if fnode is not None else []
    params = parameter_names(fnode) if fnode is not None and not got else []
    if base in params:
        calls = evaluator.calls(function_name(fnode) or "")  # type: ignore[arg-type]
        return passed_targets(calls, params.index(base), kernels)
    return got or pointer_targets(root, base, kernels)


def _where(unit: UnitContext, node: ts.Node) -> str:
    loc = unit.loc(node)
    return f"{loc.file}:{loc.line}"


def _with_members(
    unit: UnitContext, evaluator: HostEvaluator, call: ts.Node, site: A.LaunchSite
) -> HostFacts | None:
    """The site's host facts with what the host says about the members of each struct the
    launch passes by value (see :mod:`cuda2nki.frontend.hoststructs`)."""
    from cuda2nki.frontend.hoststructs import member_facts, member_paths

    facts = site.host
    fd = unit.functions.get(site.kernel)
    if facts is None or fd is None:
        return facts
    paths = member_paths(unit, fd.node)
    if not any(paths):
        return facts
    an = call.child_by_field_id(F.arguments)
    args = [c for c in an.named_children if c.kind_id not in COMMENT_IDS] if an else []
    if len(args) != len(paths):
        return facts
    members = tuple(member_facts(evaluator, call, a, p) if p else None for a, p in zip(args, paths))
    return replace(facts, members=members)


def _host_facts(evaluator: HostEvaluator, call: ts.Node, ks: ts.Node) -> HostFacts | None:
    """The launch's grid, block and arguments followed through the host code."""
    cfg = [c for c in ks.named_children if c.kind_id not in COMMENT_IDS]
    an = call.child_by_field_id(F.arguments)
    args = [c for c in an.named_children if c.kind_id not in COMMENT_IDS] if an else []
    if len(cfg) < 2:
        return None
    try:
        return evaluator.facts(call, cfg, args)
    except RecursionError:  # pathological host code: the launch is read as written
        return None


def _explicit_instantiations(
    unit: UnitContext,
) -> list[_Request]:
    """``template __global__ void k<256, float>(float*, ...);``"""
    out: list[_Request] = []
    if not unit.explicit:
        return out
    low = BodyLowerer(unit, "<file>", host=True)
    for n in unit.explicit:
        d = n.child_by_field_id(F.declarator)
        while d is not None and d.type != "function_declarator":
            d = d.child_by_field_id(F.declarator)
        tf = d.child_by_field_id(F.declarator) if d is not None else None
        if tf is None or tf.type != "template_function":
            continue
        try:
            name, tnodes = low._qualified_call_name(tf)
            targs = [low._template_arg(t) for t in tnodes]
        except _Placeholder:
            continue
        out.append((name.split("::")[-1], targs, unit.loc(n), ()))
    return out


_LAUNCH_RE = re.compile(rb"<<\s*<")


def _kernel_call_nodes(src: bytes, root: ts.Node) -> list[ts.Node]:
    """The ``kernel_call_syntax`` nodes, found from the ``<<<`` tokens (``<< <`` too)."""
    out: list[ts.Node] = []
    for m in _LAUNCH_RE.finditer(src):
        pos = m.start()
        n = root.descendant_for_byte_range(pos, pos + 1)
        while n is not None and n.type != "kernel_call_syntax" and n.start_byte == pos:
            n = n.parent
        if n is not None and n.type == "kernel_call_syntax":
            out.append(n)
    return out


def _launch_site(
    unit: UnitContext, host: HostScope, call: ts.Node, ks: ts.Node, target: str | None = None
) -> A.LaunchSite | None:
    """The launch site of ``call``; ``target`` names the kernel of a launch through a function
    pointer."""
    fn = call.child_by_field_id(F.function)
    if fn is None:
        return None
    targs: list[A.Expr | A.CType] = []
    low = host.low
    try:
        if target is not None:
            name, tnodes = target, []
        else:
            name, tnodes = low._qualified_call_name(fn)
        name = name.split("::")[-1]
        if tnodes:  # template arguments may name host constants
            host.need_consts(" ".join(_text(t) for t in tnodes))
        for t in tnodes:
            ta = low._template_arg(t)
            if isinstance(ta, A.Expr):
                v = low.const_value(ta)
                if isinstance(v, int):
                    ta = N.IntLit(loc=ta.loc, value=v, ty=ta.ty or N.ScalarType(name="int32"))
            targs.append(ta)
        cfg = [c for c in ks.named_children if c.kind_id not in COMMENT_IDS]
        if len(cfg) < 2:
            return None
        grid, grid_text = _dims(host, cfg[0])
        block, block_text = _dims(host, cfg[1])
        smem = low.expr(cfg[2]) if len(cfg) > 2 else None
        an = call.child_by_field_id(F.arguments)
        arg_nodes = [c for c in an.named_children if c.kind_id not in COMMENT_IDS] if an else []
        args = tuple([_launch_arg(unit, low, a) for a in arg_nodes])
    except _Placeholder:
        return None
    if name not in unit.functions or unit.functions[name].kind != "global":
        unit.diags.append(make("C2N1027", unit.loc(call), name=name))
    return N.LaunchSite(
        loc=unit.placer.at(call),
        kernel=name,
        template_args=tuple(targs),
        grid=grid,
        block=block,
        shared_bytes=smem,
        args=args,
        grid_text=grid_text,
        block_text=block_text,
        arg_texts=tuple([span_text(unit.src, a) for a in arg_nodes]),
        instance=name,  # a template instantiated several times: renamed by _with_instance
    )


def _launch_arg(unit: UnitContext, low: BodyLowerer, a: ts.Node) -> A.Expr:
    """A launch argument; a braced struct value (``Pair{d_k, d_v}``) stands as its text (the
    host facts read its members: :mod:`cuda2nki.frontend.hostinit`)."""
    try:
        return low.expr(a)
    except _Placeholder:
        if a.type not in ("compound_literal_expression", "initializer_list"):
            raise
        return N.Name(loc=unit.loc(a), name=span_text(unit.src, a))


def _dims(host: HostScope, node: ts.Node) -> tuple[tuple[A.Expr, ...], str]:
    low = host.low
    if node.type == "identifier":
        got = host.dim3(_text(node))
        if got:
            return tuple(e for e, _ in got), ", ".join(t for _, t in got)
    got = dim3_exprs(low, node)
    if got is not None:
        return tuple(e for e, _ in got), ", ".join(t for _, t in got)
    return (low.expr(node),), span_text(low.src, node)


# ---------------------------------------------------------------------- lowering


def _lower_all(
    unit: UnitContext,
    funcs: list[FuncDef],
    requests: list[_Request],
    templates: dict[str, str],
    site_instances: dict[SourceLoc, str],
) -> list[A.Function]:
    out: list[A.Function] = []
    for fd in funcs:
        if fd.kind == "host":
            continue
        if not fd.is_template and fd.kind != "global" and is_group_generic(fd.node):
            continue  # instantiated at its call sites, per group (see groupgen)
        if not fd.is_template:
            f = unit.lower_function(fd, name=unit.function_name_of(fd))
            if f is not None:
                out.append(f)
            continue
        if fd.kind != "global":
            continue  # device templates are instantiated at their call sites
        out.extend(_instantiate_kernel(unit, fd, requests, templates, site_instances))
    return out


def _with_instance(site: A.LaunchSite, site_instances: dict[SourceLoc, str]) -> A.LaunchSite:
    """The launch site naming the kernel instance it launches (its template instantiation)."""
    if not site_instances:  # no template kernel instantiated: the site names its kernel
        return site
    name = site_instances.get(site.loc, site.kernel)
    return site if name == site.instance else replace(site, instance=name)


def _instantiate_kernel(
    unit: UnitContext,
    fd: FuncDef,
    requests: list[_Request],
    templates: dict[str, str],
    site_instances: dict[SourceLoc, str],
) -> list[A.Function]:
    envs: list[dict] = []
    seen: set[str] = set()
    request_keys: list[tuple[SourceLoc, str]] = []
    low = BodyLowerer(unit, fd.name, host=True)
    for kname, targs, loc, args in requests:
        if kname != fd.name:
            continue
        try:
            if not fd.template_ok:
                raise _Placeholder()
            env = _env_from_args(unit, low, fd, targs, loc, args)
        except _Placeholder:
            continue
        if env is not None:
            key = repr(sorted(env.items(), key=lambda kv: kv[0]))
            request_keys.append((loc, key))
            if key not in seen:
                seen.add(key)
                envs.append(env)
    if not envs and fd.template_ok:
        told = len(unit.diags)
        env = _env_from_templates(unit, fd, user_templates(templates))
        value = assumed_int(templates, fd.name)
        if env is None and value is not None and len(unit.diags) == told:
            if not any(r[0] == fd.name for r in requests):  # nothing instantiates it
                env = assumed_env(unit, fd, templates, value, _env_from_templates)
        if env is not None:
            envs.append(env)
    out = []
    names_by_key: dict[str, str] = {}
    for env in envs:
        # one instantiation keeps the plain name; several are named `k<256, float32>`
        name = instance_name(fd.name, fd, env) if len(envs) > 1 else fd.name
        names_by_key[repr(sorted(env.items(), key=lambda kv: kv[0]))] = name
        f = unit.lower_function(fd, env, name=name)
        if f is not None:
            out.append(f)
    site_instances.update({loc: names_by_key[k] for loc, k in request_keys if k in names_by_key})
    if not envs:
        missing = ", ".join(p[0] for p in fd.template_params) or "its parameters"
        unit.diags.append(make("C2N1023", unit.loc(fd.node), name=fd.name, params=missing))
        env = {p[0]: None for p in fd.template_params}
        f = unit.lower_function(fd, env, keep_params=True)
        if f is not None:
            out.append(f)
        elif fd.template_ok:  # it needs its integers: those the host launches fix, if any
            out.extend(_partial_instances(unit, fd, low, requests, templates))
    return out


def _partial_instances(
    unit: UnitContext,
    fd: FuncDef,
    low: BodyLowerer,
    requests: list[_Request],
    templates: dict[str, str],
) -> list[A.Function]:
    """``fd`` lowered once per set of integer template arguments its host launches fix, its
    type parameters kept (see :mod:`cuda2nki.frontend.partialinst`); when one is lowered,
    the refusal of the generic lowering is dropped."""
    partial = partial_envs(low, fd, requests)
    out: list[A.Function] = []
    refused = unit.rejected.pop(fd.name, None)
    for env in partial:
        for pname, kind, _d, _n in fd.template_params:  # `--template T=float`
            if env.get(pname) is None and kind == "typename" and pname in templates:
                env[pname] = parse_template_value(templates[pname], unit)  # type: ignore[assignment]
        whole = all(v is not None for v in env.values())
        name = fd.name
        if len(partial) > 1:
            name = instance_name(fd.name, fd, env) if whole else partial_name(fd.name, fd, env)
        f = unit.lower_function(fd, env, name=name, keep_params=not whole)
        if f is not None:
            out.append(f)
    if not out and refused is not None:
        unit.rejected[fd.name] = refused
    return out


def _env_from_args(
    unit: UnitContext,
    low: BodyLowerer,
    fd: FuncDef,
    targs: list[A.Expr | A.CType],
    loc: SourceLoc,
    args: tuple[A.Expr, ...] = (),
) -> dict | None:
    """The template arguments of a launch (or an explicit instantiation): those written, then
    ``typename`` parameters deduced from the launch's argument types, then the defaults."""
    env: dict[str, int | A.CType] = {}
    params = fd.template_params
    if len(targs) > len(params):
        unit.diags.append(make("C2N1024", loc, name=fd.name, reason="too many template arguments"))
        return None
    for (pname, kind, _default, _n), ta in zip(params, targs):
        if kind == "function":
            ref = function_ref(unit, ta)
            if ref is None:
                reason = f"'{pname}' needs a device function"
                unit.diags.append(make("C2N1024", loc, name=fd.name, reason=reason))
                return None
            env[pname] = ref
        elif kind == "int":
            v = low.const_value(ta) if isinstance(ta, A.Expr) else None
            if isinstance(ta, A.Expr) and v is None:
                return None  # a value known only at run time (or a host template parameter)
            if not isinstance(v, int):
                unit.diags.append(
                    make(
                        "C2N1024", loc, name=fd.name, reason=f"'{pname}' needs an integer constant"
                    )
                )
                return None
            env[pname] = convert(v, low.template_value_type(pname))
        else:
            if isinstance(ta, A.Expr) and not (isinstance(ta, A.Name) and ta.ty is None):
                unit.diags.append(
                    make("C2N1024", loc, name=fd.name, reason=f"'{pname}' needs a type")
                )
                return None
            if isinstance(ta, A.Expr):
                return None  # a name the host code does not define here (a host template param)
            env[pname] = ta
    if args:
        unit.deduce_types(low, fd, args, env)
    return _fill_defaults(unit, fd, env, loc)


def _env_from_templates(unit: UnitContext, fd: FuncDef, templates: dict[str, str]) -> dict | None:
    env: dict[str, int | A.CType] = {}
    for pname, kind, _default, pnode in fd.template_params:
        if pname not in templates:
            continue
        v = parse_template_value(templates[pname], unit)
        if kind == "function":
            v = function_ref(unit, N.Name(loc=unit.loc(pnode), name=templates[pname], ty=None))
            ok = v is not None
        elif kind == "int":
            ok = isinstance(v, int)
        else:
            ok = v is not None and not isinstance(v, int)
        if not ok:
            unit.diags.append(
                make(
                    "C2N1024",
                    unit.loc(pnode),
                    name=fd.name,
                    reason=f"--template {pname}={templates[pname]} does not fit "
                    + {"int": "an integer", "typename": "a type", "function": "a function"}[kind]
                    + " parameter",
                )
            )
            return None
        if kind == "int":
            v = convert(v, BodyLowerer(unit, fd.name, host=True).template_value_type(pname))
        env[pname] = v  # type: ignore[assignment]
    if not env and any(p[2] is None for p in fd.template_params):
        return None
    return _fill_defaults(unit, fd, env, unit.loc(fd.node))


def _fill_defaults(unit: UnitContext, fd: FuncDef, env: dict, loc: SourceLoc) -> dict | None:
    for pname, kind, default, _n in fd.template_params:
        if pname in env:
            continue
        if default is None:
            return None
        dl = BodyLowerer(unit, fd.name, dict(env))
        try:
            if kind == "int":
                v = dl.const_int_node(default)
                if v is None:
                    return None
                env[pname] = convert(v, dl.template_value_type(pname))
            else:
                env[pname] = dl._template_arg(default)
        except _Placeholder:
            return None
    return env


_IDENT_CALL_RE = re.compile(rb"([A-Za-z_]\w*)\s*(?:<[^<>;{}]*>)?\s*\(")


def _kernel_name_after(src: bytes, pos: int) -> tuple[str, int] | None:
    """The name being defined after ``__global__`` at ``pos``: the last ``name(`` at
    parenthesis depth 0 before the body (attributes such as ``__launch_bounds__(..)`` come
    first)."""
    end = len(src)
    for stop in (b"{", b";"):
        j = src.find(stop, pos)
        if 0 <= j < end:
            end = j
    seg = src[pos:end]
    last = None
    for m in _IDENT_CALL_RE.finditer(seg):
        at = m.start(1)
        if seg.count(b"(", 0, at) == seg.count(b")", 0, at):  # at parenthesis depth 0
            last = (m.group(1).decode("utf-8", "replace"), pos + at)
    return last


def _head_span(fnode: ts.Node) -> tuple[int, int]:
    """Bytes of a function definition before its body (qualifiers, name, parameters)."""
    body = fnode.child_by_field_id(F.body)
    return fnode.start_byte, body.start_byte if body is not None else fnode.end_byte


def _lost_kernels(unit: UnitContext, root: ts.Node) -> None:
    """A safety net: every ``__global__ ... name(`` in the code is a kernel that was either
    lowered or rejected -- the grammar must never lose one silently."""
    src = unit.src
    heads = sorted(_head_span(fd.node) for fds in unit.overloads.values() for fd in fds)
    starts = [a for a, _ in heads]
    pos = src.find(b"__global__")
    while pos >= 0:
        i = bisect_right(starts, pos) - 1
        if i >= 0 and pos < heads[i][1]:  # the qualifier of a function found in the tree
            pos = src.find(b"__global__", pos + 1)
            continue
        got = _kernel_name_after(src, pos + len(b"__global__"))
        pos = src.find(b"__global__", pos + 1)
        if got is None:
            continue
        name, at = got
        if name in unit.functions or name in unit.rejected:
            continue
        node = root.descendant_for_byte_range(at, at + 1)
        if node is None or node.type in ("comment", "string_literal", "string_content"):
            continue
        anc = node
        while anc is not None and anc.type not in ("declaration", "template_instantiation"):
            anc = anc.parent
        if anc is not None and not anc.has_error:
            continue  # a prototype or an explicit instantiation
        unit.rejected[name] = [
            make("C2N1001", unit.loc(node), func=name, what="this kernel could not be parsed")
        ]


# ---------------------------------------------------------------------- call graph


def _check_recursion(unit: UnitContext) -> None:
    graph = unit.graph
    state: dict[str, int] = {}  # 1 visiting, 2 done
    for start in list(graph):
        if state.get(start):
            continue
        stack: list[tuple[str, int]] = [(start, 0)]
        path: list[str] = [start]
        state[start] = 1
        while stack:
            node, i = stack[-1]
            edges = graph.get(node, [])
            if i >= len(edges):
                stack.pop()
                path.pop()
                state[node] = 2
                continue
            stack[-1] = (node, i + 1)
            target, loc = edges[i]
            st = state.get(target)
            if st == 1:
                cyc = path[path.index(target) :] + [target]
                d = make("C2N1012", loc, cycle=" -> ".join(cyc))
                for fn in set(cyc):
                    unit.rejected.setdefault(fn, [])
                    if d not in unit.rejected[fn]:
                        unit.rejected[fn].append(d)
            elif st is None and target in graph:
                state[target] = 1
                stack.append((target, 0))
                path.append(target)


def _propagate_rejections(unit: UnitContext) -> None:
    """A function that calls a rejected function is rejected too (with the callee's reasons)."""
    changed = True
    while changed:
        changed = False
        for fn, edges in unit.graph.items():
            if fn in unit.rejected:
                continue
            for target, _loc in edges:
                if target in unit.rejected:
                    unit.rejected[fn] = list(unit.rejected[target])
                    changed = True
                    break
