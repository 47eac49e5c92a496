"""Server-side syntax highlighting of CUDA and Python source, one list of spans per line.

Pygments (already required by ``rich``) tokenizes the whole file, so a string or comment that
spans lines is coloured right on each of them; the spans use Pygments' short CSS classes
(``k`` keyword, ``s`` string, ``c1`` comment...) styled by :func:`css`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

#: the page's colours for Pygments' short classes (by the first letter, then the exact class)
_COLOURS = {
    "k": "color:#0033b3;font-weight:600",  # keywords and types
    "kt": "color:#7a3e9d;font-weight:600",
    "n": "",
    "nf": "color:#00627a",  # function names
    "nb": "color:#7a3e9d",  # builtins
    "nd": "color:#9e880d",  # decorators
    "s": "color:#067d17",  # strings
    "m": "color:#1750eb",  # numbers
    "c": "color:#8c8c8c;font-style:italic",  # comments
    "cp": "color:#9e880d;font-style:normal",  # preprocessor
    "o": "color:#555",
    "ow": "color:#0033b3;font-weight:600",
}


@dataclass(frozen=True)
class Span:
    cls: str  # a Pygments short class, or "" for plain text
    text: str


def css(scope: str = ".hl") -> str:
    """The rules colouring the spans under ``scope``."""
    return "".join(f"{scope} .{c}{{{style}}}" for c, style in _COLOURS.items() if style)


@lru_cache(maxsize=4)
def _lexer(language: str):
    from pygments.lexers import CudaLexer, PythonLexer

    return CudaLexer(stripnl=False) if language == "cuda" else PythonLexer(stripnl=False)


def _short(ttype) -> str:
    from pygments.token import STANDARD_TYPES

    while ttype not in STANDARD_TYPES:
        ttype = ttype.parent
    cls = STANDARD_TYPES[ttype]
    if cls in _COLOURS:
        return cls
    return cls[:1] if cls[:1] in _COLOURS else ""


def lines(text: str, language: str) -> list[list[Span]]:
    """``text`` (CUDA for ``language == "cuda"``, else Python) as highlighted lines; joining a
    line's spans gives the line back exactly."""
    out: list[list[Span]] = [[]]
    for ttype, value in _lexer(language).get_tokens(text):
        cls = _short(ttype)
        for i, piece in enumerate(value.split("\n")):
            if i:
                out.append([])
            if piece:
                out[-1].append(Span(cls, piece))
    n = len(text.splitlines())
    return (out + [[] for _ in range(n)])[:n]
