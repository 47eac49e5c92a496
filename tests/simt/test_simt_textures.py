"""Texture fetches in the interpreter: a texture object parameter reads its array through the
mode the host's texture descriptor sets (point / linear filtering with 1.8 fixed-point weights,
unnormalised / normalised coordinates, clamp / border / wrap / mirror), pinned against values
computed by hand."""

from __future__ import annotations

import numpy as np
import pytest

from tests.simt.simt_helpers import f32, i32, run

ROW = f32(10, 20, 30, 40)


def _host(kernel: str, members: str, args: str) -> str:
    """Host code creating a texture object with descriptor members ``members`` and launching
    ``kernel`` with it."""
    return (
        "void launch(float* out, const float* xs, cudaArray_t arr) {\n"
        "  cudaResourceDesc res;\n  memset(&res, 0, sizeof(res));\n"
        "  res.resType = cudaResourceTypeArray;\n  res.res.array.array = arr;\n"
        "  cudaTextureDesc desc;\n  memset(&desc, 0, sizeof(desc));\n"
        f"{members}"
        "  cudaTextureObject_t obj = 0;\n"
        "  cudaCreateTextureObject(&obj, &res, &desc, NULL);\n"
        f"  {kernel}<<<1, 8>>>({args});\n}}\n"
    )


def _one_d(members: str) -> str:
    return (
        "__global__ void probe(float* out, const float* xs, cudaTextureObject_t tex) {\n"
        "  int i = threadIdx.x;\n"
        "  out[i] = tex1D<float>(tex, xs[i]);\n}\n" + _host("probe", members, "out, xs, obj")
    )


def _fetch_1d(members: str, xs: list[float]) -> np.ndarray:
    n = len(xs)
    got = run(
        _one_d(members),
        "probe",
        block=(n,),
        out=np.zeros(n, np.float32),
        xs=np.array(xs, np.float32),
        tex=ROW,
        tex_width=4,
    )
    return got["out"]


CASES = {
    "point-clamp-unnormalised": (
        "  desc.addressMode[0] = cudaAddressModeClamp;\n",
        [0.5, 3.99, -1.0, 7.0, 1.0],
        [10, 40, 10, 40, 20],
    ),
    "point-border": (
        "  desc.addressMode[0] = cudaAddressModeBorder;\n  desc.filterMode = cudaFilterModePoint;\n",
        [-0.5, 4.0, 2.2, 0.0],
        [0, 0, 30, 10],
    ),
    "point-wrap-normalised": (
        "  desc.addressMode[0] = cudaAddressModeWrap;\n  desc.normalizedCoords = true;\n",
        [0.3, 1.3, -0.1, 0.99],
        [20, 20, 40, 40],
    ),
    "point-mirror-normalised": (
        "  desc.addressMode[0] = cudaAddressModeMirror;\n  desc.normalizedCoords = 1;\n",
        [1.3, -0.1, 0.3],
        [30, 10, 20],
    ),
    # an unset address mode is 0 (wrap), which unnormalised coordinates read as clamp
    "zeroed-descriptor-unnormalised": ("", [-3.0, 9.0, 2.5], [10, 40, 30]),
    "linear-clamp": (
        "  desc.addressMode[0] = cudaAddressModeClamp;\n"
        "  desc.filterMode = cudaFilterModeLinear;\n",
        [1.0, 0.5, 0.0, 1.75, 4.5],
        [15, 10, 10, 22.5, 40],
    ),
    # weights hold 8 fractional bits: 0.001 rounds to 0, 0.003 to 1/256
    "linear-nine-bit-weights": (
        "  desc.addressMode[0] = cudaAddressModeClamp;\n"
        "  desc.filterMode = cudaFilterModeLinear;\n",
        [1.501, 1.503],
        [20, 20 + 10 / 256],
    ),
    "linear-border": (
        "  desc.addressMode[0] = cudaAddressModeBorder;\n"
        "  desc.filterMode = cudaFilterModeLinear;\n",
        [0.25, 4.25],
        [7.5, 10],
    ),
    "linear-wrap-normalised": (
        "  desc.filterMode = cudaFilterModeLinear;\n  desc.normalizedCoords = true;\n"
        "  desc.addressMode[0] = cudaAddressModeWrap;\n",
        [0.0, 0.5],
        [25, 25],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_one_dimensional_modes(case: str) -> None:
    members, xs, want = CASES[case]
    np.testing.assert_allclose(_fetch_1d(members, xs), np.array(want, np.float32), rtol=1e-6)


GRID = f32(1, 2, 3, 4, 5, 6).reshape(2, 3)

TWO_D = (
    "__global__ void sample(float* dst, const float* px, const float* py, int n,\n"
    "                       cudaTextureObject_t image) {\n"
    "  for (int k = threadIdx.x; k < n; k += blockDim.x)\n"
    "    dst[k] = tex2D<float>(image, px[k], py[k]);\n}\n"
    "void go(float* dst, float* px, float* py, int n, cudaArray_t a) {\n"
    "  cudaResourceDesc r = {};\n  r.res.array.array = a;\n"
    "  cudaTextureDesc t = {};\n{members}"
    "  cudaTextureObject_t img;\n  cudaCreateTextureObject(&img, &r, &t, nullptr);\n"
    "  sample<<<1, 4>>>(dst, px, py, n, img);\n}\n"
)


@pytest.mark.parametrize(
    ("members", "pts", "want"),
    [
        (
            "  t.addressMode[0] = cudaAddressModeClamp;\n  t.addressMode[1] = cudaAddressModeClamp;\n"
            "  t.filterMode = cudaFilterModeLinear;\n",
            [(1.0, 1.0), (2.0, 0.75), (9.0, -4.0)],
            [3.0, 3.25, 3.0],
        ),
        (
            "  t.addressMode[0] = cudaAddressModeBorder;\n  t.addressMode[1] = cudaAddressModeBorder;\n",
            [(2.5, 1.5), (3.1, 0.0), (0.0, -0.2), (1.9, 0.1)],
            [6.0, 0.0, 0.0, 2.0],
        ),
        (
            "  t.addressMode[0] = cudaAddressModeWrap;\n  t.addressMode[1] = cudaAddressModeClamp;\n"
            "  t.normalizedCoords = true;\n",
            [(1.5, 0.9), (-0.2, 0.1), (0.4, 7.0)],
            [5.0, 3.0, 5.0],
        ),
    ],
    ids=["bilinear-clamp", "point-border", "point-wrap-x-clamp-y"],
)
def test_two_dimensional_modes(members: str, pts: list, want: list) -> None:
    n = len(pts)
    got = run(
        TWO_D.replace("{members}", members),
        "sample",
        block=(4,),
        dst=np.zeros(n, np.float32),
        px=np.array([p[0] for p in pts], np.float32),
        py=np.array([p[1] for p in pts], np.float32),
        n=n,
        image=GRID,
        image_width=3,
        image_height=2,
    )["dst"]
    np.testing.assert_allclose(got, np.array(want, np.float32), rtol=1e-6)


def test_fetch_of_integers_reads_linear_memory_zero_out_of_range() -> None:
    src = (
        "__global__ void pick(int* o, const int* idx, int m, cudaTextureObject_t keys) {\n"
        "  int g = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (g < m) o[g] = tex1Dfetch<int>(keys, idx[g]) * 2;\n}\n"
    )
    got = run(
        src,
        "pick",
        block=(8,),
        o=np.zeros(5, np.int32),
        idx=i32(2, 0, 1, 3, -1),
        m=5,
        keys=i32(7, -8, 9),
        keys_width=3,
    )
    assert got["o"].tolist() == [18, 14, -16, 0, 0]  # zero out of range


def test_three_dimensional_point_fetch() -> None:
    src = (
        "__global__ void vol(float* o, cudaTextureObject_t v) {\n"
        "  int i = threadIdx.x;\n"
        "  o[i] = tex3D<float>(v, i + 0.5f, 1.5f, 1.2f);\n}\n"
    )
    cube = np.arange(2 * 2 * 3, dtype=np.float32).reshape(2, 2, 3)
    got = run(
        src, "vol", block=(3,), o=np.zeros(3, np.float32), v=cube, v_width=3, v_height=2, v_depth=2
    )
    assert got["o"].tolist() == cube[1, 1, :].tolist()


LEGACY = (
    "texture<float, 1, cudaReadModeElementType> table;\n"
    "texture<float, 2> surface2;\n"
    "__global__ void lookup(float* r, const int* at, int m) {\n"
    "  int q = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (q < m) r[q] = tex1Dfetch(table, at[q]) + 1.0f;\n}\n"
    "__global__ void blend(float* r, const float* u, const float* v, int m) {\n"
    "  for (int q = threadIdx.x; q < m; q += blockDim.x)\n"
    "    r[q] = tex2D(surface2, u[q], v[q]);\n}\n"
    "void host(float* r, int* at, float* tab, int m, float* u, float* v, cudaArray* arr) {\n"
    "  cudaBindTexture(0, table, tab, m * sizeof(float));\n"
    "  lookup<<<(m + 63) / 64, 64>>>(r, at, m);\n"
    "  surface2.addressMode[0] = cudaAddressModeBorder;\n"
    "  surface2.filterMode = cudaFilterModeLinear;\n"
    "  cudaBindTextureToArray(surface2, arr);\n"
    "  blend<<<1, 32>>>(r, u, v, m);\n}\n"
)


def test_legacy_reference_fetch_reads_the_bound_array() -> None:
    got = run(
        LEGACY,
        "lookup",
        block=(64,),
        r=np.zeros(4, np.float32),
        at=i32(3, 0, 1, 4),
        m=4,
        table=ROW,
        table_width=4,
    )
    assert got["r"].tolist() == [41.0, 11.0, 21.0, 1.0]


def test_legacy_reference_modes_come_from_its_members() -> None:
    # linear filtering, border on x (outside reads 0), clamp on y (the reference's default)
    got = run(
        LEGACY,
        "blend",
        block=(32,),
        r=np.zeros(3, np.float32),
        u=f32(1.0, -0.25, 2.0),
        v=f32(1.0, 1.0, 9.0),
        m=3,
        surface2=GRID,
        surface2_width=3,
        surface2_height=2,
    )["r"]
    np.testing.assert_allclose(got, f32(3.0, 0.25 * 0.5 * (1 + 4), 5.5), rtol=1e-6)


HELPERS = (
    "__device__ float tap(cudaTextureObject_t t, float x, float y) {\n"
    "  return tex2D<float>(t, x, y);\n}\n"
    "__device__ float row3(float x, float y, cudaTextureObject_t t) {\n"
    "  float s = 0.0f;\n"
    "  for (int r = -1; r <= 1; ++r) s += tap(t, x + r, y);\n"
    "  return s;\n}\n"
    "__global__ void box(float* o, int w, int h, cudaTextureObject_t pic) {\n"
    "  int x = threadIdx.x, y = blockIdx.x;\n"
    "  if (x < w && y < h) o[y * w + x] = row3(x + 0.5f, y + 0.5f, pic);\n}\n"
    "void go(float* o, int w, int h, cudaArray_t a) {\n"
    "  cudaResourceDesc r = {};\n  r.res.array.array = a;\n"
    "  cudaTextureDesc d = {};\n  d.addressMode[0] = cudaAddressModeBorder;\n"
    "  cudaTextureObject_t t;\n  cudaCreateTextureObject(&t, &r, &d, nullptr);\n"
    "  box<<<h, 32>>>(o, w, h, t);\n}\n"
)


def test_a_texture_passed_to_device_functions_is_read_there() -> None:
    # texels x-1, x, x+1 of the row (border: zero outside), through two device functions
    got = run(
        HELPERS,
        "box",
        grid=(2,),
        block=(32,),
        o=np.zeros((2, 3), np.float32),
        w=3,
        h=2,
        pic=GRID,
        pic_width=3,
        pic_height=2,
    )["o"]
    want = np.array([[3, 6, 5], [9, 15, 11]], np.float32)
    assert got.tolist() == want.tolist()
