"""Loops whose trip count depends on data with no counter bounding it run, in a literal port,
as a runtime loop (``nl.while_loop``) while any thread of the block is still in them, every
thread under its own active mask (:mod:`cuda2nki.lift.literal.dataloop`).  The legacy API has
no runtime loop: its ports of such loops are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.port.literal_acceptance import check_literal
from tests.port.test_literal import _kernel

_PARAMS = (
    'x = { shape = ["n"], dtype = "float32", role = "in", range = [0.5, 300.0] }\n'
    'y = { shape = ["n"], dtype = "float32", role = "out" }\n'
    'steps = { shape = ["n"], dtype = "int32", role = "out" }\nn = 200'
)
_SHAPES = ["n = 1", "n = 130"]

LOOPS = {
    "while_halving": """
__global__ void k(const float* x, float* y, int* steps, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    int c = 0;
    while (v > 1.0f) { v = v * 0.5f; c++; }
    y[i] = v;
    steps[i] = c;
}
""",
    "do_while_under_guard": """
__global__ void k(const float* x, float* y, int* steps, int n) {
    int t = threadIdx.x + blockDim.x * blockIdx.x;
    if (t < n) {
        float r = x[t];
        int count = 0;
        do {
            r = r - 3.5f;
            count += 2;
        } while (r >= 0.0f);
        y[t] = r;
        steps[t] = count;
    }
}
""",
    "for_with_data_condition_and_store": """
__global__ void k(const float* x, float* y, int* steps, int n) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g < n) {
        int j;
        float acc = 0.0f;
        for (j = 0; acc < x[g]; j++) {
            acc += 7.0f;
            y[g] = acc;
        }
        steps[g] = j;
    }
}
""",
    "forever_with_break": """
__global__ void k(const float* x, float* y, int* steps, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    int it = 0;
    for (;;) {
        v = 0.5f * v + 0.25f;
        it += 1;
        if (v < 2.0f) break;
    }
    y[i] = v;
    steps[i] = it;
}
""",
    "grid_stride_outer": """
__global__ void k(const float* x, float* y, int* steps, int n) {
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < n; e += blockDim.x * gridDim.x) {
        float w = x[e];
        int s = 0;
        while (w > 4.0f) { w = sqrtf(w); s = s + 1; }
        y[e] = w;
        steps[e] = s;
    }
}
""",
    "nested_in_bounded_loop": """
__global__ void k(const float* x, float* y, int* steps, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float total = 0.0f;
    int moves = 0;
    for (int rep = 0; rep < 3; ++rep) {
        float v = x[i] + (float)rep;
        while (v >= 10.0f) { v -= 10.0f; moves++; }
        total += v;
    }
    y[i] = total;
    steps[i] = moves;
}
""",
    "return_inside": """
__global__ void k(const float* x, float* y, int* steps, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    int c = 0;
    while (v > 0.75f) {
        v = v * 0.5f;
        c++;
        if (c == 5) { steps[i] = -c; return; }
    }
    y[i] = v;
    steps[i] = c;
}
""",
    "nested_data_loops": """
__global__ void k(const float* x, float* y, int* steps, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        int c = 0;
        while (v > 2.0f) {
            float u = v;
            while (u > 1.5f) { u = u - 1.25f; c++; }
            v = v * 0.5f + u;
        }
        y[i] = v;
        steps[i] = c;
    }
}
""",
    "bisection_in_device_function": """
__device__ float cube_root_by_halves(float target, float tol, int* rounds) {
    float lo = 0.0f, hi = target > 1.0f ? target : 1.0f;
    *rounds = 0;
    while (hi - lo > tol * hi) {
        float mid = 0.5f * (lo + hi);
        if (mid * mid * mid > target) hi = mid; else lo = mid;
        *rounds += 1;
    }
    return 0.5f * (lo + hi);
}

__global__ void k(const float* x, float* y, int* steps, int n) {
    int id = blockDim.x * blockIdx.x + threadIdx.x;
    if (id >= n) return;
    int r;
    y[id] = cube_root_by_halves(x[id], 1e-4f, &r);
    steps[id] = r;
}
""",
}


def runs_on_device(cu: Path, tmp: Path) -> str:
    """Check that the literal port of ``cu`` runs a runtime loop and matches the interpreter
    (current API), and that the legacy API refuses it; the port's source."""
    out = check_literal(cu, tmp, lowering="literal")
    assert out.status == "match", (out.status, out.detail)
    assert len(out.points) >= 2
    port = (tmp / f"{cu.stem}_literal_nki.py").read_text()
    assert "nl.while_loop(" in port and "nisa.register_load(" in port
    legacy = check_literal(cu, tmp, lowering="literal", target="legacy")
    assert legacy.status == "refused" and "legacy API has no runtime loop" in legacy.detail
    return port


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_data_loops_run_while_any_thread_is_in_them(tmp_path, name):
    cu = _kernel(tmp_path, LOOPS[name], "k", '"ceil_div(n, 64)"', "64", _PARAMS, _SHAPES)
    runs_on_device(cu, tmp_path)


def test_legacy_ports_of_data_loops_are_refused(tmp_path):
    cu = _kernel(tmp_path, LOOPS["while_halving"], "k", '"ceil_div(n, 64)"', "64", _PARAMS)
    out = check_literal(cu, tmp_path, lowering="literal", target="legacy")
    assert out.status == "refused", out
    assert "legacy API has no runtime loop" in out.detail and "(line 7)" in out.detail


_CHAIN = """
__global__ void hop(const int* skip, const float* w, float* total, int* hops, int n) {
    int node = blockIdx.x * blockDim.x + threadIdx.x;
    if (node < n) {
        int at = node, count = 0;
        float sum = 0.0f;
        while (at >= 0) {          // walk down a chain read from memory
            sum += w[at];
            count++;
            at = at - 1 - skip[at];
        }
        total[node] = sum;
        hops[node] = count;
    }
}
"""
_CHAIN_PARAMS = (
    'skip = { shape = ["n"], dtype = "int32", role = "in", range = [0, 5] }\n'
    'w = { shape = ["n"], dtype = "float32", role = "in" }\n'
    'total = { shape = ["n"], dtype = "float32", role = "out" }\n'
    'hops = { shape = ["n"], dtype = "int32", role = "out" }\nn = 150'
)


def test_a_chain_walked_through_memory(tmp_path):
    cu = _kernel(tmp_path, _CHAIN, "hop", '"ceil_div(n, 32)"', "32", _CHAIN_PARAMS, _SHAPES)
    runs_on_device(cu, tmp_path)


_BINS = """
__global__ void k(const float* x, float* y, int* steps, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float part[3] = {0.0f, 0.0f, 0.0f};
    float v = i < n ? x[i] : 0.0f;
    int c = 0;
    while (v > 1.0f) {
        part[c % 3] += v;
        v = v * 0.6f;
        c += 1;
    }
    if (i < n) {
        y[i] = part[0] - part[1] + 2.0f * part[2];
        steps[i] = c;
    }
}
"""


def test_a_local_array_updated_in_the_loop_is_carried(tmp_path):
    cu = _kernel(tmp_path, _BINS, "k", '"ceil_div(n, 64)"', "64", _PARAMS, _SHAPES)
    runs_on_device(cu, tmp_path)


def test_a_pointer_moved_by_the_loop_ports_as_an_offset(tmp_path):
    """A pointer a data-dependent loop moves is held as its start plus an integer offset
    (:mod:`cuda2nki.lift.literal.ptroffsets`), which the runtime loop carries."""
    src = """
__global__ void k(const float* x, float* y, int* steps, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float* p = x + i;
    int left = i;
    while (left > 0 && *p > 100.0f) { p -= 1; left--; }
    y[i] = *p;
    steps[i] = i - left;
}
"""
    cu = _kernel(tmp_path, src, "k", '"ceil_div(n, 64)"', "64", _PARAMS)
    out = check_literal(cu, tmp_path, lowering="literal")
    assert out.status == "match", out


_HELPER_ARRAY = """
__device__ void spread(float v, float* acc, int slot) {
    acc[slot] += v;
    acc[3 - slot] -= 0.5f * v;
}

__global__ void k(const float* x, float* y, int* steps, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    float v = x[i];
    int c = 0;
    do {
        spread(v, acc, c & 3);
        v = v * 0.7f;
        ++c;
    } while (v > 2.0f);
    y[i] = acc[0] + 2.0f * acc[1] + 3.0f * acc[2] + 4.0f * acc[3];
    steps[i] = c;
}
"""


def test_a_local_array_a_device_function_updates_in_the_loop_is_carried(tmp_path):
    cu = _kernel(tmp_path, _HELPER_ARRAY, "k", '"ceil_div(n, 64)"', "64", _PARAMS, _SHAPES)
    runs_on_device(cu, tmp_path)
