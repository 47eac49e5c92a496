"""Divergence, loops with per-thread trip counts, break/continue/return, switch, short-circuit."""

from __future__ import annotations

import numpy as np
from simt_helpers import fault, run


def test_if_else_divergence_per_thread() -> None:
    src = """
    __global__ void k(int* out, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= n) return;
        if (i % 3 == 0) out[i] = 1;
        else if (i % 3 == 1) out[i] = 2;
        else { out[i] = -i; }
    }"""
    n = 70
    out = run(src, grid=(3,), block=(32,), out=np.zeros(n, np.int32), n=n)["out"]
    i = np.arange(n)
    np.testing.assert_array_equal(out, np.where(i % 3 == 0, 1, np.where(i % 3 == 1, 2, -i)))


def test_loop_with_per_thread_trip_count_break_continue() -> None:
    src = """
    __global__ void k(int* out) {
        int t = threadIdx.x;
        int acc = 0;
        for (int j = 0; j < t; ++j) {
            if (j % 2 == 1) continue;
            if (j > 20) break;
            acc += j;
        }
        out[t] = acc;
    }"""
    out = run(src, block=(40,), out=np.zeros(40, np.int32))["out"]
    ref = [sum(j for j in range(t) if j % 2 == 0 and j <= 20) for t in range(40)]
    np.testing.assert_array_equal(out, ref)


def test_while_and_do_while_collatz_steps() -> None:
    src = """
    __global__ void k(const int* x, int* steps) {
        int t = threadIdx.x;
        unsigned v = x[t];
        int s = 0;
        while (v != 1u) { v = (v & 1u) ? 3u * v + 1u : v / 2u; s++; }
        int d = 0;
        do { d++; } while (d < t % 4);
        steps[t] = s * 10 + d;
    }"""
    x = np.arange(1, 33, dtype=np.int32)

    def collatz(v: int) -> int:
        s = 0
        while v != 1:
            v = 3 * v + 1 if v & 1 else v // 2
            s += 1
        return s

    out = run(src, x=x, steps=np.zeros(32, np.int32))["steps"]
    ref = [collatz(int(v)) * 10 + max(1, t % 4) for t, v in enumerate(x)]
    np.testing.assert_array_equal(out, ref)


def test_short_circuit_does_not_evaluate_guarded_read() -> None:
    src = """
    __global__ void k(const float* a, int* out, int n) {
        int i = threadIdx.x;
        out[i] = (i < n && a[i] > 0.0f) ? 1 : 0;
        if (i >= n || a[i] < 0.0f) out[i] += 10;
    }"""
    a = np.array([1.0, -2.0, 3.0], np.float32)
    out = run(src, block=(8,), a=a, out=np.zeros(8, np.int32), n=3)["out"]
    np.testing.assert_array_equal(out, [1, 10, 1, 10, 10, 10, 10, 10])


def test_ternary_selects_without_faulting_on_other_side() -> None:
    src = """
    __global__ void k(const int* a, int* out, int n) {
        int i = threadIdx.x;
        out[i] = i < n ? a[i] : -1;
    }"""
    out = run(src, block=(6,), a=np.array([5, 6, 7], np.int32), out=np.zeros(6, np.int32), n=3)[
        "out"
    ]
    np.testing.assert_array_equal(out, [5, 6, 7, -1, -1, -1])


def test_switch_with_fallthrough_and_default() -> None:
    src = """
    __global__ void k(int* out) {
        int t = threadIdx.x;
        int r = 0;
        switch (t % 5) {
            case 0: r += 1;
            case 1: r += 10; break;
            case 3: r = 7; break;
            default: r = -1;
        }
        out[t] = r;
    }"""
    out = run(src, block=(10,), out=np.zeros(10, np.int32))["out"]
    ref = {0: 11, 1: 10, 2: -1, 3: 7, 4: -1}
    np.testing.assert_array_equal(out, [ref[t % 5] for t in range(10)])


def test_device_function_with_early_return_and_loop() -> None:
    src = """
    __device__ int first_multiple(int start, int m) {
        for (int v = start; v < start + 100; ++v) {
            if (v % m == 0) return v;
        }
        return -1;
    }
    __device__ float clampf(float x) { if (x < 0.0f) return 0.0f; return x > 1.0f ? 1.0f : x; }
    __global__ void k(int* out, float* y) {
        int t = threadIdx.x;
        out[t] = first_multiple(t * 3 + 1, 7);
        y[t] = clampf((t - 8) * 0.1f);
    }"""
    res = run(src, block=(24,), out=np.zeros(24, np.int32), y=np.zeros(24, np.float32))
    ref = [next(v for v in range(t * 3 + 1, t * 3 + 101) if v % 7 == 0) for t in range(24)]
    np.testing.assert_array_equal(res["out"], ref)
    yref = np.clip((np.arange(24, dtype=np.float32) - 8) * np.float32(0.1), 0, 1)
    np.testing.assert_array_equal(res["y"], yref.astype(np.float32))


def test_grid_stride_loop_over_2d_grid() -> None:
    src = """
    __global__ void k(float* x, int n) {
        int stride = blockDim.x * gridDim.x;
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) x[i] = 2.0f * x[i] + 1.0f;
    }"""
    x = np.arange(1000, dtype=np.float32)
    out = run(src, grid=(3,), block=(64,), x=x.copy(), n=1000)["x"]
    np.testing.assert_array_equal(out, 2 * x + 1)
    assert x[5] == 5.0  # the caller's array is not modified


def test_thread_and_block_coordinates_3d() -> None:
    src = """
    __global__ void k(int* out) {
        int bx = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
        int tpb = blockDim.x * blockDim.y * blockDim.z;
        int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
        out[bx * tpb + t] = threadIdx.x + 10 * threadIdx.y + 100 * threadIdx.z + 1000 * blockIdx.x
                            + 10000 * blockIdx.y + 100000 * blockIdx.z;
    }"""
    grid, block = (2, 3, 2), (4, 2, 3)
    n = 12 * 24
    out = run(src, grid=grid, block=block, out=np.zeros(n, np.int32))["out"]
    ref = np.zeros(n, np.int64)
    for bz in range(2):
        for by in range(3):
            for bx in range(2):
                for tz in range(3):
                    for ty in range(2):
                        for tx in range(4):
                            b = bx + 2 * (by + 3 * bz)
                            t = tx + 4 * (ty + 2 * tz)
                            ref[b * 24 + t] = (
                                tx + 10 * ty + 100 * tz + 1000 * bx + 10000 * by + 100000 * bz
                            )
    np.testing.assert_array_equal(out, ref)


def test_chunking_matches_single_chunk() -> None:
    from simt_helpers import tu_of

    from cuda2nki.simt import run_kernel

    src = """
    __global__ void k(float* y, const float* x, int n) {
        __shared__ float s[64];
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        s[threadIdx.x] = i < n ? x[i] : 0.0f;
        __syncthreads();
        if (i < n) y[i] = s[blockDim.x - 1 - threadIdx.x] + blockIdx.y;
    }"""
    tu = tu_of(src)
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    kw = dict(grid=(16, 3), block=(64,), args={"y": np.zeros(1000, np.float32), "x": x, "n": 1000})
    a = run_kernel(tu, "k", **kw)["y"]
    b = run_kernel(tu, "k", chunk_threads=64 * 5, **kw)["y"]
    np.testing.assert_array_equal(a, b)


def test_infinite_loop_hits_step_budget() -> None:
    src = """
    __global__ void k(int* out) {
        int i = 0;
        while (out[0] == 0) { i++; }
        out[1] = i;
    }"""
    d = fault(src, block=(4,), max_steps=1000, out=np.zeros(4, np.int32))
    assert d.code == "C2N1502"
    assert d.loc.line == 4


def test_switch_inside_loop_with_continue_and_break() -> None:
    src = """
    __global__ void k(int* out) {
        int t = threadIdx.x, acc = 0;
        for (int j = 0; j < 6; ++j) {
            switch ((t + j) % 4) {
                case 0: continue;          // next j
                case 1: acc += 1; break;   // leaves the switch only
                case 2: acc += 10;         // falls through
                default: acc += 100;
            }
            if (acc > 300) break;
            acc += 1000;
        }
        out[t] = acc;
    }"""
    out = run(src, block=(8,), out=np.zeros(8, np.int32))["out"]
    ref = []
    for t in range(8):
        acc = 0
        for j in range(6):
            r = (t + j) % 4
            if r == 0:
                continue
            if r == 1:
                acc += 1
            else:
                acc += (10 if r == 2 else 0) + 100
            if acc > 300:
                break
            acc += 1000
        ref.append(acc)
    np.testing.assert_array_equal(out, ref)


def test_local_array_out_of_bounds_is_diagnosed() -> None:
    src = """
    __global__ void k(float* y) {
        float buf[4];
        for (int j = 0; j <= threadIdx.x; ++j) buf[j] = j;
        y[threadIdx.x] = buf[0];
    }"""
    d = fault(src, block=(6,), y=np.zeros(6, np.float32))
    assert d.code == "C2N1500" and d.loc.line == 4
    assert "local write of 'buf'" in d.message and "thread (4, 0, 0)" in d.message


def test_reference_parameters_and_reinterpret_casts() -> None:
    src = """
    __device__ void welford(float& mean, float& m2, int& n, float x) {
        n += 1;
        float d = x - mean;
        mean += d / n;
        m2 += d * (x - mean);
    }
    __global__ void k(float* out, const float* in, int len) {
        float mean = 0.0f, m2 = 0.0f;
        int n = 0;
        for (int i = 0; i < len + (int)threadIdx.x; ++i) welford(mean, m2, n, in[i]);
        float& slot = out[threadIdx.x * 3];
        slot = mean;
        out[threadIdx.x * 3 + 1] = m2 / n;
        unsigned bits = reinterpret_cast<unsigned&>(mean);
        out[threadIdx.x * 3 + 2] = __uint_as_float(bits ^ 0x80000000u);
    }"""
    x = np.random.default_rng(0).standard_normal(40).astype(np.float32)
    out = run(src, block=(4,), out=np.zeros(12, np.float32), **{"in": x}, len=30)["out"].reshape(
        4, 3
    )
    for t in range(4):
        mean = m2 = np.float32(0)
        for i in range(30 + t):
            d = np.float32(x[i] - mean)
            mean = np.float32(mean + d / np.float32(i + 1))
            m2 = np.float32(m2 + d * np.float32(x[i] - mean))
        assert out[t, 0] == mean and out[t, 1] == np.float32(m2 / np.float32(30 + t))
        assert out[t, 2] == -mean


def test_a_local_read_and_written_through_a_pointer_of_another_type_keeps_its_bits() -> None:
    """``*(int*)&f`` reads f's bits, ``*(float*)&w = ...`` writes w's bits (not the value
    converted)."""
    src = """
    __global__ void k(const float* x, int* bits, float* back, int n) {
        int i = threadIdx.x;
        if (i < n) {
            float f = x[i];
            int w = *(int*)&f;
            bits[i] = w;
            unsigned u = 0u;
            *(float*)&u = -f;
            back[i] = __uint_as_float(u);
        }
    }"""
    x = np.random.default_rng(1).standard_normal(8).astype(np.float32)
    got = run(src, block=(8,), x=x, bits=np.zeros(8, np.int32), back=np.zeros(8, np.float32), n=8)
    assert np.array_equal(got["bits"], x.view(np.int32))
    assert np.array_equal(got["back"], -x)


def test_vector_operators_with_no_user_operator_go_lane_by_lane() -> None:
    """``float4 + float4`` with no ``operator+`` in the file: each lane, the meaning of the
    common helper headers (the front end spells it as lanes before the interpreter runs)."""
    y = np.arange(8, dtype=np.float32)
    got = run(
        "__global__ void k(float4* y) {\n  float4 a = y[0];\n  y[1] = a + a * a;\n}",
        block=(1,),
        y=y,
    )
    want = y.copy()
    want[4:] = y[:4] + y[:4] * y[:4]
    assert np.array_equal(got["y"], want)


def test_unexecutable_constructs_are_diagnosed_at_their_line() -> None:
    d = fault(
        "__global__ void k(float* a, float* b) {\n  float* p = (threadIdx.x & 1) ? a : b;\n"
        "  p[threadIdx.x] = 1.0f;\n}",
        block=(4,),
        a=np.zeros(4, np.float32),
        b=np.zeros(4, np.float32),
    )
    assert d.code == "C2N1510" and d.loc.line == 2
