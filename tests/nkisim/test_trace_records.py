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


SKIPPING = """
import nki
import nki.isa as nisa
import nki.language as nl
import numpy as np


@nki.jit
def k(a, rows):
    out = nl.ndarray((128, 4), dtype=a.dtype, buffer=nl.shared_hbm)
    idx = nl.load(rows)
    t = nl.zeros((128, 4), dtype=a.dtype, buffer=nl.sbuf)
    src = a.ap([[1, 128], [1, 4]], offset=0, vector_offset=idx)
    nisa.dma_copy(dst=t, src=src, oob_mode=nisa.oob_mode.skip)  # SOME
    none = nl.full((128, 1), -1, dtype=nl.int32, buffer=nl.sbuf)
    src = a.ap([[1, 128], [1, 4]], offset=0, vector_offset=none)
    nisa.dma_copy(dst=t[:, 0:4], src=src, oob_mode=nisa.oob_mode.skip)  # NONE
    nisa.dma_copy(dst=out, src=t)
    return out
"""


def test_skipped_rows_and_elements_move_no_bytes_and_read_no_region(tmp_path):
    """A gather whose out-of-range rows (and elements past the end) are skipped moves only the
    elements it reads; one that skips everything moves nothing and reads no region (so
    repeating it is no reload of anything)."""
    path = tmp_path / "port.py"
    path.write_text(textwrap.dedent(SKIPPING))
    a = np.arange(10, dtype=np.float32)
    rows = np.full((128, 1), -1, dtype=np.int32)
    rows[0, 0], rows[5, 0], rows[9, 0] = 2, 8, 0  # row 5 reads 8, 9 and skips 10, 11
    res = simulate_kernel(load_kernel(str(path), "k"), {"a": a, "rows": rows})
    got = np.asarray(res.outputs)
    np.testing.assert_array_equal(got[0], [2, 3, 4, 5])
    np.testing.assert_array_equal(got[5], [8, 9, 0, 0])
    np.testing.assert_array_equal(got[9], [0, 1, 2, 3])
    assert not got[[1, 2, 3, 4, 6, 7, 8, 10]].any()
    lines = {
        tag: i + 1
        for i, ln in enumerate(path.read_text().splitlines())
        for tag in ("SOME", "NONE")
        if ln.endswith(f"# {tag}")
    }
    some, none = (next(i for i in res.trace if i.line == lines[t]) for t in ("SOME", "NONE"))
    assert (some.dma_bytes, some.partitions) == ((4 + 2 + 4) * 4, 3)
    assert some.extra[0][0] == "src"
    assert none.dma_bytes == 0 and not [x for x in none.extra if x[0] == "src"]
