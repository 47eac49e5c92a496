"""Surface objects port: a surface becomes an array the port reads and writes (an input, an
output or both, as its accesses say), its extents size parameters, and our own ``check`` finds
the port's numbers equal to the interpreter's on both targets.  Spellings: a 2-D surface read
with the pointer form and written in place, a ``float4`` surface read with the returning form
under zero and clamp boundaries into a global output, a 1-D ``uchar4`` surface written in a
grid-stride loop."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cuda2nki.fidelity.check import check
from cuda2nki.pipeline import port_file

CASES = {
    "inout-2d-pointer-read": """
__global__ void brighten(cudaSurfaceObject_t img, int width, int height, float gain) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        float v;
        surf2Dread(&v, img, x * sizeof(float), y);
        surf2Dwrite(v * gain + 1.0f, img, x * sizeof(float), y);
    }
}
void run(cudaArray_t arr, int width, int height) {
    cudaResourceDesc rd = {};
    rd.resType = cudaResourceTypeArray;
    rd.res.array.array = arr;
    cudaSurfaceObject_t s = 0;
    cudaCreateSurfaceObject(&s, &rd);
    dim3 b(16, 16);
    brighten<<<dim3((width + 15) / 16, (height + 15) / 16), b>>>(s, width, height, 1.5f);
}
""",
    "float4-input-zero-and-clamp": """
__global__ void hblur(float* out, cudaSurfaceObject_t src, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    if (x >= w || y >= h) return;
    float4 l = surf2Dread<float4>(src, (x - 1) * 16, y, cudaBoundaryModeZero);
    float4 c = surf2Dread<float4>(src, x * 16, y, cudaBoundaryModeZero);
    float4 r = surf2Dread<float4>(src, (x + 1) * 16, y, cudaBoundaryModeClamp);
    out[y * w + x] = (l.x + c.y + r.z) * 0.5f - c.w;
}
void go(float* out, cudaSurfaceObject_t src, int w, int h) {
    hblur<<<dim3((w + 127) / 128, h), 128>>>(out, src, w, h);
}
""",
    "output-2d-exact-launch": """
__global__ void fill_plane(const float* src, int width, int height, cudaSurfaceObject_t plane) {
    unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
    surf2Dwrite(src[y * width + x] * 0.5f, plane, x * 4, y, cudaBoundaryModeTrap);
}
void run(const float* d, int width, int height, cudaSurfaceObject_t plane) {
    dim3 threads(8, 8, 1);
    dim3 blocks(width / threads.x, height / threads.y, 1);
    fill_plane<<<blocks, threads>>>(d, width, height, plane);
}
""",
    "uchar4-output-1d-grid-stride": """
__global__ void pack_bytes(const float* level, cudaSurfaceObject_t dst, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        float f = level[i];
        unsigned char q = (unsigned char)(f * 100.0f);
        surf1Dwrite(make_uchar4(q, q + 1, q / 2, 255), dst, i * sizeof(uchar4));
    }
}
void go(const float* level, cudaSurfaceObject_t dst, int n) {
    pack_bytes<<<16, 256>>>(level, dst, n);
}
""",
}


@pytest.mark.slow
@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_surface_ports_and_checks(case: str, target: str, tmp_path: Path) -> None:
    cu = tmp_path / "surf.cu"
    cu.write_text(CASES[case])
    res = port_file(cu, target=target)
    assert res.source is not None, [d.render() for d in res.diagnostics]
    port = tmp_path / "surf_port.py"
    port.write_text(res.source)
    report = check(cu, port, seeds=1, extra_points=False, timeout=600)  # a loaded machine
    assert report.numerics_outcome == "pass", report.numerics


@pytest.mark.parametrize(
    ("case", "surface"),
    [("uchar4-output-1d-grid-stride", "dst"), ("output-2d-exact-launch", "plane")],
)
def test_a_written_surface_keeps_its_other_texels(case: str, surface: str, tmp_path: Path) -> None:
    """A surface outlives the kernel: texels the kernel does not write keep their values, so a
    written surface is an inout tensor, also when the kernel only writes it."""
    cu = tmp_path / "surf.cu"
    cu.write_text(CASES[case])
    res = port_file(cu)
    assert res.source is not None, [d.render() for d in res.diagnostics]
    (header,) = [line for line in res.source.splitlines() if line.startswith("# Binding:")]
    roles = dict(re.findall(r"(\w+): \w+\[[^\]]*\] (\w+)", header))
    assert roles[surface] == "inout", header
