"""The front end's fast paths build exactly what the plain code builds."""

from __future__ import annotations

import dataclasses
import difflib

from hypothesis import given
from hypothesis import strategies as st

from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_source
from cuda2nki.frontend.preprocess import (
    _common_prefix,
    _common_suffix,
    _matching_blocks,
    _middle_columns,
)

_CLASSES = [
    c
    for c in vars(A).values()
    if isinstance(c, type) and dataclasses.is_dataclass(c) and c.__module__ == A.__name__
]


def _required(cls: type) -> dict[str, object]:
    out: dict[str, object] = {}
    for i, f in enumerate(dataclasses.fields(cls)):
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            out[f.name] = f"v{i}"
    return out


def test_every_ast_class_has_a_factory_building_the_same_instance():
    assert len(_CLASSES) > 30
    for cls in _CLASSES:
        kw = _required(cls)
        made, built = getattr(A.fast, cls.__name__)(**kw), cls(**kw)
        assert type(made) is cls
        assert made == built
        assert list(made.__dict__.items()) == list(built.__dict__.items())


def test_factories_take_the_same_keywords_as_the_constructors():
    name = A.fast.Name(loc=None, ty=None, name="x")
    assert name == A.Name(loc=None, ty=None, name="x")
    try:
        A.fast.Name(None, None, "x")  # type: ignore[misc]
    except TypeError:
        pass
    else:
        raise AssertionError("factories are keyword-only, like the dataclasses")


def _prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    p = 0
    while p < n and a[p] == b[p]:
        p += 1
    return p


def _suffix(a: str, b: str, floor: int) -> int:
    n = max(min(len(a), len(b)) - floor if len(b) >= floor else min(len(a), len(b)), 0)
    s = 0
    while s < n and a[-1 - s] == b[-1 - s]:
        s += 1
    return s


_TEXT = st.text(alphabet="ab (x)\u00e9", max_size=12)


@given(_TEXT, _TEXT, _TEXT, st.integers(0, 14))
def test_common_prefix_and_suffix_match_the_character_loops(base, x, y, floor):
    for a, b in ((base + x, base + y), (x + base, y + base)):
        assert _common_prefix(a, b) == _prefix(a, b)
        assert _common_suffix(a, b, floor) == _suffix(a, b, floor)


_RUNS = st.text(alphabet="ab (x)*+", max_size=24)


@given(_RUNS, _RUNS, _RUNS)
def test_matching_blocks_are_difflibs(a, b, shared):
    for x, y in ((a, b), (a + shared, shared + b), (shared + a + shared, b + shared)):
        sm = difflib.SequenceMatcher(None, x, y, autojunk=False)
        assert _matching_blocks(x, y) == [tuple(m) for m in sm.get_matching_blocks() if m[2]]


def _columns_one_by_one(prefix: int, split: int, blocks: list[tuple[int, int, int]]) -> list[int]:
    out = []
    for col0 in range(prefix, split):
        mapped = prefix
        for a, b, size in blocks:
            if col0 < a:
                break
            if col0 < a + size:
                mapped = b + (col0 - a)
                break
            mapped = b + size
        out.append(mapped + 1)
    return out


@given(_RUNS, _RUNS, st.integers(0, 6))
def test_middle_columns_match_the_column_by_column_map(a, b, prefix):
    blocks = [(i + prefix, j + prefix, k) for i, j, k in _matching_blocks(a, b) if k >= 2]
    split = prefix + len(a)
    assert _middle_columns(prefix, split, tuple(blocks)) == _columns_one_by_one(
        prefix, split, blocks
    )


_SRC = """\
#define BLOCK 256
#define SCALE 2.0f
__global__ void k(float* out, const float* in, int n) {
    int i = blockIdx.x * BLOCK + threadIdx.x;   // macro on this row
    if (i < n) {
        out[i] = in[i] * SCALE;
    }
    float v = in[0] * SCALE   // a span from a row a macro changed to an unchanged one
              + 1.0f;
    out[0] = v + (1.0f +
                  SCALE);   // and from an unchanged row to a changed one
}
void launch(float* o, const float* p, int n) { k<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(o, p, n); }
"""


def _locs(tu: A.TranslationUnit) -> list[A.SourceLoc]:
    out: list[A.SourceLoc] = []

    def walk(o: object) -> None:
        if isinstance(o, (tuple, list)):
            for x in o:
                walk(x)
        elif isinstance(o, A.Node):
            out.append(o.loc)
            for f in dataclasses.fields(o):
                walk(getattr(o, f.name))

    walk(tu.functions)
    walk(tu.launch_sites)
    return out


_MORE_SOURCES = (
    # CRLF line ends, tabs, UTF-8 in comments and strings before and inside the kernel
    "// h\u00e9llo \u2014 caf\u00e9\r\n__global__ void k(float* o, int n) {\r\n"
    "\tint i = threadIdx.x; /* \u00fc */ if (i < n) o[i] = 1.0f; }\r\n",
    # a function-like macro spanning lines, #if, an include-free header section
    "#define MUL(a, b) \\\n  ((a) * (b))\n#if 1\n__global__ void k(float* o) {\n"
    "  o[threadIdx.x] = MUL(2.0f,\n    3.0f) + MUL(1.0f, 1.0f);\n}\n#endif\n"
    "void h(float* o) { k<<<1, 32>>>(o); }\n",
)


def test_lazy_locations_match_the_tree_sitter_points(monkeypatch):
    """Each location worked out from a byte span equals the one placed from the points
    tree-sitter gives the node (rows and byte columns), on unmapped files, files mapped line
    for line, files with multi-line macros, CRLF and UTF-8."""
    from cuda2nki.frontend.cst import parse_bytes
    from cuda2nki.frontend.locs import Placer

    def eager(self, span):  # noqa: ANN001, ANN202 - placed at once, from the points of the span
        points = {}  # byte span -> tree-sitter's (start, end) points, from a parse of its own
        stack = [parse_bytes(self.src).root_node]
        while stack:
            n = stack.pop()
            points[n.byte_range] = (*n.start_point, *n.end_point)
            stack.extend(n.children)
        return A.SourceLoc(*self.place_points(*points[span]))

    expanded = "\n" * 2 + _SRC.split("\n", 2)[2].replace("BLOCK", "256").replace("SCALE", "2.0f")
    for src in (_SRC, expanded, *_MORE_SOURCES):
        lazy = _locs(parse_source(src, "k.cu"))
        monkeypatch.setattr(Placer, "lazy", eager)  # every location, pending or asked for
        plain = _locs(parse_source(src, "k.cu"))
        monkeypatch.undo()
        assert [type(x).__name__ for x in lazy] == ["LazyLoc"] * len(lazy)
        assert [x.key() for x in lazy] == [x.key() for x in plain]
        assert lazy == plain
        assert len(lazy) > 10


def test_byte_offsets_give_tree_sitter_rows_and_columns():
    from cuda2nki.frontend.cst import parse_bytes
    from cuda2nki.frontend.locs import Placer
    from cuda2nki.frontend.preprocess import LineMap

    for text in (_SRC, *_MORE_SOURCES, "", "\n\n", "int x;", "int x;\r\n\r\nint y;\n"):
        src = text.encode()
        placer = Placer("k.cu", src, LineMap(default_file="k.cu"))
        stack = [parse_bytes(src).root_node]
        while stack:
            n = stack.pop()
            assert placer._point(n.start_byte) == tuple(n.start_point)
            assert placer._point(n.end_byte) == tuple(n.end_point)
            stack.extend(n.children)


def test_a_lazy_location_behaves_as_a_plain_one():
    import copy
    import pickle

    from cuda2nki.diagnostics import SourceLoc

    tu = parse_source(_SRC, "k.cu")
    loc = tu.functions[0].body.body[0].loc
    lazy_again = tu.functions[0].body.body[0].loc
    plain = SourceLoc(loc.file, loc.line, loc.col, loc.end_line, loc.end_col)
    assert (loc.file, loc.line, loc.col) == ("k.cu", 4, 9)
    assert loc == plain and plain == loc and hash(loc) == hash(plain) and loc is lazy_again
    assert str(loc) == "k.cu:4:9" and repr(loc) == repr(plain)
    assert not (loc < plain) and loc <= plain and loc >= plain
    assert loc < SourceLoc("k.cu", 5, 1) and SourceLoc("k.cu", 3, 9) < loc
    for copied in (pickle.loads(pickle.dumps(loc)), copy.copy(loc), copy.deepcopy(loc)):
        assert type(copied) is SourceLoc and copied == plain
    moved = dataclasses.replace(loc, file="other.cu")
    assert moved.key() == ("other.cu", *plain.key()[1:])
    try:
        loc.line = 7  # type: ignore[misc]
    except dataclasses.FrozenInstanceError:
        pass
    else:
        raise AssertionError("a location must stay frozen")
    assert loc.line == 4
    # an unread location compares and hashes by its place too
    a, b = (parse_source(_SRC, "k.cu").functions[0].body.body[0].loc for _ in range(2))
    assert a == b and len({a, b, plain}) == 1


def _statement(src: str = _SRC) -> A.Node:
    return parse_source(src, "k.cu").functions[0].body.body[0]


def test_a_node_places_its_location_when_first_asked():
    """The front end's nodes keep their syntax node's span until ``loc`` is read; then it is
    the placer's lazy location, stored on the node (later reads find that one)."""
    node = _statement()
    assert "_at" in node.__dict__ and "loc" not in node.__dict__
    loc = node.loc
    assert type(loc).__name__ == "LazyLoc" and node.loc is loc
    assert "loc" in node.__dict__ and "_at" not in node.__dict__
    assert (loc.file, loc.line, loc.col) == ("k.cu", 4, 9)
    given = A.SourceLoc("x.cu", 2, 3)  # a factory given a location keeps that one
    assert A.fast.Break(loc=given).loc is given and A.fast.Break(loc=given) == A.Break(loc=given)
    # the class takes a pending location as its factory does
    from cuda2nki.frontend.cst import parse_bytes
    from cuda2nki.frontend.locs import Placer
    from cuda2nki.frontend.preprocess import LineMap

    src = b"int x;\n  break;"
    stmt = parse_bytes(src).root_node.children[-1]
    placer = Placer("b.cu", src, LineMap(default_file="b.cu"))
    built = (A.Break(loc=placer.at(stmt)), A.fast.Break(loc=placer.at(stmt)))
    assert all("_at" in b.__dict__ for b in built) and built[0] == built[1]
    assert built[0].loc.key() == ("b.cu", 2, 3, 2, 9)


def test_a_node_with_a_pending_location_pickles_copies_and_compares_as_a_placed_one():
    import copy
    import pickle

    for how in (
        lambda n: pickle.loads(pickle.dumps(n)),
        copy.copy,
        copy.deepcopy,
        lambda n: dataclasses.replace(n, name="j"),
    ):
        node = _statement()
        assert "_at" in node.__dict__
        got = how(node)
        assert "_at" not in got.__dict__ and "_at" not in node.__dict__
        assert got.loc == node.loc and got.loc.key() == ("k.cu", 4, 9, 4, 10)  # `i`
        assert got == node or how is not copy.copy
    pickled = pickle.dumps(_statement())
    assert b"Placer" not in pickled and b"LazyLoc" not in pickled  # nothing of the front end
    # unread locations still make equal nodes equal, and different places different
    assert _statement() == _statement() and hash(_statement()) == hash(_statement())
    moved = _statement("\n" + _SRC)
    assert moved != _statement() and moved.loc.line == 5
