"""A pointer read only into shared memory, whose values come back out through a tree reduction
(``s[t] = tab[ids[b] * 64 + t]; ... out[b] = s[0]``), is sized from those reads: a table of rows
picked by an index input gets a default number of rows of its width (the loads may cover a row
in parts: ``t`` and ``32 + t`` of 64), and where the index input's values already index another
array the source sizes, the table takes that many rows; the check's indices stay inside."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.gatherrows import DEFAULT_ROWS
from cuda2nki.lift.infer import binding_from_inference, infer_binding

#: spelling -> (kernel, table, index input, expected shape, source)
CASES = {
    "halves-tied-to-a-sized-flag-array": (
        "all_set",
        "flags",
        "order",
        [500, 64],
        """
__global__ void all_set(const bool* flags, bool* done, const unsigned* order, unsigned count) {
    unsigned k = blockIdx.x;
    if (k < count) {
        __shared__ bool s[64];
        unsigned row = order[k];
        unsigned t = threadIdx.x;
        s[t] = flags[row * 64 + t];
        s[t + 32] = flags[row * 64 + t + 32];
        __syncthreads();
        for (unsigned h = 32; h > 0; h /= 2) {
            if (t < h) s[t] = s[t] && s[t + h];
            __syncthreads();
        }
        if (t == 0) done[row] = s[0];
    }
}
int main() {
    bool *f, *d; unsigned* o; unsigned count = 300;
    cudaMalloc(&d, 500 * sizeof(bool));
    all_set<<<count, 32>>>(f, d, o, count);
    return 0;
}
""",
    ),
    "two-dim-block-full-row-default-rows": (
        "row_max",
        "vals",
        "pick",
        [DEFAULT_ROWS, 64],
        """
__global__ void row_max(float* out, const float* vals, const int* pick, int nrows) {
    __shared__ float m[64];
    int t = threadIdx.y * 16 + threadIdx.x;
    int b = blockIdx.x;
    if (b >= nrows) return;
    m[t] = vals[pick[b] * 64 + t];
    __syncthreads();
    for (int h = 32; h > 0; h >>= 1) {
        if (t < h) m[t] = fmaxf(m[t], m[t + h]);
        __syncthreads();
    }
    if (t == 0) out[b] = m[0];
}
void run(float* out, const float* vals, const int* pick, int nrows) {
    row_max<<<nrows, dim3(16, 4)>>>(out, vals, pick, nrows);
}
""",
    ),
    "strided-loop-sum-default-rows": (
        "group_sum",
        "src",
        "gid",
        [DEFAULT_ROWS, 128],
        """
__global__ void group_sum(const float* src, const long* gid, float* dst, int groups) {
    __shared__ float acc[128];
    int g = blockIdx.x;
    if (g >= groups) return;
    acc[threadIdx.x] = src[gid[g] * 128 + threadIdx.x];
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) acc[threadIdx.x] += acc[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) dst[g] = acc[0];
}
void launch(const float* src, const long* gid, float* dst, int groups) {
    group_sum<<<groups, 128>>>(src, gid, dst, groups);
}
""",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_table_read_only_into_shared_memory_is_sized(case: str) -> None:
    kernel, table, index, shape, src = CASES[case]
    tu = parse_source(src, "k.cu")
    bnd, diags = binding_from_inference(tu, kernel)
    assert bnd is not None, [d.message for d in diags if d.severity.name != "NOTE"]
    assert [int(d) for d in bnd.tensor(table).shape] == shape
    assert bnd.tensor(table).role == "in"
    spec = infer_binding(tu, kernel)[0]["params"][index]
    assert spec["range"][0] == 0 and int(spec["range"][1]) <= shape[0]


def test_port_and_check_read_inside_the_table(tmp_path) -> None:
    from cuda2nki import api

    kernel, _, _, _, src = CASES["two-dim-block-full-row-default-rows"]
    cu = tmp_path / "groups.cu"
    cu.write_text(src)
    res = api.port(cu, kernel=kernel)
    assert res.source is not None, [d.message for d in res.diagnostics]
    port = tmp_path / "groups_port.py"
    port.write_text(res.source)
    report = api.check(cu, port, kernel=kernel, seeds=2)
    assert report.numerics_outcome == "pass", [d.message for d in report.findings]
