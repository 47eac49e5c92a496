"""Operators on vector and record values port literally and match the SIMT interpreter: the
file's own ``operator+``/``operator^=``/``operator*`` overloads (chosen by operand types), and,
where the file defines none, the lane-by-lane operators of the CUDA vector headers
(:mod:`cuda2nki.frontend.vecoperators`)."""

from __future__ import annotations

import pytest

from tests.port.test_literal_vectors import _kernel, _matches

PORTED = {
    # overloads for two widths; a compound operator taking a reference, a binary one by value
    "overloads_by_width": """
inline __host__ __device__ float2 operator+(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
inline __host__ __device__ float4 operator+(float4 a, float4 b) {
  return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}
inline __device__ void operator+=(float4 &a, const float4 &b) { a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w; }
__global__ void r(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float4 v = reinterpret_cast<const float4*>(x)[i];
    float2 h = make_float2(v.x, v.y) + make_float2(v.z, v.w);
    v += make_float4(h.x, h.y, 1.0f, 2.0f);
    float4 w = v + v;
    reinterpret_cast<float4*>(y)[i] = w;
  }
}
""",
    # a shared tree of float4 partial sums combined with the file's operator+= on elements
    "shared_tree_compound": """
__device__ void operator+=(float4 &a, const float4 b) { a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w; }
__global__ void r(const float* x, float* y, int n) {
  __shared__ float4 part[64];
  int t = threadIdx.x;
  int i = blockIdx.x * 64 + t;
  part[t] = i < n ? reinterpret_cast<const float4*>(x)[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  __syncthreads();
  for (int s = 32; s > 0; s >>= 1) {
    if (t < s) part[t] += part[t + s];
    __syncthreads();
  }
  if (i < n) {
    float4 tot = part[0];
    y[4 * i] = tot.x; y[4 * i + 1] = tot.y; y[4 * i + 2] = tot.z; y[4 * i + 3] = part[t].w;
  }
}
""",
    # a complex multiply as operator* on float2, a scalar scaling overload, unary minus, and a
    # compound operator spelled through operator* alone
    "complex_operators": """
__device__ float2 operator*(float2 a, float2 b) { return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
__device__ float2 operator*(float2 a, float s) { return make_float2(a.x * s, a.y * s); }
__device__ float2 operator-(float2 a) { return make_float2(-a.x, -a.y); }
__global__ void r(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const float2* z = reinterpret_cast<const float2*>(x);
    float2 a = z[2 * i], b = z[2 * i + 1];
    float2 p = a * b;
    p *= b;
    float2 q = -(a * 0.5f);
    y[4 * i] = p.x; y[4 * i + 1] = p.y; y[4 * i + 2] = q.x; y[4 * i + 3] = q.y;
  }
}
""",
    # no operator in the file: the headers' lane-by-lane meaning, a scalar for every lane
    "header_lanewise": """
__global__ void r(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float4 v = reinterpret_cast<const float4*>(x)[i];
    float4 w = v * 2.0f + v;
    w -= make_float4(1.0f, 2.0f, 3.0f, 4.0f);
    w /= 4.0f;
    float4 m = -w;
    reinterpret_cast<float4*>(y)[i] = m + w * w;
  }
}
""",
    # a record with its own operators, combined in a loop
    "record_operators": """
struct Acc { float s; float q; };
__device__ Acc operator+(const Acc& a, const Acc& b) { Acc c = {a.s + b.s, a.q + b.q}; return c; }
__device__ Acc& operator+=(Acc& a, const Acc& b) { a.s += b.s; a.q += b.q; return a; }
__global__ void r(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    Acc t = {0.0f, 0.0f};
    for (int k = 0; k < 4; k++) { Acc e = {x[4 * i + k], x[4 * i + k] * x[4 * i + k]}; t += e; }
    Acc u = t + t;
    y[4 * i] = t.s; y[4 * i + 1] = t.q; y[4 * i + 2] = u.s; y[4 * i + 3] = u.q;
  }
}
""",
}

INT_PORTED = {
    # byte vectors XORed by the file's operators (a state round), in shared memory
    "uchar4_xor_rounds": """
__device__ uchar4 operator^(uchar4 a, uchar4 b) { return make_uchar4(a.x ^ b.x, a.y ^ b.y, a.z ^ b.z, a.w ^ b.w); }
__device__ void operator^=(uchar4 &a, const uchar4 b) { a = a ^ b; }
__global__ void r(const int* x, int* y, int n) {
  __shared__ uchar4 st[64];
  int t = threadIdx.x;
  int i = blockIdx.x * 64 + t;
  int v = i < n ? x[i] : 0;
  st[t] = make_uchar4(v & 255, (v >> 8) & 255, (v >> 16) & 255, 7);
  uchar4 key = make_uchar4(t, 3, 200, 1);
  for (int rd = 0; rd < 3; rd++) {
    st[t] ^= key;
    __syncthreads();
    uchar4 nb = st[(t + 1) % 64];
    __syncthreads();
    st[t] = st[t] ^ nb;
    __syncthreads();
  }
  uchar4 o = st[t];
  if (i < n) y[i] = o.x + 256 * o.y + 65536 * o.z + 16777216 * o.w;
}
""",
    # int2 lanes with the headers' operators: shifts, bitwise and arithmetic with a scalar
    "int2_lanewise": """
__global__ void r(const int* x, int* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int2 a = make_int2(x[i], x[i] + 7);
    int2 b = (a << 2) ^ (a & make_int2(15, 3));
    b += 5;
    b = b % 1000 - a;
    y[i] = b.x * 3 + b.y;
  }
}
""",
}


@pytest.mark.parametrize("name", sorted(PORTED))
def test_vector_operators_port_and_match(tmp_path, name):
    _matches(_kernel(tmp_path, PORTED[name]), tmp_path)


@pytest.mark.parametrize("name", sorted(INT_PORTED))
def test_integer_vector_operators_port_and_match(tmp_path, name):
    _matches(_kernel(tmp_path, INT_PORTED[name], "int32"), tmp_path)


ATOMICS = {
    # float2 adds into a few slots through an element's address, and through pointer arithmetic
    "float2_slots": """
__global__ void r(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float2* slots = reinterpret_cast<float2*>(y);
  float2 v = make_float2(x[i], 2.0f * x[i]);
  atomicAdd(&slots[i % 8], v);
  atomicAdd(slots + 8 + i % 3, make_float2(1.0f, x[i]));
}
""",
    # half2 constants added per lane
    "half2_counts": """
__global__ void r(const float* x, __half* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half2* h = reinterpret_cast<__half2*>(y);
  __half2 one {__float2half(0.25f), __float2half(1.0f)};
  atomicAdd(&h[i % 16], one);
}
""",
}


@pytest.mark.parametrize("name", sorted(ATOMICS))
def test_vector_atomic_adds_go_lane_by_lane(tmp_path, name):
    cu = _kernel(tmp_path, ATOMICS[name], "float16" if "half" in name else "float32")
    toml = cu.with_suffix(".toml")
    text = toml.read_text().replace('role = "out"', 'role = "inout"')
    toml.write_text(
        text.replace(
            'x = { shape = ["4*n"], dtype = "float16"', 'x = { shape = ["4*n"], dtype = "float32"'
        )
    )
    _matches(cu, tmp_path)


HALF_PAIRS = {
    # paired half intrinsics: lane arithmetic, construction from halves and floats, picks
    "half2_intrinsics": """
__global__ void r(const __half* x, __half* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const __half2* x2 = reinterpret_cast<const __half2*>(x);
    __half2 a = __hadd2(x2[i], __halves2half2(x[0], __float2half(1.5f)));
    __half2 b = __hmul2(a, __float2half2_rn(0.25f));
    float2 f = __half22float2(__hsub2(b, a));
    y[2 * i] = __float2half(f.y) + __low2half(b);
    y[2 * i + 1] = __high2half(__lows2half2(a, b));
  }
}
""",
    # bfloat16 pairs built from floats and from halves of a row, added with the operator
    "bfloat162_pairs": """
__global__ void r(const __nv_bfloat16* x, __nv_bfloat16* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    __nv_bfloat162 p = __halves2bfloat162(x[2 * i], x[2 * i + 1]);
    __nv_bfloat162 q = __floats2bfloat162_rn(0.5f, -2.0f);
    __nv_bfloat162 s = p + q;
    reinterpret_cast<__nv_bfloat162*>(y)[i] = __highs2bfloat162(s, p);
  }
}
""",
}


@pytest.mark.parametrize("name", sorted(HALF_PAIRS))
def test_paired_half_intrinsics_port_and_match(tmp_path, name):
    dt = "bfloat16" if "bfloat" in name else "float16"
    _matches(_kernel(tmp_path, HALF_PAIRS[name], dt), tmp_path)
