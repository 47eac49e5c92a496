"""Sizes the host computes as the product of two others (``n = rows * cols``).

When host sizes too large to simulate are halved (:func:`cuda2nki.lift.infer._shrink`), such a
size follows its factors instead of shrinking alone: a kernel that walks ``n`` elements and
splits the index into a row and a column by ``rows`` reads its row and column tensors (sized by
the factors) and its flat tensors (sized by ``n``) consistently only while ``n == rows * cols``.
"""

from __future__ import annotations


def products(sizes: dict[str, int]) -> dict[str, tuple[str, str]]:
    """The sizes whose value is the product of two others' (each at least 2; one size squared
    counts where no two sizes give it), with those factors (the first pair in name order); a
    factor is never itself such a product."""
    out: dict[str, tuple[str, str]] = {}
    names = sorted(sizes)
    for a in names:
        # two sizes before one squared (equal factors may part while they shrink)
        pairs = sorted(
            ((b, c) for i, b in enumerate(names) for c in names[i:]),
            key=lambda bc: bc[0] == bc[1],
        )
        pairs = [bc for bc in pairs if a not in bc and min(sizes[bc[0]], sizes[bc[1]]) >= 2]
        hit = next((bc for bc in pairs if sizes[bc[0]] * sizes[bc[1]] == sizes[a]), None)
        if hit is not None:
            out[a] = hit
    return {a: bc for a, bc in out.items() if not set(bc) & set(out)}
