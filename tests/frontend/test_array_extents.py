"""A texture or surface object made from a CUDA array (``cudaMallocArray`` /
``cudaMalloc3DArray``) whose extents the kernel receives: the object's width and height are
those kernel parameters (cuda2nki.frontend.arrayextent), so ``check`` never chooses an array
of another size than the launch the host pairs it with."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.diagnostics import Severity
from cuda2nki.fidelity.check import check
from cuda2nki.pipeline import port_file

SURFACE = """
__global__ void fill_plane(const float *src, int w, int h, cudaSurfaceObject_t plane) {
  unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
  surf2Dwrite(src[y * w + x], plane, x * 4, y);
}
void host(const float *d_src, int w, int h) {
  cudaChannelFormatDesc fmt = cudaCreateChannelDesc<float>();
  cudaArray_t store;
  cudaMallocArray(&store, &fmt, w, h, cudaArraySurfaceLoadStore);
  cudaResourceDesc rd;
  memset(&rd, 0, sizeof(rd));
  rd.resType = cudaResourceTypeArray;
  rd.res.array.array = store;
  cudaSurfaceObject_t plane = 0;
  cudaCreateSurfaceObject(&plane, &rd);
  dim3 block(8, 8);
  dim3 grid(w / 8, h / 8);
  fill_plane<<<grid, block>>>(d_src, w, h, plane);
}
"""

# a 3-D allocation of depth 0 (a 2-D array), the extent built inline, the kernel's sizes in
# another order than the array's
TEXTURE_3D = """
__global__ void pick(cudaTextureObject_t img, float *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y;
  if (c < cols && r < rows) out[r * cols + c] = tex2D<float>(img, c + 0.5f, r + 0.5f);
}
void host(float *d_out, int rows, int cols) {
  cudaChannelFormatDesc fmt = cudaCreateChannelDesc<float>();
  cudaArray *arr;
  cudaMalloc3DArray(&arr, &fmt, make_cudaExtent(cols, rows, 0));
  cudaResourceDesc res = {};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = arr;
  cudaTextureDesc td = {};
  td.addressMode[0] = cudaAddressModeClamp;
  td.addressMode[1] = cudaAddressModeClamp;
  td.filterMode = cudaFilterModePoint;
  td.readMode = cudaReadModeElementType;
  cudaTextureObject_t img;
  cudaCreateTextureObject(&img, &res, &td, NULL);
  pick<<<dim3((cols + 63) / 64, rows), 64>>>(img, d_out, rows, cols);
}
"""

# the extent in a variable, a 1-D array read by tex1D
TEXTURE_EXTENT_VAR = """
__global__ void sample(cudaTextureObject_t lut, float *y, int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) y[i] = tex1D<float>(lut, i + 0.5f);
}
void host(float *d_y, int count) {
  cudaChannelFormatDesc fmt = cudaCreateChannelDesc<float>();
  cudaArray *line;
  cudaExtent ext = make_cudaExtent(count, 0, 0);
  cudaMalloc3DArray(&line, &fmt, ext);
  cudaResourceDesc res = {};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = line;
  cudaTextureDesc td = {};
  td.addressMode[0] = cudaAddressModeBorder;
  td.filterMode = cudaFilterModePoint;
  td.readMode = cudaReadModeElementType;
  cudaTextureObject_t lut;
  cudaCreateTextureObject(&lut, &res, &td, NULL);
  sample<<<(count + 127) / 128, 128>>>(lut, d_y, count);
}
"""

TIED = {
    "surface-malloc-array": (SURFACE, "plane", "[h, w]"),
    "texture-3d-inline-extent": (TEXTURE_3D, "img", "[rows, cols]"),
    "texture-extent-variable": (TEXTURE_EXTENT_VAR, "lut", "[count]"),
}


def _port(tmp_path: Path, src: str):
    cu = tmp_path / "k.cu"
    cu.write_text(src)
    return cu, port_file(cu)


@pytest.mark.parametrize("name", sorted(TIED))
def test_the_array_extents_are_the_objects_extents(name: str, tmp_path: Path) -> None:
    src, obj, shape = TIED[name]
    _, res = _port(tmp_path, src)
    assert res.source is not None, [d.render() for d in res.diagnostics]
    header = res.source.splitlines()[1]
    assert f"{obj}: float32{shape}" in header, header
    assert f"{obj}_width" not in res.source and f"{obj}_height" not in res.source


VARIANTS = {
    "constant-extents": (
        "cudaMallocArray(&store, &fmt, w, h,",
        "cudaMallocArray(&store, &fmt, 64, 64,",
    ),
    "another-array": ("rd.res.array.array = store;", "rd.res.array.array = other;"),
    "two-objects": (
        "fill_plane<<<grid, block>>>(d_src, w, h, plane);",
        "fill_plane<<<grid, block>>>(d_src, w, h, plane);\n"
        "  fill_plane<<<grid, block>>>(d_src, w, h, spare);",
    ),
}


def test_only_the_followed_spelling_ties_the_extents(tmp_path: Path) -> None:
    _, res = _port(tmp_path, SURFACE)
    assert res.source is not None and "plane_width" not in res.source
    for name, change in VARIANTS.items():  # the host does not say: sizes of its own
        _, res = _port(tmp_path, SURFACE.replace(*change))
        assert res.source is not None, name
        assert "plane_width" in res.source.splitlines()[1], name


@pytest.mark.slow
def test_a_tied_surface_port_passes_check(tmp_path: Path) -> None:
    cu, res = _port(tmp_path, SURFACE)
    port = tmp_path / "k.py"
    port.write_text(res.source)
    rep = check(cu, port, kernel=res.kernel, seeds=2)
    errors = [d.render() for d in rep.findings if d.severity == Severity.ERROR]
    assert rep.numerics_outcome == "pass" and not errors, errors
