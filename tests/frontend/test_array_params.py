"""Kernel parameters of array type (``float w[6][5][5]``, ``float (*w)[5][5]``) are flat
buffers with linearised accesses; the host's pointer-to-array casts at the launch are read; the
extents the parameter declares give the buffer's shape where nothing else does."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference
from cuda2nki.simt import run_kernel

#: a per-thread range over all elements, as neural-network tutorials write it (the loop bound
#: depends on the thread, so only the declared extents bound the buffers)
RANGE = """
__global__ void add_bias(float out[4][6][6], {bias}) {{
    const int pos = blockIdx.x * blockDim.x + threadIdx.x;
    const int size = blockDim.x * gridDim.x;
    const int N = 4 * 6 * 6;
    for (int n = N * pos / size; n < N * (pos + 1) / size; ++n) {{
        const int c = n % 4, y = (n / 4) % 6, x = (n / 24) % 6;
        out[c][y][x] += bias[c];
    }}
}}
int main() {{
    float *d_out, *d_bias;
    cudaMalloc(&d_out, 4 * 6 * 6 * sizeof(float));
    cudaMalloc(&d_bias, 4 * sizeof(float));
    add_bias<<<8, 32>>>({cast}d_out, d_bias);
    return 0;
}}
"""


@pytest.mark.parametrize(
    ("bias", "cast"),
    [
        ("float bias[4]", "(float (*)[6][6])"),
        ("const float* bias", "(float(*)[6][6]) "),
        ("float bias[4]", ""),
    ],
)
def test_an_array_parameter_is_a_flat_buffer_with_its_declared_shape(bias: str, cast: str) -> None:
    tu = parse_source(RANGE.format(bias=bias, cast=cast), "k.cu")
    (k,) = tu.kernels
    out = next(p for p in k.params if p.name == "out")
    assert out.ty == A.PointerType(pointee=A.ScalarType(name="float32")) and out.rows == (4, 6, 6)
    assert [s.kernel for s in tu.launch_sites] == ["add_bias"]  # the cast at the call is read
    bnd, _ = binding_from_inference(tu, "add_bias")
    assert bnd is not None and list(bnd.block) == [32]
    assert tuple(bnd.tensor("out").shape) == (4, 6, 6) and bnd.tensor("out").role == "inout"
    rng = np.random.default_rng(3)
    o, b = rng.standard_normal((4, 6, 6)).astype(np.float32), np.arange(4, dtype=np.float32)
    got = run_kernel(tu, "add_bias", grid=(8,), block=(32,), args={"out": o.ravel(), "bias": b})
    np.testing.assert_array_equal(got["out"].reshape(4, 6, 6), o + b[:, None, None])


ROWS = """
__global__ void blur_rows({param}, float (*dst)[8], int rows) {{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    for (int j = 1; j < 7; ++j)
        dst[r][j] = (src[r][j - 1] + src[r][j] + src[r][j + 1]) / 3.0f;
}}
"""


@pytest.mark.parametrize(
    "param", ["const float (*src)[8]", "const float src[][8]", "float src[64][8]"]
)
def test_rows_of_a_fixed_width_are_indexed_row_major(param: str) -> None:
    tu = parse_source(ROWS.format(param=param), "k.cu")
    (k,) = tu.kernels
    assert all(isinstance(p.ty, A.PointerType) for p in k.params[:2])
    assert all(isinstance(p.ty.pointee, A.ScalarType) for p in k.params[:2])  # type: ignore[union-attr]
    src = np.arange(5 * 8, dtype=np.float32).reshape(5, 8)
    got = run_kernel(
        tu,
        "blur_rows",
        grid=(1,),
        block=(8,),
        args={"src": src.ravel(), "dst": np.zeros(40, np.float32), "rows": 5},
    )
    want = np.zeros((5, 8), np.float32)
    want[:, 1:7] = (src[:, :6] + src[:, 1:7] + src[:, 2:]) / np.float32(3)
    np.testing.assert_allclose(got["dst"].reshape(5, 8), want, rtol=1e-6)


def test_a_row_passed_on_keeps_the_parameter_as_written() -> None:
    src = """
__device__ float first(const float* row) { return row[0]; }
__global__ void heads(const float (*m)[4], float* out) {
    int i = threadIdx.x;
    out[i] = first(m[i]) + m[i][1];
}
"""
    tu = parse_source(src, "k.cu")
    (k,) = tu.kernels
    m = k.params[0]
    assert isinstance(m.ty, A.PointerType) and isinstance(m.ty.pointee, A.ArrayType)


def test_a_cast_to_a_pointer_to_rows_has_the_rows_type() -> None:
    src = RANGE.format(bias="float bias[4]", cast="(float (*)[6][6])")
    tu = parse_source(src, "k.cu")
    (site,) = tu.launch_sites
    cast = site.args[0]
    assert isinstance(cast, A.Cast)
    assert cast.ty == A.PointerType(
        pointee=A.ArrayType(elem=A.ScalarType(name="float32"), dims=(6, 6))
    )


LOOKUP = """
__global__ void embed(const int* ids, {table}, float* out, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        for (int j = 0; j < 4; ++j) out[i * 4 + j] = {read};
}}
"""


@pytest.mark.parametrize(
    ("table", "read", "shape"),
    [
        ("const float table[16][4]", "table[ids[i]][j]", (16, 4)),
        ("float table[10][2][4]", "table[ids[i]][1][j]", (10, 2, 4)),
        ("const float vocab[50]", "vocab[ids[i]] * (float)j", (50,)),
    ],
)
def test_a_table_indexed_by_data_takes_its_declared_extents(
    table: str, read: str, shape: tuple[int, ...]
) -> None:
    tu = parse_source(LOOKUP.format(table=table, read=read), "k.cu")
    name = "vocab" if "vocab" in table else "table"
    bnd, diags = binding_from_inference(tu, "embed")
    assert bnd is not None and tuple(bnd.tensor(name).shape) == shape
    dims = "".join(f"[{d}]" for d in shape)
    assert any(f"its declaration '{name}{dims}'" in d.message for d in diags)
