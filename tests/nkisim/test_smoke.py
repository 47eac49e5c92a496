"""Smoke tests of the simulator's core: a current-API port loaded from a file, and import hygiene."""

import sys
import textwrap

import numpy as np

from cuda2nki.nkisim import load_kernel, simulate_kernel

ADD = """
import nki
import nki.language as nl
import nki.isa as nisa

@nki.jit
def add(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in range(a.shape[0] // 128):
        rows = slice(i * 128, (i + 1) * 128)
        t = nl.ndarray((128, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
        u = nl.ndarray((128, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[rows, :])
        nisa.dma_copy(dst=u, src=b[rows, :])
        r = nl.ndarray((128, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=r, data1=t, data2=u, op=nl.add)
        nisa.dma_copy(dst=out[rows, :], src=r)
    return out
"""


def write(tmp_path, text, name="port.py"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def test_add_port_runs_and_traces(tmp_path):
    k = load_kernel(write(tmp_path, ADD))
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 64), dtype=np.float32)
    b = rng.standard_normal((256, 64), dtype=np.float32)
    res = simulate_kernel(k, {"a": a, "b": b})
    np.testing.assert_array_equal(res.outputs, a + b)
    assert [i.op for i in res.trace[:4]] == ["dma_copy", "dma_copy", "tensor_tensor", "dma_copy"]
    assert res.trace[2].line == 16 and res.trace[2].engine == "vector"
    assert "nki" not in sys.modules and "neuronxcc" not in sys.modules
