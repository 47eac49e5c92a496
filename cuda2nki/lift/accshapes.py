"""Tensor shapes from the accesses of one symbolically executed thread.

Each access is a flat offset, affine in the thread coordinates and loop variables, whose
ranges come from guards (``i < n``) and loop bounds.  Strides that are products of the extents
so far give a row-major N-D shape (``A[i * NK + k]``: ``[ni, NK]``); else the shape is the
extent of the largest offset, widened where another access reaches past it.
"""

from __future__ import annotations

from cuda2nki.lift import affine as af
from cuda2nki.lift.affine import Poly


def _shape(acc: list, block, ties: dict) -> list | None:
    best = None
    flats = []
    for _, index, guard, loops in acc:
        s = _shape_of(index, guard, loops, block, ties)
        if s is None and block is not None:  # `blockIdx.x * 48 + threadIdx.x` under r < rows
            s = _shape_of(index, guard, loops, None, ties)
        if s is None:
            continue
        flats.append(_flat_top(index, guard, loops, block))
        if best is None or len(s) > len(best):
            best = s
    return _covering(best, flats, ties)


def _flat_top(index: Poly, guard, loops, block) -> str | int | None:
    """The largest offset of one access plus one (its flat extent), as text; None if unbounded."""
    idx = af.canonical(index, block)
    bounds: dict = {lc.var: lc.extent for lc in loops}
    dom = af.domain_of(
        _canon_cond(guard, block), set(af.GID) | set(af.THREAD) | set(af.BLOCK) | set(bounds)
    )
    if dom is not None:
        for v, b in dom.bounds.items():
            if len(b.hi) == 1 and not b.hi[0].depends_on(af.THREAD_COORDS):
                bounds[v] = b.hi[0]
    aff = af.affine(idx, set(bounds) | set(af.GID) | set(af.THREAD) | set(af.BLOCK))
    if aff is None or any(v not in bounds for v in aff.coeffs):
        return None
    top = aff.const
    for v, c in aff.coeffs.items():
        if c.is_const and c.const_value < 0:
            continue  # the index is >= 0: the term is largest at 0 (N - 2 - i2 at i2 = 0)
        top = top + c * (bounds[v] - 1)
    return _text(top + 1)


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

    from cuda2nki.lift.extents import _py_poly

    names = set(re.findall(r"[A-Za-z_]\w*", text)) - {"ceil_div"}
    try:
        p = _py_poly(pyast.parse(text, mode="eval").body, names)
    except SyntaxError:
        p = None
    return text if p is None else _text(p)


def _shape_of(index: Poly, guard, loops, block, ties: dict) -> list | None:
    idx = af.canonical(index, block)
    g = guard
    bounds: dict = {lc.var: lc.extent for lc in loops}
    dom = af.domain_of(
        _canon_cond(g, block), set(af.GID) | set(af.THREAD) | set(af.BLOCK) | set(bounds)
    )
    if dom is not None:
        for v, b in dom.bounds.items():
            if len(b.hi) == 1 and not b.hi[0].depends_on(af.THREAD_COORDS):
                bounds[v] = b.hi[0]
    aff = af.affine(idx, set(bounds) | set(af.GID) | set(af.THREAD) | set(af.BLOCK))
    if aff is None or not aff.coeffs or any(v not in bounds for v in aff.coeffs):
        return _whole_bound(idx, [g, *(lc.guard for lc in loops)], block, set(bounds))
    if aff.const.depends_on(af.THREAD_COORDS):
        return None
    if aff.const == af.ZERO:
        nd = _nd_shape(aff.coeffs, bounds, ties)
        if nd is not None:
            return nd
    unit = [v for v, c in aff.coeffs.items() if c == af.ONE]
    if len(unit) == 1:
        inner = bounds[unit[0]]
        rows = [v for v, c in aff.coeffs.items() if c == inner]
        if rows and len(aff.coeffs) == 2:
            return [_text(bounds[rows[0]]), _text(inner)]
    top = aff.const
    for v, c in aff.coeffs.items():
        if c.is_const and c.const_value < 0:
            continue  # the index is >= 0: the term is largest at 0 (N - 2 - i2 at i2 = 0)
        top = top + c * (bounds[v] - 1)
    return [_text(top + 1)]


def _whole_bound(idx: Poly, guards: list, block, loop_vars: set) -> list | None:
    """``[hi]`` when a guard bounds the whole offset, ``idx < hi`` (grid-stride loops)."""
    for g in guards:
        for c in _cmps(_canon_cond(g, block)):
            if c.op != "<":
                continue
            hi = idx - c.poly
            if not hi.depends_on(af.THREAD_COORDS | af.LAUNCH_SIZES) and not (
                {str(a) for a in hi.atoms()} & loop_vars
            ):
                return [_text(hi)]
    return None


def _cmps(c) -> list:
    if c.kind == "cmp" and c.cmp is not None:
        return [c.cmp]
    if c.kind == "and":
        return [x for a in c.args for x in _cmps(a)]
    return []


def _nd_shape(coeffs: dict, bounds: dict, ties: dict) -> list | None:
    """Row-major dims from strides: the unit-stride variable first, then each variable whose
    coefficient is the product of the extents so far.  An extent is the bound of its variable,
    or the next stride when that is a constant or another size (the bound is then tied to it:
    ``A[i * 256 + k]`` with ``k < nk`` is ``[ni, 256]`` and nk is at most 256)."""
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
            nxt = [v]
            want = c
        dims.append(ext)
        var, stride = nxt[0], want
        del left[var]
    dims.append(bounds[var])
    ties.update(pending)
    return [_text(d) for d in reversed(dims)]


def _divides(c: Poly, stride: Poly) -> bool:
    return _quotient(c, stride) is not None


def _quotient(c: Poly, stride: Poly) -> Poly | None:
    if stride == af.ONE:
        return c
    if c.is_const and stride.is_const and stride.const_value:
        q, r = divmod(c.const_value, stride.const_value)
        return Poly.const(q) if r == 0 else None
    return None


def _single_name(p: Poly) -> str | None:
    atoms = p.atoms()
    if len(atoms) == 1 and p == Poly.atom(next(iter(atoms))):
        return str(next(iter(atoms)))
    return None


def _int_or(text: str) -> str | int:
    try:
        from cuda2nki.binding import eval_c_expr

        return int(eval_c_expr(text, {}))
    except Exception:  # noqa: BLE001 - symbolic: keep the expression
        return text


def _canon_cond(c, block):
    from cuda2nki.lift.finalize import _map_cond

    return _map_cond(c, lambda p: af.canonical(p, block))


def _text(p: Poly) -> str | int:
    return p.const_value if p.is_const else str(p).replace(" ", "")
