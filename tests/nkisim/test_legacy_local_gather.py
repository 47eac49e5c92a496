"""The legacy ``nisa.local_gather`` returns ``(P, num_valid_indices, num_elem_per_idx)``: each
core's 16 index partitions read partition-first give element offsets that every partition of
the core applies to its own free elements (the reference's NumPy semantics)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.nkisim import load_kernel, simulate_kernel

LEG = "from neuronxcc import nki\nimport neuronxcc.nki.language as nl\nimport neuronxcc.nki.isa as nisa\n"


def kernel(tmp_path, args: str, out_shape: tuple[int, ...]):
    p = tmp_path / "gather_port.py"
    p.write_text(
        LEG
        + textwrap.dedent(f"""
        @nki.jit
        def k(src, index):
            out = nl.ndarray({out_shape}, dtype=src.dtype, buffer=nl.shared_hbm)
            g = nisa.local_gather(nl.load(src), nl.load(index){args})
            nl.store(out, g)
            return out
        """)
    )
    return load_kernel(p, "k")


def numpy_gather(src, index, e, nv):
    p = src.shape[0]
    flat = src.reshape(p, -1)
    out = np.empty((p, nv, e), src.dtype)
    for g0 in range(0, p, 16):
        offs = index[g0 : g0 + 16].flatten(order="F")[:nv]
        for v, o in enumerate(offs):
            out[g0 : g0 + 16, v] = flat[g0 : g0 + 16, o : o + e]
    return out


@pytest.mark.parametrize(
    ("src_shape", "index_cols", "e", "nv"),
    [
        ((128, 512, 4), 4, 4, 64),  # the reference's example
        ((32, 64), 2, 1, None),  # every index valid by default
        ((16, 8, 8), 3, 8, 40),
        ((48, 256), 1, 2, 10),
    ],
)
def test_legacy_local_gather_matches_the_numpy_semantics(tmp_path, src_shape, index_cols, e, nv):
    rng = np.random.default_rng(3)
    p = src_shape[0]
    free = int(np.prod(src_shape[1:]))
    src = rng.standard_normal(src_shape).astype(np.float32)
    # element offsets, each a multiple of e (a chunk start), different for every core
    index = (rng.integers(0, free // e, size=(p, index_cols)) * e).astype(np.uint16)
    n = nv if nv is not None else 16 * index_cols
    args = f", {e}" + (f", {nv}" if nv is not None else "")
    k = kernel(tmp_path, args, (p, n, e))
    got = simulate_kernel(k, [src, index]).outputs
    np.testing.assert_array_equal(got, numpy_gather(src, index, e, n))


def test_legacy_local_gather_keyword_arguments(tmp_path):
    src = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
    index = np.tile(np.array([[4, 8]], np.uint16), (16, 1))
    k = kernel(tmp_path, ", num_elem_per_idx=2, num_valid_indices=20", (16, 20, 2))
    got = simulate_kernel(k, [src, index]).outputs
    np.testing.assert_array_equal(got, numpy_gather(src, index, 2, 20))


@pytest.mark.parametrize(
    ("args", "code"),
    [(", 4, 65", "C2N3021"), (", 3", "C2N3021"), (", 4", "C2N3019")],
)
def test_legacy_local_gather_bad_arguments(tmp_path, args, code):
    src = np.zeros((16, 8), np.float32)
    index = np.full((16, 4), 6, np.uint16)  # 6 + 4 elements run past a partition's 8
    k = kernel(tmp_path, args, (16, 64, 4))
    with pytest.raises(DiagnosticError) as ei:
        simulate_kernel(k, [src, index])
    d = ei.value.diagnostic
    assert d.code == code and d.loc.line == 8, d
