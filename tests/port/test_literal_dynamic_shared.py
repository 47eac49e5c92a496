"""The launch's dynamic shared memory declared with any element type (``extern __shared__
char* pool[]``, ``extern __shared__ int4 raw[]``, ``extern __shared__ double buf[]``) and used
only through casts to one element type (``float*``, ``float4*``, a packed struct of floats or
bf16) is that element type's array in literal ports: the declared type only sets the bytes'
alignment.  Each port matches the SIMT interpreter on both targets."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.port.literal_acceptance import check_literal

_PACKED = """
#include <cuda_bf16.h>
#include <string.h>
template <class E>
struct alignas(16) Pack {
    Pack() = default;
    __device__ explicit Pack(int4 w) { memcpy(&data, &w, sizeof(w)); }
    __device__ E& operator[](int j) { return data[j]; }
    __device__ const E& operator[](int j) const { return data[j]; }
    __device__ int4 bits() const { int4 w; memcpy(&w, &data, sizeof(w)); return w; }
    static constexpr const size_t size = sizeof(int4) / sizeof(E);
    E data[size];
};
"""

KERNELS = {
    # an array of pointers standing for raw bytes, read as packed floats and as floats
    "pointer_array_as_packed_floats": (
        "float",
        _PACKED
        + """
typedef Pack<float> p4;
__global__ void r(const float* x, float* y, int n) {
  extern __shared__ char* pool[];
  p4* tiles = reinterpret_cast<p4*>(pool);
  float* flat = reinterpret_cast<float*>(pool);
  int t = threadIdx.x;
  int i = (blockIdx.x * blockDim.x + t) * p4::size;
  if (i < 4 * n) {
    p4 a = p4(*reinterpret_cast<const int4*>(x + i));
    tiles[t] = a;
  }
  __syncthreads();
  if (i < 4 * n) {
    p4 b = tiles[t ^ 1];
    for (int k = 0; k < p4::size; ++k) {
      y[i + k] = b[k] + flat[4 * t + k] * 0.5f;
    }
  }
}
""",
    ),
    # a packed bf16 struct over an int4 array of dynamic shared memory
    "int4_array_as_packed_bf16": (
        "bfloat16",
        _PACKED
        + """
using h8 = Pack<__nv_bfloat16>;
__global__ void r(const __nv_bfloat16* x, __nv_bfloat16* y, int n) {
  extern __shared__ int4 raw[];
  h8* s = (h8*)raw;
  int lane = threadIdx.x;
  int base = (blockIdx.x * blockDim.x + lane) * 8;
  if (base < 4 * n) s[lane] = h8(*(const int4*)(x + base));
  __syncthreads();
  if (base < 4 * n) {
    h8 v = s[lane];
    h8 o;
    for (int q = 0; q < h8::size; q++) o[q] = (__nv_bfloat16)((float)v[q] * 3.0f - 1.0f);
    *reinterpret_cast<int4*>(y + base) = o.bits();
  }
}
""",
    ),
    # a double array read and written only as float4 and float
    "double_array_as_float4": (
        "float",
        """
__global__ void r(const float* x, float* y, int n) {
  extern __shared__ double buf[];
  float4* q = reinterpret_cast<float4*>(buf);
  int t = threadIdx.x, g = blockIdx.x * blockDim.x + t;
  q[t] = g < n ? reinterpret_cast<const float4*>(x)[g] : make_float4(0.f, 0.f, 0.f, 0.f);
  __syncthreads();
  const float* f = (const float*)buf;
  if (g < n) {
    float4 u = q[(t + 1) % blockDim.x];
    reinterpret_cast<float4*>(y)[g] = make_float4(u.x, u.y + f[4 * t], u.z, u.w - f[4 * t + 3]);
  }
}
""",
    ),
}

_BINDING = """\
kernel = "r"
[launch]
grid = ["ceil_div(n, {per})"]
block = [{block}]
shared_bytes = "{smem}"
[params]
n = 100
x = {{ shape = ["4*n"], dtype = "{dt}", role = "in" }}
y = {{ shape = ["4*n"], dtype = "{dt}", role = "out" }}
[check]
rtol = {tol}
atol = {tol}
[[check.shapes]]
n = 100
[[check.shapes]]
n = 64
"""


def _kernel(tmp: Path, name: str) -> Path:
    dt, src = KERNELS[name]
    block = 32 if dt == "bfloat16" else 64
    per = block * 2 if dt == "bfloat16" else block  # 8 lanes of 4n elements: n/2 per thread
    cu = tmp / "r.cu"
    cu.write_text(src)
    tol = "1e-2" if dt == "bfloat16" else "1e-5"
    cu.with_suffix(".toml").write_text(
        _BINDING.format(per=per, block=block, smem=16 * block, dt=dt, tol=tol)
    )
    return cu


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_dynamic_shared_memory_used_as_one_type_matches(tmp_path, name, target) -> None:
    out = check_literal(_kernel(tmp_path, name), tmp_path, lowering="literal", target=target)
    assert out.status == "match", (out.status, out.detail)
    assert len(out.points) >= 2
