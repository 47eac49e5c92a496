"""Tensor shapes from index expressions: the extents of one pointer's accesses.

Each access is an offset polynomial of one symbolically executed thread, with the guard and the
loops around it.  The offsets are affine in the iteration variables, whose ranges come from the
guards (``i < n``) and loop bounds: strides that are products of the inner ranges give an N-D
shape (``A[i * NK + k]`` is ``[ni, NK]``), else the extent of the largest offset (``[n]``); a
tensor walked by a flat index the kernel takes apart as a mixed radix gets that radix
(:mod:`cuda2nki.lift.unravel`).
"""

from __future__ import annotations

from cuda2nki.lift import affine as af
from cuda2nki.lift.affine import Poly
from cuda2nki.lift.unravel import digits, permuted, radix_shape


def _int_or(text: str) -> str | int:
    try:
        from cuda2nki.binding import eval_c_expr

        return int(eval_c_expr(text, {}))
    except Exception:  # noqa: BLE001 - symbolic: keep the expression
        return text


def shape_of_accesses(acc: list, block, ties: dict, every: tuple = ()) -> list | None:
    """The shape of one pointer from its accesses ``acc`` (kind, offset, guard, loops); ``every``
    holds the offsets of all accesses of the kernel, where a flat index is taken apart."""
    shape = _shape(acc, block, ties)
    if shape is not None and len(shape) == 1 and every:
        return unravelled_shape(acc, every, block) or shape
    return shape


def unravelled_shape(acc: list, every: tuple, block) -> list | None:
    """The dims of the mixed radix that ``every`` takes a flat index apart into, when that index
    alone is each offset of ``acc`` (:mod:`cuda2nki.lift.unravel`): a thread's index bounded
    by a guard or loop, or a grid-stride loop's index bounded by its condition."""
    walks = set()
    for _, index, guard, loops in acc:
        idx = af.canonical(index, block)
        var = next(iter(idx.top_atoms()), None)
        if idx == af.sym(var) and var in (ranges := _ranges(guard, loops, block)):
            walks.add((idx, ranges[var]))
            continue
        whole = _whole_hi(idx, [guard, *(lc.guard for lc in loops)], block, set())
        if whole is None or len(idx.terms) < 2:
            return None
        walks.add((idx, whole))
    if len(walks) != 1:
        return None
    flat, bound = walks.pop()
    indices = [af.canonical(i, block) for i in every]
    if not permuted(indices, flat):
        return None
    found = digits(indices, flat)
    dims = radix_shape(found, bound) if found else None
    return None if dims is None else [poly_text(d) for d in dims]


def _ranges(guard, loops, block) -> dict:
    """Upper bounds of the iteration variables of one access: loop extents and the guard's
    bounds that do not depend on the thread."""
    bounds: dict = {lc.var: lc.extent for lc in loops}
    dom = af.domain_of(
        canon_cond(guard, block), set(af.GID) | set(af.THREAD) | set(af.BLOCK) | set(bounds)
    )
    if dom is not None:
        for v, b in dom.bounds.items():
            if len(b.hi) == 1 and not b.hi[0].depends_on(af.THREAD_COORDS):
                bounds[v] = b.hi[0]
    return bounds


def _shape(acc: list, block, ties: dict) -> list | None:
    best = None
    flats = []
    caps: dict = {}  # sizes a row stride bounds (``j < n - 1`` under a stride of 256: n <= 257)
    for _, index, guard, loops in acc:
        s = _shape_of(index, guard, loops, block, ties, caps)
        if s is None and block is not None:  # `blockIdx.x * 48 + threadIdx.x` under r < rows
            s = _shape_of(index, guard, loops, None, ties, caps)
        if s is None:
            continue
        flats.append(_flat_top(index, guard, loops, block))
        if best is None or len(s) > len(best) or _farther(s, best, {**caps, **ties}):
            best = s
    return _covering(best, flats, {**caps, **ties})


def _farther(s: list, best: list, ties: dict) -> bool:
    """Whether 1-D ``s`` reaches past 1-D ``best`` (``p[i + 1]`` beside ``p[i]`` in a
    grid-stride loop, whose flat tops are not taken)."""
    if len(s) != 1 or len(best) != 1 or s == best:
        return False
    return _covers(s, best[0], ties) and not _covers(best, s[0], ties)


def _flat_top(index: Poly, guard, loops, block) -> str | int | None:
    """The largest offset of one access plus one (its flat extent), as text; None if unbounded."""
    idx = af.canonical(index, block)
    bounds = _ranges(guard, loops, block)
    aff = af.affine(idx, set(bounds) | set(af.GID) | set(af.THREAD) | set(af.BLOCK))
    if aff is None or any(v not in bounds for v in aff.coeffs):
        return None
    top = aff.const
    for v, c in aff.coeffs.items():
        if c.is_const and c.const_value < 0:
            continue  # the index is >= 0: the term is largest at 0 (N - 2 - i2 at i2 = 0)
        top = top + c * (bounds[v] - 1)
    return poly_text(top + 1)


def _covering(shape: list | None, flats: list, ties: dict) -> list | None:
    """``shape``, unless some access reaches past it (a stencil's ``A[(i + 1) * N + j]`` under
    ``i < n - 1`` needs ``n`` rows, not ``n - 1``): then one more outer row when that covers
    every access, else the flat extent of the farthest access."""
    flats = [f for f in flats if f is not None]  # an unbounded access cannot be covered
    if shape is None or not flats:
        return shape
    rows = [f"({shape[0]}) + {k}" for k in (0, 1, 2)]
    for cand in rows:
        dims = [_int_or(cand), *shape[1:]]
        if all(_covers(dims, f, ties) for f in flats):
            return shape if cand == rows[0] else [_tidy_dim(cand), *shape[1:]]
    far = [f for f in flats if all(_covers([f], g, ties) for g in flats)]
    return [far[0]] if far else shape


def _covers(dims: list, flat, ties: dict) -> bool:
    """Product of ``dims`` >= ``flat`` at several sample sizes (tied sizes kept to their tie)."""
    import re

    from cuda2nki.binding import eval_c_expr

    texts = [str(d) for d in dims] + [str(flat)]
    names = {w for t in texts for w in re.findall(r"[A-Za-z_]\w*", t)} - {"ceil_div"}
    cap = min(ties.values(), default=None)  # a tied size bounds the indices beside it too
    for v in (3, 17, 64, 130, 1000, 4000):
        env = {n: min(v, ties.get(n, v), cap if cap is not None else v) for n in names}
        try:
            total = 1
            for d in dims:
                total *= int(eval_c_expr(str(d), env))
            if total < int(eval_c_expr(str(flat), env)):
                return False
        except Exception:  # noqa: BLE001 - a size the samples cannot evaluate
            return False
    return True


def _tidy_dim(text: str) -> str | int:
    """``(n - 1) + 1`` as ``n``: the text simplified as a polynomial where it parses as one."""
    import ast as pyast
    import re

    from cuda2nki.lift.extentgeom import _py_poly

    names = set(re.findall(r"[A-Za-z_]\w*", text)) - {"ceil_div"}
    try:
        p = _py_poly(pyast.parse(text, mode="eval").body, names)
    except SyntaxError:
        p = None
    return text if p is None else poly_text(p)


def _shape_of(
    index: Poly, guard, loops, block, ties: dict, caps: dict | None = None
) -> list | None:
    idx = af.canonical(index, block)
    g = guard
    bounds = _ranges(guard, loops, block)
    aff = af.affine(idx, set(bounds) | set(af.GID) | set(af.THREAD) | set(af.BLOCK))
    if aff is None or not aff.coeffs or any(v not in bounds for v in aff.coeffs):
        return _whole_bound(idx, [g, *(lc.guard for lc in loops)], block, set(bounds))
    if aff.const.depends_on(af.THREAD_COORDS):
        return None
    if aff.const == af.ZERO:
        nd = _nd_shape(aff.coeffs, bounds, ties, caps)
        if nd is not None:
            return nd
    unit = [v for v, c in aff.coeffs.items() if c == af.ONE]
    if len(unit) == 1:
        inner = bounds[unit[0]]
        rows = [v for v, c in aff.coeffs.items() if c == inner]
        if rows and len(aff.coeffs) == 2:
            return [poly_text(bounds[rows[0]]), poly_text(inner)]
    top = aff.const
    for v, c in aff.coeffs.items():
        if c.is_const and c.const_value < 0:
            continue  # the index is >= 0: the term is largest at 0 (N - 2 - i2 at i2 = 0)
        top = top + c * (bounds[v] - 1)
    return [poly_text(top + 1)]


def _whole_bound(idx: Poly, guards: list, block, loop_vars: set) -> list | None:
    """``[hi]`` when a guard bounds the whole offset, ``idx < hi`` (grid-stride loops)."""
    hi = _whole_hi(idx, guards, block, loop_vars)
    return None if hi is None else [poly_text(hi)]


def _whole_hi(idx: Poly, guards: list, block, loop_vars: set) -> Poly | None:
    for g in guards:
        for c in _cmps(canon_cond(g, block)):
            if c.op != "<":
                continue
            hi = idx - c.poly
            if (
                not hi.depends_on(af.THREAD_COORDS | af.LAUNCH_SIZES)
                and not ({str(a) for a in hi.atoms()} & loop_vars)
                and not any(isinstance(a, af.OpaqueAtom) for a in hi.atoms())  # a data value
            ):
                return hi
    return None


def _cmps(c) -> list:
    if c.kind == "cmp" and c.cmp is not None:
        return [c.cmp]
    if c.kind == "and":
        return [x for a in c.args for x in _cmps(a)]
    return []


def _nd_shape(coeffs: dict, bounds: dict, ties: dict, caps: dict | None = None) -> list | None:
    """Row-major dims from strides: the unit-stride variable first, then each variable whose
    coefficient is the product of the extents so far.  An extent is the bound of its variable,
    or the next stride when that is a constant or another size (the bound is then tied to it:
    ``A[i * 256 + k]`` with ``k < nk`` is ``[ni, 256]`` and nk is at most 256).  A bound that is
    a size plus a constant (``k < nk - 1``) is not tied: the size is only capped, in ``caps``
    (nk at most 257), for the samples that check the shape covers every access."""
    left = dict(coeffs)
    unit = [v for v, c in left.items() if c == af.ONE]
    if len(unit) != 1:
        return None
    var, stride, dims = unit[0], af.ONE, []
    del left[var]
    pending: dict = {}
    while left:
        ext = bounds[var]
        want = stride * ext
        nxt = [v for v, c in left.items() if c == want]
        if not nxt:
            cands = [(v, c) for v, c in left.items() if _divides(c, stride)]
            if len(cands) != 1:
                return None
            v, c = cands[0]
            ext = _quotient(c, stride)
            if ext is None:
                return None
            b = bounds[var]
            name = _single_name(b)
            if name is not None and ext.is_const:
                pending[name] = ext.const_value
            elif ext.is_const and caps is not None:
                shifted = _name_plus_const(b)
                if shifted is not None:
                    n, c = shifted
                    caps[n] = min(caps.get(n, ext.const_value - c), ext.const_value - c)
            nxt = [v]
            want = c
        dims.append(ext)
        var, stride = nxt[0], want
        del left[var]
    dims.append(bounds[var])
    ties.update(pending)
    return [poly_text(d) for d in reversed(dims)]


def _divides(c: Poly, stride: Poly) -> bool:
    return _quotient(c, stride) is not None


def _quotient(c: Poly, stride: Poly) -> Poly | None:
    if stride == af.ONE:
        return c
    if c.is_const and stride.is_const and stride.const_value:
        q, r = divmod(c.const_value, stride.const_value)
        return Poly.const(q) if r == 0 else None
    return None


def _name_plus_const(p: Poly) -> tuple[str, int] | None:
    """``(n, c)`` for ``p == n + c`` (a size plus a constant), else None."""
    rest = [a for a in p.atoms()]
    if len(rest) != 1:
        return None
    c = p - Poly.atom(rest[0])
    return (str(rest[0]), c.const_value) if c.is_const else None


def _single_name(p: Poly) -> str | None:
    atoms = p.atoms()
    if len(atoms) == 1 and p == Poly.atom(next(iter(atoms))):
        return str(next(iter(atoms)))
    return None


def canon_cond(c, block):
    from cuda2nki.lift.finalize import _map_cond

    return _map_cond(c, lambda p: af.canonical(p, block))


def poly_text(p: Poly) -> str | int:
    from cuda2nki.lift.extentshape import _text  # a quotient of a sum keeps its parentheses

    return _text(p)
