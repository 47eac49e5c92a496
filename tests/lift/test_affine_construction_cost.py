"""Polynomial construction does no repeated work: a monomial's sort key is computed once, and a
polynomial without a remainder atom skips the division-identity rewrite (its terms are already
sorted); the rewrite still applies where a remainder is present."""

from __future__ import annotations

from cuda2nki.lift import affine as af
from cuda2nki.lift.affine import Poly, sym


def test_a_monomials_sort_key_is_computed_once():
    m = ("blockIdx.x", "threadIdx.y")
    first = af._mono_key(m)
    assert first == (2, ("blockIdx.x", "threadIdx.y"))
    assert af._mono_key(m) is first


def test_a_polynomial_without_remainders_is_not_rebuilt():
    p = Poly.from_dict({("i",): 3, ("j", "k"): 2, (): 5})
    assert af._simplify_divmod(p) is p
    assert [m for m, _ in p.terms] == [(), ("i",), ("j", "k")]


def test_the_division_identity_still_applies():
    for a, b in (("i", 8), ("row", 32), ("t", 3)):
        x = sym(a)
        q, r = af.floordiv(x, Poly.const(b)), af.mod(x, Poly.const(b))
        assert q * Poly.const(b) + r == x
        assert Poly.const(2) * (q * Poly.const(b)) + Poly.const(2) * r == Poly.const(2) * x
