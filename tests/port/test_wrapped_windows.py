"""A window whose taps wrap around the end of the array (``in[(i + t) % n]``) in a tap loop:
the recognised schedule split the wrap at a point that moves with the tap and read the tap's
variable outside its loop, a port that stopped with ``UnboundLocalError``.  Such a schedule is
now refused (C2N2512) and the kernel ported literally; the port runs and its numbers match."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki import api
from cuda2nki.codegen.unbound import unbound_reads

HOST = """
int main() {
    int n = 3000;
    float *src, *dst, *w;
    cudaMalloc(&src, n * sizeof(float));
    cudaMalloc(&dst, n * sizeof(float));
    cudaMalloc(&w, NT * sizeof(float));
    wrap<<<(n + 127) / 128, 128>>>(src, dst, n, w);
    return 0;
}
"""

SPELLINGS = {
    "tap-loop-forward": (
        "#define NT 5\n"
        "__global__ void wrap(const float* src, float* dst, int n, const float* w) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i >= n) return;\n"
        "    float acc = 0.0f;\n"
        "    for (int t = 0; t < NT; t++) acc += w[t] * src[(i + t) % n];\n"
        "    dst[i] = acc;\n}\n"
    ),
    "tap-loop-shifted": (
        "#define NT 3\n"
        "__global__ void wrap(const float* src, float* dst, int n, const float* w) {\n"
        "    int i = threadIdx.x + blockDim.x * blockIdx.x;\n"
        "    if (i < n) {\n"
        "        float s = 0.0f;\n"
        "        for (int k = 0; k < NT; ++k) s += src[(i + k + 1) % n] * w[k];\n"
        "        dst[i] = s;\n    }\n}\n"
    ),
    "tap-loop-unsigned-index": (
        "#define NT 4\n"
        "__global__ void wrap(const float* src, float* dst, int n, const float* w) {\n"
        "    unsigned idx = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (idx < n) {\n"
        "        float total = 0.0f;\n"
        "        for (int j = 0; j < NT; j++) total += w[j] * src[(idx + j) % n];\n"
        "        dst[idx] = total;\n    }\n}\n"
    ),
}


@pytest.mark.parametrize("case", sorted(SPELLINGS))
def test_a_wrapped_tap_window_ports_to_a_port_that_runs(case: str, tmp_path: Path) -> None:
    cu = tmp_path / "wrap.cu"
    cu.write_text(SPELLINGS[case] + HOST)
    res = api.port(str(cu), kernel="wrap")
    assert res.source is not None, [d.message for d in res.diagnostics]
    assert not unbound_reads(res.source)
    port = tmp_path / "wrap.py"
    port.write_text(res.source)
    report = api.check(str(cu), str(port), kernel="wrap", seeds=1)
    assert report.numerics_outcome == "pass", [d.message for d in report.findings]
