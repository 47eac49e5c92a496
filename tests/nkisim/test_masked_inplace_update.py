"""Legacy ``t op= nl.f(..., mask=m)`` on an SBUF tile: the masked instruction produced its
result only where ``m`` holds, so ``t`` changes there and keeps its contents elsewhere
(reference 4.2), as a masked PSUM accumulation does (test_masked_psum_accumulation.py).  The
elements the mask left unwritten are never combined into ``t``."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from cuda2nki.nkisim import load_kernel, simulate_kernel

LEG = "from neuronxcc import nki\nimport neuronxcc.nki.language as nl\nimport neuronxcc.nki.isa as nisa\n"

P, F = 128, 96

# the masked instruction: source text and its NumPy value from the loaded tiles x, y
SOURCES = {
    "scale": ("nl.multiply(y, 2.0, mask={m})", lambda x, y: y * 2.0),
    "tile_add": ("nl.add(x, y, mask={m})", lambda x, y: x + y),
    "unary": ("nl.exp(y, mask={m})", lambda x, y: np.exp(y)),
    "isa": ("nisa.tensor_scalar(y, np.add, 1.5, mask={m})", lambda x, y: y + 1.5),
}
# mask spellings over the tile's index grid, with their NumPy selection
MASKS = {
    "free": ("i_f < 40", lambda p, f: f < 40),
    "partition": ("i_p < 100", lambda p, f: p < 100),
    "both": ("(i_p < 64) & (i_f >= 17)", lambda p, f: (p < 64) & (f >= 17)),
    "reversed": ("70 > i_f", lambda p, f: f < 70),
}
OPS = {"+=": np.add, "-=": np.subtract, "*=": np.multiply}
TARGETS = ["t", "t[...]", "t[i_p, i_f]"]


def _run(tmp_path, src: str, mask: str, op: str, target: str, buffer: str = "nl.sbuf"):
    body = f"""
    import numpy as np

    @nki.jit
    def k(a, b):
        out = nl.ndarray(({P}, {F}), nl.float32, buffer=nl.shared_hbm)
        i_p = nl.arange({P})[:, None]
        i_f = nl.arange({F})[None, :]
        t = nl.ndarray(({P}, {F}), dtype=nl.float32, buffer={buffer})
        t[...] = nl.load(a)
        x = nl.load(a)
        y = nl.load(b)
        {target} {op} {src.format(m=mask)}
        nl.store(out, value=t)
        return out
    """
    p = tmp_path / "port.py"
    p.write_text(LEG + textwrap.dedent(body))
    gen = np.random.default_rng(len(src) + len(mask))
    a = gen.uniform(0.5, 1.5, (P, F)).astype(np.float32)
    b = gen.uniform(-1.0, 1.0, (P, F)).astype(np.float32)
    got = simulate_kernel(load_kernel(p, "k"), [a, b]).outputs
    return (got[0] if isinstance(got, (list, tuple)) else got), a, b


def _expected(a, b, value, keep, op):
    p, f = np.meshgrid(np.arange(P), np.arange(F), indexing="ij")
    sel = keep(p, f)
    return np.where(sel, OPS[op](a, value(a, b)), a)


@pytest.mark.parametrize("source", sorted(SOURCES))
@pytest.mark.parametrize("mask", sorted(MASKS))
def test_masked_result_updates_only_its_selected_elements(tmp_path, source, mask):
    src, value = SOURCES[source]
    m, keep = MASKS[mask]
    got, a, b = _run(tmp_path, src, m, "+=", "t")
    assert not np.isnan(got).any(), f"{np.isnan(got).sum()} NaN elements"
    np.testing.assert_allclose(got, _expected(a, b, value, keep, "+="), rtol=1e-6)


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("target", TARGETS)
def test_every_in_place_operator_and_target_spelling(tmp_path, op, target):
    src, value = SOURCES["scale"]
    m, keep = MASKS["both"]
    got, a, b = _run(tmp_path, src, m, op, target)
    np.testing.assert_allclose(got, _expected(a, b, value, keep, op), rtol=1e-6)


def test_a_mask_that_selects_nothing_leaves_the_tile_unchanged(tmp_path):
    got, a, _ = _run(tmp_path, SOURCES["tile_add"][0], "i_f > 1000", "+=", "t")
    np.testing.assert_array_equal(got, a)


def test_unmasked_update_still_combines_every_element(tmp_path):
    body_src = "nl.multiply(y, 2.0)"
    got, a, b = _run(tmp_path, body_src + "{m}", "", "+=", "t")
    np.testing.assert_allclose(got, a + 2.0 * b, rtol=1e-6)
