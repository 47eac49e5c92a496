"""Legacy slices of an HBM tensor that run past its end, read or written under a mask that
leaves the rows or columns outside the tensor out (``nkisim/overrun.py``), and the masked
``nisa.dma_copy`` of an index view with elements outside its tensor."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.nkisim import load_kernel, simulate_kernel

LEG = "from neuronxcc import nki\nimport neuronxcc.nki.language as nl\nimport neuronxcc.nki.isa as nisa\n"


def kern(tmp_path, body: str):
    p = tmp_path / "port.py"
    p.write_text(LEG + textwrap.dedent(body))
    return load_kernel(p, "k")


def refused_at(k, inputs, line: int):
    with pytest.raises(DiagnosticError) as ei:
        simulate_kernel(k, inputs)
    d = ei.value.diagnostic
    assert d.code == "C2N3019" and d.loc.line == line, d
    return d


A = np.arange(300 * 6, dtype=np.float32).reshape(300, 6)


@pytest.mark.parametrize("tile", [128, 64])
def test_rows_past_the_end_under_a_mask_by_dma_copy(tmp_path, tile):
    k = kern(
        tmp_path,
        f"""
        @nki.jit
        def k(a):
            n, m = a.shape
            out = nl.ndarray((n, m), nl.float32, buffer=nl.shared_hbm)
            i_p = nl.arange({tile})[:, None]
            for r in nl.affine_range((n + {tile} - 1) // {tile}):
                t = nl.zeros(({tile}, m), nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(src=a[r * {tile}:(r + 1) * {tile}, 0:m], dst=t,
                              mask=(r * {tile} + i_p < n))
                u = nl.multiply(t, 2.0)
                nisa.dma_copy(src=u, dst=out[r * {tile}:(r + 1) * {tile}, :],
                              mask=(r * {tile} + i_p < n))
            return out
        """,
    )
    np.testing.assert_array_equal(simulate_kernel(k, [A]).outputs, A * 2)


def test_columns_past_the_end_under_a_mask_by_load_and_store(tmp_path):
    k = kern(
        tmp_path,
        """
        @nki.jit
        def k(a):
            n, m = a.shape
            out = nl.ndarray((128, m), nl.float32, buffer=nl.shared_hbm)
            i_f = nl.arange(4)[None, :]
            for c in nl.affine_range((m + 3) // 4):
                t = nl.load(a[0:128, c * 4:c * 4 + 4], mask=(c * 4 + i_f < m))
                nl.store(out[0:128, c * 4:c * 4 + 4], t, mask=(c * 4 + i_f < m))
            return out
        """,
    )
    np.testing.assert_array_equal(simulate_kernel(k, [A]).outputs, A[:128])


def test_an_unmasked_access_past_the_end_is_refused_where_it_reads(tmp_path):
    k = kern(
        tmp_path,
        """
        @nki.jit
        def k(a):
            out = nl.ndarray((128, 6), nl.float32, buffer=nl.shared_hbm)
            t = nl.zeros((128, 6), nl.float32, buffer=nl.sbuf)
            v = a[256:384, 0:6]
            nisa.dma_copy(src=v, dst=t)
            nl.store(out, t)
            return out
        """,
    )
    d = refused_at(k, [A], 10)
    assert "reads outside" in d.message


def test_a_mask_that_keeps_a_row_past_the_end_is_refused(tmp_path):
    k = kern(
        tmp_path,
        """
        @nki.jit
        def k(a):
            out = nl.ndarray((128, 6), nl.float32, buffer=nl.shared_hbm)
            i_p = nl.arange(128)[:, None]
            t = nl.zeros((128, 6), nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(src=a[256:384, :], dst=t, mask=(256 + i_p < 301))
            nl.store(out, t)
            return out
        """,
    )
    refused_at(k, [A], 10)


def test_a_masked_write_past_the_end_of_an_output(tmp_path):
    k = kern(
        tmp_path,
        """
        @nki.jit
        def k(a):
            out = nl.ndarray((300, 6), nl.float32, buffer=nl.shared_hbm)
            i_p = nl.arange(128)[:, None]
            for r in nl.affine_range(3):
                t = nl.load(a[r * 128 + i_p, nl.arange(6)[None, :]], mask=(r * 128 + i_p < 300))
                nisa.dma_copy(src=t, dst=out[r * 128:r * 128 + 128, :], mask=(r * 128 + i_p < 300))
            return out
        """,
    )
    np.testing.assert_array_equal(simulate_kernel(k, [A]).outputs, A)


@pytest.mark.parametrize(
    ("subscript", "what"),
    [("a[301:310, 0:6]", "a start past the end"), ("t[0:130, 0:6]", "an SBUF tile")],
)
def test_other_slices_past_the_end_stay_refused_where_they_are_made(tmp_path, subscript, what):
    k = kern(
        tmp_path,
        f"""
        @nki.jit
        def k(a):
            out = nl.ndarray((128, 6), nl.float32, buffer=nl.shared_hbm)
            t = nl.zeros((128, 6), nl.float32, buffer=nl.sbuf)
            v = {subscript}
            nl.store(out, t)
            return out
        """,
    )
    d = refused_at(k, [A], 9)
    assert "slice" in d.message, what


def test_the_current_api_keeps_refusing_a_slice_past_the_end(tmp_path):
    p = tmp_path / "cur.py"
    p.write_text(
        textwrap.dedent(
            """
            import nki
            import nki.isa as nisa
            import nki.language as nl


            @nki.jit
            def k(a):
                out = nl.ndarray((128, 6), nl.float32, buffer=nl.shared_hbm)
                v = a[256:384, 0:6]
                return out
            """
        )
    )
    with pytest.raises(DiagnosticError) as ei:
        simulate_kernel(load_kernel(p, "k"), [A])
    assert ei.value.diagnostic.code == "C2N3019" and ei.value.diagnostic.loc.line == 10
