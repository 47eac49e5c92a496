"""Trace records: named fields the profile and the fidelity checks read, at the port's lines."""

from __future__ import annotations

import pickle
import textwrap

import numpy as np

from cuda2nki.nkisim import load_kernel, simulate_kernel
from cuda2nki.nkisim.state import Instr

PORT = """
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def k(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[0:128, :])  # LOAD
    u = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=u, data1=t, data2=t, op=nl.add)  # ADD
    nisa.dma_copy(dst=out[0:128, :], src=u)  # STORE
    return out
"""


def test_records_have_named_fields_and_port_lines(tmp_path):
    path = tmp_path / "port.py"
    path.write_text(textwrap.dedent(PORT))
    lines = {
        tag: i + 1
        for i, ln in enumerate(path.read_text().splitlines())
        for tag in ("LOAD", "ADD", "STORE")
        if ln.endswith(f"# {tag}")
    }
    a = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
    res = simulate_kernel(load_kernel(str(path), "k"), {"a": a})
    np.testing.assert_array_equal(res.outputs, a + a)
    load, add, store = res.trace
    assert all(isinstance(i, Instr) for i in res.trace)
    assert (load.engine, load.op, load.file, load.line) == (
        "dma",
        "dma_copy",
        str(path),
        lines["LOAD"],
    )
    assert load.shapes == ((128, 64), (128, 64)) and load.buffers == ("sbuf", "hbm")
    assert load.dtypes == ("float32", "float32")
    assert (load.partitions, load.free, load.dma_bytes) == (128, 64, 128 * 64 * 4)
    assert load.extra[0][0] == "src"  # the HBM region, for reload detection
    assert (add.engine, add.op, add.line) == ("vector", "tensor_tensor", lines["ADD"])
    assert (add.partitions, add.free) == (128, 64) and add.extra[0] == "add"
    assert len(add.shapes) == 3 and add.buffers == ("sbuf", "sbuf", "sbuf")
    assert (store.line, store.buffers) == (lines["STORE"], ("shared_hbm", "sbuf"))
    assert store.extra[0][0] == "dst"  # the HBM buffer written: later loads of it are no reloads
    again = pickle.loads(pickle.dumps(res.trace))
    assert again == res.trace and again[0].line == lines["LOAD"]
    assert "engine='dma'" in repr(load)
