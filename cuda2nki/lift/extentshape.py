"""From an extent polynomial to a shape: the larger of two bounds, the N-D row-major split of a
product of sizes by the strides of the offsets, and the relaxations (rounding up, dropping a
``min``) that keep an extent covering every offset."""

from __future__ import annotations

import re

from cuda2nki.lift import affine as af
from cuda2nki.lift.affine import DivAtom, ModAtom, Poly
from cuda2nki.lift.tilebounds import loose_strides


def _bigger(a: Poly, b: Poly) -> Poly | None:
    """The larger of two extents: where their difference has one sign (atoms are non-negative),
    else where one is at least the other at every sample of the sizes."""
    d = a - b
    if all(c >= 0 for _, c in d.terms):
        return a
    if all(c <= 0 for _, c in d.terms):
        return b
    if a.is_const != b.is_const:  # `ptr[0]` beside `ptr[i]` under `i < size / 4`
        return _sized_over_constant(b if a.is_const else a, a if a.is_const else b)
    line = _one_size_line(d)
    if line is not None:  # `c0 + c1*w`: its sign for every size w >= 1 is known exactly
        c0, c1 = line
        if c0 + c1 >= 0 and c1 >= 0:
            return a
        if c0 + c1 <= 0 and c1 <= 0:
            return b
        return None
    names = sorted({str(x) for x in d.atoms() if isinstance(x, str)})
    signs = set()
    for k, v in enumerate((1, 4, 7, 64, 96, 129, 1000)):
        env = {n: v + 4 * ((i * 7 + k) % 5) for i, n in enumerate(names)}
        try:
            signs.add(d.evaluate(env) >= 0)
        except Exception:  # noqa: BLE001 - a division by a size that is 0 here
            return None
    if len(signs) != 1:
        return None
    return a if signs.pop() else b


def _one_size_line(d: Poly) -> tuple[int, int] | None:
    """``(c0, c1)`` when ``d`` is ``c0 + c1*w`` in one size ``w`` (a plain name), else None.
    Such a difference (``p + w`` against ``p + 1``: one row down against one column right) is
    zero at ``w = 1`` and one-signed above, which sampling sizes from 1 up cannot decide."""
    c0, c1, name = 0, 0, None
    for m, c in d.terms:
        if not m:
            c0 += c
        elif len(m) == 1 and isinstance(m[0], str) and name in (None, m[0]):
            name, c1 = m[0], c1 + c
        else:
            return None
    return (c0, c1) if name is not None else None


def _sized_over_constant(sized: Poly, const: Poly) -> Poly | None:
    """``sized`` when it covers the constant extent ``const`` at every size a check would use
    (the program's own accesses assume as much), else None."""
    names = set(re.findall(r"[A-Za-z_]\w*", str(sized)))
    for v in (16, 64, 96, 129, 1000, 4096):
        try:
            if sized.evaluate(dict.fromkeys(names, v)) < const.const_value:
                return None
        except Exception:  # noqa: BLE001 - a name the samples cannot give
            return None
    return sized


def _dims(ext: Poly, offsets: list[Poly], scalars: set[str]) -> tuple[str | int, ...]:
    """Row-major dims of an extent, outermost first, from the strides of the offsets: strides
    ``1, C, T*C`` under an extent ``B*T*C`` are the dims ``[B, T, C]``; an offset that is one
    flat index (``out[idx]``) keeps one flat dim.  The offset with the most dims wins."""
    best: tuple = (_text(ext),)
    for off in offsets:
        strides = _strides(off, scalars)
        got = _split(ext, strides) or _split(ext, loose_strides(strides))
        if got is not None and len(got) > len(best):
            best = got
    return best


def _strides(off: Poly, scalars: set[str]) -> list[Poly]:
    """The distinct coefficients (in parameters) of the offset's index atoms, smallest first."""
    out: list[Poly] = []
    for mono, c in off.terms:
        sizes = [a for a in mono if _is_size(a, scalars)]
        if len(sizes) == len(mono) or c <= 0:
            continue  # a constant or sizes-only term, or a negative one: not a stride
        stride = Poly.const(c)
        for a in sizes:
            stride = stride * Poly.atom(a)
        if stride not in out:
            out.append(stride)
    if any(not x.is_const for x in out):  # `4 * i` beside `row * T`: a vector step, not a dim
        out = [x for x in out if x == af.ONE or not x.is_const]
    return sorted(out, key=lambda p: (len(p.terms[0][0]), p.terms[0][1]))


def _split(ext: Poly, strides: list[Poly]) -> tuple | None:
    """Dims (outermost first): each stride that divides the next kept one starts a dim, and the
    last kept divides ``ext`` (a stride that fits no chain, such as a head's offset inside a row,
    is passed over)."""
    if not strides:
        return None
    dims: list[Poly] = []
    if strides[0] != af.ONE:
        if not strides[0].is_const:
            return None
        dims.append(strides[0])
    last = strides[0]
    for hi in strides[1:]:
        q = af._exact_div(hi, last)
        if q is None or q == af.ONE or q.const_value < 0:
            continue
        dims.append(q)
        last = hi
    q = af._exact_div(ext, last)
    if q is None or q == af.ONE and len(dims) > 0:
        return None
    dims.append(q)
    return tuple(_text(d) for d in reversed(dims))


def _contains(p: Poly, part: Poly) -> bool:
    """Every term of ``part`` is a term of ``p`` with the same coefficient."""
    mine = dict(p.terms)
    return all(mine.get(m) == c for m, c in part.terms)


def _is_size(a: object, scalars: set[str]) -> bool:
    """A size parameter, or a quotient / remainder of sizes (``C / NH``)."""
    if isinstance(a, str):
        return a in scalars
    if isinstance(a, DivAtom | ModAtom):
        return all(_is_size(x, scalars) for x in a.num.top_atoms() | a.den.top_atoms())
    return False


def _relax(p: Poly) -> Poly:
    """``NH * (C / NH)`` is at most ``C``: each such product replaced by its numerator (an
    upper bound, so the extent stays safe)."""
    out = af.ZERO
    for m, c in p.terms:
        rest = list(m)
        term = None
        for a in m:
            if isinstance(a, DivAtom) and a.den.is_const and a.den.const_value > 0:
                k = a.den.const_value
                if c % k == 0:  # 128 * (M / 128) is at most M
                    left = list(rest)
                    left.remove(a)
                    term = Poly(((tuple(left), c // k),)) * a.num
                    break
            if isinstance(a, DivAtom) and len(a.den.terms) == 1 and a.den.terms[0][1] == 1:
                den = list(a.den.terms[0][0])
                left = list(rest)
                left.remove(a)
                if all(left.count(x) >= den.count(x) for x in den):
                    for x in den:
                        left.remove(x)
                    term = Poly(((tuple(left), c),)) * a.num if left else a.num * c
                    break
        out = out + (term if term is not None else Poly(((m, c),)))
    return out


def _round_up(p: Poly) -> Poly:
    """``3*B*T*C - C`` as ``3*B*T*C``: a single largest monomial with the rest negative is an
    upper bound that splits into dims (the buffer is at least as large as the kernel reads)."""
    pos = [(m, c) for m, c in p.terms if c > 0]
    if len(pos) == 1 and pos[0][0] and len(p.terms) > 1:
        return Poly((pos[0],))
    return p


def _text(p: Poly) -> str | int:
    """``p`` as binding text: C expression syntax, a quotient's or remainder's operands
    parenthesized (``((-1+size)/4096)``, where the atom's own spelling drops the parentheses
    of a sum)."""
    return p.const_value if p.is_const else _c_text(p)


def _c_text(p: Poly) -> str:
    return p.text(_atom_text, "+")


def _atom_text(a: object) -> str:
    if isinstance(a, DivAtom | ModAtom):
        op = "/" if isinstance(a, DivAtom) else "%"
        num, den = (_c_text(x) if len(x.terms) < 2 else f"({_c_text(x)})" for x in (a.num, a.den))
        return f"({num}{op}{den})"
    return str(a).replace(" ", "")
