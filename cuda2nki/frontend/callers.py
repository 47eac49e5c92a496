"""Callers in other files: a launcher defined beside its kernel and called from another file.

A tree often keeps each kernel with the host function that launches it (``scale.cu`` with
``void launch_scale(float *y, const float *x, int n)``) and calls those launchers from a
``main.cu`` that only declares them; the sizes are in ``main.cu``.  When no call in the
launcher's own file passes a parameter, :mod:`cuda2nki.frontend.hostvals` evaluates the
arguments of the calls found in the other source files near it (its directory, searched
recursively up to :data:`cuda2nki.frontend.launchers.MAX_FILES` files), each file read once per
process while it is unchanged.  Evidence cites ``main.cu:LINE``.  The other files are read as
written (their own ``#define``s expanded); their launchers' callers are not searched in turn.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import tree_sitter as ts

from cuda2nki.frontend.deps import note

#: source files read to find a launcher's callers
_SOURCES = frozenset({".cu", ".cpp", ".cc", ".cxx", ".c"})
#: a file larger than this is not read for callers
_MAX_BYTES = 2_000_000


def foreign_calls(path: str | None, fname: str) -> list[tuple[ts.Node, Any]]:
    """The calls of function ``fname`` in the other source files near ``path``, each with the
    evaluator of its file: ``[(call, evaluator)]``, in file order."""
    from cuda2nki.frontend.launchers import _candidates, _stamp

    if not path or not fname:
        return []
    given = Path(path)
    if not given.is_file():
        return []
    me = given.resolve()
    pattern = re.compile(rb"\b" + re.escape(fname.encode()) + rb"\b")
    out: list[tuple[ts.Node, Any]] = []
    for p in _candidates(given.parent):  # named as the file is (evidence reads the same)
        if p.resolve() == me or p.suffix.lower() not in _SOURCES:
            continue
        stamp = _stamp(p)
        if stamp[1] < 0 or stamp[1] > _MAX_BYTES:
            continue
        ev = _evaluator(str(p), stamp)
        if ev is None or not pattern.search(ev.source):
            continue
        calls = [c for c in ev.calls(fname) + ev.pointer_calls(fname) if _is_call_in_function(c)]
        if calls:
            note([p])  # a result taking these calls' values depends on the file
        out += [(c, ev) for c in calls]
    return out


def foreign_evaluators(path: str | None, word: str) -> list[Any]:
    """The evaluators of the other source files near ``path`` whose text holds ``word`` (as a
    whole word), in file order: where a struct member allocated in another file is looked
    for (:mod:`cuda2nki.frontend.hoststructs`)."""
    from cuda2nki.frontend.launchers import _candidates, _stamp

    if not path or not word or not Path(path).is_file():
        return []
    me = Path(path).resolve()
    pattern = re.compile(rb"\b" + re.escape(word.encode()) + rb"\b")
    out = []
    for p in _candidates(Path(path).parent):
        if p.resolve() == me or p.suffix.lower() not in _SOURCES:
            continue
        stamp = _stamp(p)
        if stamp[1] < 0 or stamp[1] > _MAX_BYTES:
            continue
        ev = _evaluator(str(p), stamp)
        if ev is not None and pattern.search(ev.source):
            note([p])  # a result taken from this file depends on it
            out.append(ev)
    return out


def _is_call_in_function(call: ts.Node) -> bool:
    p = call.parent
    while p is not None and p.type != "function_definition":
        p = p.parent
    return p is not None


@lru_cache(maxsize=256)
def _evaluator(path: str, stamp: tuple[int, int]) -> Any:
    """The host evaluator of the file at ``path`` (None when it cannot be read)."""
    from cuda2nki.frontend.cst import parse_bytes
    from cuda2nki.frontend.hostvals import HostEvaluator
    from cuda2nki.frontend.preprocess import preprocess

    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    try:
        pre = preprocess(text, path)
    except Exception:  # noqa: BLE001 - a file that does not preprocess gives no callers
        return None
    src = pre.text.encode("utf-8")
    root = parse_bytes(src).root_node
    lm = pre.linemap

    def where(n: ts.Node) -> str:
        file, line = lm.where(n.start_point[0])
        return f"{file}:{line}"

    ev = HostEvaluator(root, where)
    ev.source = src
    return ev
