"""A struct of device pointers in device memory, reached through a pointer parameter.

``struct Params { const float* a; float* b; int n; };`` copied to the device once
(``cudaMemcpy(d_p, &h, sizeof(Params), ...)``) and passed as ``const Params* p`` is read by the
kernel as ``p->a[i]``, ``p->n``, ``(*p).b[i]`` or ``p[0].b[i]``: the struct is one record whose
pointer members are separate buffers.  Held as its bytes
(:meth:`AggregateLowering.blob_of`) it has no NKI form, and
:mod:`cuda2nki.frontend.recordsplit` does not split it (a pointer member has no array form).

Where the kernel only reads the members of that one record, each read of a member is the
member's value, the same for every thread: the parameter becomes one parameter per member,
named and ordered as for a struct passed by value (``p__a``, ``p__b``, ``p__n``; nested
structs flattened, ``p__inner__x``), so that the launch's one argument gives each its host
value and allocation (:mod:`cuda2nki.frontend.hoststructs` follows the argument to the host
struct copied into it).  Refused, with the reason on the parameter, are:

* a write to a member, its address taken, or an increment (the struct is then state);
* a record other than the first (``p[i].a``: each record's pointers are other buffers, an
  array of structs of pointers has no tensor form);
* the parameter used otherwise (passed to a function, compared, cast to other bytes);
* a struct with an array, union or bit-field member, or a pointer to a struct.
"""

from __future__ import annotations

import dataclasses

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.aggregates import AggregateType, flat_name, layout
from cuda2nki.frontend.visit import walk
from cuda2nki.rewrite import transform

#: (member path, byte offset, member type) of one leaf member
Field = tuple[tuple[str, ...], int, A.CType]


def split_pointed(
    fn: A.Function, blobs: dict[str, AggregateType], helpers: list[A.Function] | None = None
) -> A.Function | None:
    """``fn`` with each pointer parameter to a struct of pointers read as one record split into
    one parameter per member; None when it has none.  A parameter that does not split keeps
    the reason in :attr:`A.Param.held_as_bytes`.  A device function of ``helpers`` that the
    kernel passes the pointer to and that only reads the struct in turn gets a variant taking
    the members (appended to ``helpers``)."""
    params: list[A.Param] = []
    body = fn.body
    found = False
    for p in fn.params:
        fields = fields_of(p.ty, blobs)
        if fields is None or not _used(body, p.name):
            params.append(p)
            continue
        found = True
        if helpers is not None:
            body = _split_calls(body, p, fields, helpers)
        got = _rewrite(body, p.name, fields)
        if isinstance(got, str):
            params.append(dataclasses.replace(p, held_as_bytes=got))
            continue
        body = got
        params.extend(
            A.Param(loc=p.loc, name=_flat(p.name, path), ty=_param_type(ty))
            for path, _, ty in fields
        )
    if not found:
        return None
    return dataclasses.replace(fn, params=tuple(params), body=body)


def _used(body: A.Block, name: str) -> bool:
    return any(isinstance(n, A.Name) and n.name == name for n in walk(body))


def _split_calls(
    body: A.Block, p: A.Param, fields: list[Field], helpers: list[A.Function]
) -> A.Block:
    """``body`` with each call that passes ``p`` whole to a device function reading it as
    values calling that function's variant taking the members instead."""
    by_name = {f.name: f for f in helpers if f.kind in ("device", "host_device")}

    def swap(e: object) -> object:
        if not isinstance(e, A.Call) or e.target not in by_name:
            return e
        at = [k for k, a in enumerate(e.args) if isinstance(a, A.Name) and a.name == p.name]
        if len(at) != 1:
            return e
        name = _variant(by_name[e.target], at[0], p.ty, fields, helpers, by_name)
        if name is None:
            return e
        members = [
            A.Name(loc=e.loc, name=_flat(p.name, path), ty=_param_type(ty))  # type: ignore[attr-defined]
            for path, _, ty in fields
        ]
        args = (*e.args[: at[0]], *members, *e.args[at[0] + 1 :])
        return dataclasses.replace(e, func=name, target=name, args=args)

    return transform(body, swap)


def _variant(
    g: A.Function,
    k: int,
    ty: A.CType,
    fields: list[Field],
    helpers: list[A.Function],
    by_name: dict[str, A.Function],
) -> str | None:
    """The name of ``g``'s variant taking parameter ``k`` (a pointer to the same struct) as its
    members, made once; None when ``g`` does not read it as values."""
    if k >= len(g.params) or _unconst(g.params[k].ty) != _unconst(ty):
        return None
    q = g.params[k]
    name = f"{g.name}__{q.name}_members"
    if name in by_name:
        return name
    got = _rewrite(g.body, q.name, fields)
    if isinstance(got, str):
        return None
    params = (
        *g.params[:k],
        *(A.Param(loc=q.loc, name=_flat(q.name, path), ty=_param_type(t)) for path, _, t in fields),
        *g.params[k + 1 :],
    )
    variant = dataclasses.replace(g, name=name, params=params, body=got)
    helpers.append(variant)
    by_name[name] = variant
    return name


def fields_of(ty: A.CType, blobs: dict[str, AggregateType]) -> list[Field] | None:
    """The leaf members of the struct ``ty`` points to, when it has a pointer member and every
    member is a number, a vector, a pointer to numbers or vectors, or a struct of those."""
    if not isinstance(ty, A.PointerType) or not _is_blob(ty.pointee):
        return None
    agg = blobs.get(ty.pointee.name)  # type: ignore[union-attr]
    got = _leaves(agg, 0, ()) if agg is not None else None
    if not got or not any(isinstance(t, A.PointerType) for _, _, t in got):
        return None
    return got


def _leaves(agg: AggregateType, base: int, path: tuple[str, ...]) -> list[Field] | None:
    lay = layout(agg)
    if lay is None or agg.in_bytes:
        return None
    out: list[Field] = []
    for member, mty in agg.fields:
        off = base + lay[0][member]
        if isinstance(mty, AggregateType):
            inner = _leaves(mty, off, (*path, member))
            if inner is None:
                return None
            out.extend(inner)
        elif _plain(mty) or (isinstance(mty, A.PointerType) and _plain(mty.pointee)):
            out.append(((*path, member), off, mty))  # type: ignore[arg-type]
        else:
            return None
    return out


def _rewrite(body: A.Block, name: str, fields: list[Field]) -> A.Block | str:
    """``body`` with each read of a member of record 0 of ``name`` made the member's
    parameter (through a local pointer or reference set once to it, ``Params* q = &p[0];``,
    ``const Params& q = *p;``, too); else why not."""
    from cuda2nki.frontend.recordsplit import _inline_locals

    body = _inline_locals(body, {name})
    why = _written(body, name, fields)
    if why:
        return why

    def swap(e: object) -> object:
        got = _member(e, name, fields)
        if got is None:
            return e
        path, ty = got
        return A.Name(loc=e.loc, name=_flat(name, path), ty=_param_type(ty))  # type: ignore[attr-defined]

    new = transform(body, swap)
    for n in walk(new):
        if isinstance(n, A.Name) and n.name == name:
            return _other_use(body, name, fields)
    return new


def _member(e: object, name: str, fields: list[Field]) -> tuple[tuple[str, ...], A.CType] | None:
    """(path, type) when ``e`` reads one whole member of record 0 of ``name``."""
    from cuda2nki.frontend.recordsplit import locate

    if isinstance(e, A.Unary) and e.op == "*":
        ptr = e.operand
    elif isinstance(e, A.Index) and isinstance(e.index, A.IntLit) and e.index.value == 0:
        ptr = e.base
    else:
        return None
    if not isinstance(getattr(ptr, "ty", None), A.PointerType):
        return None
    place = locate(ptr, {name: []})
    if place is None or place.sub is not None or not _first(place.index):
        return None
    want = ptr.ty.pointee  # type: ignore[union-attr]
    for path, off, ty in fields:
        if off == place.offset and _same(ty, want):
            return path, ty
    return None


def _first(index: A.Expr | None) -> bool:
    return index is None or (isinstance(index, A.IntLit) and index.value == 0)


def _written(body: A.Block, name: str, fields: list[Field]) -> str:
    """Why the members of ``name`` are not plain values: one written, incremented or with
    its address taken ('' when none is)."""
    for n in walk(body):
        target, verb = None, ""
        if isinstance(n, A.Assign):
            target, verb = n.target, "writes"
        elif isinstance(n, A.Unary) and n.op.endswith(("++", "--")):
            target, verb = n.operand, "increments"
        elif isinstance(n, A.Unary) and n.op == "&":
            target, verb = n.operand, "takes the address of"
        got = _member(target, name, fields) if target is not None else None
        if got is not None:
            member = ".".join(got[0])
            return (
                f"the kernel {verb} member '{member}' of the struct '{name}' points to "
                f"(line {n.loc.line}): the struct is state, not a set of buffers"
            )
    return ""


def _other_use(body: A.Block, name: str, fields: list[Field]) -> str:
    """Why ``name`` is not read one member of its first record at a time."""
    from cuda2nki.frontend.recordsplit import locate

    for n in walk(body):
        ptr = n.operand if isinstance(n, A.Unary) and n.op == "*" else None
        ptr = n.base if isinstance(n, A.Index) else ptr
        place = locate(ptr, {name: []}) if isinstance(ptr, A.Expr) else None
        if place is not None and not _first(place.index):
            ptr = next(".".join(p) for p, _, t in fields if isinstance(t, A.PointerType))
            return (
                f"pointer member '{ptr}' in records other than the first of '{name}' (line "
                f"{n.loc.line}): an array of structs whose pointers are separate buffers has "
                "no tensor form"
            )
    for n in walk(body):
        if isinstance(n, A.Call) and any(
            isinstance(m, A.Name) and m.name == name for a in n.args for m in walk(a)
        ):
            return f"'{name}' passed to '{n.func}' (line {n.loc.line})"
    line = next((n.loc.line for n in walk(body) if isinstance(n, A.Name) and n.name == name), 0)
    return f"'{name}' used other than through its members (line {line})"


def _flat(var: str, path: tuple[str, ...]) -> str:
    out = var
    for member in path:
        out = flat_name(out, member)
    return out


def _param_type(ty: A.CType) -> A.CType:
    """A member's parameter type: a pointer keeps its pointee's ``const``, a number drops its
    own (the record is read-only here anyway)."""
    if isinstance(ty, A.PointerType):
        return A.PointerType(pointee=ty.pointee)
    return dataclasses.replace(ty, const=False) if hasattr(ty, "const") else ty  # type: ignore[arg-type]


def _same(a: A.CType, b: A.CType) -> bool:
    return _param_type(a) == _param_type(b) or _unconst(a) == _unconst(b)


def _unconst(t: A.CType) -> A.CType:
    if isinstance(t, A.PointerType):
        return A.PointerType(pointee=_unconst(t.pointee))
    return dataclasses.replace(t, const=False) if hasattr(t, "const") else t  # type: ignore[arg-type]


def _is_blob(t: object) -> bool:
    from cuda2nki.frontend.recordsplit import _is_blob as blob

    return blob(t)


def _plain(t: object) -> bool:
    from cuda2nki.frontend.recordsplit import _plain as plain

    return plain(t)
