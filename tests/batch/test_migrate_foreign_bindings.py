"""``migrate`` over a tree of programs whose kernels are defined in headers and launched, or
instantiated, by other files: each kernel is counted once, at its header, bound from the
files using it, and ``--examine`` puts it in the bucket a real run (with ``--check``) does."""

from __future__ import annotations

import json
from pathlib import Path

from cuda2nki.batch.migrate import MigrateOptions, migrate

FILES = {
    # a template kernel and its template launcher; the library file instantiates it
    "blas/scale.cuh": """#pragma once
template <typename E> struct vec_of { E* data; int len; };
template <typename T>
__global__ void scale_by(T* v, T f, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = v[i] * f;
}
template <typename T>
void scale_all(vec_of<T>& x, T f) { scale_by<T><<<(x.len + 127) / 128, 128>>>(x.data, f, x.len); }
""",
    "blas/scale.cu": '#include "scale.cuh"\ntemplate void scale_all<float>(vec_of<float>&, float);\n',
    # one kernel, two programs launching it their own way
    "sq/square.h": """#pragma once
__global__ void square(float* out, const float* in, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        out[i] = in[i] * in[i];
}
""",
    "sq/app.cu": """#include "square.h"
int main() {
    int n = 3000; float *a, *b;
    cudaMalloc(&a, n * sizeof(float)); cudaMalloc(&b, n * sizeof(float));
    square<<<(n + 255) / 256, 256>>>(b, a, n);
    return 0;
}
""",
    "sq/bench.cu": """#include "square.h"
int main() {
    int m = 77; float *x, *y;
    cudaMalloc(&x, m * sizeof(float)); cudaMalloc(&y, m * sizeof(float));
    square<<<2, 32>>>(y, x, m);
    return 0;
}
""",
    # array-typed parameters, launched with pointer-to-rows casts
    "net/layers.h": """#pragma once
__global__ void add_bias(float out[4][6][6], float bias[4]) {
    const int pos = blockIdx.x * blockDim.x + threadIdx.x;
    const int size = blockDim.x * gridDim.x;
    const int N = 4 * 6 * 6;
    for (int n = N * pos / size; n < N * (pos + 1) / size; ++n) {
        const int c = n % 4, y = (n / 4) % 6, x = (n / 24) % 6;
        out[c][y][x] += bias[c];
    }
}
""",
    "net/main.cu": """#include "layers.h"
int main() {
    float *act, *b;
    cudaMalloc(&act, 4 * 6 * 6 * sizeof(float));
    cudaMalloc(&b, 4 * sizeof(float));
    add_bias<<<4, 32>>>((float (*)[6][6])act, b);
    return 0;
}
""",
}


def test_header_kernels_are_bound_from_their_users_and_examine_agrees(tmp_path: Path) -> None:
    src = tmp_path / "src"
    for rel, text in FILES.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    runs = {}
    for mode in ("examine", "port"):
        out = tmp_path / mode
        migrate(MigrateOptions(src, out, mode=mode, check=mode == "port", timeout=600))
        report = json.loads((out / "report.json").read_text())
        runs[mode] = {(k["file"], k["kernel"]): k for k in report["kernels"] if k["kernel"]}
    assert set(runs["port"]) == {
        ("blas/scale.cuh", "scale_by"),
        ("sq/square.h", "square"),
        ("net/layers.h", "add_bias"),
    }
    for key, rec in runs["port"].items():
        assert rec["status"] in ("automatic", "literal"), (key, rec["blocking"])
        assert rec["status"] == runs["examine"][key]["status"], key
        assert rec["numerics"] == "pass", (key, rec.get("verdict"))
    notes = [d["message"] for d in runs["port"][("sq/square.h", "square")]["diagnostics"]]
    assert any("app.cu:5, the first of the 2 files" in m for m in notes), notes
