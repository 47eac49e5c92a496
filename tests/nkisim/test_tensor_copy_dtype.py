"""Current-API ``nisa.tensor_copy(dst, src, dtype=...)``: the output type is ``dst``'s, whatever
``dtype=`` names (ruling in docs/simulator-rulings.md).  The public matmul tutorial evacuates
its fp32 PSUM tile into an fp32 SBUF tile passing the HBM result's type (bf16) as ``dtype=``; that
is accepted, and the values keep dst's precision until the DMA writes them to the result."""

from __future__ import annotations

import textwrap

import ml_dtypes
import numpy as np
import pytest

from cuda2nki.nkisim import load_kernel, simulate_kernel

CUR = "import nki\nimport nki.language as nl\nimport nki.isa as nisa\nimport numpy as np\n"
BF16 = ml_dtypes.bfloat16


def _run(tmp_path, body: str, inputs, out_dtype: str, out_shape=(128, 64)):
    src = f"""
    @nki.jit
    def k(a, b):
        out = nl.ndarray({out_shape}, dtype={out_dtype}, buffer=nl.shared_hbm)
{textwrap.indent(textwrap.dedent(body), " " * 8)}
        return out
    """
    p = tmp_path / "port.py"
    p.write_text(CUR + textwrap.dedent(src))
    res = simulate_kernel(load_kernel(p, "k"), inputs)
    return res.outputs[0] if isinstance(res.outputs, (list, tuple)) else res.outputs


EVACUATE = """
a_t = nl.ndarray((128, 128), dtype=a.dtype, buffer=nl.sbuf)
b_t = nl.ndarray((128, 64), dtype=b.dtype, buffer=nl.sbuf)
nisa.dma_copy(dst=a_t, src=a)
nisa.dma_copy(dst=b_t, src=b)
acc = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.psum)
nisa.nc_matmul(dst=acc, stationary=a_t, moving=b_t)
{dst} = nl.ndarray((128, 64), dtype={sb_dtype}, buffer=nl.sbuf)
nisa.tensor_copy(dst={dst}, src=acc, dtype={dtype})
nisa.dma_copy(dst=out, src={dst})
"""


@pytest.mark.parametrize("dtype", ["out.dtype", "nl.bfloat16", "np.float16", "nl.float32"])
@pytest.mark.parametrize("dst", ["res_sb", "evacuated"])
def test_dtype_other_than_dst_is_accepted_and_dst_keeps_its_type(tmp_path, dtype, dst):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((128, 128)).astype(BF16)
    b = rng.standard_normal((128, 64)).astype(BF16)
    want = a.astype(np.float32).T @ b.astype(np.float32)
    body = EVACUATE.format(dst=dst, sb_dtype="nl.float32", dtype=dtype)
    # an fp32 result: the SBUF tile held fp32 values, not values rounded through `dtype`
    got = _run(tmp_path, body, [a, b], "nl.float32")
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    # a bf16 result (the tutorial's): rounded once, by the DMA into it
    got16 = _run(tmp_path, body, [a, b], "nl.bfloat16")
    np.testing.assert_array_equal(got16, want.astype(BF16))


@pytest.mark.parametrize(
    "engine", ["nisa.vector_engine", "nisa.scalar_engine", "nisa.gpsimd_engine"]
)
def test_dtype_on_an_sbuf_copy_of_each_engine(tmp_path, engine):
    body = f"""
    x = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=b)
    y = nl.ndarray((128, 64), dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.tensor_copy(dst=y, src=x, engine={engine}, dtype=nl.float32)
    nisa.dma_copy(dst=out, src=y)
    """
    b = np.random.default_rng(4).standard_normal((128, 64)).astype(np.float32)
    got = _run(tmp_path, body, [b, b], "nl.float32")
    np.testing.assert_array_equal(got, b.astype(BF16).astype(np.float32))
