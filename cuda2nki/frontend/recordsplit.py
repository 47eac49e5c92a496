"""Arrays of structs whose members differ in type, as one array per member.

``struct Particle { float x, y, z; int cell; };`` reached through a kernel parameter
``Particle* ps`` is held by the front end as its bytes (:meth:`AggregateLowering.blob_of`): each
``ps[i].y`` reads a ``float`` at byte ``16*i + 4``.  No NKI tensor has such a layout (a tensor has
one dtype), so a kernel whose every use of such a parameter reads or writes one member of one
record becomes a kernel with one pointer parameter per member it uses (a structure of arrays):

* ``ps[i].x``, ``ps->cell``, ``(ps + i)->y``, ``(&ps[i])->z`` become ``ps_x[i]``,
  ``ps_cell[0]``, ``ps_y[i]``, ``ps_z[i]`` (the member's dtype, the array's shape);
* a nested struct member is flattened with joined names (``bodies[i].pos.x`` is
  ``bodies_pos_x[i]``), a vector member keeps its vector type (``float3 pos`` is
  ``float3* bodies_pos``: a record tensor ``[n, 3]``), and an array member ``float w[4]`` is
  ``float* ps_w`` of ``4*n`` elements, ``ps[i].w[k]`` its element ``4*i + k`` (an extra axis);
* a local pointer set once from such an address (``Particle* p = &ps[i];``,
  ``Particle& p = ps[i];``) is replaced by that address where it is used.

Member ``m`` of parameter ``p`` is named ``p_m`` (underscores added on a clash) and carries
``record = "p"`` (:attr:`A.Param.record`): the launch passes one argument for all of them
(:func:`cuda2nki.lift.hostargs.slots`).  Whole-record copies are member by member already (the
front end writes them so), so they split too.  A struct with a union, a bit field or a pointer
member, and a parameter used otherwise (passed to a function, cast, copied as bytes), stay as
they are: the kernel is then refused with its reason (C2N2301).  One struct of device pointers
read as values (``p->a[i]``, ``p->n``) is split first, by :mod:`cuda2nki.frontend.pointedsplit`.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.aggregates import AggregateType, layout
from cuda2nki.frontend.typesys import sizeof
from cuda2nki.frontend.unions import BitField
from cuda2nki.frontend.visit import walk
from cuda2nki.rewrite import transform

_I32 = A.ScalarType(name="int32")


@dataclass(frozen=True)
class Leaf:
    """One member of a struct in memory: its path of member names, byte offset and type (a
    scalar, a vector, or a 1-D array of them)."""

    path: tuple[str, ...]
    offset: int
    ty: A.CType
    #: bytes between its elements: a member of the structs of an array member
    #: (``struct Box { Nbr nbr[26]; }``: ``nbr[k].id``) steps over whole inner structs
    stride: int = 0

    @property
    def count(self) -> int:
        return self.ty.dims[0] if isinstance(self.ty, A.ArrayType) else 1  # type: ignore[return-value]

    @property
    def elem(self) -> A.CType:
        return self.ty.elem if isinstance(self.ty, A.ArrayType) else self.ty

    def holds(self, offset: int, ty: A.CType) -> int | None:
        """The element of this member at byte ``offset`` read as ``ty``, else None."""
        size = self.stride or sizeof(self.elem)
        if not size or not _same(self.elem, ty):
            return None
        k, rest = divmod(offset - self.offset, size)
        return k if rest == 0 and 0 <= k < self.count else None


@dataclass(frozen=True)
class Place:
    """A pointer into a split parameter: record ``index`` of ``param``, then ``offset`` bytes."""

    param: str
    index: A.Expr | None
    offset: int
    #: then ``sub`` more inner structs of ``sub_size`` bytes (an element of an array member
    #: of structs chosen at run time)
    sub: A.Expr | None = None
    sub_size: int = 0


def leaves(
    agg: AggregateType,
    base: int = 0,
    path: tuple[str, ...] = (),
    blobs: dict[str, AggregateType] | None = None,
) -> list[Leaf] | None:
    """The members of ``agg`` (nested structs flattened) in layout order; None for a union, a
    bit field, a pointer member or a member of unknown layout."""
    lay = layout(agg)
    if lay is None or agg.in_bytes:
        return None
    out: list[Leaf] = []
    for member, mty in agg.fields:
        off = base + lay[0][member]
        if isinstance(mty, AggregateType):
            got = leaves(mty, off, (*path, member), blobs)
            if got is None:
                return None
            out.extend(got)
        elif _plain(mty) or (
            isinstance(mty, A.ArrayType) and len(mty.dims) == 1 and _plain(mty.elem)
        ):
            out.append(Leaf((*path, member), off, mty))  # type: ignore[arg-type]
        elif (inner := _struct_array(mty, blobs)) is not None:
            got = _array_of_structs(inner, mty.dims[0], off, (*path, member), blobs)  # type: ignore[union-attr]
            if got is None:
                return None
            out.extend(got)
        else:
            return None
    return out


def _struct_array(t: object, blobs: dict[str, AggregateType] | None) -> AggregateType | None:
    """The struct of a 1-D array member of structs, else None."""
    if not (isinstance(t, A.ArrayType) and len(t.dims) == 1 and isinstance(t.dims[0], int)):
        return None
    elem = t.elem
    if isinstance(elem, AggregateType):
        return elem
    return (blobs or {}).get(elem.name) if _is_blob(elem) else None  # type: ignore[union-attr]


def _array_of_structs(
    agg: AggregateType, n: int, off: int, path: tuple[str, ...], blobs: dict | None
) -> list[Leaf] | None:
    """The members of an array member of ``n`` structs ``agg``: each one array over the
    array's elements, ``sizeof`` the inner struct apart (an inner array member: None)."""
    inner = leaves(agg, 0, (), blobs)
    lay = layout(agg)
    if inner is None or lay is None or any(leaf.count != 1 for leaf in inner):
        return None
    return [
        Leaf(
            (*path, *leaf.path),
            off + leaf.offset,
            A.ArrayType(elem=leaf.ty, dims=(n,)),
            stride=lay[1],
        )  # fmt: skip
        for leaf in inner
    ]


def records_as_members(
    functions: list[A.Function], blobs: dict[str, AggregateType]
) -> list[A.Function]:
    """``functions`` with each kernel's arrays of mixed-type structs split into one array per
    member (see the module doc); a kernel that does not split is unchanged."""
    variants: list[A.Function] = list(functions)  # device functions split for their callers
    out = [_split(f, blobs, variants) if f.kind == "global" else f for f in functions]
    return out + variants[len(functions) :]


def _split(
    fn: A.Function, blobs: dict[str, AggregateType], helpers: list[A.Function] | None = None
) -> A.Function:
    from cuda2nki.frontend.pointedsplit import split_pointed
    from cuda2nki.frontend.structcopy import fold_param_copies

    fn = split_pointed(fn, blobs, helpers) or fn  # one struct of device pointers behind a pointer
    fn = fold_param_copies(fn)  # `Params q = p;`: q's members are p's
    got = _split_members(fn, blobs)
    return got if got is not fn else _with_reasons(fn, blobs)


def _with_reasons(fn: A.Function, blobs: dict[str, AggregateType]) -> A.Function:
    """``fn`` with each struct-array parameter that stays bytes saying why (the refusal names
    it)."""
    params = []
    for p in fn.params:
        agg = _struct_of(p.ty, blobs)
        why = None if agg is None else (why_bytes(agg, blobs) or _other_use(fn, p.name))
        why = p.held_as_bytes or why
        params.append(dataclasses.replace(p, held_as_bytes=why) if why else p)
    return (
        dataclasses.replace(fn, params=tuple(params))
        if any(p.held_as_bytes for p in params)
        else fn
    )


def why_bytes(agg: AggregateType, blobs: dict, path: str = "") -> str | None:
    """Why ``agg`` has no member arrays (a union, a bit field, a pointer member, an array of
    structs or of unknown size), None when it has."""
    if agg.union:
        return f"member '{path}', a union" if path else "a union"
    for member, mty in agg.fields:
        name = f"{path}.{member}" if path else member
        if isinstance(mty, AggregateType):
            got = why_bytes(mty, blobs, name)
            if got:
                return got
        elif isinstance(mty, A.PointerType):
            return f"pointer member '{name}'"
        elif isinstance(mty, A.ArrayType) and not (
            (len(mty.dims) == 1 and _plain(mty.elem))
            or (
                (inner := _struct_array(mty, blobs)) is not None
                and _array_of_structs(inner, 1, 0, (), blobs) is not None
            )  # fmt: skip
        ):
            return f"member '{name}', an array of several dimensions or of nested arrays"
        elif _is_blob(mty):  # a union or a struct with bit fields, held as its bytes
            what = "an anonymous member" if "__anon" in member else f"member '{name}'"
            return f"{what}, a union or a struct with bit fields"
        elif isinstance(mty, BitField):
            return f"bit field '{name}'"
        elif not (_plain(mty) or isinstance(mty, A.ArrayType)):
            return f"member '{name}' of a type with no array form"
    return None


def _other_use(fn: A.Function, name: str) -> str:
    """How ``fn`` uses the struct array ``name`` other than through one member of one record."""
    for n in walk(fn.body):
        if isinstance(n, A.Call) and any(
            isinstance(m, A.Name) and m.name == name for a in n.args for m in walk(a)
        ):
            return f"'{name}' passed to '{n.func}' (line {n.loc.line})"
    line = next((n.loc.line for n in walk(fn.body) if isinstance(n, A.Name) and n.name == name), 0)
    return f"'{name}' used other than through its members (line {line})"


def _struct_of(ty: A.CType, blobs: dict[str, AggregateType]) -> AggregateType | None:
    if not isinstance(ty, A.PointerType):
        return None
    t = ty.pointee
    return blobs.get(t.name) if _is_blob(t) else None  # type: ignore[union-attr]


def _split_members(fn: A.Function, blobs: dict[str, AggregateType]) -> A.Function:
    found = {p.name: _leaves_of(p.ty, blobs) for p in fn.params}
    split = {name: got for name, got in found.items() if got}
    if not split:
        return fn
    body = _inline_locals(fn.body, set(split))
    held = _held_records(body, blobs)
    used: dict[tuple[str, tuple[str, ...]], Leaf] = {}
    names: dict[tuple[str, tuple[str, ...]], str] = {}
    taken = {p.name for p in fn.params} | {
        n.name for n in walk(fn.body) if isinstance(n, A.VarDecl)
    }

    def name_of(var: str, leaf: Leaf) -> str:
        key = (var, leaf.path)
        if key not in names:
            cand = "_".join((var, *leaf.path))
            while cand in taken:
                cand += "_"
            taken.add(cand)
            names[key] = cand
            used[key] = leaf
        return names[key]

    def element(place: Place, leaf: Leaf, k: A.Expr, loc: object) -> A.Expr:
        """Element ``k`` of member ``leaf`` at ``place``: of a member array, or of the local
        standing for a member of a struct held in a local."""
        if place.param in held:
            local = A.Name(loc=loc, name=name_of(place.param, leaf), ty=leaf.ty)  # type: ignore[arg-type]
            if leaf.count == 1:
                return dataclasses.replace(local, ty=leaf.elem)
            return A.Index(loc=loc, base=local, index=k, ty=leaf.elem)  # type: ignore[arg-type]
        ty = _with_const(leaf.elem, _is_const(fn, place.param))
        ptr = A.Name(loc=loc, name=name_of(place.param, leaf), ty=A.PointerType(pointee=ty))  # type: ignore[arg-type]
        index = _element(place.index, leaf.count, k, loc)
        return A.Index(loc=loc, base=ptr, index=index, ty=ty)  # type: ignore[arg-type]

    every = {**split, **held}
    body = _copies(body, every, held, element, name_of)

    def swap(e: object) -> object:
        got = _access(e, every)
        if got is None:
            return e
        place, leaf, k = got
        return element(place, leaf, k, e.loc)  # type: ignore[attr-defined]

    new_body = transform(body, swap)
    if any(isinstance(n, A.Name) and n.name in every for n in walk(new_body)):
        return fn  # used otherwise than through its members: stays whole (and refused)
    params: list[A.Param] = []
    for p in fn.params:
        if p.name not in split:
            params.append(p)
            continue
        const = _is_const(fn, p.name)
        size = sizeof(p.ty.pointee)  # type: ignore[union-attr]
        restrict = isinstance(p.ty, A.PointerType) and p.ty.restrict
        for leaf in split[p.name]:
            key = (p.name, leaf.path)
            if key in used:
                ptr = A.PointerType(pointee=_with_const(leaf.elem, const), restrict=restrict)
                at = (leaf.offset, size, leaf.count)
                if leaf.stride:
                    at = (*at, leaf.stride)
                params.append(
                    A.Param(loc=p.loc, name=names[key], ty=ptr, record=p.name, record_at=at)
                )
    return dataclasses.replace(fn, params=tuple(params), body=new_body)


def _held_records(body: A.Block, blobs: dict[str, AggregateType]) -> dict[str, list[Leaf]]:
    """The locals holding a struct as its bytes (``auto pi = p[i];``), declared once: each is
    replaced by one local per member."""
    decls: dict[str, list[A.VarDecl]] = {}
    for n in walk(body):
        if isinstance(n, A.VarDecl):
            decls.setdefault(n.name, []).append(n)
    out: dict[str, list[Leaf]] = {}
    for name, ds in decls.items():
        d = ds[0]
        if len(ds) == 1 and d.storage == "local" and _is_blob(d.ty) and d.ty.name in blobs:  # type: ignore[union-attr]
            got = leaves(blobs[d.ty.name], blobs=blobs)  # type: ignore[union-attr]
            if got:
                out[name] = got
    return out


def _copies(body: A.Block, every: dict[str, list[Leaf]], held: dict[str, list[Leaf]],
            element: object, name_of: object) -> A.Block:  # fmt: skip
    """``body`` with each declaration of a struct local and each whole-struct assignment
    between struct locals and struct arrays written member by member."""

    def ref(e: A.Expr | None) -> Place | None:
        if isinstance(e, A.Name) and e.name in held:
            return Place(e.name, None, 0)
        if isinstance(e, A.Index) and _is_blob(e.ty):
            place = locate(A.Unary(loc=e.loc, op="&", operand=e, ty=A.PointerType(pointee=e.ty)),
                           every)  # fmt: skip
            return place if place is not None and place.offset == 0 else None
        if isinstance(e, A.Unary) and e.op == "*" and _is_blob(e.ty):
            place = locate(e.operand, every)
            return place if place is not None and place.offset == 0 else None
        return None

    def copy(dst: Place, src: Place, loc: object) -> list[A.Stmt] | None:
        if every[dst.param] != every[src.param]:
            return None
        out: list[A.Stmt] = []
        for leaf in every[dst.param]:
            for k in range(leaf.count):
                lit = A.IntLit(loc=loc, value=k, ty=_I32)  # type: ignore[arg-type]
                t, v = element(dst, leaf, lit, loc), element(src, leaf, lit, loc)  # type: ignore[operator]
                assign = A.Assign(loc=loc, op="=", target=t, value=v, ty=t.ty)  # type: ignore[arg-type]
                out.append(A.ExprStmt(loc=loc, expr=assign))  # type: ignore[arg-type]
        return out

    def stmt(s: A.Stmt) -> list[A.Stmt] | None:
        if isinstance(s, A.VarDecl) and s.name in held:
            here = Place(s.name, None, 0)
            decls: list[A.Stmt] = [
                A.VarDecl(loc=s.loc, name=name_of(s.name, leaf), ty=_with_const(leaf.ty, False))  # type: ignore[operator]
                for leaf in held[s.name]
            ]
            if s.init is None:
                return decls
            src = ref(s.init)
            more = None if src is None else copy(here, src, s.loc)
            return None if more is None else decls + more
        if isinstance(s, A.ExprStmt) and isinstance(s.expr, A.Assign) and s.expr.op == "=":
            dst, src = ref(s.expr.target), ref(s.expr.value)
            if dst is not None and src is not None:
                return copy(dst, src, s.loc)
        return None

    def block(x: object) -> object:
        if not isinstance(x, A.Block):
            return x
        out: list[A.Stmt] = []
        for s in x.body:
            got = stmt(s)
            out.extend([s] if got is None else got)
        return dataclasses.replace(x, body=tuple(out))

    return transform(body, block)


def _leaves_of(ty: A.CType, blobs: dict[str, AggregateType]) -> list[Leaf] | None:
    if not isinstance(ty, A.PointerType):
        return None
    t = ty.pointee
    if not (_is_blob(t) and t.name in blobs):
        return None
    return leaves(blobs[t.name], blobs=blobs)


def _access(e: object, split: dict[str, list[Leaf]]) -> tuple[Place, Leaf, A.Expr] | None:
    """(place, member, element within the member) of a read or write of one member."""
    if isinstance(e, A.Unary) and e.op == "*":
        ptr, k = e.operand, None
    elif isinstance(e, A.Index) and _points_to_plain(e.base.ty):
        ptr, k = e.base, e.index
    else:
        return None
    if not _points_to_plain(ptr.ty):
        return None
    place = locate(ptr, split)
    if place is None:
        return None
    elem = ptr.ty.pointee  # type: ignore[union-attr]
    for leaf in split[place.param]:
        j = leaf.holds(place.offset, elem)
        if j is None:
            continue
        if place.sub is not None:  # an element of an array member of structs: its number
            if leaf.stride != place.sub_size or not (k is None or _is_zero(k)):
                return None
            return place, leaf, place.sub if j == 0 else _add(place.sub, _lit(j, e.loc))  # type: ignore[attr-defined]
        if k is None:
            return place, leaf, _lit(j, e.loc)  # type: ignore[attr-defined]
        if leaf.count == 1 and not _is_zero(k):
            return None
        if not (_is_zero(k) or _member_decay(ptr) or _inside(k, j, leaf.count)):
            return None  # words of a record read through a cast: may cross into other members
        return place, leaf, k if j == 0 else _add(k, _lit(j, k.loc))
    return None


def _member_decay(ptr: A.Expr) -> bool:
    """Whether ``ptr`` is an array member decayed to a pointer, as the front end spells
    ``r.vals`` (a cast of the record's byte address); a program's own cast of a record's
    address (``((unsigned*)&recs[i])[w]``) reads its words, across members."""
    if not isinstance(ptr, A.Cast):
        return False
    inner = ptr.operand.ty
    return isinstance(inner, A.PointerType) and getattr(inner.pointee, "name", "") in (
        "uint8",
        "int8",
    )


def _inside(k: A.Expr, j: int, count: int) -> bool:
    """Whether the constant element ``k`` past element ``j`` stays within the member."""
    return isinstance(k, A.IntLit) and 0 <= j + k.value < count


def _lit(v: int, loc: object) -> A.IntLit:
    return A.IntLit(loc=loc, value=v, ty=_I32)  # type: ignore[arg-type]


def _is_zero(k: A.Expr) -> bool:
    return isinstance(k, A.IntLit) and k.value == 0


def locate(e: A.Expr, split: dict[str, list[Leaf]]) -> Place | None:
    """Where the pointer ``e`` points within a split parameter, None if not into one (or not
    at a known byte offset)."""
    if isinstance(e, A.Name):
        return Place(e.name, None, 0) if e.name in split else None
    if isinstance(e, A.Cast) and isinstance(e.to, A.PointerType):
        return locate(e.operand, split)
    if isinstance(e, A.Unary) and e.op == "&":
        inner = e.operand
        if isinstance(inner, A.Name) and _is_blob(inner.ty):  # a struct held in a local
            return Place(inner.name, None, 0) if inner.name in split else None
        if isinstance(inner, A.Unary) and inner.op == "*":
            return locate(inner.operand, split)
        if isinstance(inner, A.Index):
            return _step(locate(inner.base, split), inner.base, inner.index)
        return None
    if isinstance(e, A.Binary) and e.op in ("+", "-") and isinstance(e.left.ty, A.PointerType):
        step = (
            e.right if e.op == "+" else A.Unary(loc=e.loc, op="-", operand=e.right, ty=e.right.ty)
        )
        return _step(locate(e.left, split), e.left, step)
    return None


def _step(place: Place | None, base: A.Expr, k: A.Expr) -> Place | None:
    """``place`` moved by ``k`` elements of ``base``'s pointee: whole records, or bytes of a
    member at a constant count."""
    if place is None or not isinstance(base.ty, A.PointerType):
        return None
    pointee = base.ty.pointee
    if _is_blob(pointee) and place.offset:  # an inner struct of an array member
        size = sizeof(pointee)
        if place.sub is not None and place.sub_size != size:
            return None
        sub = k if place.sub is None else _add(place.sub, k)
        return dataclasses.replace(place, sub=sub, sub_size=size or 0)
    if _is_blob(pointee):
        return Place(place.param, k if place.index is None else _add(place.index, k), 0)
    size = sizeof(pointee)
    if isinstance(k, A.IntLit) and size:
        return dataclasses.replace(place, offset=place.offset + size * k.value)
    return None


def _inline_locals(body: A.Block, split: set[str]) -> A.Block:
    """``body`` with each local pointer into a split parameter (``Particle* p = &ps[i];``)
    replaced by its initial value in the statements after it, where neither it nor a
    variable its value reads is assigned (or has its address taken) in them."""

    def block(x: object) -> object:
        if not isinstance(x, A.Block):
            return x
        stmts = list(x.body)
        for t, s in enumerate(stmts):
            if not _pointer_into(s, split):
                continue
            rest = A.Block(loc=x.loc, body=tuple(stmts[t + 1 :]))
            changed = _assigned_names(rest)
            if s.name in changed or any(isinstance(n, A.Name) and n.name in changed
                                        for n in walk(s.init)):  # fmt: skip
                continue
            value = s.init

            def sub(y: object, name: str = s.name, value: object = value) -> object:
                return value if isinstance(y, A.Name) and y.name == name else y

            stmts[t + 1 :] = transform(rest, sub).body
            stmts[t] = A.Block(loc=s.loc, body=())
        return dataclasses.replace(x, body=tuple(stmts))

    return transform(body, block)


def _pointer_into(s: object, split: set[str]) -> bool:
    return (
        isinstance(s, A.VarDecl)
        and s.storage == "local"
        and isinstance(s.ty, A.PointerType)
        and _is_blob(s.ty.pointee)
        and s.init is not None
        and locate(s.init, {k: [] for k in split}) is not None
    )


def _assigned_names(body: A.Block) -> set[str]:
    out: set[str] = set()
    for n in walk(body):
        target = None
        if isinstance(n, A.Assign):
            target = n.target
        elif isinstance(n, A.Unary) and (n.op.endswith(("++", "--")) or n.op == "&"):
            target = n.operand  # incremented, or its address taken: may change out of sight
        elif isinstance(n, A.VarDecl):
            out.add(n.name)  # declared again: another variable from there on
        if isinstance(target, A.Name):
            out.add(target.name)
    return out


def _element(index: A.Expr | None, count: int, k: A.Expr, loc: object) -> A.Expr:
    """``count * index + k`` (``index`` None: record 0)."""
    if index is None:
        return k
    if count != 1:
        index = A.Binary(loc=loc, op="*", left=A.IntLit(loc=loc, value=count, ty=_I32),  # type: ignore[arg-type]
                         right=index, ty=index.ty)  # fmt: skip
    if isinstance(k, A.IntLit) and k.value == 0:
        return index
    return _add(index, k)


def _add(a: A.Expr, b: A.Expr) -> A.Expr:
    return A.Binary(loc=a.loc, op="+", left=a, right=b, ty=a.ty)


def _is_blob(t: object) -> bool:
    """A struct held as its bytes (see :meth:`AggregateLowering.blob_of`)."""
    return (
        type(t) is A.VectorType
        and t.base.name == "uint8"
        and not re.fullmatch(r"u?char[1-4]", t.name)
    )


def _plain(t: object) -> bool:
    return isinstance(t, A.ScalarType) or (type(t) is A.VectorType and not _is_blob(t))


def _points_to_plain(t: object) -> bool:
    return isinstance(t, A.PointerType) and _plain(t.pointee)


def _same(a: object, b: object) -> bool:
    return _with_const(a, False) == _with_const(b, False)  # type: ignore[arg-type]


def _with_const(t: A.CType, const: bool) -> A.CType:
    return dataclasses.replace(t, const=const) if hasattr(t, "const") else t  # type: ignore[arg-type]


def _is_const(fn: A.Function, name: str) -> bool:
    p = next(p for p in fn.params if p.name == name)
    return bool(getattr(getattr(p.ty, "pointee", None), "const", False))
