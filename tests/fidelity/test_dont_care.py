"""Elements the CUDA kernel never writes are not compared: a port may leave or fill them."""

from __future__ import annotations

from pathlib import Path

from cuda2nki.fidelity.check import check

CUDA = """
__global__ void half_copy(float* out, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n / 2) out[i] = x[i] * 2.0f;
}
"""
TOML = """
kernel = "half_copy"
[launch]
grid = ["ceil_div(n, 128)"]
block = [128]
[params]
out = { shape = ["n"], dtype = "float32", role = "out" }
x = { shape = ["n"], dtype = "float32", role = "in" }
n = 256
"""
PORT = """
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def half_copy(x):
    (n,) = x.shape
    out = nl.ndarray((n,), dtype=x.dtype, buffer=nl.shared_hbm)
    h = {rows}
    t = nl.ndarray((1, h), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[0:h].reshape((1, h)))
    u = nl.ndarray((1, h), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=u, data=t, op0=nl.multiply, operand0=2.0)
    nisa.dma_copy(dst=out[0:h].reshape((1, h)), src=u)
    return out
"""


def _run(tmp_path: Path, rows: str):
    (tmp_path / "k.cu").write_text(CUDA)
    (tmp_path / "k.toml").write_text(TOML)
    (tmp_path / "p.py").write_text(PORT.format(rows=rows))
    return check(tmp_path / "k.cu", tmp_path / "p.py", seeds=1, extra_points=False)


def test_port_leaving_the_unwritten_half_alone_passes(tmp_path: Path) -> None:
    rep = _run(tmp_path, "n // 2")
    assert all(n["classification"] == "expected" for n in rep.numerics), rep.numerics


def test_port_missing_part_of_the_written_half_fails(tmp_path: Path) -> None:
    rep = _run(tmp_path, "n // 4")
    assert any(n.get("defect") == "unwritten" for n in rep.numerics)
