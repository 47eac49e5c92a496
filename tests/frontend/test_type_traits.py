"""Member typedefs of structs used as type traits (``typename vec4<T>::Type``) and array
typedefs (``typedef float vec2[2];``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

TRAITS = {
    # explicit specialisations, typedef spelling
    "typedef": """
template <typename T> struct vec4 { typedef float Type; };
template <> struct vec4<float> { typedef float4 Type; };
template <> struct vec4<double> { typedef double4 Type; };
""",
    # explicit specialisations, alias spelling, class keyword
    "using": """
template <class T> class vec4 { public: using Type = float; };
template <> class vec4<float> { public: using Type = float4; };
template <> class vec4<int> { public: using Type = int4; };
""",
    # the primary template only, its member depending on the parameter
    "primary": """
template <typename U> struct vec4_of { typedef U lane; };
template <typename T> struct vec4 { typedef float4 Type; typedef typename vec4_of<T>::lane L; };
""",
}

KERNEL = """
template <typename T>
__global__ void shift_w(typename vec4<T>::Type* pts, const T* dw, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        typename vec4<T>::Type p = pts[i];
        p.w = p.w + dw[i];
        p.x = p.w * 2;
        pts[i] = p;
    }
}
int main() { float4* p; float* w; shift_w<float><<<2, 64>>>(p, w, 100); return 0; }
"""


@pytest.mark.parametrize("spelling", sorted(TRAITS))
def test_trait_typedef_instantiated(tmp_path: Path, spelling: str) -> None:
    path = tmp_path / "k.cu"
    path.write_text(TRAITS[spelling] + KERNEL)
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    (k,) = tu.kernels
    assert k.params[0].ty.pointee.name == "float4"
    pts = np.arange(400, dtype=np.float32)
    dw = np.linspace(0, 1, 100, dtype=np.float32)
    got = run_kernel(tu, k.name, grid=(2,), block=(64,), args={"pts": pts, "dw": dw, "n": 100})[
        "pts"
    ].reshape(100, 4)
    want = pts.reshape(100, 4).copy()
    want[:, 3] += dw
    want[:, 0] = want[:, 3] * 2
    np.testing.assert_array_equal(got, want)


def test_trait_of_a_template_not_instantiated(tmp_path: Path) -> None:
    """A kernel nothing in the file instantiates: read under an assumed ``float`` (a note says
    so), its trait resolved for that type."""
    path = tmp_path / "k.cu"
    path.write_text(TRAITS["typedef"] + KERNEL.split("int main")[0])
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    (k,) = tu.kernels
    assert k.params[0].ty.pointee.name == "float4"
    assert any(d.code == "C2N2100" and "assumed" in d.message for d in tu.diagnostics)


@pytest.mark.parametrize(
    "decl,expect",
    [
        ("struct Cfg { typedef double real; };", "float64"),
        ("struct Cfg { using real = short; };", "int16"),
        ("class Cfg { public: typedef unsigned int real; };", "uint32"),
    ],
)
def test_member_typedef_of_a_plain_struct(tmp_path: Path, decl: str, expect: str) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        decl
        + """
__global__ void fill(Cfg::real* out, int n) {
    int i = threadIdx.x;
    Cfg::real v = i * 3;
    if (i < n) out[i] = v;
}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    assert tu.kernels[0].params[0].ty.pointee.name == expect


def test_unknown_member_typedef_is_a_diagnostic(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        TRAITS["typedef"] + "__global__ void k(vec4<float>::Nope* p) { p[0] = p[1]; }\n"
    )
    tu = parse_file(path)
    (ds,) = tu.rejected.values()
    assert ds[0].code == "C2N1022" and ds[0].loc.line == 5


@pytest.mark.parametrize(
    "typedef,dims", [("typedef float vec2[2];", (2,)), ("typedef float vec2[N][2];", (4, 2))]
)
def test_array_typedef(tmp_path: Path, typedef: str, dims: tuple[int, ...]) -> None:
    path = tmp_path / "k.cu"
    idx = "[0]" if len(dims) == 2 else ""
    path.write_text(
        f"""#define N 4
{typedef}
__global__ void swap_xy(vec2* xy, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {{ float t = xy[i]{idx}[0]; xy[i]{idx}[0] = xy[i]{idx}[1]; xy[i]{idx}[1] = t; }}
}}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    (k,) = tu.kernels
    assert k.params[0].ty.pointee.dims == dims
    n = 10
    xy = np.arange(n * int(np.prod(dims)), dtype=np.float32)
    got = run_kernel(tu, "swap_xy", grid=(1,), block=(32,), args={"xy": xy, "n": n})["xy"]
    want = xy.reshape(n, -1).copy()
    want[:, [0, 1]] = want[:, [1, 0]]
    np.testing.assert_array_equal(got, want.reshape(-1))
