"""Deferred stores (nkisim/deferred.py): stores of loaded or combined tiles into HBM are computed
later, in large rectangles; every way of touching the output must see the stored values, in
program order, bit for bit as a tile-by-tile evaluation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st_

from cuda2nki.nkisim import deferred, simulate_kernel
from cuda2nki.nkisim import isa as nisa
from cuda2nki.nkisim import language as nl
from cuda2nki.nkisim.tensor import NkiTensor

# --------------------------------------------------------------------------- rectangles

box = st_.tuples(st_.integers(0, 9), st_.integers(0, 9), st_.integers(1, 4), st_.integers(1, 4))


def _mask(boxes: list[tuple[int, int, int, int]]) -> np.ndarray:
    m = np.zeros((16, 16), dtype=bool)
    for r0, c0, r1, c1 in boxes:
        m[r0:r1, c0:c1] = True
    return m


@given(st_.lists(box, min_size=1, max_size=20))
def test_rectangles_cover_exactly_the_union_of_the_boxes(spec) -> None:
    boxes = [(r, c, r + h, c + w) for r, c, h, w in spec]
    rects = deferred.rectangles(boxes)
    assert len(rects) <= len(boxes)
    np.testing.assert_array_equal(_mask(rects), _mask(boxes))


def test_rectangles_merge_a_tiling_in_any_order_into_one() -> None:
    tiles = [(r, c, min(r + 4, 10), min(c + 3, 7)) for r in range(0, 10, 4) for c in range(0, 7, 3)]
    rng = np.random.default_rng(0)
    for order in (tiles, tiles[::-1], [tiles[i] for i in rng.permutation(len(tiles))]):
        assert deferred.rectangles(order) == [(0, 0, 10, 7)]
    # a hole keeps the rest apart, and nothing is invented over it
    holed = [t for t in tiles if t != (4, 3, 8, 6)]
    assert not _mask(deferred.rectangles(holed))[4:8, 3:6].any()


# --------------------------------------------------------------------------- kernels


def _tiled(op, order: str, p: int = 8, f: int = 5):
    """A tiled elementwise kernel (``op`` None: a copy of ``a``), tiles visited in ``order``."""

    def kernel(a, b):
        m, n = a.shape
        out = nl.ndarray((m, n), dtype=a.dtype, buffer=nl.shared_hbm)
        tiles = [(r, c) for r in range(0, m, p) for c in range(0, n, f)]
        if order == "columns":
            tiles.sort(key=lambda t: (t[1], t[0]))
        elif order == "reversed":
            tiles.reverse()
        for r, c in tiles:
            rows, cols = min(p, m - r), min(f, n - c)
            x = nl.ndarray((p, f), dtype=a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=x[0:rows, 0:cols], src=a[r : r + rows, c : c + cols])
            if op is not None:
                y = nl.ndarray((p, f), dtype=b.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=y[0:rows, 0:cols], src=b[r : r + rows, c : c + cols])
                z = nl.ndarray((p, f), dtype=a.dtype, buffer=nl.sbuf)
                nisa.tensor_tensor(
                    dst=z[0:rows, 0:cols], data1=x[0:rows, 0:cols], data2=y[0:rows, 0:cols], op=op
                )
                x = z
            nisa.dma_copy(dst=out[r : r + rows, c : c + cols], src=x[0:rows, 0:cols])
        return out

    return kernel


@pytest.fixture
def no_deferral(monkeypatch):
    """Run with every store written at once (the tile-by-tile reference)."""

    def run(kernel, arrays):
        with monkeypatch.context() as m:
            m.setattr(NkiTensor, "defer_write", lambda self, lazy: False)
            return simulate_kernel(kernel, arrays)

    return run


@pytest.fixture
def rect_log(monkeypatch):
    log: list[list] = []
    real = deferred.rectangles

    def spy(boxes):
        out = real(boxes)
        log.append(out)
        return out

    monkeypatch.setattr(deferred, "rectangles", spy)
    return log


@pytest.mark.parametrize("order", ["rows", "columns", "reversed"])
@pytest.mark.parametrize(("name", "op"), [("add", nl.add), ("max", nl.maximum), ("copy", None)])
@pytest.mark.parametrize("shape", [(16, 20), (13, 17), (8, 5)])
def test_tiled_stores_are_one_rectangle_and_exact(
    order, name, op, shape, rect_log, no_deferral
) -> None:
    rng = np.random.default_rng(3)
    a = rng.standard_normal(shape, dtype=np.float32)
    b = rng.standard_normal(shape, dtype=np.float32)
    kernel = _tiled(op, order)
    got = simulate_kernel(kernel, [a, b])
    want = {"add": a + b, "max": np.maximum(a, b), "copy": a}[name]
    np.testing.assert_array_equal(np.asarray(got.outputs), want)
    if shape[0] % 8 == 0 and shape[1] % 5 == 0:
        assert rect_log == [[(0, 0, *shape)]]  # every store deferred, evaluated as one pass
    else:
        # a ragged tile is loaded into part of a fresh tile: that load, and so its store, is
        # not deferred, and the store evaluates the stores collected before it
        assert rect_log and all(len(rects) <= 2 for rects in rect_log)
    ref = no_deferral(kernel, [a, b])
    assert got.trace == ref.trace  # the same instructions, recorded as they were issued
    np.testing.assert_array_equal(np.asarray(ref.outputs), want)


def test_deferred_overflow_raises_no_warning(rect_log) -> None:
    import warnings

    a = np.full((16, 20), 3e38, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = simulate_kernel(_tiled(nl.add, "rows"), [a, a])
    assert np.isposinf(np.asarray(got.outputs)).all()
    assert rect_log == [[(0, 0, 16, 20)]]


def test_bf16_tiles_are_deferred_copies_too(rect_log) -> None:
    import ml_dtypes

    a = np.arange(16 * 20, dtype=np.float32).reshape(16, 20).astype(ml_dtypes.bfloat16)
    got = simulate_kernel(_tiled(None, "rows"), [a, a])
    np.testing.assert_array_equal(np.asarray(got.outputs), a)
    assert rect_log == [[(0, 0, 16, 20)]]


# --------------------------------------------------------------------------- random programs
# A program of steps on a 12 x 14 output: deferrable stores (a tile op of two input tiles at
# some offset), reads of the output into a probe output, direct overwrites, and writes to the
# inputs; the simulator's two outputs must equal a NumPy model of the same steps.

R, C = 12, 14
OPS = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "copy": None}
NL = {"add": nl.add, "subtract": nl.subtract, "multiply": nl.multiply}

step = st_.one_of(
    st_.tuples(
        st_.just("store"),
        st_.sampled_from(sorted(OPS)),
        st_.integers(0, R - 1),
        st_.integers(0, C - 1),
        st_.integers(1, 5),
        st_.integers(1, 6),
        st_.integers(-2, 2),
        st_.integers(-2, 2),
    ),
    st_.tuples(
        st_.sampled_from(["read", "overwrite", "poke_input"]),
        st_.integers(0, R - 1),
        st_.integers(0, C - 1),
        st_.integers(1, 5),
        st_.integers(1, 6),
    ),
)


def _clip(r, c, h, w, dr=0, dc=0):
    """The box and its source box, both inside R x C (None if empty)."""
    h = min(h, R - r, R - (r + dr)) if r + dr >= 0 else 0
    w = min(w, C - c, C - (c + dc)) if c + dc >= 0 else 0
    return (r, c, h, w) if h > 0 and w > 0 else None


def _program_kernel(program):
    def kernel(a, b):
        out = nl.ndarray((R, C), dtype=a.dtype, buffer=nl.shared_hbm)
        probe = nl.ndarray((R, C), dtype=a.dtype, buffer=nl.shared_hbm)
        for s in program:
            kind = s[0]
            if kind == "store":
                _, op, r, c, h, w, dr, dc = s
                bx = _clip(r, c, h, w, dr, dc)
                if bx is None:
                    continue
                r, c, h, w = bx
                x = nl.ndarray((h, w), dtype=a.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=x, src=a[r + dr : r + dr + h, c + dc : c + dc + w])
                if op != "copy":
                    y = nl.ndarray((h, w), dtype=a.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=y, src=b[r + dr : r + dr + h, c + dc : c + dc + w])
                    z = nl.ndarray((h, w), dtype=a.dtype, buffer=nl.sbuf)
                    nisa.tensor_tensor(dst=z, data1=x, data2=y, op=NL[op])
                    x = z
                nisa.dma_copy(dst=out[r : r + h, c : c + w], src=x)
                continue
            _, r, c, h, w = s
            r, c, h, w = _clip(r, c, h, w)
            t = nl.ndarray((h, w), dtype=a.dtype, buffer=nl.sbuf)
            if kind == "read":
                nisa.dma_copy(dst=t, src=out[r : r + h, c : c + w])
                nisa.dma_copy(dst=probe[r : r + h, c : c + w], src=t)
            elif kind == "overwrite":
                nisa.memset(dst=t, value=float(r * C + c))
                nisa.dma_copy(dst=out[r : r + h, c : c + w], src=t)
            else:  # the input changes: loads deferred before must keep the old values
                nisa.memset(dst=t, value=-1.0 - r)
                nisa.dma_copy(dst=a[r : r + h, c : c + w], src=t)
        return out, probe

    return kernel


def _model(program, a, b):
    a = a.copy()
    nan = np.float32(np.nan)
    out = np.full((R, C), nan, np.float32)
    probe = np.full((R, C), nan, np.float32)
    for s in program:
        if s[0] == "store":
            _, op, r, c, h, w, dr, dc = s
            bx = _clip(r, c, h, w, dr, dc)
            if bx is None:
                continue
            r, c, h, w = bx
            x = a[r + dr : r + dr + h, c + dc : c + dc + w]
            if op != "copy":
                x = OPS[op](x, b[r + dr : r + dr + h, c + dc : c + dc + w])
            out[r : r + h, c : c + w] = x
            continue
        kind, r, c, h, w = s
        r, c, h, w = _clip(r, c, h, w)
        if kind == "read":
            probe[r : r + h, c : c + w] = out[r : r + h, c : c + w]
        elif kind == "overwrite":
            out[r : r + h, c : c + w] = r * C + c
        else:
            a[r : r + h, c : c + w] = -1.0 - r
    return out, probe


@settings(max_examples=120, deadline=None)
@given(st_.lists(step, min_size=1, max_size=14))
def test_random_programs_match_the_model(program) -> None:
    rng = np.random.default_rng(len(program))
    a = rng.standard_normal((R, C), dtype=np.float32)
    b = rng.standard_normal((R, C), dtype=np.float32)
    got = simulate_kernel(_program_kernel(program), [a.copy(), b]).outputs
    want = _model(program, a, b)
    np.testing.assert_array_equal(np.asarray(got[0]), want[0])
    np.testing.assert_array_equal(np.asarray(got[1]), want[1])


def test_program_that_overwrites_in_an_order_is_kept_in_that_order(rect_log) -> None:
    # two stores of different offsets over the same box, then a read: the later one wins
    program = [
        ("store", "add", 0, 0, 4, 6, 0, 0),
        ("store", "add", 0, 0, 4, 6, 1, 1),
        ("store", "multiply", 2, 2, 4, 6, 0, 0),
        ("read", 0, 0, 6, 8),
    ]
    rng = np.random.default_rng(7)
    a = rng.standard_normal((R, C), dtype=np.float32)
    b = rng.standard_normal((R, C), dtype=np.float32)
    got = simulate_kernel(_program_kernel(program), [a.copy(), b]).outputs
    want = _model(program, a, b)
    np.testing.assert_array_equal(np.asarray(got[0]), want[0])
    np.testing.assert_array_equal(np.asarray(got[1]), want[1])
    assert len(rect_log) == 3  # each change of key evaluated what came before it
