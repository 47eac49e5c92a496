"""Legacy ``acc += nisa.nc_matmul(..., mask=m)`` (and ``nl.matmul``): one masked PSUM
accumulation.  Where ``m`` is false the accumulator keeps its contents (reference 4.2), also when
the mask drops the first matmul of the accumulation group, or all of them, and also in one block
of a multi-block PSUM tensor: the never-written elements of the masked result tile are not read."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from cuda2nki.nkisim import load_kernel, simulate_kernel

LEG = "from neuronxcc import nki\nimport neuronxcc.nki.language as nl\nimport neuronxcc.nki.isa as nisa\n"

NI, NJ, K, M = 4, 3, 128, 128  # contraction tiles, column blocks, partitions, rows

CALLS = {
    "nc_matmul": "nisa.nc_matmul(x, y, mask={m})",
    "matmul": "nl.matmul(x, y, transpose_x=True, mask={m})",
}

# whole-iteration predicates on the loop variables (column blocks of width n): the same causal
# condition, spelt in several ways
SCALAR = {
    "ge": ("i * 128 >= j * {n}", lambda i, j, c, n: i * 128 >= j * n),
    "le": ("j * {n} <= i * 128", lambda i, j, c, n: i * 128 >= j * n),
    "and": ("(i * 128 >= j * {n}) & (i < 4)", lambda i, j, c, n: i * 128 >= j * n),
    "middle": ("i != j + 1", lambda i, j, c, n: i != j + 1),
}
# per-column predicate (a box of the result tile that varies with the iteration)
COLUMN = ("j * {n} + i_f <= i * 128 + 127", lambda i, j, c, n: j * n + c <= i * 128 + 127)


def _kernel(tmp_path, call: str, mask: str, n: int, blocks: int | None, target: str, rng: str):
    if blocks is None:
        alloc = f"nl.zeros((nl.par_dim({M}), {n}), dtype=nl.float32, buffer=nl.psum)"
        lhs, read, x_h = f"acc{target}", "acc", "0"
    else:
        alloc = f"nl.zeros(({blocks}, nl.par_dim({M}), {n}), dtype=nl.float32, buffer=nl.psum)"
        lhs, read, x_h = "acc[h, :, :]", "acc[h, :, :]", "h"
    body = f"""
    @nki.jit
    def k(a, b):
        out = nl.ndarray(({blocks or 1}, {M}, {NJ * n}), nl.float32, buffer=nl.shared_hbm)
        i_f = nl.arange({n})[None, :]
        for j in nl.affine_range({NJ}):
            acc = {alloc}
            for i in nl.{rng}({NI}):
                for h in nl.affine_range({blocks or 1}):
                    x = nl.load(a[{x_h}, i * {K}:(i + 1) * {K}, :])
                    y = nl.load(b[i * {K}:(i + 1) * {K}, j * {n}:(j + 1) * {n}])
                    {lhs} += {CALLS[call].format(m=mask)}
            for h in nl.affine_range({blocks or 1}):
                nl.store(out[h, :, j * {n}:(j + 1) * {n}], value=nl.copy({read}))
        return out
    """
    p = tmp_path / "port.py"
    p.write_text(LEG + textwrap.dedent(body))
    return load_kernel(p, "k")


def _expected(a, b, keep, n: int) -> np.ndarray:
    nb = a.shape[0]
    ref = np.zeros((nb, M, NJ * n), np.float64)
    for h in range(nb):
        for j in range(NJ):
            for i in range(NI):
                part = a[h, i * K : (i + 1) * K].T.astype(np.float64) @ b[
                    i * K : (i + 1) * K, j * n : (j + 1) * n
                ].astype(np.float64)
                cols = np.array([keep(i, j, c, n) for c in range(n)])
                ref[h, :, j * n : (j + 1) * n] += part * cols[None, :]
    return ref


def _check(tmp_path, call, mask_src, keep, n, blocks, target="", rng="affine_range"):
    k = _kernel(tmp_path, call, mask_src.format(n=n), n, blocks, target, rng)
    gen = np.random.default_rng(n + (blocks or 0))
    a = gen.standard_normal((blocks or 1, NI * K, M)).astype(np.float32)
    b = gen.standard_normal((NI * K, NJ * n)).astype(np.float32)
    got = simulate_kernel(k, [a, b]).outputs
    got = got[0] if isinstance(got, (list, tuple)) else got
    assert not np.isnan(got).any(), f"{np.isnan(got).sum()} NaN elements"
    np.testing.assert_allclose(got, _expected(a, b, keep, n), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("spelling", sorted(SCALAR))
@pytest.mark.parametrize("n", [128, 256])
def test_masked_matmul_into_one_block_of_a_multi_block_psum_tensor(tmp_path, call, spelling, n):
    src, keep = SCALAR[spelling]
    _check(tmp_path, call, src, keep, n, blocks=2)


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("target", ["", "[:, :]", "[...]"])
@pytest.mark.parametrize("rng", ["affine_range", "sequential_range"])
def test_masked_matmul_into_a_whole_psum_tile(tmp_path, call, target, rng):
    src, keep = SCALAR["ge"]
    _check(tmp_path, call, src, keep, 256, blocks=None, target=target, rng=rng)


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("blocks", [None, 1, 2])
def test_column_masked_matmul_accumulates_only_the_selected_columns(tmp_path, call, blocks):
    src, keep = COLUMN
    _check(tmp_path, call, src, keep, 256, blocks=blocks)
