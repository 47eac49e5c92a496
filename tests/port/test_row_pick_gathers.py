"""Resampling reads ``src[r(y), c(x)]`` -- a row index that follows the output row, a column
index that follows the output column, both computed from data (scaled, floored, clamped) --
port through the gather recogniser, not thread by thread: each tile fetches its source rows
whole with one indirect DMA and picks the columns on chip (``nc_n_gather``).  Spellings:
texture objects and references, linear and point filtering, clamp and border addressing,
upscaling and downscaling, different block shapes; each port passes our own ``check`` with
nothing above a note, on both NKI APIs."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.diagnostics import Severity
from cuda2nki.fidelity.check import check
from cuda2nki.pipeline import port_file


def _object_host(kernel: str, args: str, call: str, modes: str, block: tuple[int, int]) -> str:
    bx, by = block
    return (
        f"void launch_{kernel}({args}, cudaArray_t a) {{\n"
        "  cudaResourceDesc rd;\n  memset(&rd, 0, sizeof(rd));\n"
        "  rd.resType = cudaResourceTypeArray;\n  rd.res.array.array = a;\n"
        "  cudaTextureDesc td;\n  memset(&td, 0, sizeof(td));\n"
        f"{modes}"
        "  cudaTextureObject_t t = 0;\n  cudaCreateTextureObject(&t, &rd, &td, NULL);\n"
        f"  dim3 block({bx}, {by});\n"
        f"  dim3 grid((ow + {bx - 1}) / {bx}, (oh + {by - 1}) / {by});\n"
        f"  {kernel}<<<grid, block>>>({call});\n"
        "  cudaDestroyTextureObject(t);\n}\n"
    )


_LINEAR_CLAMP = (
    "  td.addressMode[0] = cudaAddressModeClamp;\n  td.addressMode[1] = cudaAddressModeClamp;\n"
    "  td.filterMode = cudaFilterModeLinear;\n  td.readMode = cudaReadModeElementType;\n"
)
_POINT_CLAMP = (
    "  td.addressMode[0] = cudaAddressModeClamp;\n  td.addressMode[1] = cudaAddressModeClamp;\n"
    "  td.filterMode = cudaFilterModePoint;\n"
)
_LINEAR_BORDER = (
    "  td.addressMode[0] = cudaAddressModeBorder;\n  td.addressMode[1] = cudaAddressModeBorder;\n"
    "  td.filterMode = cudaFilterModeLinear;\n"
)

CASES = {
    "bilinear-clamp-upscale-16x16": (
        "#include <cuda_runtime.h>\n#include <string.h>\n"
        "__global__ void upscale(float* out, int ow, int oh, float kx, float ky,\n"
        "                        cudaTextureObject_t t) {\n"
        "  int x = threadIdx.x + blockIdx.x * blockDim.x;\n"
        "  int y = threadIdx.y + blockIdx.y * blockDim.y;\n"
        "  if (x < ow && y < oh) out[y * ow + x] = tex2D<float>(t, (x + 0.5f) * kx, (y + 0.5f) * ky);\n"
        "}\n"
        + _object_host(
            "upscale", "float* out, int ow, int oh", "out, ow, oh, 0.4f, 0.55f, t",
            _LINEAR_CLAMP, (16, 16),
        )
    ),
    "nearest-clamp-downscale-64x2": (
        "#include <cuda_runtime.h>\n#include <string.h>\n"
        "__global__ void shrink(float* dst, int ow, int oh, cudaTextureObject_t t) {\n"
        "  int row = blockIdx.y * blockDim.y + threadIdx.y;\n"
        "  int col = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (row >= oh || col >= ow) return;\n"
        "  float u = col * 2.5f + 0.25f;\n"
        "  float v = row * 1.75f + 0.5f;\n"
        "  dst[row * ow + col] = 2.0f * tex2D<float>(t, u, v) - 1.0f;\n"
        "}\n"
        + _object_host("shrink", "float* dst, int ow, int oh", "dst, ow, oh, t", _POINT_CLAMP, (64, 2))
    ),
    "bilinear-border-offset-32x4": (
        "#include <cuda_runtime.h>\n#include <string.h>\n"
        "__global__ void shift(float* o, int ow, int oh, float dx, cudaTextureObject_t t) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  int j = blockIdx.y * blockDim.y + threadIdx.y;\n"
        "  if (i < ow && j < oh) o[j * ow + i] = tex2D<float>(t, i * 0.8f + dx, j * 1.2f - 1.0f);\n"
        "}\n"
        + _object_host(
            "shift", "float* o, int ow, int oh", "o, ow, oh, 0.3f, t", _LINEAR_BORDER, (32, 4)
        )
    ),
    "reference-bilinear-clamp": (
        "#include <cuda_runtime.h>\n"
        "texture<float, 2, cudaReadModeElementType> picture;\n"
        "__global__ void zoom(float* res, int ow, int oh, float s) {\n"
        "  int c = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  int r = blockIdx.y * blockDim.y + threadIdx.y;\n"
        "  if (c < ow && r < oh) res[r * ow + c] = tex2D(picture, c * s + 0.5f, r * s + 0.5f);\n"
        "}\n"
        "void launch_zoom(float* res, int ow, int oh, cudaArray* a) {\n"
        "  picture.filterMode = cudaFilterModeLinear;\n"
        "  picture.addressMode[0] = cudaAddressModeClamp;\n"
        "  picture.addressMode[1] = cudaAddressModeClamp;\n"
        "  cudaBindTextureToArray(picture, a);\n"
        "  zoom<<<dim3((ow + 31) / 32, (oh + 7) / 8), dim3(32, 8)>>>(res, ow, oh, 0.65f);\n"
        "}\n"
    ),
}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_resampling_gathers_rows_once_and_picks_on_chip(
    case: str, target: str, tmp_path: Path
) -> None:
    cu = tmp_path / "resample.cu"
    cu.write_text(CASES[case])
    res = port_file(cu, target=target)
    assert res.source is not None and not res.literal, [d.message for d in res.diagnostics]
    assert "nc_n_gather" in res.source
    port = tmp_path / "resample_port.py"
    port.write_text(res.source)
    rep = check(cu, port, kernel=res.kernel, seeds=1)
    above = [f"{d.code} {d.message}" for d in rep.findings if d.severity != Severity.NOTE]
    assert rep.verdict == "pass" and not above, (rep.numerics, above)


def test_the_tile_evaluator_picks_what_the_intent_reads() -> None:
    """The scheduled IR's per-partition gather (``tensor_gather``) runs in the tile evaluator
    and gives the intent evaluator's numbers, within the IR's own bound."""
    import numpy as np

    from cuda2nki.ir.evaluate import analyse
    from cuda2nki.ir.evaluate_tiles import evaluate_tiles
    from cuda2nki.ir.nodes import TensorGather

    cu = Path(__file__).resolve().parents[2] / "corpus" / "stencil" / "texture_resample.cu"
    res = port_file(cu)
    assert res.ir_tiles is not None and "tensor_gather" in _text(res.ir_tiles)
    assert any(isinstance(s, TensorGather) for s in _statements(res.ir_tiles.body))
    scalars = {"out_w": 70, "out_h": 45, "step_x": 0.7, "step_y": 1.3}
    src = np.random.default_rng(2).standard_normal((60, 50)).astype(np.float32)
    got = evaluate_tiles(res.ir_tiles, {"src": src}, scalars)["resized"]
    ref = analyse(res.ir_intent, {"src": src}, {**scalars, "src_height": 60, "src_width": 50})
    diff = np.abs(np.asarray(got, np.float64) - ref.values["resized"])
    assert np.all(diff <= 2 * ref.bound["resized"] + 1e-30), float(diff.max())


def _text(kernel) -> str:
    from cuda2nki.ir.printer import to_text

    return to_text(kernel)


def _statements(body):
    for s in body:
        yield s
        yield from _statements(getattr(s, "body", ()) or ())


#: the row index a plain affine index of the partition axis (one row per output row), the
#: column index scaled and clamped: rows are a strided load, columns picked on chip
PLAIN_ROWS = {
    "stretch-clamped-both-sides": (
        "__global__ void stretch_rows(const float* img, float* out, int h, int in_w, int out_w,\n"
        "                             float ratio) {\n"
        "  int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  int y = blockIdx.y;\n"
        "  if (x >= out_w || y >= h) return;\n"
        "  int sx = max(min((int)(x * ratio), in_w - 1), 0);\n"
        "  out[y * out_w + x] = img[y * in_w + sx] * 0.5f;\n}\n",
        "img",
    ),
    "nearest-column-grid-stride": (
        "__global__ void pick_cols(const float* table, float* res, int h, int in_w, int out_w,\n"
        "                          float ratio) {\n"
        "  int r = blockIdx.y;\n"
        "  for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < out_w;\n"
        "       c += blockDim.x * gridDim.x) {\n"
        "    int k = min(max(__float2int_rd((c + 0.5f) * ratio), 0), in_w - 1);\n"
        "    res[r * out_w + c] = table[r * in_w + k] - table[r * in_w + min(k + 1, in_w - 1)];\n"
        "  }\n}\n",
        "table",
    ),
}


def _plain_binding(src: str, out: str, kernel: str) -> str:
    return (
        f'kernel = "{kernel}"\n[launch]\ngrid = ["ceil_div(out_w, 128)", "h"]\nblock = [128]\n'
        f'[params]\n{src} = {{ shape = ["h", "in_w"], dtype = "float32", role = "in" }}\n'
        f'{out} = {{ shape = ["h", "out_w"], dtype = "float32", role = "out" }}\n'
        "h = 40\nin_w = 50\nout_w = 170\nratio = 0.29\n"
        "[[check.shapes]]\nh = 130\nin_w = 7\nout_w = 3\nratio = 2.5\n"
    )


@pytest.mark.slow
@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("case", sorted(PLAIN_ROWS))
def test_plain_rows_with_picked_columns(case: str, target: str, tmp_path: Path) -> None:
    src, tensor = PLAIN_ROWS[case]
    kernel = src.split("void ")[1].split("(")[0]
    out = "out" if "float* out" in src else "res"
    cu = tmp_path / "rows.cu"
    cu.write_text(src)
    cu.with_suffix(".toml").write_text(_plain_binding(tensor, out, kernel))
    from cuda2nki.binding import load_binding

    binding = load_binding(cu.with_suffix(".toml"))
    res = port_file(cu, binding=binding, target=target)
    assert res.source is not None and not res.literal, [d.message for d in res.diagnostics]
    assert "nc_n_gather" in res.source
    port = tmp_path / "rows_port.py"
    port.write_text(res.source)
    rep = check(cu, port, binding=binding, kernel=res.kernel, seeds=1)
    above = [f"{d.code} {d.message}" for d in rep.findings if d.severity != Severity.NOTE]
    assert rep.verdict == "pass" and not above, (rep.numerics, above)
