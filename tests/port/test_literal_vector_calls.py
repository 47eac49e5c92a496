"""A ``__device__`` function returning a vector or record that also stores to memory (or
synchronises) is inlined once per call where the call is a whole statement (``T v = f(...)``,
``v = f(...)``), its result local scalarised with the caller's (:mod:`.scalarise`): cloning it per
lane would repeat its stores.  Each port matches the SIMT interpreter on both targets."""

from __future__ import annotations

import pytest

from tests.port.test_literal_vectors import _kernel, _matches

PORTED = {
    # a helper storing one value and returning a float2, its result declared
    "store_and_return_float2": """
__device__ float2 put(float* y, int i, float v) { y[i] = v; return make_float2(v, v * 2.0f); }
__global__ void r(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float2 v = put(y, i, x[i]); y[n + i] = v.y; y[2 * n + i] = v.x; }
}
""",
    # a helper reaching the store through another helper, the result assigned (not declared)
    "store_through_callee": """
__device__ float put(float* y, int i, float v) { y[i] = v; return v + 1.0f; }
__device__ float2 wrap(float* y, int i, float v) { float w = put(y, i, v); return make_float2(w, v); }
__global__ void r(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float2 v;
  v.x = 0.0f; v.y = 0.0f;
  if (i < n) { v = wrap(y, i, x[i]); y[n + i] = v.x * v.y; }
}
""",
    # a record of two floats built in a scratch row of global memory
    "record_with_scratch_row": """
struct Pair { float lo; float hi; };
__device__ Pair stats(float* scratch, const float* row, int m) {
  Pair p = {0.0f, 0.0f};
  for (int j = 0; j < m; j++) scratch[j] = row[j] * row[j];
  for (int j = 0; j < m; j++) { p.lo += scratch[j]; p.hi = fmaxf(p.hi, scratch[j]); }
  return p;
}
__global__ void r(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    Pair s;
    s = stats(y + 4 * i, x + 4 * i, 3);
    y[4 * i + 3] = s.lo - s.hi;
  }
}
""",
    # a uint4 rank through __shared__ memory and a barrier, in a loop, nested helpers
    "shared_rank_uint4": """
__device__ uint4 offsets(uint4 p, unsigned int* sm) {
  int t = threadIdx.x;
  sm[t] = p.x + p.y + p.z + p.w;
  __syncthreads();
  unsigned int before = 0;
  for (int k = 0; k < t; k++) before += sm[k];
  __syncthreads();
  uint4 o;
  o.x = before; o.y = before + p.x; o.z = o.y + p.y; o.w = o.z + p.z;
  return o;
}
__device__ uint4 rank(uint4 p, unsigned int* sm) {
  uint4 o = offsets(p, sm);
  uint4 r;
  r.x = p.x ? o.x : 1000u + o.x; r.y = p.y ? o.y : 1000u + o.y;
  r.z = p.z ? o.z : 1000u + o.z; r.w = p.w ? o.w : 1000u + o.w;
  return r;
}
__global__ void r(const unsigned int* x, unsigned int* y, int n) {
  __shared__ unsigned int sm[64];
  int i = blockIdx.x * 64 + threadIdx.x;
  uint4 key = i < n ? reinterpret_cast<const uint4*>(x)[i] : make_uint4(0u, 0u, 0u, 0u);
  uint4 acc = make_uint4(0u, 0u, 0u, 0u);
  for (int b = 0; b < 2; ++b) {
    uint4 bits;
    bits.x = (key.x >> b) & 1u; bits.y = (key.y >> b) & 1u;
    bits.z = (key.z >> b) & 1u; bits.w = (key.w >> b) & 1u;
    uint4 got;
    got = rank(bits, sm);
    acc.x += got.x; acc.y += got.y; acc.z += got.z; acc.w += got.w;
  }
  if (i < n) reinterpret_cast<uint4*>(y)[i] = acc;
}
""",
}


@pytest.mark.parametrize("name", sorted(PORTED))
def test_vector_returning_helper_with_stores_is_inlined_and_matches(tmp_path, name):
    dt = "uint32" if "uint4" in name else "float32"
    _matches(_kernel(tmp_path, PORTED[name], dt), tmp_path)


GROUP_REDUCTIONS = {
    # a (sum, max) record combined across a warp tile by cg::reduce with the file's function
    "record_tile_reduce": """
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
struct SM { float s; float m; };
__device__ SM join(SM a, SM b) {
  SM r;
  r.m = fmaxf(a.m, b.m);
  r.s = a.s * expf(a.m - r.m) + b.s * expf(b.m - r.m);
  return r;
}
__global__ void r(const float* x, float* y, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  SM p = {1.0f, i < n ? x[i] : -1e30f};
  if (i >= n) p.s = 0.0f;
  SM t = cg::reduce(warp, p, join);
  if (i < n) y[i] = t.s + t.m;
}
""",
    # a float2 pair (count, total) reduced over a tile of 16, assigned to an existing local
    "float2_tile_reduce": """
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__device__ float2 add2(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
__global__ void r(const float* x, float* y, int n) {
  auto tile = cg::tiled_partition<16>(cg::this_thread_block());
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float2 v = make_float2(i < n ? 1.0f : 0.0f, i < n ? x[i] : 0.0f);
  float2 tot;
  tot = cg::reduce(tile, v, add2);
  if (i < n) y[i] = tot.y / tot.x;
}
""",
}


@pytest.mark.parametrize("name", sorted(GROUP_REDUCTIONS))
def test_a_group_reduction_of_a_vector_matches(tmp_path, name):
    _matches(_kernel(tmp_path, GROUP_REDUCTIONS[name]), tmp_path)
