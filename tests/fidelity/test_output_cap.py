"""The cap on what a sandboxed port hands back follows the outputs the binding expects, so a
kernel whose outputs are large and inputs small checks like any other; a port returning far more
than its outputs could need is still stopped, with the sizes in its diagnostic."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.binding import load_binding
from cuda2nki.fidelity import outcap
from cuda2nki.fidelity.check import check
from cuda2nki.fidelity.sandbox import PortSandbox

KERNEL = """
// Two wide outputs, each row derived from one entry of a short per-row table.
__global__ void stretch(float* plus_one, float* doubled, const float* per_row, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y;
    if (c < cols && r < rows) {
        plus_one[r * cols + c] = per_row[r] + 1.0f;
        doubled[r * cols + c] = per_row[r] * 2.0f;
    }
}
"""

BINDING = """
kernel = "stretch"

[launch]
grid = ["ceil_div(cols, 256)", "rows"]
block = [256]

[params]
plus_one = { shape = ["rows", "cols"], dtype = "float32", role = "out" }
doubled = { shape = ["rows", "cols"], dtype = "float32", role = "out" }
per_row = { shape = ["rows"], dtype = "float32", role = "in" }
rows = 128
cols = 256
"""

PORT = """
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def stretch(per_row, rows, cols):
    plus_one = nl.ndarray((rows, cols), dtype=per_row.dtype, buffer=nl.shared_hbm)
    doubled = nl.ndarray((rows, cols), dtype=per_row.dtype, buffer=nl.shared_hbm)
    P = nl.tile_size.pmax
    F = 512
    for r0 in range(0, rows, P):
        p = min(P, rows - r0)
        s_t = nl.ndarray((p, 1), dtype=per_row.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=s_t, src=per_row[r0 : r0 + p].reshape((p, 1)))
        for c0 in range(0, cols, F):
            f = min(F, cols - c0)
            z = nl.ndarray((p, f), dtype=per_row.dtype, buffer=nl.sbuf)
            nisa.memset(dst=z, value=0.0)
            u = nl.ndarray((p, f), dtype=per_row.dtype, buffer=nl.sbuf)
            nisa.tensor_scalar(dst=u, data=z, op0=nl.add, operand0=s_t, op1=nl.add, operand1=1.0)
            d = nl.ndarray((p, f), dtype=per_row.dtype, buffer=nl.sbuf)
            nisa.tensor_scalar(
                dst=d, data=z, op0=nl.add, operand0=s_t, op1=nl.multiply, operand1=2.0
            )
            nisa.dma_copy(dst=plus_one[r0 : r0 + p, c0 : c0 + f], src=u)
            nisa.dma_copy(dst=doubled[r0 : r0 + p, c0 : c0 + f], src=d)
    return plus_one, doubled
"""

#: a port that also hands back a table 64 times the size of its outputs
HOSTILE = PORT.replace(
    "    return plus_one, doubled",
    "    spill = nl.ndarray((rows, cols * 64), dtype=per_row.dtype, buffer=nl.shared_hbm)\n"
    "    return plus_one, doubled, spill",
)

#: a floor this low makes a 2 MiB result "large": the same as 64 MB results at the real floor
SMALL_FLOOR = 1 << 20
COLS = 2048  # 128 x 2048 x 4 bytes x 2 outputs = 2 MiB per run, from 512 bytes of input


def _files(tmp_path: Path, port: str) -> tuple[Path, Path]:
    cu = tmp_path / "stretch.cu"
    cu.write_text(KERNEL)
    (tmp_path / "stretch.toml").write_text(BINDING)
    p = tmp_path / "port.py"
    p.write_text(port)
    return cu, p


def _check(tmp_path: Path, port: str):
    cu, p = _files(tmp_path, port)
    over = {"rows": 128, "cols": COLS}
    return check(cu, p, seeds=1, extra_points=False, overrides=over, timeout=60)


def test_large_outputs_from_small_inputs_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(outcap, "FLOOR", SMALL_FLOOR)
    report = _check(tmp_path, PORT)
    assert report.verdict == "pass", [(d.code, d.message) for d in report.findings]


def test_a_port_returning_far_more_than_its_outputs_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(outcap, "FLOOR", SMALL_FLOOR)
    report = _check(tmp_path, HOSTILE)
    assert report.verdict == "fail"
    stopped = [d for d in report.findings if d.code == "C2N4014"]
    assert stopped, [(d.code, d.message) for d in report.findings]
    assert "more than its outputs could need" in stopped[0].message
    assert "C2N4018" not in {d.code for d in report.findings}  # stopped, not a crash


def test_the_cap_follows_the_expected_outputs_within_its_bounds() -> None:
    assert outcap.output_cap(0) == outcap.FLOOR
    assert outcap.output_cap(100 << 20) == 800 << 20  # the inputs' rule is kept
    # two 4M-element 64-bit outputs, three runs of the point: more than the floor
    need = outcap.output_cap(1 << 10, [3 * 2 * (4 << 20)])
    assert need >= 3 * 2 * (4 << 20) * 16 and need > outcap.FLOOR
    # the documented maximum holds whatever the outputs or inputs claim
    assert outcap.output_cap(1 << 40, [1 << 40]) == outcap.CEILING == 2 << 30


def test_the_reason_names_the_sizes() -> None:
    why = outcap.too_large(5_000_000, 1_000_000)
    assert "5,000,000" in why and "1,000,000" in why and f"{outcap.CEILING:,}" in why


def _points(cols: int) -> list[list[dict]]:
    per_row = np.linspace(-1.0, 1.0, 128, dtype=np.float32)
    return [[{"per_row": per_row, "rows": 128, "cols": cols}]]


@pytest.mark.parametrize("given", [(), (2 * 128 * COLS,)])
def test_a_sandbox_given_its_points_sizes_the_cap_from_the_outputs_it_is_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: tuple[int, ...]
) -> None:
    """Without expected outputs the floor holds (the results are cut); told them, they pass."""
    monkeypatch.setattr(outcap, "FLOOR", SMALL_FLOOR)
    _, port = _files(tmp_path, PORT)
    box = PortSandbox(str(port), "stretch", _points(COLS), timeout=60, out_elements=given)
    with box:
        res = box.result(0)
    if given:
        assert res.status == "ok", res.error
        assert res.value[0]["outputs"][1].shape == (128, COLS)
    else:
        assert res.status == "output" and "more than its outputs could need" in res.error


def test_expected_elements_count_what_the_kernel_writes(tmp_path: Path) -> None:
    inout = BINDING.replace('role = "in" }', 'role = "inout" }')
    got = []
    for name, text in (("out.toml", BINDING), ("inout.toml", inout)):
        (tmp_path / name).write_text(text)
        r = load_binding(tmp_path / name).resolve({"rows": 128, "cols": 64})
        got.append(outcap.expected_elements(r))
    assert got == [2 * 128 * 64, 2 * 128 * 64 + 128]
