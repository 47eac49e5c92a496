"""Matmul operands read from fp32 copies of caller arrays (``nkisim/widen.py``), joined K tiles,
legacy affine subscripts as views (``nkisim/affine.py``) and legacy loads through the DMA fast
path: the same outputs, traces and warnings as the general paths, which the tests force."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from cuda2nki.nkisim import affine, fastpath, isa, load_kernel, simulate_kernel
from cuda2nki.nkisim import language as nl
from cuda2nki.nkisim import state as st
from cuda2nki.nkisim import tensor as tn
from cuda2nki.nkisim.engine import mat
from cuda2nki.nkisim.widen import Widened, join_rows

KERNELS = Path(__file__).parent / "kernels"


def _general(m: pytest.MonkeyPatch) -> None:
    """Every path these tests cover, forced to the general one."""
    m.setattr(isa, "_mm_operand", lambda t, s: mat(t))
    m.setattr(tn, "join_rows", np.concatenate)
    m.setattr(tn, "affine_view", lambda *args: None)
    m.setattr(tn, "tile_slices", lambda *args: None)
    m.setattr(fastpath, "_dma_move", _assign_move)


def _assign_move(dst, src, d, ss):
    dst.assign(src.values("nl.load"), api="nl.load")


def _run(api: str, shape: tuple[int, int, int], dtype, general: bool, monkeypatch):
    k, m, n = shape
    rng = np.random.default_rng(5)
    lhsT = rng.standard_normal((k, m), dtype=np.float32).astype(dtype)
    rhs = rng.standard_normal((k, n), dtype=np.float32).astype(dtype)
    kernel = load_kernel(str(KERNELS / api / "matmul_tiled.py"), "matmul_tiled_kernel")
    with monkeypatch.context() as mp:
        if general:
            _general(mp)
        res = simulate_kernel(kernel, {"lhsT": lhsT, "rhs": rhs})
    return np.asarray(res.outputs), list(res.trace), [w.message for w in res.warnings]


@pytest.mark.parametrize("api", ["current", "legacy"])
@pytest.mark.parametrize(
    "shape,dtype",
    [
        ((512, 256, 1024), ml_dtypes.bfloat16),  # K tiles joined into one view
        ((384, 200, 700), ml_dtypes.bfloat16),  # M and N tails (legacy: masked loads)
        ((256, 128, 512), np.float32),  # fp32 inputs: no copy at all
        ((256, 128, 512), np.float16),
    ],
)
def test_matmul_fast_paths_match_the_general_paths(api, shape, dtype, monkeypatch):
    fast = _run(api, shape, dtype, False, monkeypatch)
    general = _run(api, shape, dtype, True, monkeypatch)
    np.testing.assert_array_equal(fast[0], general[0])
    assert fast[1] == general[1]
    assert fast[2] == general[2]


def test_operands_are_read_from_one_fp32_copy_per_input(monkeypatch):
    """Each input is widened once per run, not once per tile use."""
    made = []
    real = Widened.of

    def of(self, flat):
        ent = self.by_flat.get(id(flat))
        if ent is None:
            made.append(flat.size)
        return real(self, flat)

    monkeypatch.setattr(Widened, "of", of)
    _run("current", (512, 256, 1024), ml_dtypes.bfloat16, False, monkeypatch)
    assert sorted(made) == [512 * 256, 512 * 1024]


def test_join_rows_is_a_view_of_consecutive_row_blocks():
    w = np.arange(64 * 12, dtype=np.float32).reshape(64, 12)
    w.flags.writeable = False
    blocks = [w[r : r + 16, 4:8] for r in range(0, 64, 16)]
    joined = join_rows(blocks)
    np.testing.assert_array_equal(joined, np.concatenate(blocks))
    assert np.shares_memory(joined, w)
    # not consecutive, another column block, or one block: concatenated / itself
    for arrs in (
        [w[0:16, 4:8], w[32:48, 4:8]],
        [w[0:16, 4:8], w[16:32, 0:4]],
        [w[16:32, 4:8], w[0:16, 4:8]],
    ):
        out = join_rows(arrs)
        np.testing.assert_array_equal(out, np.concatenate(arrs))
        assert not np.shares_memory(out, w)
    assert join_rows([blocks[0]]) is blocks[0]


def _subscripts():
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    j = nl.arange(4)[None, :]
    return [
        ("tile", lambda: (i_p, i_f)),
        ("offsets", lambda: (256 + i_p, 3 * 64 + i_f)),
        ("scaled row step", lambda: (2 * i_p, i_f)),
        ("free step", lambda: (i_p, 2 * i_f + 1)),
        ("one column", lambda: (i_p, 5 + 0 * j[:, 0:1])),
        ("row only", lambda: (i_p + 7,)),
        ("rows and columns swapped", lambda: (nl.arange(64)[None, :], nl.arange(32)[:, None])),
        ("mgrid", lambda: tuple(g + 3 for g in nl.mgrid[0:128, 0:64])),
        ("one row of a column", lambda: (nl.arange(1)[:, None], i_f)),
    ]


@pytest.mark.parametrize("name,key", _subscripts(), ids=lambda v: v if isinstance(v, str) else "")
def test_affine_subscripts_match_the_general_path(name, key, monkeypatch):
    s = st.SimState()
    s.legacy = True
    st.push(s)
    try:
        x = tn.wrap_host(np.arange(512 * 300, dtype=np.float32).reshape(512, 300))
        x3 = tn.wrap_host(np.arange(512 * 300 * 2, dtype=np.float32).reshape(512, 300, 2))
        for t in (x, x3):
            fast = t[key()]
            with monkeypatch.context() as m:
                m.setattr(tn, "affine_view", lambda *args: None)
                m.setattr(tn, "tile_slices", lambda *args: None)
                general = t[key()]
            assert fast.shape == general.shape
            np.testing.assert_array_equal(fast.values(), general.values())
            assert fast.a.strides == general.a.strides
            assert fast.offset == general.offset
    finally:
        st.pop()


def test_affine_subscript_out_of_bounds_is_still_reported():
    s = st.SimState()
    s.legacy = True
    st.push(s)
    try:
        x = tn.wrap_host(np.zeros((256, 64), np.float32))
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(64)[None, :]
        assert (
            affine.affine_view(x.a, 0, x.storage.flat, x.shape, [(200, (1, 0))], [(128, 1)]) is None
        )
        view = x[200 + i_p, i_f]  # the general path: an indirect view whose rows are checked
        assert view.index is not None and (view.index < 0).any()
    finally:
        st.pop()
