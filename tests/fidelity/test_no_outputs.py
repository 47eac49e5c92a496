"""A kernel that writes no tensor (it only prints, or only reads) gives its check nothing to
compare: the check says so (C2N4023) instead of failing to read the port's reply.  cuda2nki
itself writes no port for such a kernel (C2N2301); these ports are written by hand."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cuda2nki import api

KERNELS = {
    "printf_only": """
#include <cstdio>
__global__ void say(int step) { printf("step %d\\n", step); }
int main() { for (int i = 0; i < 3; i++) say<<<1, 1>>>(i); return 0; }
""",
    "printf_per_thread": """
#include <stdio.h>
__global__ void hello(int tag, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) printf("hello %d from %d\\n", tag, t);
}
int main() { hello<<<2, 32>>>(7, 50); return 0; }
""",
    "empty_body": """
__global__ void warm(int unused) {}
int main() { warm<<<1, 32>>>(0); return 0; }
""",
}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_a_kernel_without_outputs_compares_nothing(tmp_path: Path, name: str) -> None:
    cu = tmp_path / f"{name}.cu"
    cu.write_text(KERNELS[name])
    # cuda2nki writes no port for such a kernel (C2N2301); a hand-written one computes nothing
    res = api.port(str(cu))
    assert res.source is None and any(d.code == "C2N2301" for d in res.diagnostics)
    kernel, params = re.search(r"__global__ void (\w+)\(([^)]*)\)", KERNELS[name]).groups()
    args = ", ".join(p.split()[-1] for p in params.split(","))
    port = tmp_path / "port.py"
    port.write_text(f"import nki\n\n\n@nki.jit\ndef {kernel}({args}):\n    return None\n")
    report = api.check(str(cu), str(port), seeds=1)
    codes = {d.code for d in report.findings}
    assert "C2N4014" not in codes, report.findings
    assert "C2N4023" in codes and report.verdict == "fail"
    (why,) = [d for d in report.findings if d.code == "C2N4023"]
    assert "writes no tensor" in why.message
