"""Mismatches map back to the CUDA blocks and threads that write those elements."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cuda2nki.binding import generate_inputs, load_binding
from cuda2nki.fidelity.writers import describe, writer_maps
from cuda2nki.frontend import parse_file

ROOT = Path(__file__).resolve().parents[2]


def _maps(rel: str, **over):
    cu = ROOT / rel
    b = load_binding(cu.with_suffix(".toml"))
    r = b.resolve(over)
    tu = parse_file(cu)
    outs = [t.name for t in b.tensors if t.role != "in"]
    return writer_maps(tu, b.kernel or tu.kernels[0].name, r, generate_inputs(r, 0), outs), r


def test_one_thread_per_element() -> None:
    maps, r = _maps("corpus/basic/vector_add.cu", N=1000)
    blocks, threads = maps["out"]
    i = np.arange(1000)
    assert np.array_equal(blocks, i // 256) and np.array_equal(threads, i % 256)
    bad = np.zeros(1000, bool)
    bad[600:610] = True
    assert (
        describe(blocks, threads, bad, r.grid)
        == "written by CUDA block (2, 0, 0) (threads 88..97 of their blocks)"
    )


def test_two_dimensional_grid_and_local_pointer_alias() -> None:
    maps, r = _maps("corpus/linalg/matmul_naive.cu")
    blocks, threads = maps["C"]
    m, n = blocks.shape
    rows, cols = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
    gx = r.grid[0]
    assert np.array_equal(blocks, (rows // 16) * gx + cols // 16)
    assert np.array_equal(threads, (rows % 16) * 16 + cols % 16)


def test_accumulating_writes_have_no_single_writer() -> None:
    maps, _ = _maps("corpus/reduce/sum_atomic.cu")
    assert maps is None
