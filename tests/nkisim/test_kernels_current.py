"""Our NKI kernels in the current ``nki`` API, run through the simulator against NumPy."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

nkisim = pytest.importorskip("cuda2nki.nkisim")
if not hasattr(nkisim, "simulate_kernel"):
    pytest.skip("simulator entry points not available yet", allow_module_level=True)


def _catalog():
    name = "nkisim_test_kernel_catalog"
    if name not in sys.modules:
        path = Path(__file__).resolve().parent / "kernels" / "catalog.py"
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


cat = _catalog()
API = "current"
PARAMS = cat.params(API)


@pytest.mark.parametrize(("case", "shape"), PARAMS, ids=[cat.case_id(c, s) for c, s in PARAMS])
def test_kernel_matches_reference(case, shape):
    cat.check_case(API, case, shape)


# Figures computed by hand from the kernel structure (fp32, 4 bytes per element).
def test_profile_tensor_add_256x1024():
    # 2 row tiles x 2 column tiles; per tile 2 loads + 1 store and one tensor_tensor
    eng, n_dma, nbytes = cat.run_for_figures(API, "tensor_add", (256, 1024))
    assert n_dma == 12
    assert nbytes == 3 * 256 * 1024 * 4
    assert eng == {"dma": 12, "vector": 4}


def test_profile_tensor_add_ragged_bytes():
    # ragged tiles move exactly the elements of the tensor, no padding
    eng, n_dma, nbytes = cat.run_for_figures(API, "tensor_add", (300, 700))
    assert n_dma == 3 * 3 * 2
    assert nbytes == 3 * 300 * 700 * 4


def test_profile_matmul_tiled_k256():
    # one (128 x 512) block, two K tiles: 2 x (lhsT + rhs loads), 2 matmuls, 1 PSUM copy, 1 store
    eng, n_dma, nbytes = cat.run_for_figures(API, "matmul_tiled", (256, 128, 512))
    assert n_dma == 5
    assert eng["tensor"] == 2
    assert sum(v for k, v in eng.items() if k not in ("dma", "tensor")) == 1
    assert nbytes == (256 * 128 + 256 * 512 + 128 * 512) * 4


def test_profile_softmax_128x256():
    # load, row max (vector), exp with row sums (scalar), reciprocal, scale, store
    eng, n_dma, nbytes = cat.run_for_figures(API, "softmax", (128, 256))
    assert n_dma == 2 and nbytes == 2 * 128 * 256 * 4
    assert eng["scalar"] >= 1
    assert sum(v for k, v in eng.items() if k != "dma") == 4


def test_profile_column_sum_256x512():
    # one 512-column tile, two row tiles: 2 loads, 2 ones-matmuls, memset, PSUM copy, 1 store
    eng, n_dma, nbytes = cat.run_for_figures(API, "column_sum", (256, 512))
    assert n_dma == 3 and eng["tensor"] == 2
    assert nbytes == (256 * 512 + 512) * 4


def _profile(stem: str, shape: tuple):
    case = cat.by_stem(stem)
    inputs = case.make(cat.np.random.default_rng(0), shape)
    return cat.simulate(API, case, inputs, profile=True).profile


def test_profile_matmul_cost_model_fp32_vs_bf16():
    # fp32: each (K=128, M=128, N=512) matmul costs max(min(64, 128), 512) x 4 = 2048 cycles
    p = _profile("matmul_tiled", (256, 128, 512))
    assert p.instructions == {"dma": 5, "tensor": 2, "vector": 1}
    assert p.cycles["tensor"] == 2 * 2048
    assert p.cycles["vector"] == 512  # PSUM -> SBUF copy of 512 elements per partition
    assert p.matmul_flops == 2 * 128 * 512 * 256
    assert p.peak_psum_banks == 1 and p.peak_psum_bytes_per_partition == 2048
    assert p.dma_bytes == (256 * 128 + 256 * 512 + 128 * 512) * 4
    # every DMA spans 128 partitions
    assert p.dma_avg_bytes_per_partition == p.dma_bytes / (5 * 128)
    # bf16 inputs: the same matmul shape costs 512 cycles (no fp32 x4)
    q = _profile("matmul_bf16", (128, 256, 512))
    assert q.instructions["tensor"] == 2
    assert q.cycles["tensor"] == 2 * 512
    assert q.matmul_flops == 2 * 128 * 512 * 256


RAGGED = [(c, c.shapes_for(API)[-1]) for c in dict.fromkeys(c for c, _ in PARAMS)]


@pytest.mark.parametrize(("case", "shape"), RAGGED, ids=[cat.case_id(c, s) for c, s in RAGGED])
def test_ragged_slices_never_read_uninitialised_memory(case, shape):
    # min()-bounded slices touch only written elements, so the strict mode stays silent
    inputs = case.make(cat.np.random.default_rng(1), shape)
    res = cat.simulate(API, case, inputs, strict_uninit=True)
    assert not [w for w in res.warnings if w.code == "C2N3020"]
