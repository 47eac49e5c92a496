"""A check under a binding inferred from the host code, at sizes the inference chose (the host's
too large to simulate, or not given): its size-bound performance findings are notes that say at
which sizes they were measured and the source's (cuda2nki.fidelity.smallsizes.at_inferred_sizes);
at the source's own sizes they keep their severity."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki import api
from cuda2nki.diagnostics import Severity

# the same element-wise kernel, its size given by the host three ways
LAUNCHER = """\
__global__ void halve(const float* src, float* dst, int count)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < count) dst[k] = 0.5f * src[k];
}
static void run_halve(const float* s, float* d, int count, int threads)
{
    halve<<<(count + threads - 1) / threads, threads>>>(s, d, count);
}
int main()
{
    int rows = ROWS, cols = 1024;
    float *s, *d;
    cudaMalloc(&s, rows * cols * sizeof(float));
    cudaMalloc(&d, rows * cols * sizeof(float));
    run_halve(s, d, rows * cols, 256);
    return 0;
}
"""

GRID_STRIDE = """\
__global__ void halve(float* __restrict__ dst, const float* __restrict__ src, size_t count)
{
    for (size_t k = blockIdx.x * blockDim.x + threadIdx.x; k < count; k += blockDim.x * gridDim.x)
        dst[k] = src[k] * 0.5f;
}
int main()
{
    const size_t count = 1 << 24;
    float *s, *d;
    cudaMalloc((void**)&s, count * sizeof(float));
    cudaMalloc((void**)&d, count * sizeof(float));
    halve<<<1024, 128>>>(d, s, count);
}
"""

COMMAND_LINE = """\
#include <cstdlib>
__global__ void halve(int count, const float* src, float* dst)
{
    int k = threadIdx.x + blockDim.x * blockIdx.x;
    if (k < count) dst[k] = src[k] * 0.5f;
}
int main(int argc, char** argv)
{
    int count = atoi(argv[1]);
    float *s, *d;
    cudaMalloc(&s, count * sizeof(float));
    cudaMalloc(&d, count * sizeof(float));
    dim3 threads(128);
    dim3 blocks((count + threads.x - 1) / threads.x);
    halve<<<blocks, threads>>>(count, s, d);
}
"""

# a port that keeps the whole vector on one partition: C2N5008 wherever the problem has rows
ONE_PARTITION = """\
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def halve(src):
    n = src.shape[0]
    dst = nl.ndarray((n,), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((1, n), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=src.reshape((1, n)))
    r = nl.ndarray((1, n), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=r, data=t, op0=nl.multiply, operand0=0.5)
    nisa.dma_copy(dst=dst.reshape((1, n)), src=r)
    return dst
"""


def _files(tmp_path: Path, cuda: str) -> tuple[Path, Path]:
    cu = tmp_path / "halve.cu"
    cu.write_text(cuda)
    py = tmp_path / "port.py"
    py.write_text(ONE_PARTITION)
    return cu, py


def _partition_finding(report: object) -> object:
    (low,) = [f for f in report.findings if f.code == "C2N5008"]  # type: ignore[attr-defined]
    return low


@pytest.mark.parametrize(
    ("cuda", "source"),
    [
        (LAUNCHER.replace("ROWS", "4096"), "count = 4194304"),
        (GRID_STRIDE, "count = 16777216"),
        (COMMAND_LINE, "the source gives no value for count"),
    ],
    ids=["launcher", "grid-stride", "command-line"],
)
def test_size_bound_findings_at_inferred_chosen_sizes_are_notes(
    tmp_path: Path, cuda: str, source: str
) -> None:
    cu, py = _files(tmp_path, cuda)
    report = api.check(cu, py, seeds=1)
    assert report.numerics_outcome == "pass"
    low = _partition_finding(report)
    why = " ".join(low.notes)  # type: ignore[attr-defined]
    assert low.severity == Severity.NOTE  # type: ignore[attr-defined]
    assert "sizes the check chose (count=" in why and source in why
    assert report.verdict == "pass"


def test_at_the_sources_own_sizes_the_finding_keeps_its_severity(tmp_path: Path) -> None:
    cu, py = _files(tmp_path, LAUNCHER.replace("ROWS", "4096"))
    assert _partition_finding(api.check(cu, py, seeds=1)).severity == Severity.NOTE  # type: ignore[attr-defined]
    # 4 x 1024 elements: small enough to check at the host's own size
    cu.write_text(LAUNCHER.replace("ROWS", "4"))
    report = api.check(cu, py, seeds=1)
    assert report.numerics_outcome == "pass"
    assert _partition_finding(report).severity > Severity.NOTE  # type: ignore[attr-defined]
    assert report.verdict == "fail"


def test_a_sidecar_binding_keeps_the_findings_severity(tmp_path: Path) -> None:
    cu, py = _files(tmp_path, LAUNCHER.replace("ROWS", "4096"))
    assert api.check(cu, py, seeds=1).verdict == "pass"
    cu.with_suffix(".toml").write_text(
        'kernel = "halve"\n[launch]\ngrid = ["ceil_div(count, 256)"]\nblock = [256]\n'
        "[params]\ncount = 16384\n"
        'src = { shape = ["count"], dtype = "float32", role = "in" }\n'
        'dst = { shape = ["count"], dtype = "float32", role = "out" }\n'
    )
    report = api.check(cu, py, seeds=1)
    assert report.numerics_outcome == "pass"
    assert _partition_finding(report).severity > Severity.NOTE  # type: ignore[attr-defined]
