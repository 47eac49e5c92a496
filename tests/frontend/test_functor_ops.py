"""A functor struct of the program's own as the operation of a CUB collective (see
cuda2nki.frontend.functorops): read from its ``operator()``, in several spellings, and run by
the SIMT interpreter as the reduction or scan it computes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

HEAD = "#include <cub/cub.cuh>\n#include <utility>\n"

FUNCTORS = {
    "forwarding-template-sum": (
        """struct Combine {
  template <typename T, typename U>
  __device__ __forceinline__ auto operator()(T &&t, U &&u) const
    -> decltype(std::forward<T>(t) + std::forward<U>(u))
  { return std::forward<T>(t) + std::forward<U>(u); }
};""",
        "Combine()",
        np.sum,
    ),
    "select-greater": (
        "struct Larger { __device__ float operator()(float a, float b) const "
        "{ return ((a) > (b)) ? (a) : (b); } };",
        "Larger()",
        np.max,
    ),
    "fmaxf-brace-built": (
        "struct PickMax {\n  __device__ __host__ float operator()(const float& lhs, "
        "const float& rhs) const {\n    // the larger one\n    return fmaxf(lhs, rhs);\n  }\n};",
        "PickMax{}",
        np.max,
    ),
    "class-less-than-min": (
        "class Smallest {\n public:\n  __device__ float operator()(float x, float y) const "
        "{ return x < y ? x : y; }\n};",
        "Smallest()",
        np.min,
    ),
    "swapped-sum-with-casts": (
        "struct Add2 { __device__ float operator()(float p, float q) const "
        "{ return static_cast<float>(q) + (float)p; } };",
        "Add2()",
        np.sum,
    ),
    "mirrored-max": (
        "template <typename T> struct MaxOf { __device__ T operator()(T a, T b) const "
        "{ return b < a ? a : b; } };",
        "MaxOf<float>()",
        np.max,
    ),
    "std-min": (
        "struct Lo { __device__ float operator()(float a, float b) const "
        "{ return ::min(b, a); } };",
        "Lo()",
        np.min,
    ),
}


def _reduce_kernel(functor: str, ctor: str) -> str:
    return f"""{functor}
__global__ void k(const float* x, float* out, int n) {{
    typedef cub::BlockReduce<float, 64> BR;
    __shared__ typename BR::TempStorage tmp;
    int i = blockIdx.x * 64 + threadIdx.x;
    float v = i < n ? x[i] : x[0];
    float r = BR(tmp).Reduce(v, {ctor});
    if (threadIdx.x == 0) out[blockIdx.x] = r;
}}
"""


@pytest.mark.parametrize("spelling", sorted(FUNCTORS))
def test_block_reduce_with_the_programs_functor(tmp_path: Path, spelling: str) -> None:
    functor, ctor, fold = FUNCTORS[spelling]
    path = tmp_path / "k.cu"
    path.write_text(HEAD + _reduce_kernel(functor, ctor))
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    x = np.random.default_rng(7).normal(size=128).astype(np.float32)
    got = run_kernel(
        tu, "k", grid=(2,), block=(64,), args={"x": x, "out": np.zeros(2, np.float32), "n": 128}
    )
    want = [fold(x[b * 64 : (b + 1) * 64]) for b in range(2)]
    np.testing.assert_allclose(got["out"], want, rtol=1e-6)


def test_exclusive_scan_with_a_functor_and_an_initial_value(tmp_path: Path) -> None:
    functor = FUNCTORS["select-greater"][0]
    path = tmp_path / "k.cu"
    path.write_text(
        HEAD
        + functor
        + """
__global__ void k(const float* x, float* out) {
    __shared__ typename cub::BlockScan<float, 32>::TempStorage s;
    float r;
    cub::BlockScan<float, 32>(s).ExclusiveScan(x[threadIdx.x], r, -100.0f, Larger());
    out[threadIdx.x] = r;
}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    x = np.random.default_rng(3).normal(size=32).astype(np.float32)
    got = run_kernel(
        tu, "k", grid=(1,), block=(32,), args={"x": x, "out": np.zeros(32, np.float32)}
    )
    np.testing.assert_array_equal(got["out"], np.maximum.accumulate(np.r_[-100.0, x[:-1]]))


@pytest.mark.parametrize(
    "functor",
    [
        "struct F { __device__ float operator()(float a, float b) const { return a * b; } };",
        "struct F { __device__ float operator()(float a, float b) const { float c = a + b; return c; } };",
        "struct F { float bias; __device__ float operator()(float a, float b) const { return a + bias; } };",
        "struct F { __device__ float operator()(float a, float b) const { return a > b ? b : b; } };",
    ],
)
def test_other_functors_are_still_refused(tmp_path: Path, functor: str) -> None:
    path = tmp_path / "k.cu"
    path.write_text(HEAD + _reduce_kernel(functor, "F()"))
    (ds,) = parse_file(path).rejected.values()
    (d,) = [d for d in ds if d.code == "C2N1010"]
    assert "with the operation 'F()'" in d.message and d.loc.line == 9
