"""Legacy tiled-kernel paths without per-element work (issue 19): index grids kept as affine
forms until read, tail masks known all true from them, ``nl.store`` as the current API's DMA,
``affine_range`` write stamps kept as boxes, and ``nl.zeros`` filled in place.  Each gives the
values, diagnostics and trace records of the per-element path."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.nkisim import affine_stamps, fastpath, isa, language, load_kernel, simulate_kernel
from cuda2nki.nkisim.affine_stamps import StampBoxes
from cuda2nki.nkisim.tensor import WrittenBoxes

LEG = "from neuronxcc import nki\nimport neuronxcc.nki.language as nl\n\n"


def _grids():
    i_p = language.arange(128)[:, None]
    i_f = language.arange(4, 40, 3)[None, :]
    i_c = language.arange(7)
    return i_p, i_f, i_c


EXPRS = [
    lambda p, f, c, k: k * 128 + p,
    lambda p, f, c, k: p + k * 64,
    lambda p, f, c, k: f * 2 - 3,
    lambda p, f, c, k: k - p,
    lambda p, f, c, k: (p - k) * -2,
    lambda p, f, c, k: c * k + 1,
    lambda p, f, c, k: (k * 128 + p) * 4 + f,
]


@pytest.mark.parametrize("expr", range(len(EXPRS)))
@pytest.mark.parametrize("k", [0, 3, -2])
def test_affine_grids_equal_the_element_by_element_values(expr, k):
    i_p, i_f, i_c = _grids()
    got = EXPRS[expr](i_p, i_f, i_c, k)
    want = EXPRS[expr](i_p.arr, i_f.arr, i_c.arr, k)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.arr, want)
    assert got.arr.dtype == np.int64


def test_grid_arithmetic_with_a_number_computes_no_values():
    i_p, i_f, _ = _grids()
    e = 5 * 128 + i_p
    assert e._arr is None and e.shape == (128, 1)
    assert (e * 2 - 1)._arr is None
    np.testing.assert_array_equal(e.arr[:, 0], np.arange(640, 768))


COMPARES = [
    lambda g, c: g < c,
    lambda g, c: g <= c,
    lambda g, c: g > c,
    lambda g, c: g >= c,
]


@pytest.mark.parametrize("cmp", range(len(COMPARES)))
@pytest.mark.parametrize("c", [-300, 0, 127, 128, 129, 500, 2048])
@pytest.mark.parametrize("grid", ["row", "col", "neg", "sum"])
def test_tail_masks_equal_the_element_by_element_comparison(cmp, c, grid):
    i_p, i_f, _ = _grids()
    g = {"row": 3 * 128 + i_f, "col": i_p, "neg": 100 - i_p, "sum": i_p * 2 + i_f}[grid]
    m = COMPARES[cmp](g, c)
    want = COMPARES[cmp](g.arr, c)
    np.testing.assert_array_equal(np.broadcast_to(m.arr, want.shape), want)
    assert m.full == bool(want.all())


def test_a_full_tail_mask_is_shared_and_read_only():
    i_p, i_f, _ = _grids()
    m = (i_p < 128) & (2 * 128 + i_f < 2048)
    assert m.full
    assert all(not f.flags.writeable for f in m.factors)
    assert not ((i_p < 100) & (i_f < 2048)).full


def test_stamp_boxes_take_disjoint_boxes_and_refuse_overlaps():
    flat = np.zeros(64 * 32, np.float32)
    grid = flat.reshape(64, 32)
    sb = StampBoxes(WrittenBoxes((64, 32), 4))
    assert sb.add(grid[0:16, 0:32], 0, 7)
    assert sb.add(grid[16:32, 8:16], 16 * 32 * 4 + 8 * 4, 9)
    assert not sb.add(grid[30:40, 6:10], (30 * 32 + 6) * 4, 11)  # overlaps the second box
    assert sb.add(grid[30:40, 0:4], 30 * 32 * 4, 13)  # beside it
    assert not sb.add(grid[::2, 0:4], 0, 11)  # a stepped view: not a box
    stamps = sb.materialize(flat.size).reshape(64, 32)
    want = np.zeros((64, 32), np.int64)
    want[0:16, :] = 7
    want[16:32, 8:16] = 9
    want[30:40, 0:4] = 13
    np.testing.assert_array_equal(stamps, want)


TILED = """
@nki.jit
def k(a):
    M, N = a.shape
    out = nl.ndarray((M, N), dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    for m in nl.affine_range((M + 127) // 128):
        for n in nl.affine_range((N + 63) // 64):
            t = nl.load(a[m * 128 + i_p, n * 64 + i_f], mask=(m * 128 + i_p < M) & (n * 64 + i_f < N))
            u = nl.multiply(t, 2.0)
            nl.store(out[m * 128 + i_p, n * 64 + i_f], value=u, mask=(m * 128 + i_p < M) & (n * 64 + i_f < N))
    for n in nl.affine_range(N // 64):
        t = nl.load(out[0:128, n * 64:(n + 1) * 64])
        nl.store(out[0:128, n * 64:(n + 1) * 64], value=nl.add(t, 1.0))
    return out
"""


def _unnamed(extra: tuple) -> tuple:
    """A record's ``extra`` with an unnamed storage's id (one per run) left out."""
    return tuple(
        ("src", ("?", *e[1][1:]))
        if type(e) is tuple and e and e[0] == "src" and type(e[1][0]) is int
        else e
        for e in extra
    )


def _run(tmp_path, src: str, a: np.ndarray):
    path = tmp_path / "tiled.py"
    path.write_text(LEG + textwrap.dedent(src))
    res = simulate_kernel(load_kernel(path, "k"), [a])
    return np.asarray(res.outputs), [(*i[:-1], _unnamed(i.extra)) for i in res.trace]


@pytest.mark.parametrize("shape", [(256, 128), (200, 100)])
def test_tiled_stores_match_the_general_path(tmp_path, monkeypatch, shape):
    """Full tiles (every mask all true) and tail tiles; outputs rewritten in a later loop."""
    a = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    taken: list = []
    real = fastpath.store_checked

    def counted(dst, value):
        ok = real(dst, value)
        taken.append(ok)
        return ok

    monkeypatch.setattr(fastpath, "store_checked", counted)
    fast = _run(tmp_path, TILED, a)
    monkeypatch.setattr(fastpath, "store_checked", lambda dst, value: False)
    general = _run(tmp_path, TILED, a)
    want = a * 2
    want[0:128, : shape[1] // 64 * 64] += 1
    np.testing.assert_array_equal(fast[0], want)
    np.testing.assert_array_equal(general[0], want)
    assert fast[1] == general[1]
    if shape == (256, 128):
        assert all(taken) and len(taken) == 6
    else:  # the tail tiles' masks leave elements out: the general path
        assert taken.count(True) == 1 + 1


def test_tiled_stores_keep_stamps_as_boxes(tmp_path, monkeypatch):
    made: list = []
    real = StampBoxes.materialize

    def counted(self, size):
        made.append(size)
        return real(self, size)

    monkeypatch.setattr(affine_stamps.StampBoxes, "materialize", counted)
    once = TILED.split("    for n in nl.affine_range(N // 64):")[0] + "    return out\n"
    _run(tmp_path, once, np.ones((256, 128), np.float32))
    assert made == []
    _run(tmp_path, TILED, np.ones((256, 128), np.float32))  # tiles rewritten by a later loop
    assert made == [256 * 128]


@pytest.mark.parametrize(
    "second",
    [
        # a later iteration overlapping a stamped box: a box, a masked write, a stepped view
        "nl.store(out[64:192, 0:64], value=t)",
        "nl.store(out[i_p, i_f], value=t, mask=(i_p >= 100))",
        "nl.store(out[0:256:2, 0:64], value=t)",
    ],
)
def test_clashes_after_box_stamps_are_found(tmp_path, second):
    src = f"""
    @nki.jit
    def k(a):
        out = nl.ndarray((256, 64), dtype=a.dtype, buffer=nl.shared_hbm)
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(64)[None, :]
        t = nl.load(a[0:128, 0:64])
        for j in nl.affine_range(2):
            if j == 0:
                nl.store(out[0:128, 0:64], value=t)
            else:
                {second}
        return out
    """
    with pytest.raises(DiagnosticError) as ei:
        _run(tmp_path, src, np.ones((256, 64), np.float32))
    assert ei.value.diagnostic.code == "C2N3030"


@pytest.mark.parametrize("dtype", ["nl.float32", "nl.int32", "nl.bfloat16"])
@pytest.mark.parametrize("fill", ["nl.zeros(({s}), {d}, buffer=nl.psum)", "nl.full(({s}), 3, {d})"])
def test_filled_tiles_hold_their_value(tmp_path, dtype, fill):
    expr = fill.format(s="128, 8", d=dtype)
    want = 0 if "zeros" in fill else 3
    src = f"""
    @nki.jit
    def k(a):
        out = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        t = {expr}
        nl.store(out, value=nl.copy(t, dtype=nl.float32))
        return out
    """
    got, _ = _run(tmp_path, src, np.ones((128, 8), np.float32))
    np.testing.assert_array_equal(got, np.full((128, 8), want, np.float32))


@pytest.mark.parametrize("shape", [(256, 128), (200, 100)])
def test_loads_under_full_tail_masks_match_the_general_path(tmp_path, monkeypatch, shape):
    """A full tail mask skips nl.load's mask handling (isa._fits off: the per-element check)."""
    a = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    seen: list = []
    real = isa._fits

    def counted(factors, s):
        seen.append(s)
        return real(factors, s)

    monkeypatch.setattr(isa, "_fits", counted)
    fast = _run(tmp_path, TILED, a)
    monkeypatch.setattr(isa, "_fits", lambda factors, s: False)
    general = _run(tmp_path, TILED, a)
    np.testing.assert_array_equal(fast[0], general[0])
    assert fast[1] == general[1]
    assert len(seen) >= (shape[0] // 128) * (shape[1] // 64)
