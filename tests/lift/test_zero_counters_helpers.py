"""A slot counter whose atomicAdd sits in a ``__device__`` helper the kernel passes the counter
pointer to (one or several levels deep, as ``c``, ``&c[0]`` or ``c + 0``) is recognised like one
the kernel updates itself: zeroed by the host right before the launch, it starts at zero, and
``check`` of the literal port matches the CUDA run instead of sending its stores out of bounds."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.fidelity.check import check
from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding
from cuda2nki.pipeline import port_file

HELPERS = {
    "one_level": (
        "__device__ int take(int* c) { return atomicAdd(c, 1); }\n",
        "if (i < n && x[i] > 0.5f) out[take(cnt)] = x[i];",
    ),
    "two_levels_first_element": (
        "__device__ int bump_by(int* q, int k) { int old = atomicAdd(&q[0], k); return old; }\n"
        "__device__ int push(int* slots) { return bump_by(slots, 1); }\n",
        "if (i < n) { float v = x[i]; if (v < 0.25f) { int p = push(&cnt[0]); out[p] = v; } }",
    ),
    "counter_as_later_argument_plus_zero": (
        "__device__ void emit(float v, float* dst, int* total) {\n"
        "    int s = atomicAdd(total, 1); dst[s] = v; }\n",
        "for (int j = i; j < n; j += blockDim.x * gridDim.x) if (x[j] > 0.5f) emit(x[j], out, cnt + 0);",
    ),
    "subtracting_helper_with_cast": (
        "__device__ unsigned claim(int* left) { return (unsigned)atomicSub(left, 1); }\n",
        "if (i < n && x[i] > 0.75f) out[(0u - claim((int*)cnt)) % n] = x[i];",
    ),
}

NOT_COUNTERS = {
    "old_value_dropped_in_helper": (
        "__device__ void tally(int* c) { atomicAdd(c, 1); }\n",
        "if (i < n) { tally(cnt); out[i] = x[i]; }",
    ),
    "helper_counts_another_pointer": (
        "__device__ int pick(int* a, int* b) { return a[0] + atomicAdd(b, 1); }\n",
        "if (i < n) out[i] = x[i] + pick(cnt, other);",
    ),
}

KERNEL = """
HELPER
__global__ void compact(float* out, int* cnt, const float* x, int n, int* other) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    BODY
}
int main() {
    int n = 1000; float *d_out, *d_x; int *d_cnt, *d_other;
    cudaMalloc(&d_out, n * sizeof(float)); cudaMalloc(&d_x, n * sizeof(float));
    cudaMalloc(&d_cnt, sizeof(int)); cudaMalloc(&d_other, sizeof(int));
    cudaMemset(d_cnt, 0, sizeof(int));
    compact<<<(n + 127) / 128, 128>>>(d_out, d_cnt, d_x, n, d_other);
    return 0;
}
"""


def _src(helper: str, body: str) -> str:
    return KERNEL.replace("HELPER", helper).replace("BODY", body)


def _cnt(helper: str, body: str) -> dict:
    partial, diags = infer_binding(parse_source(_src(helper, body), "h.cu"), "compact")
    assert "cnt" in partial["params"], diags
    return partial["params"]["cnt"]


@pytest.mark.parametrize("case", sorted(HELPERS))
def test_a_counter_taken_in_a_device_helper_starts_at_zero(case: str) -> None:
    spec = _cnt(*HELPERS[case])
    assert spec["role"] == "inout" and spec.get("range") == [0, 1], spec


@pytest.mark.parametrize("case", sorted(NOT_COUNTERS))
def test_a_helper_that_does_not_take_slots_leaves_random_values(case: str) -> None:
    assert "range" not in _cnt(*NOT_COUNTERS[case])


# every thread takes a slot: a counter that does not start at 0 writes past the output
FULL = {
    "one_level": (HELPERS["one_level"][0], "if (i < n) out[take(cnt)] = x[i] * 2.0f;"),
    "two_levels": (HELPERS["two_levels_first_element"][0], "if (i < n) out[push(&cnt[0])] = x[i];"),
}


@pytest.mark.parametrize("case", sorted(FULL))
def test_check_of_a_helper_counter_port_passes(tmp_path: Path, case: str) -> None:
    cu = tmp_path / "h.cu"
    cu.write_text(_src(*FULL[case]))
    res = port_file(cu, kernel="compact")
    assert res.source is not None, [d.message for d in res.diagnostics]
    port = tmp_path / "h_port.py"
    port.write_text(res.source)
    rep = check(cu, port, kernel="compact", seeds=1, extra_points=False, timeout=300)
    assert rep.numerics_outcome == "pass", (rep.numerics, [d.message for d in rep.findings])
