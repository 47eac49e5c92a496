"""C++14 variable templates used as constants in device code (see
cuda2nki.frontend.vartemplates): each use is the declaration's initialiser with the template
parameters bound to the use's arguments, converted to the declared type."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

#: spelling -> (file-scope declarations, the expression using them, NumPy of x (uint32))
SPELLINGS = {
    "typename-cast-init": (
        "template <typename T> constexpr T kSentinel = static_cast<T>(-1);",
        "x[i] == kSentinel<unsigned> ? 0u : x[i]",
        lambda x: np.where(x == 0xFFFFFFFF, 0, x),
    ),
    "int-parameter": (
        "template <int N> constexpr unsigned kMask = (1u << N) - 1u;",
        "x[i] & kMask<5>",
        lambda x: x & 31,
    ),
    "two-parameters-device": (
        "template <class T, int D> __device__ constexpr T kStep = T(D) * T(3);",
        "x[i] + kStep<unsigned, 7>",
        lambda x: x + 21,
    ),
    "namespace-and-brace-init": (
        "namespace tune { template <typename V> constexpr V kBias{9}; }",
        "x[i] - ::tune::kBias<unsigned int>",
        lambda x: x - 9,
    ),
    "const-not-constexpr": (
        "template <typename T> const T kShift = T(2);",
        "x[i] >> kShift<int>",
        lambda x: x >> 2,
    ),
}


def _run(tmp_path: Path, decls: str, expr: str) -> np.ndarray:
    path = tmp_path / "k.cu"
    path.write_text(
        f"""{decls}
__global__ void k(const unsigned* x, unsigned* y, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = {expr};
}}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    x = np.array([0, 1, 2, 77, 0xFFFFFFFF, 1 << 20, 123456] * 10, np.uint32)
    args = {"x": x, "y": np.zeros_like(x), "n": x.size}
    return x, run_kernel(tu, "k", grid=(2,), block=(64,), args=args)["y"]


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_a_variable_template_is_its_instance_value(tmp_path: Path, spelling: str) -> None:
    decls, expr, want = SPELLINGS[spelling]
    x, got = _run(tmp_path, decls, expr)
    np.testing.assert_array_equal(got, want(x).astype(np.uint32))


def test_the_enclosing_templates_type_binds_the_use(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        """
template <typename T> constexpr T kEmpty = static_cast<T>(-1);
template <typename T, int N> constexpr T kFrac = T(1) / N;
template <typename K>
__global__ void fill(const K* keys, K* out, float* w, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = keys[i] == kEmpty<K> ? K(0) : keys[i];
        w[i] = kFrac<float, 8> * (float)i;
    }
}
int main() { unsigned short *a, *b; float* w; fill<<<1, 64>>>(a, b, w, 50); }
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    keys = np.array([3, 65535, 9, 0] * 12 + [65535, 1], np.uint16)
    got = run_kernel(
        tu,
        tu.kernels[0].name,
        grid=(1,),
        block=(64,),
        args={"keys": keys, "out": np.zeros_like(keys), "w": np.zeros(50, np.float32), "n": 50},
    )
    np.testing.assert_array_equal(got["out"], np.where(keys == 65535, 0, keys))
    np.testing.assert_array_equal(got["w"], np.arange(50, dtype=np.float32) * 0.125)


def test_left_out_parameters_take_their_defaults(tmp_path: Path) -> None:
    x, got = _run(
        tmp_path,
        "template <typename T, int N = 2, typename W = T> constexpr W kTimes = W(N) * W(3);",
        "x[i] + kTimes<unsigned> + kTimes<unsigned, 5>",
    )
    np.testing.assert_array_equal(got, x + 6 + 15)


def test_a_use_missing_a_parameter_without_default_is_still_refused(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        "template <typename T, int N> constexpr T kTwice = T(N);\n"
        "__global__ void k(int* y) { y[threadIdx.x] = kTwice<int>; }\n"
    )
    (ds,) = parse_file(path).rejected.values()
    (d,) = [d for d in ds if d.code == "C2N1010"]
    assert "template name 'kTwice<int>' used as a value" in d.message
    assert (d.loc.line, d.loc.col) == (2, 46)
