"""``__has_include(<h>)`` / ``__has_include("h")`` in ``#if`` expressions, answered as a CUDA
build machine would answer them.

Ruling (the preprocessor of a real build sees the toolkit and system headers, we do not):
- a system, toolkit or external library header (``is_system_header``: ``<nvml.h>``,
  ``<cuda_bf16.h>``, ``<vector>``, ``<thrust/sort.h>``) is present: 1;
- any other header is present when it is found as ``#include`` would find it: next to the
  including file, on the include path, or (quoted or not) elsewhere in the source tree;
- otherwise 0 -- the code takes its fallback branch, as it would on a machine without it.
``__has_include_next`` is answered the same way.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from cuda2nki.frontend.headers import find_header, is_system_header

_NAMES = frozenset({"__has_include", "__has_include_next"})


def header_present(spelled: str, includer: str, search: Sequence[str]) -> bool:
    """Whether the header ``spelled`` (the text between the brackets or quotes) is there for a
    file ``includer`` whose include path is ``search``."""
    if not spelled:
        return False
    if is_system_header(spelled):
        return True
    here = os.path.dirname(os.path.abspath(includer)) if includer else os.getcwd()
    for folder in (here, *search):
        if os.path.isfile(os.path.join(folder, spelled)):
            return True
    return find_header(spelled, includer) is not None


def replace_has_include(
    tokens: list, present: Callable[[str], bool], make_int: Callable[[object, bool], object]
) -> list:
    """``tokens`` (pcpp tokens of an ``#if`` expression) with each ``__has_include(...)`` call
    replaced by one integer token made by ``make_int(template_token, answer)``."""
    out: list = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if getattr(tok, "value", None) not in _NAMES:
            out.append(tok)
            i += 1
            continue
        spelled, end = _argument(tokens, i + 1)
        if end is None:  # not a call: left for the evaluator to report
            out.append(tok)
            i += 1
            continue
        out.append(make_int(tok, present(spelled)))
        i = end + 1
    return out


def _argument(tokens: list, start: int) -> tuple[str, int | None]:
    """The header spelled inside the parentheses that open at or after ``start`` (blanks
    skipped), and the index of the closing parenthesis (None when there is no call)."""
    i = start
    while i < len(tokens) and not str(tokens[i].value).strip():
        i += 1
    if i >= len(tokens) or tokens[i].value != "(":
        return "", None
    text = []
    for j in range(i + 1, len(tokens)):
        if tokens[j].value == ")":
            return _spelled("".join(str(t.value) for t in text)), j
        text.append(tokens[j])
    return "", None


def _spelled(inside: str) -> str:
    """``<a/b.h>`` or ``"a/b.h"`` -> ``a/b.h``."""
    s = inside.strip()
    if len(s) >= 2 and (s[0], s[-1]) in (("<", ">"), ('"', '"')):
        return s[1:-1].strip()
    return s
