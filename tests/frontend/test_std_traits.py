"""Standard type traits in templated kernels (``if constexpr (std::is_same_v<T, unsigned>)``,
``std::is_floating_point<T>::value`` ...): constants once the template is instantiated."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

# a condition true for the unsigned instance only, one per spelling
UNSIGNED_TESTS = {
    "is_same_v": "if constexpr (std::is_same_v<T, unsigned>)",
    "is_same_value": "if (std::is_same<T, unsigned int>::value)",
    "using_namespace": "if constexpr (is_same_v<uint32_t, T>)",
    "is_unsigned_v": "if constexpr (std::is_unsigned_v<T>)",
    "negated_signed": "if (!std::is_signed<T>::value)",
}
# the same for the floating-point instance
FLOAT_TESTS = {
    "is_floating_point_v": "else if constexpr (std::is_floating_point_v<T>)",
    "is_same_float": "else if (std::is_same<T, float>::value || std::is_same_v<T, double>)",
    "not_integral": "else if constexpr (not std::is_integral_v<T>)",
}


def _kernel(unsigned_test: str, float_test: str) -> str:
    return f"""#include <type_traits>
#include <cstdint>
using namespace std;
template <typename T>
__global__ void pick(const T* a, const T* b, float* out, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc;
    {unsigned_test} {{
        acc = (float)(a[i] * b[i]) + 1000.0f;
    }} {float_test} {{
        acc = a[i] + b[i];
    }} else {{
        acc = -(float)(a[i] - b[i]);
    }}
    out[i] = acc;
}}
void launch(int n, const unsigned* ua, const float* fa, const int* ia, float* o) {{
    pick<unsigned><<<1, 64>>>(ua, ua, o, n);
    pick<float><<<1, 64>>>(fa, fa, o, n);
    pick<int><<<1, 64>>>(ia, ia + 1, o, n);
}}
"""


def _run(tu: object, name: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    args = {"a": a, "b": b, "out": np.zeros(a.size, np.float32), "n": a.size}
    return run_kernel(tu, name, grid=(1,), block=(8,), args=args)["out"]


@pytest.mark.parametrize("ut", sorted(UNSIGNED_TESTS))
@pytest.mark.parametrize("ft", sorted(FLOAT_TESTS))
def test_trait_picks_the_branch_per_instance(tmp_path: Path, ut: str, ft: str) -> None:
    path = tmp_path / "k.cu"
    path.write_text(_kernel(UNSIGNED_TESTS[ut], FLOAT_TESTS[ft]))
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    u = np.arange(1, 7, dtype=np.uint32)
    np.testing.assert_array_equal(_run(tu, "pick<uint32>", u, u), u.astype(np.float32) ** 2 + 1000)
    f = np.linspace(-1, 1, 6, dtype=np.float32)
    np.testing.assert_array_equal(_run(tu, "pick<float32>", f, f), f + f)
    i = np.array([5, -3, 7, 0, 2, 9], np.int32)
    j = np.array([1, 2, 3, 4, 5, 6], np.int32)
    np.testing.assert_array_equal(_run(tu, "pick<int32>", i, j), -(i - j).astype(np.float32))


def test_trait_with_wrong_arity_is_a_diagnostic(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        """template <typename T> __global__ void k(T* p) {
    if constexpr (std::is_same_v<T>) p[0] = 1;
}
void go(float* p) { k<float><<<1, 1>>>(p); }
"""
    )
    tu = parse_file(path)
    (ds,) = tu.rejected.values()
    d = ds[0]
    assert d.code == "C2N1030" and d.loc.line == 2
