"""Index data that picks a row: ``out[idx[i] * C + c]``, ``a[nbr[i] * C + c]``.

A loaded value multiplied by a row length ``C`` (a size parameter, a constant, or a product
of them) and offset by a column inside the row addresses row ``idx[i]`` of an array of
``E / C`` rows, ``E`` its element count.  The value then needs a range below that row count,
whatever the column is (a column outside ``[0, C)`` is the kernel's own out-of-bounds access,
which the range neither causes nor hides).  Used by :func:`cuda2nki.lift.valranges._loads`
(the ``("row", C)`` step) and :func:`cuda2nki.lift.valranges._range` (the row count).
"""

from __future__ import annotations

from collections.abc import Callable

from cuda2nki.frontend import ast as A


def row_split(e: A.Expr, has_load: Callable[[A.Expr], bool]) -> tuple[A.Expr, int | str] | None:
    """(the loaded side, the row length) of ``v * C + col`` / ``col + v * C`` / ``v * C``,
    where only ``v`` loads data and ``C`` is a product of names and positive constants."""
    while isinstance(e, A.Cast):
        e = e.operand
    if isinstance(e, A.Binary) and e.op == "+":
        for mul, col in ((e.left, e.right), (e.right, e.left)):
            got = _scaled(mul, has_load)
            if got is not None and not has_load(col):
                return got
        return None
    return _scaled(e, has_load)


def _scaled(e: A.Expr, has_load: Callable[[A.Expr], bool]) -> tuple[A.Expr, int | str] | None:
    while isinstance(e, A.Cast):
        e = e.operand
    if not (isinstance(e, A.Binary) and e.op == "*"):
        return None
    for v, c in ((e.left, e.right), (e.right, e.left)):
        factors = _size_factors(c)
        if factors and has_load(v) and not has_load(c):
            ints = [f for f in factors if isinstance(f, int)]
            if len(ints) == len(factors):
                n = 1
                for f in ints:
                    n *= f
                return v, n
            return v, " * ".join(str(f) for f in factors)
    return None


def _size_factors(e: A.Expr) -> list[int | str]:
    """The factors of a product of names and positive integer constants, [] for another
    expression."""
    while isinstance(e, A.Cast):
        e = e.operand
    if isinstance(e, A.Binary) and e.op == "*":
        left, right = _size_factors(e.left), _size_factors(e.right)
        return left + right if left and right else []
    if isinstance(e, A.IntLit) and e.value > 0:
        return [e.value]
    if isinstance(e, A.Name):
        return [e.name]
    return []


def row_count(extent: int | str, row: int | str) -> int | str | None:
    """``extent / row`` where ``row`` divides it exactly as written (its factors among the
    extent's top-level factors, or both constants); None otherwise."""
    if isinstance(extent, int) and isinstance(row, int):
        return extent // row if row > 0 and extent % row == 0 else None
    have = _text_factors(str(extent))
    for f in _text_factors(str(row)):
        if f not in have:
            return None
        have.remove(f)
    if all(h.isdigit() for h in have):  # the rows left are a constant count
        n = 1
        for h in have:
            n *= int(h)
        return n
    return have[0] if len(have) == 1 else " * ".join(f"({h})" for h in have)


def _text_factors(text: str) -> list[str]:
    """Top-level factors of a product written as text, each without enclosing parentheses
    (the whole text, one factor, where a sum or a division is at its top level)."""
    depth = 0
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and ch in "+-/%":
            return [_bare(text)]
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "*" and depth == 0:
            out.append(_bare(cur))
            cur = ""
        else:
            cur += ch
    out.append(_bare(cur))
    return out


def _bare(t: str) -> str:
    t = t.strip()
    while t.startswith("(") and t.endswith(")") and _balanced(t[1:-1]):
        t = t[1:-1].strip()
    return t.replace(" ", "")


def _balanced(t: str) -> bool:
    depth = 0
    for ch in t:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0


__all__ = ["row_count", "row_split"]
