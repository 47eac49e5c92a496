"""Source locations of AST nodes, worked out when first read.

Every node the front end builds carries a :class:`~cuda2nki.diagnostics.SourceLoc`, but most
are never read (only diagnostics, dumps and error messages read them).  So the front end hands
out a :class:`LazyLoc`: it records the node's byte span in the parsed text and the file's
:class:`Placer`, and the first read of any field (``line``, ``col``, ``str(loc)``, ``==``,
``hash``, pickling...) maps the span back to the user's file -- through the preprocessor's line
map, in characters for a UTF-8 line -- and stores the five fields on the instance.  A ``LazyLoc``
equals, hashes and orders like the plain ``SourceLoc`` of the same place, pickles and copies
as one, and shows as one.

Two steps are put off.  The AST factories are given :meth:`Placer.at` -- the syntax node's byte
span and the placer, a pending location -- and keep it on the node: only the first read of the
node's ``loc`` builds the ``LazyLoc`` (see ``_PendingLoc`` in :mod:`cuda2nki.frontend.ast`).  Only
the first read of that location's fields places it.

Every tree the front end parses for a file (the main parse, a function parsed again on its own,
the rest blanked out) has the same bytes at the same offsets as the placer's text, apart from
same-width respellings, so one placer serves them all.
"""

from __future__ import annotations

from bisect import bisect_right

import tree_sitter as ts

from cuda2nki.diagnostics import SourceLoc
from cuda2nki.frontend.preprocess import LineMap

Place = tuple[str, int, int, "int | None", "int | None"]  # SourceLoc's fields, in order
# an AST node's location not yet asked for: (byte span of its syntax node, the file's Placer)
PendingLoc = tuple[tuple[int, int], "Placer"]
_FIELDS = ("file", "line", "col", "end_line", "end_col")


class Placer:
    """Maps byte spans of one file's parsed text to places in the user's files.

    Holds the text and the line map only (not the tree, nor the front end's tables), so a
    location not yet read keeps little alive."""

    __slots__ = ("filename", "src", "ascii", "linemap", "_starts", "_lines", "_pos_cache")

    def __init__(self, filename: str, src: bytes, linemap: LineMap) -> None:
        self.filename = filename
        self.src = src
        self.ascii = src.isascii()  # byte columns are character columns
        self.linemap = linemap
        self._starts: list[int] | None = None  # byte offset of each row's start
        self._lines: list[bytes] | None = None  # the rows (for character columns)
        # (row << 32 | column) -> LineMap.pos(row, column): nested nodes share their ends
        self._pos_cache: dict[int, tuple[str, int, int]] = {}

    def loc(self, node: ts.Node) -> SourceLoc:
        """``node``'s location, worked out when first read."""
        return self.lazy(node.byte_range)

    def lazy(self, span: tuple[int, int]) -> SourceLoc:
        """The location of the byte span ``(start, end)``, worked out when first read."""
        loc = _new(LazyLoc)
        d = loc.__dict__
        d["_span"] = span
        d["_placer"] = self
        return loc

    def at(self, node: ts.Node) -> PendingLoc:
        """What an AST node built by the front end's factories records instead of its location
        (one call per AST node: leaner still than :meth:`loc`): the node's byte span and this
        placer.  The node's ``loc`` becomes :meth:`lazy` of it when first read."""
        return (node.byte_range, self)

    def place(self, span: tuple[int, int]) -> Place:
        """The place of the byte span ``(start, end)``."""
        return self.place_points(*self._point(span[0]), *self._point(span[1]))

    def place_points(self, r: int, c: int, er: int, ec: int) -> Place:
        """The place of the span from (row ``r``, byte column ``c``) to (``er``, ``ec``) of the
        parsed text (tree-sitter's ``start_point`` and ``end_point``)."""
        if not self.ascii:
            c, ec = self._char_col(r, c), self._char_col(er, ec)
        lm = self.linemap
        if lm.files is None:  # not changed by the preprocessor
            return (self.filename, r + 1, c + 1, er + 1, ec + 1)
        ex = lm.exact
        if r < len(ex) and er < len(ex) and ex[r] and ex[er]:
            files, lines = lm.files, lm.lines
            f = files[r]
            if files[er] == f:
                return (f, lines[r], c + 1, lines[er], ec + 1)  # type: ignore[index]
        return self._mapped(r, c, er, ec)

    def _point(self, offset: int) -> tuple[int, int]:
        """(row, byte column) of a byte offset, as tree-sitter counts them (rows end at
        ``\\n``)."""
        starts = self._starts
        if starts is None:
            starts = self._starts = _row_starts(self.src)
        r = bisect_right(starts, offset) - 1
        return r, offset - starts[r]

    def _char_col(self, row: int, col: int) -> int:
        if self._lines is None:
            self._lines = self.src.split(b"\n")
        if 0 <= row < len(self._lines):
            return len(self._lines[row][:col].decode("utf-8", "replace"))
        return col

    def _mapped(self, r: int, c: int, er: int, ec: int) -> Place:
        """The place of a span whose rows are not both unchanged original lines."""
        lm = self.linemap
        cache = self._pos_cache
        key = r << 32 | c
        got = cache.get(key)
        if got is None:
            got = cache[key] = lm.pos(r, c)
        f, line, col = got
        eline: int | None
        ecol: int | None
        if er == r and lm.exact_row(r):
            eline, ecol = line, ec + 1
        else:
            key = er << 32 | ec
            got = cache.get(key)
            if got is None:
                got = cache[key] = lm.pos(er, ec)
            ef, eline, ecol = got
            if ef != f:
                eline = ecol = None
        return (f, line, col, eline, ecol)


def _row_starts(src: bytes) -> list[int]:
    starts = [0]
    find = src.find
    i = find(b"\n")
    while i >= 0:
        starts.append(i + 1)
        i = find(b"\n", i + 1)
    return starts


class _Field:
    """A field of a :class:`LazyLoc` not worked out yet: the first read works out all five and
    stores them on the instance, where later reads find them (a non-data descriptor)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, loc: LazyLoc | None, owner: type | None = None) -> object:
        if loc is None:
            return self
        return loc._resolve()[self.name]


class LazyLoc(SourceLoc):
    """A :class:`SourceLoc` whose fields are worked out from a byte span when first read."""

    file = _Field("file")  # type: ignore[assignment]
    line = _Field("line")  # type: ignore[assignment]
    col = _Field("col")  # type: ignore[assignment]
    end_line = _Field("end_line")  # type: ignore[assignment]
    end_col = _Field("end_col")  # type: ignore[assignment]

    def _resolve(self) -> dict[str, object]:
        d = self.__dict__
        placer = d.get("_placer")
        if placer is not None:  # fields first, then the span goes: safe if two threads race
            d.update(zip(_FIELDS, placer.place(d["_span"])))
            d.pop("_placer", None)
            d.pop("_span", None)
        return d

    def __reduce__(self) -> tuple[type, Place]:
        return (SourceLoc, self.key())  # a plain location: nothing of the front end travels

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in zip(_FIELDS, self.key()))
        return f"SourceLoc({fields})"


_new = object.__new__
