"""A migrated file is parsed once for its ports and all its kernels' checks (each check used
to parse the file again, which on a file with slow preprocessing spent the check's time), and
each kernel's binding is inferred once (the port and its record used to infer it twice)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import cuda2nki.frontend as frontend
import cuda2nki.pipeline as pipeline
from cuda2nki.batch.migrate import MigrateOptions, migrate

KERNELS = """__global__ void shift(float* out, const float* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + 1.0f;
}
__global__ void twice(double* y, const double* x, int m) {
    for (int j = threadIdx.x + blockIdx.x * blockDim.x; j < m; j += blockDim.x * gridDim.x)
        y[j] = 2.0 * x[j];
}
__global__ void clear(int* z, int count) {
    int t = threadIdx.x + blockDim.x * blockIdx.x;
    if (t < count) z[t] = 0;
}
void run(float* out, const float* a, double* y, const double* x, int* z, int n) {
    shift<<<(n + 127) / 128, 128>>>(out, a, n);
    twice<<<32, 256>>>(y, x, n);
    clear<<<(n + 63) / 64, 64>>>(z, n);
}
"""


def test_checks_reuse_the_files_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    log = tmp_path / "parses.jsonl"
    real = frontend._parse_source

    def counted(text, filename, defines, dirs, templates):  # type: ignore[no-untyped-def]
        with log.open("a") as f:  # the workers are forked: they run this patch
            f.write(json.dumps([Path(filename).name, sorted((defines or {}).items())]) + "\n")
        return real(text, filename, defines, dirs, templates)

    monkeypatch.setattr(frontend, "_parse_source", counted)
    real_infer = pipeline._infer_binding

    def inferred(path, tu, kernel):  # type: ignore[no-untyped-def]
        with log.open("a") as f:
            f.write(json.dumps(["infer", kernel]) + "\n")
        return real_infer(path, tu, kernel)

    monkeypatch.setattr(pipeline, "_infer_binding", inferred)
    src = tmp_path / "src"
    src.mkdir()
    (src / "three.cu").write_text(KERNELS)
    res = migrate(MigrateOptions(src, tmp_path / "out", check=True, timeout=120))
    checked = [r for r in res.records if r.get("verdict") == "pass"]
    assert len(checked) == 3, [(r["kernel"], r.get("verdict"), r["status"]) for r in res.records]
    parses = [json.loads(line) for line in log.read_text().splitlines()]
    assert parses.count(["three.cu", []]) == 1, parses
    infers = sorted(p[1] for p in parses if p[0] == "infer")
    assert infers == ["clear", "shift", "twice"], parses
