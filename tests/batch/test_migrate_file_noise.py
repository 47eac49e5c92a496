"""``migrate`` reports against a kernel only what concerns it: the errors of a device function
no kernel calls and a quoted standard header (``#include "assert.h"``) are nobody's; a math
function NKI lacks (``coshf``) no longer stops a kernel; a template kernel launched from a
template launcher is ported as the instance its callers make."""

from __future__ import annotations

from pathlib import Path

from cuda2nki.batch.migrate import MigrateOptions, migrate

SRC = """\
#include "assert.h"
#include <stdio.h>
__device__ float& broken_at(float4& v, int i) { throw i; }
__global__ void grad(float* dx, const float* x, const float* dy, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float c = coshf(x[i]); dx[i] = dy[i] / (c * c); }
}
template <typename T>
__global__ void twice(float* out, const T* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * (float)in[i];
}
template <typename T>
void launch_twice(float* out, const T* in, int n, int bs) {
    twice<<<(n + bs - 1) / bs, bs>>>(out, in, n);
}
int main() {
    int n = 1000;
    float *dx, *x, *dy;
    cudaMalloc(&dx, n * sizeof(float));
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&dy, n * sizeof(float));
    grad<<<(n + 127) / 128, 128>>>(dx, x, dy, n);
    launch_twice(dx, x, n, 256);
    return 0;
}
"""


def test_only_what_concerns_each_kernel_and_both_validated(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "grads.cu").write_text(SRC)
    res = migrate(MigrateOptions(src, tmp_path / "out", check=True))
    recs = {r["kernel"]: r for r in res.records}
    assert set(recs) == {"grad", "twice"}, recs
    for r in recs.values():
        ids = {d["id"] for d in r["diagnostics"]}
        assert "C2N1004" not in ids and "C2N1010" not in ids, r["diagnostics"]
        assert r["status"] == "automatic", r
        assert r["numerics"] == "pass", r
