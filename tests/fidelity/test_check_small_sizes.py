"""``cuda2nki check`` of a kernel sized by macros runs at the check's smaller values of them, as
``migrate --check`` does (cuda2nki.fidelity.smallsizes), unless the port holds the source's sizes
as numbers or a binding is given."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki import api
from cuda2nki.diagnostics import Severity

KERNEL = """\
{defs}
__global__ void twice(const float* x, float* y)
{{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < LEN) y[i] = 2.0f * x[i];
}}
int main()
{{
    float *x, *y;
    cudaMalloc(&x, LEN * sizeof(float));
    cudaMalloc(&y, LEN * sizeof(float));
    twice<<<{grid}, 256>>>(x, y);
    return 0;
}}
"""

DEFS = {
    "ifndef": "#ifndef LEN\n#define LEN 65536\n#endif",
    "plain": "#define LEN (1 << 16)",
}

# a port that takes its size from its tensor
GENERIC = """\
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def twice(x):
    n = x.shape[0]
    y = nl.ndarray((n,), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((1, n), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x.reshape((1, n)))
    r = nl.ndarray((1, n), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=r, data=t, op0=nl.multiply, operand0=2.0)
    nisa.dma_copy(dst=y.reshape((1, n)), src=r)
    return y
"""


def _files(tmp_path: Path, defs: str, grid: str, port: str) -> tuple[Path, Path]:
    cu = tmp_path / "twice.cu"
    cu.write_text(KERNEL.format(defs=defs, grid=grid))
    py = tmp_path / "port.py"
    py.write_text(port)
    return cu, py


@pytest.mark.parametrize("defs", sorted(DEFS))
@pytest.mark.parametrize(
    ("grid", "value"), [("(LEN + 255) / 256", "131"), ("LEN / 256", "256")], ids=["ceil", "trunc"]
)
def test_check_runs_at_the_smaller_sizes(tmp_path: Path, defs: str, grid: str, value: str) -> None:
    cu, py = _files(tmp_path, DEFS[defs], grid, GENERIC)
    report = api.check(cu, py, seeds=1)
    assert report.numerics_outcome == "pass"
    (note,) = [f for f in report.findings if f.code == "C2N4032"]
    assert f"-D LEN={value}" in note.message and "LEN = 65536" in note.message
    # the CUDA kernel and the port ran at that size
    assert report.trace.get("instructions", 0) > 0


def test_size_bound_findings_at_the_chosen_sizes_are_notes(tmp_path: Path) -> None:
    # the port fills one partition: at the check's 131 elements that is a note (the source's
    # 4096 are never run); checked at the source's sizes it is the warning it always was
    cu, py = _files(tmp_path, "#define LEN 4096", "(LEN + 255) / 256", GENERIC)
    small = api.check(cu, py, seeds=1)
    (low,) = [f for f in small.findings if f.code == "C2N5008"]
    assert low.severity == Severity.NOTE and "check's sizes (-D LEN=131)" in " ".join(low.notes)
    assert small.verdict == "pass"
    py.write_text(GENERIC.replace("n = x.shape[0]", "n = 4096"))
    full = api.check(cu, py, seeds=1)
    (low,) = [f for f in full.findings if f.code == "C2N5008"]
    assert low.severity > Severity.NOTE and full.verdict == "fail"


def _noted(report: object) -> list[str]:
    return [f.message for f in report.findings if f.code == "C2N4032"]  # type: ignore[attr-defined]


def test_a_port_that_holds_the_sizes_is_checked_at_them(tmp_path: Path) -> None:
    cu, py = _files(tmp_path, "#define LEN 4096", "(LEN + 255) / 256", GENERIC)
    assert "-D LEN=131" in _noted(api.check(cu, py, seeds=1))[0]
    py.write_text(GENERIC.replace("n = x.shape[0]", "n = 4096"))  # written for 4096 only
    report = api.check(cu, py, seeds=1)
    assert report.numerics_outcome == "pass" and not _noted(report)


def test_a_sidecar_keeps_its_sizes(tmp_path: Path) -> None:
    cu, py = _files(tmp_path, "#define LEN 4096", "(LEN + 255) / 256", GENERIC)
    assert "-D LEN=131" in _noted(api.check(cu, py, seeds=1))[0]
    cu.with_suffix(".toml").write_text(
        'kernel = "twice"\n[launch]\ngrid = [16]\nblock = [256]\n[params]\n'
        'x = { shape = [4096], dtype = "float32", role = "in" }\n'
        'y = { shape = [4096], dtype = "float32", role = "out" }\n'
    )
    report = api.check(cu, py, seeds=1)
    assert report.numerics_outcome == "pass" and not _noted(report)
