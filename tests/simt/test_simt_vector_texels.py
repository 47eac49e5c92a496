"""Vector texels in the interpreter: a fetch of a ``float2`` / ``uchar4`` / ``char2`` texture
filters and addresses each lane as a scalar texture would, and ``cudaReadModeNormalizedFloat``
turns 8/16-bit integer lanes into floats (unsigned / 255 in [0, 1], signed / 127 clamped to
[-1, 1]); pinned against values computed by hand."""

from __future__ import annotations

import numpy as np

from tests.simt.simt_helpers import f32, run


def _object_host(kernel: str, members: str, extra: str = "") -> str:
    return (
        "void launch(float* out, const float* xs, cudaArray_t arr) {\n"
        f"{extra}"
        "  cudaResourceDesc res = {};\n  res.res.array.array = arr;\n"
        "  cudaTextureDesc desc = {};\n"
        f"{members}"
        "  cudaTextureObject_t obj = 0;\n"
        "  cudaCreateTextureObject(&obj, &res, &desc, NULL);\n"
        f"  {kernel}<<<1, 8>>>(out, xs, obj);\n}}\n"
    )


def test_float2_linear_weighs_each_lane() -> None:
    src = (
        "__global__ void probe(float* out, const float* xs, cudaTextureObject_t tex) {\n"
        "  int i = threadIdx.x;\n  float2 v = tex1D<float2>(tex, xs[i]);\n"
        "  out[2 * i] = v.x;\n  out[2 * i + 1] = v.y;\n}\n"
    ) + _object_host(
        "probe",
        "  desc.filterMode = cudaFilterModeLinear;\n"
        "  desc.addressMode[0] = cudaAddressModeBorder;\n",
    )
    texels = f32(0, 100, 10, 200, 20, 300, 30, 400).reshape(4, 2)
    got = run(src, "probe", block=(3,), out=np.zeros(6, np.float32), xs=f32(1.0, 2.25, 4.0),
              tex=texels, tex_width=4)["out"]  # fmt: skip
    # 4.0: texels 3 and 4 (border: zero), half each
    np.testing.assert_allclose(got, [5, 150, 17.5, 275, 15, 200])


def test_uchar4_normalised_reads_unsigned_lanes_in_0_1() -> None:
    src = (
        "__global__ void probe(float* out, const float* xs, cudaTextureObject_t tex) {\n"
        "  int i = threadIdx.x;\n  float4 v = tex2D<float4>(tex, xs[i], 0.5f);\n"
        "  out[4 * i] = v.x;\n  out[4 * i + 1] = v.y;\n"
        "  out[4 * i + 2] = v.z;\n  out[4 * i + 3] = v.w;\n}\n"
    ) + _object_host(
        "probe",
        "  desc.readMode = cudaReadModeNormalizedFloat;\n",
        "  cudaChannelFormatDesc fmt = cudaCreateChannelDesc<uchar4>();\n",
    )
    texels = np.array([[[255, 0, 51, 128], [1, 2, 3, 4]]], np.uint8)
    got = run(src, "probe", block=(2,), out=np.zeros(8, np.float32), xs=f32(0.5, 1.5),
              tex=texels, tex_width=2, tex_height=1)["out"]  # fmt: skip
    want = np.array([255, 0, 51, 128, 1, 2, 3, 4], np.float32) / np.float32(255)
    np.testing.assert_allclose(got, want, rtol=1e-7)


def test_signed_reference_normalises_to_minus_one_one() -> None:
    src = (
        "texture<char2, 1, cudaReadModeNormalizedFloat> pairs;\n"
        "__global__ void probe(float* out, int n) {\n"
        "  int i = threadIdx.x;\n  if (i < n) {\n"
        "    float2 v = tex1Dfetch(pairs, i);\n"
        "    out[2 * i] = v.x;\n    out[2 * i + 1] = v.y;\n  }\n}\n"
    )
    texels = np.array([[-128, 127], [-127, 0], [64, -64]], np.int8)
    got = run(src, "probe", block=(4,), out=np.zeros(8, np.float32), n=4, pairs=texels,
              pairs_width=3)["out"]  # fmt: skip
    # the fourth fetch is past the end: zero
    want = [-1, 1, -1, 0, 64 / 127, -64 / 127, 0, 0]
    np.testing.assert_allclose(got, np.array(want, np.float32), rtol=1e-7)
