"""Vector types (``float2/3/4``, ``int2/4``) and record structs port literally, lane by lane
(:mod:`cuda2nki.lift.literal.scalarise`): locals and members, ``make_*`` and ``{...}``
initialisation, copies and swaps, ``?:`` of vectors, ``__device__`` functions taking and
returning them by value, arrays of them in registers and ``__shared__`` memory, pointers to them
reached by ``reinterpret_cast``, C casts, pointer arithmetic and ``->``.  Each port matches the
SIMT interpreter on both targets; what cannot be faithful is refused naming the construct."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.literal.scalarise import scalarise
from tests.port.literal_acceptance import check_literal

_BINDING = """\
kernel = "r"
[launch]
grid = ["ceil_div(n, 64)"]
block = [64]
[params]
n = 100
x = {{ shape = ["4*n"], dtype = "{dt}", role = "in" }}
y = {{ shape = ["4*n"], dtype = "{dt}", role = "out" }}
[check]
rtol = 1e-5
atol = 1e-5
[[check.shapes]]
n = 100
[[check.shapes]]
n = 64
"""

PORTED = {
    # reinterpret_cast of float buffers, a grid-stride loop, make_float4
    "reinterpret_float4": """
__global__ void r(const float* x, float* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    float4 v = reinterpret_cast<const float4*>(x)[i];
    float4 r = make_float4(v.x * 2.0f, v.y + 1.0f, v.z - v.w, v.w);
    reinterpret_cast<float4*>(y)[i] = r;
  }
}
""",
    # C casts, pointer arithmetic on vector pointers, member stores and ->
    "c_cast_float2": """
__global__ void r(const float* x, float* y, int n) {
  int t = threadIdx.x + blockDim.x * blockIdx.x;
  if (t >= n) return;
  float2 lo = ((const float2*)x)[2 * t];
  float2 hi = *((const float2*)(x + 4 * t) + 1);
  float2 s;
  s.x = lo.x + hi.y;
  s.y = lo.y * hi.x;
  *((float2*)y + 2 * t) = s;
  float2* q = (float2*)y + 2 * t + 1;
  q->x = lo.x - hi.x;
  q->y = s.x;
}
""",
    # a user struct: brace initialisation, copies, helpers by value (one returning the struct)
    "user_struct": """
struct Pt { float a, b, c; };
__device__ Pt scaled(Pt p, float s) { Pt o = {p.a * s, p.b * s, p.c * s}; return o; }
__device__ float dot3(Pt p, Pt q) { return p.a * q.a + p.b * q.b + p.c * q.c; }
__global__ void r(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    Pt p = {x[4 * i], x[4 * i + 1], x[4 * i + 2]};
    Pt q = scaled(p, x[4 * i + 3]);
    Pt w = q;
    w.b = dot3(p, w);
    y[4 * i] = w.a; y[4 * i + 1] = w.b; y[4 * i + 2] = w.c; y[4 * i + 3] = dot3(p, p);
  }
}
""",
    # float3 through helpers that set members, a swap reading the assigned vector, ?:
    "float3_helpers": """
__device__ float3 velocity(float rho, float3 mom) {
  float3 v;
  v.x = mom.x / rho; v.y = mom.y / rho; v.z = mom.z / rho;
  return v;
}
__device__ float speed2(float3 v) { return v.x * v.x + v.y * v.y + v.z * v.z; }
__global__ void r(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float rho = x[i] + 2.0f;
  float3 m = make_float3(x[n + i], x[2 * n + i], x[3 * n + i]);
  float3 v = velocity(rho, m);
  m = make_float3(m.y, m.z, m.x);
  float3 c = rho > 2.5f ? v : m;
  y[i] = speed2(v); y[n + i] = c.x; y[2 * n + i] = m.x; y[3 * n + i] = velocity(1.0f, c).z;
}
""",
    # a __shared__ array of float4 exchanged between threads, a register array of float2
    "shared_float4": """
__global__ void r(const float* x, float* y, int n) {
  __shared__ float4 buf[64];
  int t = threadIdx.x;
  int i = blockIdx.x * 64 + t;
  float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (i < n) v = ((const float4*)x)[i];
  buf[t] = v;
  __syncthreads();
  float4 u = buf[63 - t];
  float2 acc[2];
  acc[0] = make_float2(u.x, u.y);
  acc[1] = make_float2(u.z + buf[t].w, u.w);
  if (i < n) {
    float4* out = reinterpret_cast<float4*>(y);
    out[i] = make_float4(acc[0].x, acc[1].x, acc[0].y, acc[1].y);
  }
}
""",
    # a pointer to a local vector passed to a function that writes lanes through ->
    "pointer_to_local_vector": """
__device__ void bump(float2* p, float s) { p->x += s; p->y = p->x * 2.0f; }
__global__ void r(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float2 v = make_float2(x[i], 0.0f); bump(&v, x[n + i]); y[i] = v.x + v.y; }
}
""",
    # a vector loaded by a helper through a pointer chosen by data (a gather)
    "helper_load_at_data_row": """
__device__ float4 load4(const float* p) { return *reinterpret_cast<const float4*>(p); }
__global__ void r(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int j = (int)fabsf(x[4 * i] * 10.0f) % n;
    float4 v = load4(x + 4 * j);
    y[4 * i] = v.x; y[4 * i + 1] = v.y + v.z; y[4 * i + 2] = v.w; y[4 * i + 3] = (float)j;
  }
}
""",
    # lanes chosen by a loop index through accessors viewing the vector as a float array, one
    # returning a reference (read as a value), one a value; a C cast and a reinterpret_cast
    "lane_accessors": """
__device__ float& lane_ref(float4& vec, int index) { return reinterpret_cast<float*>(&vec)[index]; }
__device__ float lane_val(const float4& vec, int index) { return ((const float*)&vec)[index]; }
__global__ void r(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float4 v = reinterpret_cast<const float4*>(x)[i];
    float s = 0.0f, m = -1e30f;
    for (int k = 0; k < 4; ++k) { s += lane_ref(v, k) * (k + 1); m = fmaxf(m, lane_val(v, 3 - k)); }
    y[4 * i] = s; y[4 * i + 1] = m; y[4 * i + 2] = lane_ref(v, 2); y[4 * i + 3] = v.x;
  }
}
""",
    # a record combined by a helper that returns a brace list, called with a brace list
    "brace_lists_in_calls": """
struct SumMax { float sum; float maxval; };
__device__ SumMax combine(SumMax a, SumMax b) {
  bool bigger = a.maxval > b.maxval;
  SumMax hi = bigger ? a : b;
  SumMax lo = bigger ? b : a;
  return { hi.sum + lo.sum * expf(lo.maxval - hi.maxval), hi.maxval };
}
__global__ void r(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    SumMax acc;
    acc.maxval = -1e30f;
    acc.sum = 0.0f;
    for (int k = 0; k < 4; k++) acc = combine(acc, { 1.0f, x[4 * i + k] });
    y[4 * i] = acc.sum; y[4 * i + 1] = acc.maxval;
    y[4 * i + 2] = combine(acc, acc).sum; y[4 * i + 3] = 0.0f;
  }
}
""",
    # scalar references: one written (copy-in, copy-out), one only read
    "scalar_references": """
__device__ void twice(float& d, float s) { d = d * 2.0f + s; }
__device__ float sq(const float& v) { return v * v; }
__global__ void r(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float d = x[i]; twice(d, 1.0f); y[i] = sq(d); y[n + i] = d; }
}
""",
    # a function returning a value from two places and writing through references, its result
    # declared, assigned, and discarded
    "references_and_result": """
__device__ float split(float v, float& lo, int& cnt) {
  if (v < 0.0f) { lo = -v; cnt = cnt + 1; return 0.0f; }
  lo = v * 0.5f;
  return v;
}
__global__ void r(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float lo = 0.0f;
  int cnt = 0;
  float a = split(x[i], lo, cnt);
  y[i] = a + lo;
  a = split(x[n + i], lo, cnt);
  y[n + i] = a - lo;
  split(x[2 * n + i], lo, cnt);
  y[2 * n + i] = lo;
  y[3 * n + i] = cnt;
}
""",
    # float3 out-parameters by reference (members set one by one, whole-vector assignment,
    # a scalar in-out reference beside them) and a read-only vector reference
    "vector_references": """
__device__ inline void vel(float& d, float3& m, float3& v) {
  v.x = m.x / d; v.y = m.y / d; v.z = m.z / d;
}
__device__ inline float speed(const float3& v) { return v.x * v.x + v.y * v.y + v.z * v.z; }
__device__ inline void flux(float& d, float3& v, float3& fx, float3& fy, float& e) {
  fx.x = v.x * d + e; fx.y = v.y * d; fx.z = v.z;
  fy = make_float3(v.y, v.z * d, fx.x);
  e = e * 0.5f + d;
}
__global__ void r(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float d = x[i] + 2.0f;
  float3 m; m.x = x[n + i]; m.y = x[2 * n + i]; m.z = x[3 * n + i];
  float3 v; vel(d, m, v);
  float e = speed(v);
  float3 fx, fy;
  flux(d, v, fx, fy, e);
  y[i] = e + fx.x; y[n + i] = fy.y + fx.y; y[2 * n + i] = fy.z - fx.z; y[3 * n + i] = fy.x;
}
""",
}

INT_PORTED = {
    # int4 / int2 in a grid-stride reduction (C integer arithmetic on the lanes)
    "int4_sum": """
__global__ void r(const int* x, int* y, int n) {
  int sum = 0;
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  for (int i = idx; i < n; i += blockDim.x * gridDim.x) {
    int4 v = reinterpret_cast<const int4*>(x)[i];
    int2 p = make_int2(v.x + v.y, v.z - v.w);
    sum += p.x * 3 + p.y;
  }
  if (idx < n) y[idx] = sum;
}
""",
}

REFUSED = {
    "the address of vector 'v'": """
__global__ void r(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float2 v = make_float2(x[i], 0.0f); float2* p = &v; p->x += 1.0f; y[i] = v.x; }
}
""",
    "a reinterpretation as a vector of another element type": """
__global__ void r(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { char4 v = reinterpret_cast<const char4*>(x)[i]; y[i] = v.x; }
}
""",
    "struct 'Rec' (members of different types": """
struct Rec { float w; int id; };
__global__ void r(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const Rec* p = (const Rec*)x;
  if (i < n) y[i] = p[i].w * p[i].id;
}
""",
    "one local passed to two reference parameters": """
__device__ void both(float& a, float& b) { a = a + 1.0f; b = b * 2.0f; }
__global__ void r(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float d = x[i]; both(d, d); y[i] = d; }
}
""",
    "reference parameter 'a' written in an expression": """
__device__ float inc(float& a) { a = a + 1.0f; return a; }
__global__ void r(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float d = x[i]; y[i] = inc(d) + d; }
}
""",
}


def _kernel(tmp: Path, src: str, dt: str = "float32") -> Path:
    cu = tmp / "r.cu"
    cu.write_text(src)
    cu.with_suffix(".toml").write_text(_BINDING.format(dt=dt))
    return cu


def _matches(cu: Path, tmp: Path) -> None:
    for target in ("nki", "legacy"):
        out = check_literal(cu, tmp, lowering="literal", target=target, max_points=3)
        assert out.status == "match", (target, out.status, out.detail)
        assert "C2N2300" in out.codes
        assert len(out.points) >= 2


@pytest.mark.parametrize("name", sorted(PORTED))
def test_vector_kernel_ports_literally_and_matches(tmp_path, name):
    _matches(_kernel(tmp_path, PORTED[name]), tmp_path)


@pytest.mark.parametrize("name", sorted(INT_PORTED))
def test_integer_vector_kernel_matches(tmp_path, name):
    _matches(_kernel(tmp_path, INT_PORTED[name], "int32"), tmp_path)


@pytest.mark.parametrize("why", sorted(REFUSED))
def test_what_cannot_be_scalarised_is_refused_by_name(tmp_path, why):
    out = check_literal(_kernel(tmp_path, REFUSED[why]), tmp_path, lowering="literal")
    assert out.status == "refused"
    assert why in out.detail
    assert "C2N2301" in out.codes


def test_a_kernel_without_vectors_is_left_as_it_is():
    tu = parse_source(
        "__global__ void r(float* y, int n) { int i = threadIdx.x; if (i < n) y[i] = 1.0f; }\n",
        "t.cu",
    )
    fn = tu.kernels[0]
    assert scalarise(tu, fn) == (tu, fn)


def test_lanes_become_scalar_locals_and_helpers_are_cloned_per_lane():
    tu = parse_source(PORTED["float3_helpers"], "t.cu")
    fn = next(f for f in tu.kernels if f.name == "r")
    tu2, fn2 = scalarise(tu, fn)
    text = repr(fn2.body)
    assert "VectorType" not in text
    assert "m__z" in text
    clones = {f.name for f in tu2.functions} - {f.name for f in tu.functions}
    assert {"velocity__c2n0", "velocity__c2n2", "speed2__c2n"} <= clones


BYTE_SHARED = {
    # extern __shared__ bytes used as float4 and as float through casts
    "extern_bytes": """
__global__ void r(const float* x, float* y, int n) {
  extern __shared__ char smem[];
  float4* tile = reinterpret_cast<float4*>(smem);
  float* flat = (float*)smem;
  int t = threadIdx.x;
  int i = blockIdx.x * 64 + t;
  tile[t] = i < n ? reinterpret_cast<const float4*>(x)[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  __syncthreads();
  if (i < n) {
    float4 u = tile[63 - t];
    y[4 * i] = u.x + flat[4 * t + 1]; y[4 * i + 1] = u.y; y[4 * i + 2] = flat[255 - t];
    y[4 * i + 3] = u.w;
  }
}
""",
    # a sized unsigned char array used as float only
    "sized_bytes": """
__global__ void r(const float* x, float* y, int n) {
  __shared__ unsigned char raw[64 * 4];
  float* s = reinterpret_cast<float*>(raw);
  int t = threadIdx.x;
  int i = blockIdx.x * 64 + t;
  s[t] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (i < n) y[i] = s[63 - t] * 2.0f;
}
""",
}


@pytest.mark.parametrize("name", sorted(BYTE_SHARED))
def test_byte_shared_memory_used_as_one_type_matches(tmp_path, name):
    cu = _kernel(tmp_path, BYTE_SHARED[name])
    toml = cu.with_suffix(".toml")
    toml.write_text(toml.read_text().replace("[launch]\n", '[launch]\nshared_bytes = "1024"\n'))
    _matches(cu, tmp_path)


def test_an_unforeseen_failure_is_a_refusal_not_a_crash(monkeypatch):
    from cuda2nki.lift.literal import scalarise as S
    from cuda2nki.lift.literal.lower import LiteralRefusal

    tu = parse_source(PORTED["float3_helpers"], "t.cu")
    fn = next(f for f in tu.kernels if f.name == "r")

    def boom(*_a, **_k):
        raise RecursionError("too deep")

    monkeypatch.setattr(S, "uses_vectors", boom)
    with pytest.raises(LiteralRefusal, match="not scalarised"):
        scalarise(tu, fn)


SHARED_VECTORS = {
    # one float3 per block set by one thread, lanes added by atomics, read back by all
    "atomic_lanes": """
__global__ void r(const float* x, float* y, int n) {
  __shared__ float3 tot;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x == 0) tot = make_float3(0.0f, 0.0f, 1.0f);
  __syncthreads();
  if (i < n) { atomicAdd(&tot.x, x[i]); atomicAdd(&tot.y, 2.0f * x[i]); }
  __syncthreads();
  if (i < n) y[i] = tot.x * (threadIdx.x % 3 == 0) + tot.y * (threadIdx.x % 3 == 1) + tot.z;
}
""",
    # a shared int2 pair of a block's extremes, written lane by lane by the last thread, a whole
    # copy to a local
    "last_thread_pair": """
__global__ void r(const int* x, int* y, int n) {
  __shared__ int2 ends;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x == blockDim.x - 1) { ends.x = blockIdx.x; ends.y = i < n ? x[i] : -1; }
  __syncthreads();
  int2 e = ends;
  if (i < n) y[i] = x[i] - e.y + e.x;
}
""",
}


@pytest.mark.parametrize("name", sorted(SHARED_VECTORS))
def test_a_shared_vector_is_an_array_of_its_lanes(tmp_path, name):
    dt = "int32" if "int2" in SHARED_VECTORS[name] else "float32"
    _matches(_kernel(tmp_path, SHARED_VECTORS[name], dt), tmp_path)
