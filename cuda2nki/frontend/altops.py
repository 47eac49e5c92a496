"""C++ alternative operator tokens (``not``, ``and``, ``or``, ``not_eq``, ``bitand``, ...).

In C++ (and so in every ``.cu`` file) these eleven words are the operators they spell, not
identifiers.  The front end reads operators from their spelling, so each is respelled as its
symbol, padded with blanks to the word's length so that every column stays where it was.
String and character literals and comments are left as they are."""

from __future__ import annotations

import re

#: the alternative tokens of C++ [lex.digraph] and the operators they are
ALTERNATIVES = {
    "and": "&&",
    "or": "||",
    "not": "!",
    "not_eq": "!=",
    "bitand": "&",
    "bitor": "|",
    "xor": "^",
    "compl": "~",
    "and_eq": "&=",
    "or_eq": "|=",
    "xor_eq": "^=",
}

_WORD_RE = re.compile(r"\b(?:" + "|".join(sorted(ALTERNATIVES, key=len, reverse=True)) + r")\b")
# literals and comments first, so that a word inside one is consumed with it and kept
_TOKEN_RE = re.compile(
    r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|//[^\n]*|/\*.*?(?:\*/|$)|' + _WORD_RE.pattern,
    re.S,
)


def has_alternatives(text: str) -> bool:
    """Whether ``text`` may hold an alternative token (a quick test before :func:`respell`)."""
    return _WORD_RE.search(text) is not None


def respell(text: str) -> str:
    """``text`` with each alternative operator token outside literals and comments replaced by
    its symbol, padded to the same length."""

    def one(m: re.Match[str]) -> str:
        word = m.group(0)
        sym = ALTERNATIVES.get(word)
        return word if sym is None else sym.ljust(len(word))

    return _TOKEN_RE.sub(one, text)
