"""C expression text built from host values: an operand keeps its own grouping.

A host local's value is substituted as text (``inner`` is ``256 - halo * 2``); written into
``(n + inner - 1) / inner`` it must stay one operand, ``(n + (256 - halo * 2) - 1) / (256 -
halo * 2)``, not ``... / 256 - halo * 2``.  Parentheses are added only where C's precedence
needs them, so texts that were right read as before.
"""

from __future__ import annotations

#: binary operators by precedence (higher binds tighter)
_PREC = {
    "*": 10, "/": 10, "%": 10,
    "+": 9, "-": 9,
    "<<": 8, ">>": 8,
    "<": 7, ">": 7, "<=": 7, ">=": 7,
    "==": 6, "!=": 6,
    "&": 5, "^": 4, "|": 3, "&&": 2, "||": 1,
}  # fmt: skip
_OPERAND_END = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_)].@")


def joined(left: str, op: str, right: str) -> str:
    """``left op right`` with each operand parenthesised where its loosest operator binds
    less tightly than ``op`` (or as tightly, on the right: ``a - (b - c)``)."""
    p = _PREC.get(op)
    if p is None:
        return f"{left} {op} {right}"
    lo, ro = loosest(left), loosest(right)
    if lo is not None and lo < p:
        left = f"({left})"
    if ro is not None and ro <= p:
        right = f"({right})"
    return f"{left} {op} {right}"


def loosest(text: str) -> int | None:
    """The precedence of the loosest binary operator outside parentheses in ``text`` (None:
    none, an atom or a parenthesised or called whole); a conditional counts as loosest."""
    depth, best, i, prev = 0, None, 0, ""
    while i < len(text):
        ch = text[i]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0 and ch in "?:":
            return 0
        elif depth == 0 and ch not in " " and prev in _OPERAND_END:
            two = text[i : i + 2]
            op = two if two in _PREC else ch if ch in _PREC else None
            if op is not None:
                best = _PREC[op] if best is None else min(best, _PREC[op])
                i += len(op)
                prev = ""
                continue
        if ch != " ":
            prev = ch
        i += 1
    return best
