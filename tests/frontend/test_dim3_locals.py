"""``dim3`` local variables and ``dim3(...)`` values in device code: missing axes are 1."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki import api
from cuda2nki.frontend import parse_source
from cuda2nki.simt import run_kernel

# each spelling stores x, y, z of one dim3 built in thread 0's block at out[3*k : 3*k + 3]
SPELLINGS = {
    "ctor-three": ("dim3 v(tx + 1, ty + 2, 7);", (2, 3, 7)),
    "ctor-two": ("dim3 v(tx + 5, 9);", (6, 9, 1)),
    "ctor-one-name": ("dim3 v(n);", (11, 1, 1)),
    "default": ("dim3 v;", (1, 1, 1)),
    "braces": ("dim3 v{n, 2u};", (11, 2, 1)),
    "copy-init-call": ("dim3 v = dim3(ty + 4);", (5, 1, 1)),
    "from-builtin": ("dim3 v = blockDim;", (4, 2, 1)),
    "from-another": ("dim3 w(3, 4); dim3 v = w;", (3, 4, 1)),
    "two-declarators": ("dim3 w(8), v(w.x + 1, w.y);", (9, 1, 1)),
}


def _kernel(decl: str) -> str:
    return (
        "__global__ void axes(unsigned* out, unsigned n) {\n"
        "    unsigned tx = threadIdx.x + 1, ty = threadIdx.y + 1;\n"
        f"    {decl}\n"
        "    if (threadIdx.x == 0 && threadIdx.y == 0) {\n"
        "        out[0] = v.x; out[1] = v.y; out[2] = v.z;\n"
        "    }\n"
        "}\n"
    )


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_dim3_local_axes(spelling: str) -> None:
    decl, want = SPELLINGS[spelling]
    tu = parse_source(_kernel(decl), "axes.cu")
    assert tu.rejected == {}, tu.diagnostics
    got = run_kernel(
        tu, "axes", grid=(1,), block=(4, 2), args={"out": np.zeros(3, np.uint32), "n": 11}
    )["out"]
    assert tuple(int(v) for v in got) == want


def test_dim3_with_four_values_is_refused() -> None:
    tu = parse_source(_kernel("dim3 v(1, 2, 3, 4);"), "axes.cu")
    (d, *_) = tu.rejected["axes"]
    assert d.code == "C2N1028" and "dim3" in d.message


HALO = """
#define SIDE 4
__global__ void blur_rows3d(const float* src, float* dst) {
    __shared__ float cube[SIDE + 2][SIDE + 2][SIDE + 2];
    unsigned a = threadIdx.x, b = threadIdx.y, c = threadIdx.z;
    unsigned local = (c * SIDE + b) * SIDE + a;
    unsigned first = blockIdx.x * SIDE * SIDE * SIDE;
    dim3 at(a + 1, b + 1, c + 1);
    cube[at.z][at.y][at.x] = src[first + local];
    if (a == 0) cube[at.z][at.y][0] = 0.0f;
    if (a == SIDE - 1) cube[at.z][at.y][SIDE + 1] = 0.0f;
    __syncthreads();
    dst[first + local] = cube[at.z][at.y][at.x - 1] + cube[at.z][at.y][at.x]
                       + cube[at.z][at.y][at.x + 1];
}
int main() {
    float *s, *d;
    blur_rows3d<<<6, dim3(SIDE, SIDE, SIDE)>>>(s, d);
    return 0;
}
"""


def _blur_reference(x: np.ndarray) -> np.ndarray:
    rows = x.reshape(-1, 4)
    padded = np.pad(rows, ((0, 0), (1, 1)))
    return (padded[:, :-2] + padded[:, 1:-1] + padded[:, 2:]).reshape(-1)


def test_a_shared_halo_indexed_through_a_dim3() -> None:
    tu = parse_source(HALO, "blur.cu")
    assert tu.rejected == {}, tu.diagnostics
    x = np.random.default_rng(3).standard_normal(6 * 64).astype(np.float32)
    got = run_kernel(
        tu,
        "blur_rows3d",
        grid=(6,),
        block=(4, 4, 4),
        args={"src": x, "dst": np.zeros_like(x)},
    )["dst"]
    np.testing.assert_allclose(got, _blur_reference(x), rtol=1e-6)


def test_a_dim3_kernel_ports_and_checks(tmp_path: Path) -> None:
    cu = tmp_path / "blur.cu"
    cu.write_text(HALO)
    port = tmp_path / "blur_port.py"
    port.write_text(api.port(cu).source)
    report = api.check(cu, port, seeds=1)
    assert report.verdict == "pass", [d.message for d in report.findings]
