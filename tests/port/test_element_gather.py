"""An element gather along the free axis (``loss[i] = -log(probs[i * V + t[i]])``) ports through
a recogniser on both targets: one element per partition, picked by an indirect DMA from the
tensor read as a column of its elements (``reshape((size, 1)).vector_select(0, idx)``)."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.binding import load_binding
from cuda2nki.ir import parser, printer
from cuda2nki.pipeline import port_file
from tests.port.acceptance import CORPUS, check_kernel

TARGETS = ["nki", "legacy"]
KERNELS = [
    "gather/nll_flat",
    "gather/nll_btv",
    "gather/pick_label_scaled",
    "pointers/nll_row_alias",
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rel", KERNELS)
def test_corpus_element_gathers_match(rel, target, tmp_path) -> None:
    out = check_kernel(CORPUS / f"{rel}.cu", target, tmp_path, max_points=3)
    assert out.status == "match", out
    assert len(out.shapes) >= 3


_VARIANTS = {
    "column_major": "    int j = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (j < n) y[j] = x[t[j] * n + j];\n",
    "ternary_guard": "    int k = threadIdx.x + blockIdx.x * blockDim.x;\n"
    "    if (k >= n) return;\n"
    "    y[k] = t[k] < m ? 2.0f * x[k * m + t[k]] : 0.0f;\n",
    "clamped_index": "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = x[i * m + min(max(t[i], 0), m - 1)] + 1.0f;\n",
    "local_index": "    unsigned int row = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (row >= n) return;\n"
    "    int c = t[row];\n"
    "    float v = x[row * m + c];\n"
    "    y[row] = v * v;\n",
}


def _variant(tmp_path, name: str, body: str) -> tuple:
    src = tmp_path / f"{name}.cu"
    src.write_text(
        "__global__ void k(float* y, const float* x, const int* t, int n, int m) {\n"
        f"{body}}}\n"
        "void launch(float* y, const float* x, const int* t, int n, int m) {\n"
        "    k<<<(n + 127) / 128, 128>>>(y, x, t, n, m);\n}\n"
    )
    rows = '["m", "n"]' if name == "column_major" else '["n", "m"]'
    (tmp_path / f"{name}.toml").write_text(
        'kernel = "k"\nidiom = "gather"\n[launch]\ngrid = ["ceil_div(n, 128)"]\nblock = [128]\n'
        '[params]\ny = { shape = ["n"], dtype = "float32", role = "out" }\n'
        f'x = {{ shape = {rows}, dtype = "float32", role = "in" }}\n'
        't = { shape = ["n"], dtype = "int32", role = "in", range = [0, "m"] }\n'
        "n = 130\nm = 9\n[check]\nrtol = 1e-6\natol = 1e-6\n"
        "[[check.shapes]]\nn = 3\nm = 200\n[[check.shapes]]\nn = 257\nm = 1\n"
    )
    return src


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(_VARIANTS))
def test_element_gather_spellings_match(name, target, tmp_path) -> None:
    src = _variant(tmp_path, name, _VARIANTS[name])
    out = check_kernel(src, target, tmp_path, max_points=3)
    assert out.status == "match", out


def test_port_spells_a_flat_column_gather(tmp_path) -> None:
    path = CORPUS / "gather/nll_btv.cu"
    res = port_file(path, binding=load_binding(path.with_suffix(".toml")), target="nki")
    assert not res.literal
    assert "probs.reshape((probs.shape[0] * probs.shape[1] * probs.shape[2], 1))" in res.source
    assert ".vector_select(0, " in res.source
    legacy = port_file(path, binding=load_binding(path.with_suffix(".toml")), target="legacy")
    assert not legacy.literal and "probs.reshape((" in legacy.source


def test_flat_indirect_round_trips() -> None:
    path = CORPUS / "gather/nll_flat.cu"
    res = port_file(path, binding=load_binding(path.with_suffix(".toml")), target="nki")
    text = printer.to_text(res.ir_tiles)
    assert "indirect_flat(" in text
    assert parser.parse(text) == res.ir_tiles


def test_row_stride_of_a_reshaped_gather() -> None:
    """The choice the port relies on: ``vector_select`` on a reshaped view steps rows of the view
    (one element), while ``.ap(vector_offset=...)`` steps rows of the base tensor's shape."""
    from cuda2nki.nkisim import isa as nisa
    from cuda2nki.nkisim import language as nl
    from cuda2nki.nkisim import state as st
    from cuda2nki.nkisim.tensor import wrap_host

    s = st.SimState()
    st.push(s)
    try:
        data = np.arange(12, dtype=np.float32).reshape(3, 4)
        h = wrap_host(data)
        idx = nl.ndarray((2, 1), nl.int32)
        idx.assign(np.array([[5], [7]]))
        flat = nl.ndarray((2, 1), nl.float32)
        nisa.dma_copy(dst=flat, src=h.reshape((12, 1)).vector_select(0, idx))
        np.testing.assert_array_equal(flat.values(), [[5.0], [7.0]])
        rows = nl.ndarray((2, 1), nl.int32)
        rows.assign(np.array([[0], [1]]))
        picked = nl.ndarray((2, 1), nl.float32)
        nisa.dma_copy(dst=picked, src=h.ap([[4, 2], [1, 1]], offset=1, vector_offset=rows))
        np.testing.assert_array_equal(picked.values(), [[1.0], [5.0]])
    finally:
        st.pop()


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rel", ["gather/nll_btv", "gather/pick_label_scaled"])
def test_check_passes_element_gathers_without_warnings(rel, target, tmp_path) -> None:
    """``check`` sizes a gather's work by what it writes (not by the table it picks from) and
    tells gathers from one table apart by the elements they pick: no literal (C2N5001), reload
    (C2N5006) or small-DMA (C2N5007) finding on a port that moves one element per row.  Where the
    gather runs so often that its one-element DMAs dominate (nll_btv's batch loop at B=130), the
    port carries the generated, explained suppression of exactly those findings (C2N5013)."""
    from cuda2nki import api

    cu = CORPUS / f"{rel}.cu"
    port = tmp_path / "port.py"
    port.write_text(api.port(cu, api=target).source)
    report = api.check(cu, port, binding=cu.with_suffix(".toml"), seeds=1)
    assert report.verdict == "pass", [d.message for d in report.findings]
    assert not [d for d in report.findings if str(d.severity) in ("warning", "error")]
