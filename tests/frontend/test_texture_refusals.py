"""What stays unsupported about textures is refused with C2N1015 naming the exact construct
(and the kernel alone is refused); where the host's texture descriptor cannot be followed the
read takes the default mode and a note says so."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source

HOST = (
    "void go(float* o, int n, cudaArray_t a) {{\n"
    "  cudaResourceDesc r = {{}};\n  r.res.array.array = a;\n"
    "  cudaTextureDesc d = {{}};\n{members}"
    "  cudaTextureObject_t t;\n  cudaCreateTextureObject(&t, &r, &d, nullptr);\n"
    "  k<<<1, 32>>>(o, n, t);\n}}\n"
)


def _refusal(src: str) -> str:
    tu = parse_source(src, "k.cu")
    assert "k" in tu.rejected, [d.message for d in tu.diagnostics]
    (d,) = [d for d in tu.rejected["k"] if d.code == "C2N1015"]
    return d.message


@pytest.mark.parametrize(
    ("body", "members", "what"),
    [
        ("o[i] = (float)tex2D<double2>(t, i, 0).x;", "", "texture 't': element type double2"),
        (
            "o[i] = tex2D<float4>(t, i, 0).x;",
            "  d.readMode = cudaReadModeNormalizedFloat;\n"
            "  cudaChannelFormatDesc c = cudaCreateChannelDesc<float4>();\n",
            "cudaReadModeNormalizedFloat reads of float4 texels",
        ),
        ("o[i] = tex2DLayered<float>(t, i, 0, 1);", "", "tex2DLayered"),
        (
            "o[i] = tex1D<float>(t, i + 0.5f);",
            "  d.readMode = cudaReadModeNormalizedFloat;\n",
            "cudaReadModeNormalizedFloat",
        ),
        (
            "o[i] = (float)tex1D<int>(t, i + 0.5f);",
            "  d.filterMode = cudaFilterModeLinear;\n",
            "linear filtering of int32 texels",
        ),
        (
            "o[i] = tex1D<float>(t, i) + tex2D<float>(t, i, 0);",
            "",
            "read by several fetch kinds",
        ),
        ("cudaTextureObject_t u = t; o[i] = tex1D<float>(u, i);", "", "variable 'u'"),
    ],
    ids=[
        "double-vector-texel",
        "normalised-float-texels",
        "layered",
        "normalised-float-read",
        "linear-int",
        "mixed",
        "copied",
    ],
)
def test_unsupported_texture_use_is_named(body: str, members: str, what: str) -> None:
    src = (
        "__global__ void k(float* o, int n, cudaTextureObject_t t) {\n"
        f"  int i = threadIdx.x;\n  if (i < n) {{ {body} }}\n}}\n"
        "__global__ void plain(float* o, int n) { if (threadIdx.x < n) o[threadIdx.x] = 1.0f; }\n"
    ) + HOST.format(members=members)
    assert what in _refusal(src)
    assert parse_source(src, "k.cu").function("plain") is not None


def test_a_texture_object_used_as_a_value_is_refused() -> None:
    src = (
        "__global__ void k(unsigned long long* o, int n, cudaTextureObject_t t) {\n"
        "  if (threadIdx.x < n) o[threadIdx.x] = t;\n}\n"
    )
    tu = parse_source(src, "k.cu")
    assert "k" in tu.rejected
    msgs = [d.message for d in tu.rejected["k"] if d.code == "C2N1015"]
    assert msgs == [
        "texture/surface memory is not supported: texture object 't' used other than by a fetch"
    ]


@pytest.mark.parametrize(
    ("host", "source"),
    [
        (HOST.format(members="  d.filterMode = cudaFilterModeLinear;\n"), "descriptor 'd'"),
        ("", "creates no texture object"),
        (
            HOST.format(members="  d.filterMode = mode;\n"),
            "'d.filterMode = mode' is not a constant mode",
        ),
    ],
    ids=["followed", "no-host-code", "mode-from-a-variable"],
)
def test_the_mode_note_says_where_it_came_from(host: str, source: str) -> None:
    src = (
        "__global__ void k(float* o, int n, cudaTextureObject_t t) {\n"
        "  if (threadIdx.x < n) o[threadIdx.x] = tex1D<float>(t, threadIdx.x);\n}\n"
    ) + host
    tu = parse_source(src, "k.cu")
    notes = [d.message for d in tu.diagnostics if d.code == "C2N2100" and "mode" in d.message]
    assert len(notes) == 1 and source in notes[0], notes
    if "followed" not in source and "descriptor 'd'" not in source:
        assert "point filtering, unnormalised coordinates" in notes[0]


@pytest.mark.parametrize(
    ("body", "what"),
    [
        ("put(s, i);", "surface object 's' used other than by surf1D/2Dread/write"),
        (
            "float a = surf1Dread<float>(s, i * 4); surf1Dwrite(i, s, i * 4);",
            "surface 's' accessed with several texel types or dimensions",
        ),
        ("surf3Dwrite(1.0f, s, i * 4, 0, 0);", "surf3Dwrite"),
        ("surf1Dwrite(1.0f, s, i * 4, mode);", "boundary mode that is not a constant"),
        ("surf1Dwrite(1.0, s, i * 8);", "texels of type float64"),
    ],
    ids=["passed-on", "two-texel-types", "3d", "variable-mode", "double-texels"],
)
def test_unsupported_surface_use_is_named(body: str, what: str) -> None:
    src = (
        "__device__ void put(cudaSurfaceObject_t t, int i) { surf1Dwrite(1.0f, t, i * 4); }\n"
        "__global__ void k(cudaSurfaceObject_t s, int n, int mode) {\n"
        f"  int i = threadIdx.x;\n  if (i < n) {{ {body} }}\n}}\n"
        "__global__ void plain(float* o, int n) { if (threadIdx.x < n) o[threadIdx.x] = 1.0f; }\n"
    )
    assert what in _refusal(src)
    assert parse_source(src, "k.cu").function("plain") is not None
