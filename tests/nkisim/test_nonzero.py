"""``nisa.nonzero_with_count`` (current API, trn2 and newer): per partition whose SBUF index is
a multiple of 16, the indices of the nonzero elements (plus ``index_offset``), ``padding_val``
in the rest and the count last; the other partitions of ``dst`` are left as they were."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.nkisim import load_kernel, simulate_kernel

CUR = "import nki\nimport nki.language as nl\nimport nki.isa as nisa\n"

KERNEL = """

@nki.jit
def k(x):
    P, T = x.shape
    out = nl.ndarray((P, T + 1), dtype=nl.int32, buffer=nl.shared_hbm)
    s = nl.ndarray((P, T), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=s, src=x)
    d = nl.ndarray((P, T + 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=d, value=7)
    nisa.nonzero_with_count(dst=d, src=s{args})
    nisa.dma_copy(dst=out, src=d)
    return out
"""


def run(tmp_path, x, args="", target=None):
    p = tmp_path / "port.py"
    p.write_text(CUR + textwrap.dedent(KERNEL.format(args=args)))
    return simulate_kernel(load_kernel(p), [x], target=target).outputs


def expected(x, offset=0, pad=-1):
    p, t = x.shape
    out = np.full((p, t + 1), 7, np.int64)
    for i in range(0, p, 16):
        idx = np.flatnonzero(x[i])
        out[i, :t] = pad
        out[i, : idx.size] = idx + offset
        out[i, t] = idx.size
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize(("p", "t"), [(128, 8), (32, 64), (16, 5), (1, 12)])
@pytest.mark.parametrize(
    ("args", "offset", "pad"), [("", 0, -1), (", index_offset=16, padding_val=-5", 16, -5)]
)
def test_indices_padding_and_count_on_every_16th_partition(
    tmp_path, dtype, p, t, args, offset, pad
):
    rng = np.random.default_rng(p * t)
    x = (rng.random((p, t)) < 0.4).astype(dtype) * rng.integers(1, 9, (p, t)).astype(dtype)
    x[0, :] = 0 if p > 1 else x[0, :]  # a row with no nonzero element where there is room
    out = run(tmp_path, x, args)
    np.testing.assert_array_equal(out, expected(x, offset, pad))


def test_documented_example(tmp_path):
    x = np.zeros((16, 8), np.float32)
    x[0] = [0, 1, 1, 0, 0, 1, 0, 0]
    out = run(tmp_path, x, ", index_offset=16, padding_val=-1")
    np.testing.assert_array_equal(out[0], [17, 18, 21, -1, -1, -1, -1, -1, 3])
    assert (out[1:] == 7).all()


@pytest.mark.parametrize(
    ("kernel_change", "code"),
    [
        (
            (
                "(P, T + 1), dtype=nl.int32, buffer=nl.sbuf",
                "(P, T), dtype=nl.int32, buffer=nl.sbuf",
            ),
            "C2N3014",
        ),
        (
            (
                "(P, T + 1), dtype=nl.int32, buffer=nl.sbuf",
                "(P, T + 1), dtype=nl.float32, buffer=nl.sbuf",
            ),
            "C2N3016",
        ),
    ],
)
def test_constraints(tmp_path, kernel_change, code):
    p = tmp_path / "port.py"
    text = KERNEL.format(args="").replace(*kernel_change)
    p.write_text(CUR + textwrap.dedent(text))
    with pytest.raises(DiagnosticError) as ei:
        simulate_kernel(load_kernel(p), [np.ones((16, 8), np.float32)])
    assert ei.value.diagnostic.code == code and ei.value.diagnostic.loc.line == 14


def test_trn1_has_no_such_instruction(tmp_path):
    with pytest.raises(DiagnosticError) as ei:
        run(tmp_path, np.ones((16, 8), np.float32), target="trn1")
    assert ei.value.diagnostic.code == "C2N3001"
