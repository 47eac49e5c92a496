"""Tensors bound N-D but walked flat over merged dims (``label[n]`` with ``n < B*T`` into a
``[B, T]`` binding, ``dout[r * OC + o]`` with ``r < B*T`` into ``[B, T, OC]``) are read through a
view of the merged dims: they port through a recogniser on both targets with correct numbers
instead of C2N2013 "does not split along its shape"."""

from __future__ import annotations

import pytest

from cuda2nki.binding import load_binding
from cuda2nki.pipeline import port_file
from tests.port.acceptance import CORPUS, check_kernel

TARGETS = ["nki", "legacy"]
KERNELS = [
    "views/nll_merged_rows",
    "views/softmax_grad_stride",
    "views/bias_grad_merged",
    "views/embed_flat3d",
    "views/embed_rows_loop",
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rel", KERNELS)
def test_corpus_merged_views_match(rel, target, tmp_path) -> None:
    out = check_kernel(CORPUS / f"{rel}.cu", target, tmp_path, max_points=3)
    assert out.status == "match", out
    assert len(out.shapes) >= 3


_HEAD = "__global__ void k(float* y, const float* x, const int* t, int B, int T, int V) {\n"
_LAUNCH = (
    "void launch(float* y, const float* x, const int* t, int B, int T, int V) {\n"
    "    k<<<(B * T + 127) / 128, 128>>>(y, x, t, B, T, V);\n}\n"
)
#: one flat row index over B*T, spelled several ways, into (B, T) and (B, T, V) bindings
_VARIANTS = {
    "flat": "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < B * T) y[i] = x[i * V + t[i]];\n",
    "quotient_remainder": "    int n = threadIdx.x + blockDim.x * blockIdx.x;\n"
    "    if (n >= B * T) return;\n"
    "    int b = n / T, s = n % T;\n"
    "    y[b * T + s] = 2.0f * x[(b * T + s) * V + t[b * T + s]];\n",
    "unsigned_alias": "    unsigned int row = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (row < B * T) {\n"
    "        const float* xr = x + row * V;\n"
    "        int c = t[row];\n"
    "        y[row] = xr[c] * xr[c];\n"
    "    }\n",
    "clamped": "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < B * T) y[i] = x[i * V + min(max(t[i], 0), V - 1)] + 1.0f;\n",
}


def _variant(tmp_path, name: str, body: str, x_shape: str) -> tuple:
    src = tmp_path / f"{name}.cu"
    src.write_text(_HEAD + body + "}\n" + _LAUNCH)
    (tmp_path / f"{name}.toml").write_text(
        'kernel = "k"\nidiom = "gather"\n[launch]\ngrid = ["ceil_div(B * T, 128)"]\n'
        "block = [128]\n[params]\n"
        'y = { shape = ["B * T"], dtype = "float32", role = "out" }\n'
        f'x = {{ shape = {x_shape}, dtype = "float32", role = "in" }}\n'
        't = { shape = ["B", "T"], dtype = "int32", role = "in", range = [0, "V"] }\n'
        "B = 2\nT = 160\nV = 24\n[[check.shapes]]\nB = 3\nT = 130\nV = 5\n"
    )
    return src, load_binding(tmp_path / f"{name}.toml")


@pytest.mark.parametrize("x_shape", ['["B", "T", "V"]', '["B * T * V"]'])
@pytest.mark.parametrize("name", sorted(_VARIANTS))
def test_flat_rows_over_merged_dims_are_recognised(name, x_shape, tmp_path) -> None:
    src, binding = _variant(tmp_path, name, _VARIANTS[name], x_shape)
    res = port_file(src, binding=binding, target="nki")
    assert res.source is not None, [str(d) for d in res.diagnostics]
    assert not res.literal
    assert res.idiom == "gather"
    assert not any(d.code == "C2N2013" for d in res.diagnostics)


@pytest.mark.parametrize("name", ["flat", "quotient_remainder"])
def test_flat_rows_variants_match(name, tmp_path) -> None:
    src, _ = _variant(tmp_path, name, _VARIANTS[name], '["B", "T", "V"]')
    for target in TARGETS:
        out = check_kernel(src, target, tmp_path, max_points=2)
        assert out.status == "match", out
