"""NKI stores a bool as uint8 0/1: a port's uint8 output for a CUDA ``bool`` buffer is no dtype
mismatch (C2N4021); its values are compared as 0/1 (cuda2nki.fidelity.storagedtype)."""

from __future__ import annotations

from pathlib import Path

from cuda2nki import api

SETTLE = """\
__global__ void settle(bool* frontier, bool* seen, const int* dist, int count)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < count && dist[v] >= 0) {
        frontier[v] = false;
        seen[v] = true;
    }
}
int main()
{
    int count = 3000;
    bool *f, *s;
    int* d;
    cudaMalloc(&f, count * sizeof(bool));
    cudaMalloc(&s, count * sizeof(bool));
    cudaMalloc(&d, count * sizeof(int));
    settle<<<(count + 127) / 128, 128>>>(f, s, d, count);
}
"""

FLAG = """\
__global__ void flag_pos(const float* vals, bool* pos, int len)
{
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < len) pos[i] = vals[i] > 0.0f;
}
int main()
{
    int len = 2000;
    float* v;
    bool* p;
    cudaMalloc(&v, len * sizeof(float));
    cudaMalloc(&p, len * sizeof(bool));
    flag_pos<<<(len + 255) / 256, 256>>>(v, p, len);
}
"""

FLAG_PORT = """\
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def flag_pos(vals):
    n = vals.shape[0]
    pos = nl.ndarray((n,), dtype=nl.uint8, buffer=nl.shared_hbm)
    t = nl.ndarray((1, n), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=vals.reshape((1, n)))
    r = nl.ndarray((1, n), dtype=nl.uint8, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=r, data=t, op0=nl.greater, operand0=THRESHOLD)
    nisa.dma_copy(dst=pos.reshape((1, n)), src=r)
    return pos
"""


def _ids(report: object) -> set[str]:
    return {f.code for f in report.findings}  # type: ignore[attr-defined]


def test_a_generated_port_of_a_bool_kernel_passes(tmp_path: Path) -> None:
    cu = tmp_path / "settle.cu"
    cu.write_text(SETTLE)
    res = api.port(cu, kernel="settle")
    assert res.source is not None and "nl.uint8" in res.source
    py = tmp_path / "settle_port.py"
    py.write_text(res.source)
    report = api.check(cu, py, seeds=1)
    assert "C2N4021" not in _ids(report)
    assert report.verdict == "pass"


def test_a_uint8_output_is_compared_as_the_bool_it_stores(tmp_path: Path) -> None:
    cu = tmp_path / "flag.cu"
    cu.write_text(FLAG)
    py = tmp_path / "flag_port.py"
    py.write_text(FLAG_PORT.replace("THRESHOLD", "0.0"))
    report = api.check(cu, py, seeds=1)
    assert "C2N4021" not in _ids(report) and report.numerics_outcome == "pass"
    py.write_text(FLAG_PORT.replace("THRESHOLD", "0.5"))  # wrong threshold: wrong 0/1 values
    assert api.check(cu, py, seeds=1).numerics_outcome == "fail"
