"""Parses remembered for a while: a migrated file is parsed once to port its kernels and once
more per kernel check, with the same text and options; inside :func:`remembering_parses`
those later parses return the translation unit of the first (a file whose macros expand to
large stencils takes many seconds to preprocess, a time every check of it paid again).

A parse is the same when its text, file name, ``-D`` values, include directories, template
arguments, the macros whose ``-D`` value wins (:func:`.sizemacros.defines_win`) and the tree
searched for headers (:func:`.headers.searching_tree`) are; the files it read are taken not to
change while the scope is active (a batch job's file).  Translation units are immutable, so
one is shared as it is.  Outside the scope nothing is remembered.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

#: how many parses a scope keeps (the port's and the checks' option sets of one file)
_KEEP = 8
#: how many results about parsed files it keeps (a few per kernel of a file)
_KEEP_ABOUT = 256


class _Scope:
    def __init__(self) -> None:
        self.parses: OrderedDict[Hashable, Any] = OrderedDict()
        self.about: OrderedDict[Hashable, tuple[Any, bool, Any]] = OrderedDict()


_MEMO: ContextVar[_Scope | None] = ContextVar("cuda2nki_remembered_parses", default=None)


@contextmanager
def remembering_parses() -> Iterator[None]:
    """While active, a parse like one before it returns that parse's translation unit."""
    token = _MEMO.set(_Scope())
    try:
        yield
    finally:
        _MEMO.reset(token)


def parse_key(
    text: str,
    filename: str,
    defines: Mapping[str, str] | None,
    dirs: tuple[str, ...],
    templates: Mapping[str, str] | None,
) -> Hashable:
    """What makes two parses the same (see the module's note)."""
    from cuda2nki.frontend.headers import _TREE
    from cuda2nki.frontend.sizemacros import _FORCED

    return (
        text,
        filename,
        tuple(sorted((defines or {}).items())),
        dirs,
        tuple(sorted((templates or {}).items())),
        _FORCED.get(),
        _TREE.get(),
    )


def remembered(key: Callable[[], Hashable], parse: Callable[[], Any]) -> Any:
    """``parse()``, or what it returned for the same ``key()`` earlier in the active scope."""
    scope = _MEMO.get()
    if scope is None:
        return parse()
    memo = scope.parses
    k = key()
    if k in memo:
        memo.move_to_end(k)
        return memo[k]
    got = memo[k] = parse()
    while len(memo) > _KEEP:
        memo.popitem(last=False)
    return got


def remembered_about(owner: Any, key: Hashable, compute: Callable[[], Any]) -> Any:
    """``compute()`` for ``key`` about the object ``owner`` (a translation unit: by identity,
    kept alive with the entry), or what it returned or the diagnostic it raised for them
    earlier in the active scope (a binding inferred while porting, needed again for the port's
    record).  Outside the scope, ``compute()``."""
    from cuda2nki.diagnostics import DiagnosticError

    scope = _MEMO.get()
    if scope is None:
        return compute()
    memo = scope.about
    k = (id(owner), key)
    got = memo.get(k)
    if got is None or got[0] is not owner:
        try:
            got = (owner, True, compute())
        except DiagnosticError as exc:  # raised again, as often as asked
            got = (owner, False, exc)
        memo[k] = got
        while len(memo) > _KEEP_ABOUT:
            memo.popitem(last=False)
    if not got[1]:
        raise got[2]
    return got[2]
