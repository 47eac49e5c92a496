"""Clean refusals that name the blocking construct, and binding inference."""

from __future__ import annotations

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.frontend import parse_source
from cuda2nki.lift import infer_binding, lift_kernel

_B = {
    "kernel": "k",
    "launch": {"grid": ["ceil_div(n, 64)"], "block": [64]},
    "params": {
        "x": {"shape": ["n"], "dtype": "float32", "role": "in"},
        "y": {"shape": ["n"], "dtype": "float32", "role": "out"},
        "n": 100,
    },
}

REFUSE = [
    (
        "while loop",
        "C2N2019",
        """
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float v = x[i]; while (v > 1.0f) v = v * 0.5f; y[i] = v; }
}""",
    ),
    (
        "running value stored (scan)",
        "C2N2011",
        """
__global__ void k(const float* x, float* y, int n) {
    if (threadIdx.x + blockIdx.x == 0) {
        float run = 0.0f;
        for (int j = 0; j < n; j++) { run += x[j]; y[j] = run; }
    }
}""",
    ),
    (
        "race: every thread writes y[0]",
        "C2N2017",
        """
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[0] = x[i];
}""",
    ),
    (
        "shared read without a barrier",
        "C2N2012",
        """
__global__ void k(const float* x, float* y, int n) {
    __shared__ float s[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    if (i < n) y[i] = s[63 - threadIdx.x];
}""",
    ),
    (
        "recurrence through shared memory: an element updated in place, repeated",
        "C2N2012",
        """
__global__ void k(const float* x, float* y, int n) {
    __shared__ float s[64];
    int t = threadIdx.x, i = blockIdx.x * 64 + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int it = 0; it < 3; ++it) {
        float v = s[t] * 0.5f + 1.0f;
        __syncthreads();
        s[t] = v;
        __syncthreads();
    }
    if (i < n) y[i] = s[t];
}""",
    ),
    (
        "recurrence through shared memory: a neighbour's previous value",
        "C2N2012",
        """
__global__ void k(const float* x, float* y, int n) {
    __shared__ float buf[65];
    int lane = threadIdx.x, g = lane + 64 * blockIdx.x;
    if (lane == 0) buf[0] = 0.0f;
    buf[lane + 1] = g < n ? x[g] : 0.0f;
    __syncthreads();
    for (int step = 2; step < 10; step += 2) {
        float nv = buf[lane + 1] + 0.5f * buf[lane];
        __syncthreads();
        buf[lane + 1] = nv;
        __syncthreads();
    }
    if (g < n) y[g] = buf[lane + 1];
}""",
    ),
    (
        "recurrence through shared memory: one thread per iteration (serial scan)",
        "C2N2012",
        """
__global__ void k(const float* x, float* y, int n) {
    __shared__ float acc[64];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    acc[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int j = 1; j < 64; ++j) {
        if (t == j) acc[t] = acc[t] + acc[t - 1];
        __syncthreads();
    }
    if (i < n) y[i] = acc[t];
}""",
    ),
    (
        "non-reduction recurrence",
        "C2N2011",
        """
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float a = 1.0f; for (int j = 0; j < 4; j++) a = a * 0.5f + x[i]; y[i] = a; }
}""",
    ),
]


@pytest.mark.parametrize(("what", "code", "src"), REFUSE, ids=[r[0] for r in REFUSE])
def test_refusal_names_the_construct(what, code, src) -> None:
    res = lift_kernel(parse_source(src, "r.cu"), "k", binding_from_dict(_B))
    assert not res.claimed and res.kernel_ir is None
    assert [d.code for d in res.diagnostics] == [code], [d.message for d in res.diagnostics]
    d = res.diagnostics[0]
    assert d.loc.file == "r.cu" and d.loc.line >= 2 and "'k'" in d.message


def test_unknown_kernel_is_a_diagnostic() -> None:
    res = lift_kernel(parse_source("__global__ void k(float* y) { y[0] = 1.0f; }", "u.cu"), "nope")
    assert not res.claimed and res.diagnostics[0].code.startswith("C2N")


SRC = """
__global__ void mm(const float* A, const float* B, float* C, int M, int N, int K) {
    int r = blockIdx.y * blockDim.y + threadIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < M && c < N) {
        float s = 0.0f;
        for (int k = 0; k < K; ++k) s += A[r * K + k] * B[k * N + c];
        C[r * N + c] = s;
    }
}
void run(const float* A, const float* B, float* C, int M, int N, int K) {
    mm<<<dim3((N + 15) / 16, (M + 15) / 16), dim3(16, 16)>>>(A, B, C, M, N, K);
}
"""


def test_infer_binding_shapes_roles_launch() -> None:
    partial, diags = infer_binding(parse_source(SRC, "mm.cu"), "mm")
    p = partial["params"]
    assert p["A"] == {"dtype": "float32", "role": "in", "shape": ["M", "K"]}
    assert p["B"] == {"dtype": "float32", "role": "in", "shape": ["K", "N"]}
    assert p["C"] == {"dtype": "float32", "role": "out", "shape": ["M", "N"]}
    assert partial["launch"]["block"] == [16, 16]
    missing = [d for d in diags if d.code == "C2N2101"]
    assert {m.message.split("'")[1] for m in missing} == {"M", "N", "K"} or all(
        "scalar" in m.message for m in missing
    )


def test_lift_without_binding_uses_a_complete_inference() -> None:
    res = lift_kernel(parse_source(SRC, "mm.cu"), "mm")
    assert res.claimed
    codes = [d.code for d in res.diagnostics]
    assert "C2N2023" not in codes and "C2N2100" in codes


def test_lift_without_binding_says_what_is_missing() -> None:
    no_launch = SRC.split("void run")[0]
    res = lift_kernel(parse_source(no_launch, "mm.cu"), "mm")
    assert not res.claimed
    codes = [d.code for d in res.diagnostics]
    assert "C2N2023" in codes and "C2N2101" in codes and "C2N2100" in codes


@pytest.mark.parametrize("ty", ["float4", "Quad"])
def test_shapes_from_member_accesses_of_vector_buffers_count_lanes(ty) -> None:
    # member stores of vector elements leave the shape to the index expressions, which count
    # whole vectors: the binding counts scalars, so the lanes are a last axis
    src = (
        "struct Quad { float a, b, c, d; };\n"
        f"__global__ void k(const {ty}* x, {ty}* y, int n) {{\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"    if (i < n) {{ {ty} v = x[i]; y[i].{'x' if ty == 'float4' else 'a'} = v."
        f"{'y' if ty == 'float4' else 'b'}; }}\n}}\n"
        f"void go(const {ty}* x, {ty}* y, int n) {{ k<<<(n + 127) / 128, 128>>>(x, y, n); }}\n"
    )
    partial, _ = infer_binding(parse_source(src, "v.cu"), "k")
    assert partial["params"]["x"]["shape"] in (["n", 4], ["4*n"])
    assert partial["params"]["y"]["shape"] == ["n", 4]
