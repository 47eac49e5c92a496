"""PSUM tensors of several blocks: the banks an ``nki.compiler`` placement gives them, and
``+=`` accumulation into one block after another."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.nkisim import load_kernel, simulate_kernel

LEG = (
    "from neuronxcc import nki\nimport neuronxcc.nki.language as nl\n"
    "import neuronxcc.nki.isa as nisa\nimport neuronxcc.nki.compiler as ncc\n"
    "import functools\nfrom neuronxcc.nki.language import par_dim\n"
)
RNG = np.random.default_rng(5)


def kern(tmp_path, body: str):
    p = tmp_path / "port.py"
    p.write_text(LEG + textwrap.dedent(body))
    return load_kernel(p, "k")


# --------------------------------------------------------------------------- banks

ACC = """
@nki.jit
def k(a, b):
    out = nl.ndarray((G, N, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    def bank_at(banks, idx, pdim_size, fdim_size):
        return (banks[idx[1] % len(banks)], 0, 0)
    ps = nl.ndarray((G, N, par_dim(128), 512), dtype=nl.float32, buffer=PLACE)
    ta = nl.load(a)
    tb = nl.load(b)
    for g in nl.affine_range(G):
        for n in nl.affine_range(N):
            ps[g, n] = nisa.nc_matmul(ta, tb)
            nl.store(out[g, n], value=nl.copy(ps[g, n]))
    return out
"""


@pytest.mark.parametrize(
    "g,n,place",
    [
        (2, 8, "ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(2, 4))"),
        (2, 8, "ncc.psum.mod_alloc(base_bank=4, num_bank_tiles=(1, 4))"),
        (4, 4, "ncc.psum.mod_alloc(base_bank=0)"),
        (1, 12, "ncc.psum.alloc(functools.partial(bank_at, (5, 6, 7)))"),
    ],
)
def test_blocks_sharing_banks_fit_the_psum(tmp_path, g, n, place):
    k = kern(tmp_path, ACC.replace("PLACE", place).replace("G", str(g)).replace("N", str(n)))
    a = RNG.standard_normal((128, 128)).astype(np.float32)
    b = RNG.standard_normal((128, 512)).astype(np.float32)
    out = simulate_kernel(k, [a, b]).outputs
    np.testing.assert_allclose(out, np.broadcast_to(a.T @ b, out.shape), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "place",
    ["nl.psum", "ncc.psum.auto_alloc()"],
)
def test_sixteen_banks_of_blocks_still_do_not_fit(tmp_path, place):
    k = kern(tmp_path, ACC.replace("PLACE", place).replace("G", "2").replace("N", "8"))
    with pytest.raises(DiagnosticError) as ei:
        simulate_kernel(k, [np.zeros((128, 128), np.float32), np.zeros((128, 512), np.float32)])
    assert ei.value.diagnostic.code == "C2N3018" and ei.value.diagnostic.loc.line == 13


def test_a_block_placed_outside_the_banks_is_an_error(tmp_path):
    k = kern(
        tmp_path,
        ACC.replace("PLACE", "ncc.psum.alloc(functools.partial(bank_at, (6, 8)))")
        .replace("G", "1")
        .replace("N", "2"),
    )
    with pytest.raises(DiagnosticError) as ei:
        simulate_kernel(k, [np.zeros((128, 128), np.float32), np.zeros((128, 512), np.float32)])
    d = ei.value.diagnostic
    assert d.code == "C2N3021" and "bank 8" in d.message and d.loc.line == 13


# --------------------------------------------------------------------------- accumulation


@pytest.mark.parametrize("blocks", [2, 3])
@pytest.mark.parametrize("steps", [1, 4])
@pytest.mark.parametrize("place", ["nl.psum", "ncc.psum.mod_alloc(base_bank=2)"])
def test_each_block_accumulates_from_zero(tmp_path, blocks, steps, place):
    k = kern(
        tmp_path,
        f"""
        @nki.jit
        def k(a, b):
            out = nl.ndarray(({blocks}, 64, 96), dtype=nl.float32, buffer=nl.shared_hbm)
            ps = nl.ndarray(({blocks}, par_dim(64), 96), dtype=nl.float32, buffer={place})
            res = nl.ndarray(({blocks}, par_dim(64), 96), dtype=nl.float32, buffer=nl.sbuf)
            ip = nl.arange(64)[:, None]
            jf = nl.arange(96)[None, :]
            for g in nl.affine_range({blocks}):
                for i in nl.affine_range({steps}):
                    tb = nl.load(b[g, i])
                    ps[g, ip, jf] += nisa.nc_matmul(moving=tb, stationary=nl.load(a[i]))
                res[g, ip, jf] = nisa.tensor_copy(ps[g, ip, jf])
                nl.store(out[g], value=res[g, :, :])
            return out
        """,
    )
    a = RNG.standard_normal((steps, 32, 64)).astype(np.float32)
    b = RNG.standard_normal((blocks, steps, 32, 96)).astype(np.float32)
    want = np.einsum("ikm,gikn->gmn", a, b)
    np.testing.assert_allclose(simulate_kernel(k, [a, b]).outputs, want, rtol=1e-4, atol=1e-4)
