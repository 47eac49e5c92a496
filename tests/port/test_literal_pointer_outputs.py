"""Device functions that hand back a pointer through a reference output port literally: a
returned struct with a pointer member (a sub-matrix view, a moved span; the front end returns it
through one output per member) and an explicit ``float**`` output.  The caller's pointer is not
assigned before the call: the function sets it, and what it points to is read and written after.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.port.acceptance import grid_binding, tensor_param
from tests.port.literal_acceptance import run_literal_exactly

TARGETS = ["nki", "legacy"]

SOURCES = {
    # a view of one block's tile of a row-major matrix, for reading and for writing
    "tile_view": (
        "typedef struct { int w; int stride; float* at; } View;\n"
        "__device__ View block_tile(View m, int by, int bx) {\n"
        "    View t;\n"
        "    t.w = 16;\n"
        "    t.stride = m.stride;\n"
        "    t.at = &m.at[m.stride * 16 * by + 16 * bx];\n"
        "    return t;\n"
        "}\n"
        "__global__ void k(float* x, float* y, int n) {\n"
        "    View a; a.w = n; a.stride = n; a.at = x;\n"
        "    View b; b.w = n; b.stride = n; b.at = y;\n"
        "    View s = block_tile(a, blockIdx.y, blockIdx.x);\n"
        "    View d = block_tile(b, blockIdx.y, blockIdx.x);\n"
        "    d.at[threadIdx.y * d.stride + threadIdx.x] =\n"
        "        3.0f * s.at[threadIdx.y * s.stride + threadIdx.x] + (float)d.w;\n"
        "}\n"
    ),
    # a span moved forward by a function returning the moved span
    "moved_span": (
        "struct Span { float* p; int len; };\n"
        "__device__ Span skip(Span s, int k) {\n"
        "    Span r;\n"
        "    r.p = s.p + k;\n"
        "    r.len = s.len - k;\n"
        "    return r;\n"
        "}\n"
        "__global__ void k(float* x, float* y, int n) {\n"
        "    Span all; all.p = x; all.len = n * n;\n"
        "    Span row = skip(all, (blockIdx.y * 16 + threadIdx.y) * n);\n"
        "    int c = blockIdx.x * 16 + threadIdx.x;\n"
        "    y[(blockIdx.y * 16 + threadIdx.y) * n + c] = row.p[c] - (float)(row.len % 7);\n"
        "}\n"
    ),
    # an explicit pointer output parameter
    "pointer_out_param": (
        "__device__ void row_of(float* base, int r, int pitch, float** out) {\n"
        "    *out = base + r * pitch;\n"
        "}\n"
        "__global__ void k(float* x, float* y, int n) {\n"
        "    float* src;\n"
        "    float* dst;\n"
        "    int r = blockIdx.y * 16 + threadIdx.y;\n"
        "    row_of(x, r, n, &src);\n"
        "    row_of(y, r, n, &dst);\n"
        "    int c = blockIdx.x * 16 + threadIdx.x;\n"
        "    dst[c] = src[c] * src[c];\n"
        "}\n"
    ),
}


def _port(name: str, target: str, tmp: Path):
    params = {"x": tensor_param(["n", "n"], "in"), "y": tensor_param(["n", "n"], "out"), "n": 64}
    bdict = grid_binding(["n / 16", "n / 16"], params, [{"n": 64}, {"n": 32}], block=16)
    bdict["launch"]["block"] = [16, 16]
    cu = tmp / f"{name}.cu"
    cu.write_text(SOURCES[name])
    return run_literal_exactly(cu, bdict, target, tmp)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(SOURCES))
def test_pointer_outputs_port_literally(name, target, tmp_path) -> None:
    run, points = _port(name, target, tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches
