"""Bit reinterpretations are ported through a recogniser, exactly: ``__float_as_int``,
``__int_as_float``, ``__float_as_uint``, ``__uint_as_float``, ``reinterpret_cast<unsigned&>``,
``*(int*)&f``, a global buffer read and written through a pointer of another element type and a
shared buffer split into a float half and an int half.  A tile's bits are read as another type
through ``tile.view(dtype)`` (NKI's zero-cost reinterpretation) copied on the Vector engine,
which is bit-exact between equal dtypes; the SIMT interpreter is the reference."""

from __future__ import annotations

import pytest

from tests.port.acceptance import check_kernel

_BINDING = """kernel = "{kernel}"
[launch]
grid = ["ceil_div(n, {block})"]
block = [{block}]
[params]
{params}
n = 700
[[check.shapes]]
n = 129
[[check.shapes]]
n = 3
"""

#: name -> (CUDA source, block size, parameter lines of the binding)
KERNELS: dict[str, tuple[str, int, str]] = {
    "order_key": (
        """
__global__ void order_key(const float* x, int* key, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int b = __float_as_int(x[i]);
        key[i] = b ^ ((b >> 31) & 0x7fffffff);
    }
}
""",
        128,
        'x = { shape = ["n"], dtype = "float32", role = "in" }\n'
        'key = { shape = ["n"], dtype = "int32", role = "out" }',
    ),
    "unit_from_bits": (
        """
__global__ void unit_from_bits(const unsigned int* bits, float* y, int n) {
    for (int k = threadIdx.x + blockIdx.x * blockDim.x; k < n; k += blockDim.x * gridDim.x) {
        y[k] = __uint_as_float((bits[k] & 0x007fffffu) | 0x3f800000u) - 1.0f;
    }
}
""",
        64,
        'bits = { shape = ["n"], dtype = "uint32", role = "in", range = [0, 4000000000] }\n'
        'y = { shape = ["n"], dtype = "float32", role = "out" }',
    ),
    "abs_bits": (
        """
__global__ void abs_bits(const float* a, float* b, int n) {
    int t = blockDim.x * blockIdx.x + threadIdx.x;
    if (t >= n) return;
    unsigned int u = __float_as_uint(a[t]) & 0x7fffffffu;
    b[t] = __int_as_float((int)u) * 0.5f;
}
""",
        256,
        'a = { shape = ["n"], dtype = "float32", role = "in" }\n'
        'b = { shape = ["n"], dtype = "float32", role = "out" }',
    ),
    "doubled_exponent": (
        """
__global__ void doubled_exponent(const float* a, int* e, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float f = a[i] * 2.0f;
        int w = *(int*)&f;
        e[i] = (w >> 23) & 255;
    }
}
""",
        32,
        'a = { shape = ["n"], dtype = "float32", role = "in" }\n'
        'e = { shape = ["n"], dtype = "int32", role = "out" }',
    ),
    "flip_sign": (
        """
__global__ void flip_sign(const float* x, float* y, int n) {
    const unsigned int* xb = (const unsigned int*)x;
    unsigned int* yb = (unsigned int*)y;
    int j = threadIdx.x + blockIdx.x * blockDim.x;
    if (j < n) yb[j] = xb[j] ^ 0x80000000u;
}
""",
        96,
        'x = { shape = ["n"], dtype = "float32", role = "in" }\n'
        'y = { shape = ["n"], dtype = "float32", role = "out" }',
    ),
    "sign_bit": (
        """
__global__ void sign_bit(const float* v, unsigned int* s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float f = v[i];
        s[i] = reinterpret_cast<unsigned int&>(f) >> 31;
    }
}
""",
        128,
        'v = { shape = ["n"], dtype = "float32", role = "in" }\n'
        's = { shape = ["n"], dtype = "uint32", role = "out" }',
    ),
    "block_sum_count": (
        """
#define W 64
__global__ void block_sum_count(const float* x, float* sums, int* nonzero, int n) {
    __shared__ float stage[2 * W];
    int* hits = (int*)(stage + W);
    int t = threadIdx.x;
    int g = blockIdx.x * W + t;
    float v = g < n ? x[g] : 0.0f;
    stage[t] = v;
    hits[t] = v > 0.0f ? 1 : 0;
    __syncthreads();
    if (t == 0) {
        float s = 0.0f;
        int c = 0;
        for (int k = 0; k < W; ++k) {
            s += stage[k];
            c += hits[k];
        }
        sums[blockIdx.x] = s;
        nonzero[blockIdx.x] = c;
    }
}
""",
        64,
        'x = { shape = ["n"], dtype = "float32", role = "in" }\n'
        'sums = { shape = ["ceil_div(n, 64)"], dtype = "float32", role = "out" }\n'
        'nonzero = { shape = ["ceil_div(n, 64)"], dtype = "int32", role = "out" }',
    ),
}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_a_bit_reinterpretation_is_a_recognised_exact_port(name, tmp_path) -> None:
    src, block, params = KERNELS[name]
    cu = tmp_path / f"{name}.cu"
    cu.write_text(src)
    binding = _BINDING.format(kernel=name, block=block, params=params)
    cu.with_suffix(".toml").write_text(binding)
    out = check_kernel(cu, "nki", tmp_path, max_points=3)
    assert out.status == "match", out
    port = (tmp_path / f"{name}_nki.py").read_text()
    if name != "block_sum_count":  # there the bits written as int are read back as int
        assert ".view(nl." in port and "engine=nisa.engine.vector" in port


def test_the_bits_of_a_literal_are_read_when_porting(tmp_path) -> None:
    """``__int_as_float(0x3f800000)`` is 1.0f: no instruction reinterprets a constant."""
    src = """
__global__ void scale_by_one(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * __int_as_float(0x40000000);
}
"""
    cu = tmp_path / "scale_by_one.cu"
    cu.write_text(src)
    params = (
        'x = { shape = ["n"], dtype = "float32", role = "in" }\n'
        'y = { shape = ["n"], dtype = "float32", role = "out" }'
    )
    cu.with_suffix(".toml").write_text(
        _BINDING.format(kernel="scale_by_one", block=128, params=params)
    )
    out = check_kernel(cu, "nki", tmp_path, max_points=3)
    assert out.status == "match", out
    port = (tmp_path / "scale_by_one_nki.py").read_text()
    assert ".view(" not in port and "2.0" in port
