"""The literal port of one instantiation of a template kernel is a Python function with a
Python name (``blur<32, float>`` becomes ``blur_32_float32``), so that the port loads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cuda2nki.pipeline import port_file

#: a shared-memory halo the recognisers leave to the literal lowering
BLUR = """\
#define TILE_B 64
template <{params}>
__global__ void blur(T* out, const T* in, int n) {{
    __shared__ T s[TILE + 2];
    int i = blockIdx.x * TILE + threadIdx.x;
    s[threadIdx.x + 1] = i < n ? in[i] : 0;
    if (threadIdx.x == 0) s[0] = i > 0 ? in[i - 1] : 0;
    if (threadIdx.x == TILE - 1) s[TILE + 1] = i + 1 < n ? in[i + 1] : 0;
    __syncthreads();
    if (i < n) out[i] = (s[threadIdx.x] + s[threadIdx.x + 1] + s[threadIdx.x + 2]) / 3;
}}
int main() {{
    int n = 300;
    float *a, *b;
    blur<{first}><<<(n + 31) / 32, 32>>>(b, a, n);
    blur<{second}><<<(n + TILE_B - 1) / TILE_B, TILE_B>>>(b, a, n);
    return 0;
}}
"""


@pytest.mark.parametrize(
    ("params", "first", "second", "kernel", "py"),
    [
        (
            "int TILE, typename T",
            "32, float",
            "TILE_B, float",
            "blur<32, float>",
            "blur_32_float32",
        ),
        ("typename T, int TILE", "float, 32", "float, 64", "blur<float, 64>", "blur_float32_64"),
        (
            "unsigned TILE, class T",
            "32u, float",
            "64u, float",
            "blur<64u, float>",
            "blur_64_float32",
        ),
    ],
)
def test_literal_port_of_an_instantiation_is_valid_python(
    tmp_path: Path, params: str, first: str, second: str, kernel: str, py: str
) -> None:
    cu = tmp_path / "blur.cu"
    cu.write_text(BLUR.format(params=params, first=first, second=second))
    res = port_file(cu, kernel=kernel, lowering="literal")
    assert res.literal and res.source is not None, res.diagnostics
    compile(res.source, "port.py", "exec")
    (entry,) = re.findall(r"^def (blur\w*)\(", res.source, re.M)
    assert entry == py
