"""``neuronxcc.nki.kernels``: the compiler's kernel library imports, and each documented name is
refused (C2N3001, naming it) where it is used, not where it is imported."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.nkisim import load_module, simulate_kernel
from cuda2nki.nkisim.library_kernels import documented_apis

LEG = "from neuronxcc import nki\nimport neuronxcc.nki.language as nl\n"

OWN_KERNEL = """
@nki.jit
def copy(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    return out
"""


def module(tmp_path, text: str):
    p = tmp_path / "uses_library.py"
    p.write_text(textwrap.dedent(text))
    return load_module(p), p


@pytest.mark.parametrize(
    ("imports", "use", "api"),
    [
        (
            "from neuronxcc.nki.kernels.attention import flash_fwd",
            "baremetal(flash_fwd)[1, 2](a)",
            "neuronxcc.nki.kernels.attention.flash_fwd",
        ),
        (
            "from neuronxcc.nki.kernels.vision import select_and_scatter_kernel as sas",
            "benchmark(warmup=5, iters=10)(sas)(a)",
            "neuronxcc.nki.kernels.vision.select_and_scatter_kernel",
        ),
        (
            "import neuronxcc.nki.kernels.vision as vision",
            "nki.simulate_kernel(vision.resize_nearest_fixed_dma_kernel[2], a)",
            "neuronxcc.nki.kernels.vision.resize_nearest_fixed_dma_kernel",
        ),
        (
            "from neuronxcc.nki.kernels.attention import FlashConfig",
            "FlashConfig(seq_tile_size=512)",
            "neuronxcc.nki.kernels.attention.FlashConfig",
        ),
        (
            "import neuronxcc.nki.kernels as kernels",
            "nki.jit(kernels.allocated_fused_rms_norm_qkv)(a, a)",
            "neuronxcc.nki.kernels.allocated_fused_rms_norm_qkv",
        ),
    ],
)
def test_library_kernel_is_refused_where_used(tmp_path, imports, use, api):
    mod, path = module(
        tmp_path,
        LEG
        + "from neuronxcc.nki import baremetal, benchmark\n"
        + imports
        + "\n"
        + OWN_KERNEL
        + f"\n\ndef run(a):\n    return {use}\n",
    )
    # the file's own kernel still runs: the import refused nothing
    a = np.arange(8 * 4, dtype=np.float32).reshape(8, 4)
    np.testing.assert_array_equal(nki_run(mod, a), a)
    with pytest.raises(DiagnosticError) as ei:
        mod.run(a)
    d = ei.value.diagnostic
    assert d.code == "C2N3001"
    assert api in d.message
    assert d.loc.file == str(path)
    assert d.loc.line == len(path.read_text().splitlines())


def nki_run(mod, a):
    out = simulate_kernel(mod.copy, [a]).outputs
    return out[0] if isinstance(out, (list, tuple)) else out


def test_unknown_library_name_is_refused_at_its_import(tmp_path):
    with pytest.raises(DiagnosticError) as ei:
        module(tmp_path, LEG + "from neuronxcc.nki.kernels.attention import flash_fwd_v9\n")
    d = ei.value.diagnostic
    assert d.code == "C2N3001"
    assert "neuronxcc.nki.kernels.attention.flash_fwd_v9" in d.message


def test_every_documented_name_is_listed_for_coverage():
    apis = documented_apis()
    assert "neuronxcc.nki.kernels.attention.flash_attn_bwd" in apis
    assert "neuronxcc.nki.kernels.vision.resize_nearest_fixed_dma_kernel" in apis
    assert "neuronxcc.nki.kernels.allocated_fused_self_attn_for_SD_small_head_size" in apis
