"""Square strides: a size that must equal another for the kernel's index arithmetic to be a
row-major product.

The naive GEMM of many tutorials indexes its second matrix ``B[i * K + col]`` while ``col`` runs
over the columns of the output, ``col < M``, and writes ``C[row * M + col]``.  Read literally,
``B`` is a flat buffer whose rows overlap unless ``M == K``; the host always runs it square
(``N = M = K = 2048``).  The evidence that the author means ``M == K``:

* an access ``p[v * S + u]``: a loop variable ``v`` (the contraction) strides by a size ``S``,
  and a thread's global index ``u`` runs to another size ``X`` (a guard or the launch grid);
* another access uses the same ``u`` under a row stride of exactly ``X`` (``q[w * X + u]``),
  so ``X`` is a row's width there.

Then ``X`` is tied to ``S``: the binding says ``X = { tie = "S" }``, and shapes, grid and the
lifter read ``X`` as ``S``.  A host that runs the kernel with different values for the two
sizes keeps them apart (the caller checks that).
"""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.lift import affine as af
from cuda2nki.lift.affine import Poly


def square_ties(fn: A.Function, launch: dict | None) -> dict[str, str]:
    """Size parameter -> the size it must equal, from the accesses of ``fn`` (see the module
    docstring); empty when the index arithmetic is consistent or unreadable."""
    from cuda2nki.lift.extentaccess import _Opaque
    from cuda2nki.lift.extentscan import _Scan

    scan = _Scan(fn, launch)
    try:
        scan.run()
    except (_Opaque, af.BudgetExceeded, RecursionError):
        return {}
    rows = [r for a in scan.accesses if (r := _row(scan, a)) is not None]
    widths = {(u, x) for u, s, _, x in rows if s == x}
    ties: dict[str, set[str]] = {}
    for u, s, v, x in rows:
        if s != x and (u, x) in widths and u.startswith("gid.") and not _thread(v):
            ties.setdefault(x, set()).add(s)
    out = {x: next(iter(ss)) for x, ss in ties.items() if len(ss) == 1}
    return {x: s for x, s in out.items() if s not in out}  # no chains of ties


def _row(scan, a) -> tuple[str, str, str, str] | None:
    """``(u, S, v, X)`` for an offset ``v * S + u`` whose ``u`` runs to the size ``X``."""
    if a.offset is None:
        return None
    off = af.canonical(scan._expand(a.offset), scan.block)
    unit, strided = [], []
    for mono, c in off.terms:
        if c != 1:
            return None
        sizes = [x for x in mono if isinstance(x, str) and x in scan.scalars]
        index = [x for x in mono if x not in sizes]
        if len(index) != 1 or not isinstance(index[0], str) or len(sizes) > 1:
            return None
        (unit if not sizes else strided).append((index[0], sizes[0] if sizes else None))
    if len(unit) != 1 or len(strided) != 1:
        return None
    u, s, v = unit[0][0], strided[0][1], strided[0][0]
    bound = dict(a.bounds).get(u)
    x = _size_of(bound[0] if bound else None, scan.scalars)
    return None if x is None or s is None else (u, s, v, x)


def _size_of(p: Poly | None, scalars: set[str]) -> str | None:
    """The size parameter ``p`` is (also ``16 * (M / 16)``: whole blocks of ``M``)."""
    from cuda2nki.lift.extentshape import _relax

    if p is None:
        return None
    p = _relax(p)
    if len(p.terms) != 1 or p.terms[0][1] != 1 or len(p.terms[0][0]) != 1:
        return None
    x = p.terms[0][0][0]
    return x if isinstance(x, str) and x in scalars else None


def _thread(atom: str) -> bool:
    return atom.startswith(("threadIdx.", "blockIdx.", "gid."))
