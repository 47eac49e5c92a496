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
from cuda2nki.frontend.unit import UnitContext

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


def test_location_closures_agree_with_the_general_method(monkeypatch):
    expanded = "\n" * 2 + _SRC.split("\n", 2)[2].replace("BLOCK", "256").replace("SCALE", "2.0f")
    orig_init = UnitContext.__init__

    def plain_init(self, *a, **kw):  # noqa: ANN001, ANN002, ANN003
        orig_init(self, *a, **kw)
        self.__dict__.pop("loc", None)  # the general method, not a closure

    for src in (_SRC, expanded):  # macros expanded line for line; an unmapped file
        fast = _locs(parse_source(src, "k.cu"))
        monkeypatch.setattr(UnitContext, "__init__", plain_init)
        plain = _locs(parse_source(src, "k.cu"))
        monkeypatch.undo()
        assert fast == plain
        assert len(fast) > 20
