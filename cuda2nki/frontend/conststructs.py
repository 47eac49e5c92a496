"""A host-filled ``__constant__`` struct of device pointers and sizes as kernel inputs.

``__constant__ Params cp;`` written once by the host (``cudaMemcpyToSymbol(cp, &h,
sizeof(Params))``, ``h.a`` and ``h.b`` device buffers, ``h.n`` a size) and read by kernels as
``cp.b[i] = cp.s * cp.a[i]`` is the struct-parameter idiom moved to constant memory.  The
front end holds it as one global per member (``cp__a``, ``cp__b``, ``cp__n``, ``cp__s``, see
:mod:`cuda2nki.frontend.aggregates`).  Each member a kernel reads, and never assigns, becomes a
trailing parameter of that kernel under the member's name, as a host-filled table does
(:mod:`cuda2nki.frontend.constparams`): a pointer member a tensor (written through or read),
a number a scalar; the launch sites pass the symbol's members.  A member that a device
function reads stays a global (its readers would need the parameter too).
"""

from __future__ import annotations

import dataclasses

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.constparams import _WRITE, _clashes, _reads, _with_args
from cuda2nki.frontend.visit import walk


def const_structs_as_parameters(tu: A.TranslationUnit, source: str) -> A.TranslationUnit:
    """``tu`` (lowered from ``source``) with the members of its host-filled constant structs
    made parameters of the kernels that read them."""
    members = host_filled_members(source, tu.globals)
    if not members:
        return tu
    device_reads = {n for f in tu.functions if f.kind != "global" for n in _reads(f, members)}
    usable = {n: g for n, g in members.items() if n not in device_reads}
    added: dict[str, tuple[str, ...]] = {}
    functions = []
    for f in tu.functions:
        names = sorted(_reads(f, usable)) if f.kind == "global" else []
        if not names or _assigned(f) & set(names) or _clashes(f, names):
            functions.append(f)
            continue
        params = tuple(A.Param(loc=usable[n].loc, name=n, ty=usable[n].ty) for n in names)
        functions.append(dataclasses.replace(f, params=(*f.params, *params)))
        added[f.name] = tuple(names)
    if not added:
        return tu
    facts = _member_facts(source, tu.file, {n for names in added.values() for n in names})
    sites = [
        _with_facts(_with_args(s, added.get(s.instance or s.kernel, ())), s, facts)
        for s in tu.launch_sites
    ]
    still = {n for f in functions if f.name not in added for n in _reads(f, usable)}
    moved = {n for names in added.values() for n in names} - still
    return dataclasses.replace(
        tu,
        functions=tuple(functions),
        launch_sites=tuple(sites),
        globals=tuple(g for g in tu.globals if g.name not in moved),
    )


def host_filled_members(source: str, tu_globals: tuple[A.GlobalVar, ...]) -> dict[str, A.GlobalVar]:
    """The member globals (``cp__a``) of the constant structs the host writes whole, where
    the struct has a pointer member and each member is a number or a pointer to numbers."""
    written = set(_WRITE.findall(source))
    groups: dict[str, list[A.GlobalVar]] = {}
    for g in tu_globals:
        if g.space == "constant" and g.init is None and "__" in g.name:
            groups.setdefault(g.name.split("__")[0], []).append(g)
    out: dict[str, A.GlobalVar] = {}
    for struct, gs in groups.items():
        if struct not in written or not all(_plain_member(g.ty) for g in gs):
            continue
        if any(isinstance(g.ty, A.PointerType) for g in gs):
            out.update({g.name: g for g in gs})
    return out


def _plain_member(t: A.CType) -> bool:
    if isinstance(t, A.PointerType):
        t = t.pointee
    return isinstance(t, A.ScalarType) and t.name != "void"


def _assigned(f: A.Function) -> set[str]:
    """Names ``f`` assigns, increments or takes the address of (not the memory a pointer
    points to: ``cp__b[i] = v`` writes a buffer, not the member)."""
    out = set()
    for n in walk(f.body):
        target = None
        if isinstance(n, A.Assign):
            target = n.target
        elif isinstance(n, A.Unary) and (n.op.endswith(("++", "--")) or n.op == "&"):
            target = n.operand
        if isinstance(target, A.Name):
            out.add(target.name)
    return out


# ---------------------------------------------------------------------- host values
def _with_facts(site: A.LaunchSite, before: A.LaunchSite, facts: dict) -> A.LaunchSite:
    """``site`` (``before`` with member arguments appended) with the host value and allocation
    of each appended member, where its host facts line up with its arguments."""
    host = before.host
    extra = site.args[len(before.args) :]
    if host is None or not extra or len(host.args) != len(before.args):
        return site
    n = len(host.args)

    def pad(xs: tuple, fill: object) -> tuple:
        return tuple(xs[:n]) + (fill,) * (n - len(xs[:n]))

    vals = tuple(facts.get(a.name, (None, None))[0] for a in extra)  # type: ignore[attr-defined]
    allocs = tuple(facts.get(a.name, (None, None))[1] for a in extra)  # type: ignore[attr-defined]
    new = dataclasses.replace(
        host,
        args=(*host.args, *(v or _unknown() for v in vals)),
        allocs=(*pad(host.allocs, None), *allocs),
        members=(*pad(host.members, None), *(None,) * len(extra)) if host.members else (),
        zeroed=(*pad(host.zeroed, False), *(False,) * len(extra)) if host.zeroed else (),
    )
    return dataclasses.replace(site, host=new)


def _unknown() -> object:
    from cuda2nki.frontend.hostvalue import HostExpr

    return HostExpr(None, None, (), ())


def _member_facts(source: str, path: str, names: set[str]) -> dict[str, tuple]:
    """``member global -> (value, allocation)`` from the host struct the file copies into the
    symbol (``cudaMemcpyToSymbol(cp, &h, ...)``: ``h.n``, ``cudaMalloc(&h.a, ...)``)."""
    from cuda2nki.frontend.hostalloc import _args, _callee, _strip, _walk
    from cuda2nki.frontend.hostinit import assigned_alloc
    from cuda2nki.frontend.hoststructs import _alloc, _value
    from cuda2nki.frontend.hostsyntax import _enclosing

    ev = _evaluator(source, path)
    if ev is None:
        return {}
    out: dict[str, tuple] = {}
    for call in _walk(ev.root):
        if call.type != "call_expression" or not _callee(call).startswith("cudaMemcpyToSymbol"):
            continue
        items = _args(call)
        fnode = _enclosing(call)
        if len(items) < 2 or fnode is None:
            continue
        symbol = (_strip(items[0]).text or b"").decode()
        src = _strip(items[1])
        if src.type == "pointer_expression" and (src.text or b"").startswith(b"&"):
            src = _strip(src.child_by_field_name("argument") or src)
        if src.type != "identifier":
            continue
        base = (src.text or b"").decode()
        for name in names:
            head, _, member = name.partition("__")
            if head != symbol or not member or "__" in member or name in out:
                continue
            try:
                value = _value(ev, fnode, base, member, call.start_byte)
                alloc = _alloc(ev, fnode, base, member) or assigned_alloc(
                    ev, fnode, base, member, call.start_byte
                )
            except RecursionError:
                continue
            out[name] = (value, alloc)
    return out


def _evaluator(source: str, path: str) -> object | None:
    """A host evaluator of the file's preprocessed text."""
    from cuda2nki.frontend.cst import parse_bytes
    from cuda2nki.frontend.hostvals import HostEvaluator
    from cuda2nki.frontend.preprocess import preprocess

    try:
        pre = preprocess(source, path)
    except Exception:  # noqa: BLE001 - a file that does not preprocess gives no host values
        return None
    src = pre.text.encode("utf-8")
    lm = pre.linemap

    def where(n: object) -> str:
        file, line = lm.where(n.start_point[0])  # type: ignore[attr-defined]
        return f"{file}:{line}"

    ev = HostEvaluator(parse_bytes(src).root_node, where, path)
    ev.source = src
    return ev
