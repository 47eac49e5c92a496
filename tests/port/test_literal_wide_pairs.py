"""64-bit buffers in literal ports move both limbs of an element by one DMA: a (P, F, 2) view
whose limb pair is contiguous in the free axis, split into limbs on chip after a load and joined
before a store (one DMA per band of partitions in a partial block), instead of two stride-2 views
of 4 B per element.  Stores under a per-thread condition read the pairs back once and select per
limb.  Bit-exact against the SIMT interpreter over the whole 64-bit range."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

from tests.port.acceptance import grid_binding, tensor_param
from tests.port.literal_acceptance import run_literal_exactly

U64 = [0, 2**64 - 1]
I64 = [-(2**63), 2**63 - 1]

#: name -> (parameters, body after ``int i = ...``, grid, {tensor: (dtype, role, range, extent)},
#: DMAs per 64-bit tensor when n = 300: the grid's blocks batched into (128, F) tiles of
#: consecutive threads, a partial tile moving its in-bound rows by one DMA per band)
KERNELS = {
    "guarded_xor_shift": (
        "const unsigned long long* a, unsigned long long* out, int n",
        "    if (i < n) out[i] = a[i] ^ (a[i] >> 7);\n",
        "ceil_div(n, 128)",
        {"a": ("uint64", "in", U64, "n"), "out": ("uint64", "out", None, "n")},
        {"a": 4, "": 6},  # one tile of 1024 threads: 37 full rows of 8, then 4 threads
    ),
    "grid_stride_signed": (
        "const long long* src, long long* dst, int n",
        "    for (int j = i; j < n; j += blockDim.x * gridDim.x) dst[j] = src[j] * 3 - j;\n",
        "2",
        {"src": ("int64", "in", I64, "n"), "dst": ("int64", "out", None, "n")},
        {"src": 2, "": 9},  # the grid's 256 threads in one (128, 2) tile: 2 passes
    ),
    "store_where_odd": (
        "const long long* v, long long* acc, int n",
        "    if (i >= n) return;\n    long long x = v[i];\n    if (x & 1) acc[i] = x + acc[i];\n",
        "ceil_div(n, 128)",
        {"v": ("int64", "in", I64, "n"), "acc": ("int64", "inout", I64, "n")},
        {"v": 2, "acc": 1, "": 7},
    ),
    "strided_halves": (
        "const unsigned long long* pairs, unsigned long long* sums, int n",
        "    if (i < n) sums[i] = pairs[2 * i] + pairs[2 * i + 1];\n",
        "ceil_div(n, 128)",
        {"pairs": ("uint64", "in", U64, "2 * n"), "sums": ("uint64", "out", None, "n")},
        {"pairs": 4, "": 6},
    ),
}


def _port(name: str, tmp: Path) -> str:
    params_c, body, grid, tensors, _ = KERNELS[name]
    params: dict = {k: tensor_param([s[3]], s[1], s[0], s[2]) for k, s in tensors.items()}
    params["n"] = 300
    bdict = grid_binding([grid], params, [{"n": 300}, {"n": 130}], block=128)
    cu = tmp / f"{name}.cu"
    cu.write_text(f"__global__ void k({params_c}) {{\n"
                  "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n" + body + "}\n")  # fmt: skip
    run, points = run_literal_exactly(cu, bdict, "nki", tmp)
    assert len(points) >= 2 and not run.mismatches, run.mismatches
    return (tmp / f"{name}_nki.py").read_text()


def _dmas_per_tensor(port_src: str, inputs: dict) -> dict[str, int]:
    """DMAs that read or write each HBM tensor when the port runs on ``inputs`` (n = 300): the
    inputs by name, the outputs the kernel allocates together under ""."""
    from cuda2nki import api
    from cuda2nki.fidelity.tracefind import _dma_item

    with tempfile.TemporaryDirectory() as d:
        port = Path(d) / "port.py"
        port.write_text(port_src)
        sim = api.simulate(port, inputs)
    out: dict[str, int] = {}
    for ins in sim.trace:
        for tag in ("src", "dst"):
            item = _dma_item(ins, tag)
            if item is None:
                continue
            name = item[0] if isinstance(item, tuple) and item else item
            name = name if isinstance(name, str) else ""  # the outputs the kernel allocates
            out[name] = out.get(name, 0) + 1
    return out


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_a_64_bit_buffer_moves_its_limb_pairs_by_one_dma(name: str, tmp_path: Path) -> None:
    src = _port(name, tmp_path)
    rng = np.random.default_rng(1)
    inputs = {
        k: rng.integers(0, 2**32, size=(600 if s[3] == "2 * n" else 300, 2), dtype=np.uint32)
        for k, s in KERNELS[name][3].items()
        if s[1] != "out"
    }
    counts = _dmas_per_tensor(src, inputs)
    expected = KERNELS[name][4]
    assert {k: counts.get(k, 0) for k in expected} == expected, counts
