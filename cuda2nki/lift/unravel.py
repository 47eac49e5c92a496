"""N-D shapes of tensors walked by a flat index that the kernel takes apart as a mixed radix.

Layout kernels (head split/merge, NCHW permutes) walk one tensor by the flat thread index and
take that index apart into coordinates with ``/`` and ``%`` to address another tensor::

    int d = i % D, h = (i / D) % H, t = (i / (D * H)) % T, b = i / (D * H * T);
    y[((b * H + h) * T + t) * D + d] = x[i];

The coordinates are the digits of ``i`` in the mixed radix ``(B, T, H, D)``, so ``x`` is the
row-major ``[B, T, H, D]`` tensor that ``i`` walks: bound that way, the kernel reads as the
permutation it is, where a flat ``x`` of ``B*T*H*D`` elements leaves a flat access whose stride is
no row length.  The same memory either way: the shape only says how the port reads it.

A digit is ``(i / lo) % (hi / lo)`` (``hi`` absent for the top one).  The spellings normalise to
it: ``i / (D * H)``, ``(i / D) % H``, a remainder taken apart again (``r = i % (H*T*D); h = r /
(T*D); r = r % (T*D)``): ``(i % (lo*R*S)) % (lo*R)`` is ``i % (lo*R)`` and ``(i % (lo*R*S)) / lo``
is ``(i / lo) % (R*S)``.  The place values must form one chain of divisors from 1 to the bound of
``i``; every quotient of neighbours is a dim.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from cuda2nki.lift import affine as af
from cuda2nki.lift.affine import DivAtom, ModAtom, Poly


@dataclass(frozen=True)
class Digit:
    """``(var / lo) % (hi / lo)``; ``hi`` None for the most significant digit."""

    lo: Poly
    hi: Poly | None


def digit_of(p: Poly, flat: Poly) -> Digit | None:
    """``p`` as one digit of the index ``flat``, or None when it is no such thing."""
    if p == flat:
        return Digit(af.ONE, None)
    if len(p.terms) != 1:
        return None
    ((mono, coef),) = p.terms
    if coef != 1 or len(mono) != 1 or not isinstance(mono[0], DivAtom | ModAtom):
        return None
    atom = mono[0]
    inner = digit_of(atom.num, flat)
    if inner is None:
        return None
    place = inner.lo * atom.den
    if inner.hi is not None and af._exact_div(inner.hi, place) is None:
        return None  # the divisor does not split the digit's range
    if isinstance(atom, DivAtom):
        return Digit(place, inner.hi)
    return Digit(inner.lo, place)


def digits(indices: Iterable[Poly], flat: Poly) -> set[Digit] | None:
    """Every digit of ``flat`` the ``indices`` use; None when some quotient or remainder of
    ``flat`` is not a digit (the index is taken apart some other way)."""
    out: set[Digit] = set()
    for idx in indices:
        for a in idx.atoms():  # nested ones too
            if not _of(a, flat):
                continue
            d = digit_of(Poly.atom(a), flat)
            if d is None:
                return None
            out.add(d)
    return out


def permuted(indices: Iterable[Poly], flat: Poly) -> bool:
    """Whether some index recombines digits of ``flat`` in an order other than their place
    values (``out[c * R + r]`` with ``r = i / C``, ``c = i % C``): a layout change, for which the
    flat tensor is worth its N-D shape.  A digit used alone (``bias[i % C]``, ``scale[i / C]``)
    or the digits put back in order is no such thing."""
    for idx in indices:
        coeffs: dict[Digit, Poly] = {}
        for mono, c in idx.terms:
            ds = [a for a in mono if _of(a, flat)]
            if len(ds) != 1:
                continue
            d = digit_of(Poly.atom(ds[0]), flat)
            if d is None:
                continue
            rest = Poly.const(c)
            for a in mono:
                if a is not ds[0]:
                    rest = rest * Poly.atom(a)
            coeffs[d] = coeffs.get(d, af.ZERO) + rest
        order = sorted(coeffs, key=lambda d: _sample(d.lo))
        vals = [_sample(coeffs[d]) for d in order]
        if any(b <= a for a, b in zip(vals, vals[1:])):
            return True
    return False


def _of(a: object, flat: Poly) -> bool:
    return isinstance(a, DivAtom | ModAtom) and a.num.depends_on(flat.top_atoms())


def _sample(p: Poly) -> int:
    """``p`` at distinct sizes (a stand-in order of magnitude for symbolic products)."""
    names = sorted(str(a) for a in p.atoms() if isinstance(a, str))
    try:
        return p.evaluate({n: 61 + 6 * k for k, n in enumerate(names)})
    except Exception:  # noqa: BLE001 - an atom the sample cannot evaluate
        return 0


def radix_shape(found: set[Digit], bound: Poly) -> list[Poly] | None:
    """The dims, most significant first, of the radix whose place values are those of
    ``found`` up to ``bound`` (the number of values of the index); None unless they form one
    chain of divisors with at least two dims."""
    places = {d.lo for d in found} | {d.hi for d in found if d.hi is not None} | {bound}
    places.discard(af.ONE)
    chain = [af.ONE]
    while places:
        nxt = [
            p
            for p in places
            if af._exact_div(p, chain[-1]) is not None
            and all(af._exact_div(q, p) is not None for q in places)
        ]
        if len(nxt) != 1:
            return None
        chain.append(nxt[0])
        places.discard(nxt[0])
    if chain[-1] != bound or len(chain) < 3:
        return None
    dims = [af._exact_div(b, a) for a, b in zip(chain, chain[1:])]
    if any(d is None or d == af.ONE for d in dims):
        return None
    return [d for d in reversed(dims) if d is not None]
