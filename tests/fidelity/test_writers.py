"""Mismatches map back to the CUDA blocks and threads that write those elements."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

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


def test_compound_assignment_has_its_thread_as_writer() -> None:
    """softmax_naive stores y[j] = e, then y[j] /= sum: one thread per row writes the row."""
    maps, r = _maps("corpus/norm/softmax_naive.cu", N=70, C=5)
    blocks, threads = maps["output"]
    rows = np.arange(70)[:, None] * np.ones((1, 5), int)
    assert np.array_equal(blocks.reshape(70, 5), rows // 64)
    assert np.array_equal(threads.reshape(70, 5), rows % 64)


def test_check_maps_a_missing_tail_to_cuda_blocks() -> None:
    from cuda2nki.fidelity.check import check

    port = ROOT / "corpus/norm/ports/softmax_naive_flaw_missing_tail.py"
    rep = check(ROOT / "corpus/norm/softmax_naive.cu", port, seeds=1, extra_points=False)
    bad = [n for n in rep.numerics if n["classification"] != "expected"]
    assert bad
    first = bad[0]
    # N=200: rows 128..199 unwritten; partition tile 1 of the port; CUDA blocks 2 and 3 (64 rows each)
    assert first["tiles"] == [[1, 0]]
    assert "blocks (2, 0, 0), (3, 0, 0)" in first["cuda_writers"]
    tail = next(d for d in rep.findings if d.code == "C2N4003")
    assert any("CUDA blocks (2, 0, 0)" in n for n in tail.notes)
    assert any(n.startswith("port tiles") and n.endswith(": (1, 0)") for n in tail.notes)


def test_a_local_sharing_an_alias_name_is_not_a_store() -> None:
    """layernorm's shuffle loop counter `o` shares its name with the row pointer `float* o =
    out + ...`; only element stores (o[i] = ...) are rewritten, so the loop still ends."""
    maps, r = _maps("corpus/norm/layernorm.cu", N=8, C=64)
    assert maps is not None
    _, mean_threads = maps["mean"]
    assert set(np.unique(mean_threads) % 32) == {0}  # lane 0 of each warp stores mean
    out_blocks, out_threads = maps["out"]
    assert (out_blocks >= 0).all() and (out_threads >= 0).all()


@pytest.mark.parametrize("ctype", ["unsigned int", "unsigned char", "uint16_t", "bool"])
def test_an_output_that_cannot_hold_minus_one_has_no_writer_map(tmp_path, ctype) -> None:
    """An unsigned output cannot mark "no writer" with -1: no map, and no error either (the
    check of such a kernel used to stop with an OverflowError)."""
    from cuda2nki.binding import binding_from_dict

    cu = tmp_path / "u.cu"
    cu.write_text(
        "#include <stdint.h>\n"
        f"__global__ void flag(const float* x, {ctype}* out, int n) {{\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) out[i] = x[i] > 0.0f;\n"
        "}\n"
    )
    dtype = {"unsigned int": "uint32", "unsigned char": "uint8", "uint16_t": "uint16"}
    b = binding_from_dict(
        {
            "kernel": "flag",
            "launch": {"grid": ["ceil_div(n, 64)"], "block": [64]},
            "params": {
                "x": {"shape": ["n"], "dtype": "float32", "role": "in"},
                "out": {"shape": ["n"], "dtype": dtype.get(ctype, "bool"), "role": "out"},
                "n": 100,
            },
        },
        "u.toml",
    )
    r = b.resolve({})
    maps = writer_maps(parse_file(cu), "flag", r, generate_inputs(r, 0), ["out"])
    assert maps is None
