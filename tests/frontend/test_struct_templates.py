"""Class templates of plain data (``template <typename Real> struct AsianOption {...}``):
``S<float>`` is an aggregate struct with its parameters bound."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

STRUCTS = {
    "struct": """template <typename Real> struct Option {
    enum CallPut { Call, Put };
    Real spot;
    Real strike;
    CallPut type;
};""",
    "class": """template <class Real> class Option {
public:
    Real spot, strike;
    enum CallPut { Call = 0, Put = 1 } ;
    int type;
};""",
    "typedef_name": """template <typename R> struct OptionT { R spot; R strike; int type;
    enum CallPut { Call, Put }; };
#define Option OptionT""",
}

KERNEL = """
template <typename Real>
__global__ void payoff(Real* out, const Real* avg, const Option<Real>* const opt, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Real p = avg[i] * opt->spot - opt[0].strike;
    if (opt->type == Option<Real>::Put) p = -p;
    out[i] = p > 0 ? p : 0;
}
"""
LAUNCH = "int main() { T* o; T* a; Option<T>* op; payoff<T><<<1, 64>>>(o, a, op, 50); }\n"


def _option_bytes(dtype: type, spot: float, strike: float, put: int) -> np.ndarray:
    """The C layout of Option<dtype>: spot, strike, then an int (padded to the alignment)."""
    head = np.array([spot, strike], dtype=dtype).tobytes() + np.int32(put).tobytes()
    align = np.dtype(dtype).itemsize
    size = (len(head) + align - 1) // align * align
    return np.frombuffer(head + bytes(size - len(head)), dtype=np.uint8)


@pytest.mark.parametrize("spelling", sorted(STRUCTS))
@pytest.mark.parametrize("ctype,dtype", [("float", np.float32), ("double", np.float64)])
@pytest.mark.parametrize("put", [0, 1])
def test_class_template_instance(
    tmp_path: Path, spelling: str, ctype: str, dtype: type, put: int
) -> None:
    path = tmp_path / "k.cu"
    path.write_text(STRUCTS[spelling] + KERNEL + LAUNCH.replace("T", ctype))
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    (k,) = tu.kernels
    # an array of the struct: one array per member, each at its offset in the C layout
    w = np.dtype(dtype).itemsize
    size = 12 if ctype == "float" else 24
    members = {p.name: p.record_at for p in k.params if p.record == "opt"}
    assert members == {"opt_spot": (0, size, 1), "opt_strike": (w, size, 1),
                       "opt_type": (2 * w, size, 1)}  # fmt: skip
    avg = np.linspace(0, 4, 50).astype(dtype)
    got = run_kernel(
        tu,
        k.name,
        grid=(1,),
        block=(64,),
        args={
            "out": np.zeros(50, dtype),
            "avg": avg,
            "opt": _option_bytes(dtype, 1.5, 2.0, put),
            "n": 50,
        },
    )["out"]
    p = avg * dtype(1.5) - dtype(2.0)
    want = np.maximum(-p if put else p, 0)
    np.testing.assert_array_equal(got, want)


def test_generic_kernel_of_a_class_template(tmp_path: Path) -> None:
    """Instantiated by nothing in the file: read under an assumed ``Real = float``, said in a
    note, so the struct splits into its members like a launched instance's."""
    path = tmp_path / "k.cu"
    path.write_text(STRUCTS["struct"] + KERNEL)
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    params = {p.name: p.ty for p in tu.kernels[0].params}
    assert params["opt_spot"].pointee.name == "float32"
    assert params["opt_type"].pointee.name == "int32"
    notes = [d.message for d in tu.diagnostics if d.code == "C2N2100"]
    assert any("Real=float32" in m and "assumed" in m for m in notes), notes


def test_integer_parameter_and_array_member(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        """template <typename T, int N> struct Tile { int n; T v[N]; };
__global__ void sum_tiles(const Tile<float, 4>* tiles, float* out) {
    const Tile<float, 4>* t = tiles + threadIdx.x;
    float s = 0;
    for (int k = 0; k < t->n; k++) s += t->v[k];
    out[threadIdx.x] = s;
}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    rows = [(3, [1, 2, 3, 100]), (4, [1, 1, 1, 1]), (0, [9, 9, 9, 9])]
    data = b"".join(np.int32(n).tobytes() + np.array(v, np.float32).tobytes() for n, v in rows)
    got = run_kernel(
        tu,
        "sum_tiles",
        grid=(1,),
        block=(3,),
        args={"tiles": np.frombuffer(data, np.uint8), "out": np.zeros(3, np.float32)},
    )["out"]
    np.testing.assert_array_equal(got, [6, 4, 0])


def test_class_template_with_methods_stays_refused(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        """template <typename T> struct Box { T v; __device__ T get() const { return v; } };
__global__ void k(const Box<float>* b, float* out) { out[0] = b->v; }
"""
    )
    tu = parse_file(path)
    (ds,) = tu.rejected.values()
    assert ds[0].code == "C2N1025" and ds[0].loc.line == 2
