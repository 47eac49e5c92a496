"""A loop whose trip count depends on data and that walks a contiguous range of indices in every
thread runs several iterations per pass of its ``nl.while_loop``, the loads at the stepped index
read once per pass as runs of elements (:mod:`cuda2nki.lift.literal.datarun`): exact against
the interpreter (tolerance 0), whatever the spelling of the loop, its bound and its guard; and
loops that may not use runs keep one iteration per pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.port.literal_acceptance import check_literal

_BINDING = """\
kernel = "k"
[launch]
grid = [{grid}]
block = [{block}]
[params]
start = {{ shape = ["n + 1"], dtype = "int32", role = "in", range = [0, 60] }}
v = {{ shape = [64], dtype = "float32", role = "in" }}
idx = {{ shape = [64], dtype = "int32", role = "in", range = [0, 32] }}
x = {{ shape = [32], dtype = "float32", role = "in" }}
out = {{ shape = ["n"], dtype = "float32", role = "out" }}
n = 200
[check]
rtol = 0
atol = 0
[[check.shapes]]
n = 1
[[check.shapes]]
n = 130
"""

_SIG = "__global__ void k(const int* start, const float* v, const int* idx, const float* x, float* out, int n)"

#: name -> (body, threads per block): each reads v (and x through idx) over [start[i], ...)
RUNS = {
    "for_pre_increment_bound_read_each_time": (
        """{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = 0.0f;
        for (int k = start[i]; k < start[i + 1]; ++k) s += v[k];
        out[i] = s;
    }
}""",
        128,
    ),
    "for_post_increment_bound_in_a_local_max": (
        """{
    int row = threadIdx.x + blockDim.x * blockIdx.x;
    if (row >= n) return;
    int hi = start[row + 1];
    float m = -1.0e30f;
    for (int j = start[row]; j < hi; j++) m = fmaxf(m, v[j]);
    out[row] = m;
}""",
        256,
    ),
    "while_plus_equals_one_with_a_gather_through_it": (
        """{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < n) {
        int e = start[r];
        int end = start[r + 1];
        float acc = 0.0f;
        while (e < end) {
            acc += v[e] * x[idx[e]];
            e += 1;
        }
        out[r] = acc;
    }
}""",
        64,
    ),
    "assigned_plus_one_mirrored_bound_and_neighbours": (
        """{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) {
        float d = 0.0f;
        int last = start[t + 1] - 1;
        for (int q = start[t]; last > q; q = q + 1) {
            float step = v[q + 1] - v[q];
            d = d + step * step;
        }
        out[t] = d;
    }
}""",
        128,
    ),
    "grid_stride_rows_with_do_while": (
        """{
    for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < n; r += blockDim.x * gridDim.x) {
        int k = start[r];
        float s = 1.0f;
        if (k < 60) {
            do {
                s = s * 0.5f + v[k];
                ++k;
            } while (k < start[r + 1]);
        }
        out[r] = s;
    }
}""",
        64,
    ),
}

#: loops that must keep one iteration per pass (and still match)
NO_RUNS = {
    "index_stepped_by_two": """{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = 0.0f;
        for (int k = start[i]; k < start[i + 1]; k += 2) s += v[k];
        out[i] = s;
    }
}""",
    "index_also_moved_in_the_body": """{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = 0.0f;
        for (int k = start[i]; k < start[i + 1]; ++k) {
            s += v[k];
            if (s > 2.0f) k++;
        }
        out[i] = s;
    }
}""",
    "a_store_in_the_loop": """{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = 0.0f;
        for (int k = start[i]; k < start[i + 1]; ++k) {
            s += v[k];
            out[i] = s;
        }
    }
}""",
}


def _kernel(tmp: Path, body: str, block: int) -> Path:
    cu = tmp / "k.cu"
    cu.write_text(f"{_SIG}\n{body}\n")
    grid = f'"ceil_div(n, {block})"'
    cu.with_suffix(".toml").write_text(_BINDING.format(grid=grid, block=block))
    return cu


def _exact_port(cu: Path, tmp: Path) -> str:
    out = check_literal(cu, tmp, lowering="literal")
    assert out.status == "match", (out.status, out.detail)
    assert len(out.points) >= 2
    port = (tmp / f"{cu.stem}_literal_nki.py").read_text()
    assert "nl.while_loop(" in port
    return port


@pytest.mark.parametrize("name", sorted(RUNS))
def test_contiguous_data_loops_read_runs_per_pass_exactly(tmp_path, name):
    body, block = RUNS[name]
    port = _exact_port(_kernel(tmp_path, body, block), tmp_path)
    kernel = port[port.index("@nki.jit") :]
    runs = [ln for ln in kernel.splitlines() if "_c2n_gather_run(v, " in ln]
    assert runs, kernel
    assert all(", 8, nl.float32)" in ln for ln in runs), runs
    # one pass holds 8 iterations: the run is read once, its columns 0..7 used in turn
    assert "[:, :, 7]" in kernel and "[:, :, 8]" not in kernel
    assert "_c2n_gather(v, " not in kernel


def test_a_gather_through_a_run_carries_its_reason(tmp_path):
    body, block = RUNS["while_plus_equals_one_with_a_gather_through_it"]
    port = _exact_port(_kernel(tmp_path, body, block), tmp_path)
    kernel = port[port.index("@nki.jit") :]
    assert "_c2n_gather_run(idx, " in kernel
    assert "_c2n_gather_data(x, _run" in kernel
    helper = port[port.index("def _c2n_gather_data") :]
    helper = helper[: helper.index("\n\n\n")]
    assert "# cuda2nki: ignore[C2N5006] the addresses are an index array's elements" in helper


@pytest.mark.parametrize("name", sorted(NO_RUNS))
def test_loops_that_may_not_use_runs_keep_one_iteration_per_pass(tmp_path, name):
    port = _exact_port(_kernel(tmp_path, NO_RUNS[name], 128), tmp_path)
    kernel = port[port.index("@nki.jit") :]
    assert "_c2n_gather_run(" not in kernel
    assert "_c2n_gather(v, " in kernel


def test_a_literal_bound_caps_the_iterations_per_pass(tmp_path):
    body = """{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = 0.0f;
        for (int k = start[i] / 20; 3 > k; ++k) s += v[k + 1];
        out[i] = s;
    }
}"""
    port = _exact_port(_kernel(tmp_path, body, 128), tmp_path)
    kernel = port[port.index("@nki.jit") :]
    assert "_c2n_gather_run(v, " in kernel and ", 3, nl.float32)" in kernel
    assert "[:, :, 2]" in kernel and "[:, :, 3]" not in kernel
