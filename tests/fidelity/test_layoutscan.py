"""Avoidable transposes (C2N5009) and warp-sized logic (C2N5011): what the source reading finds,
what the trace confirms, and what correct ports must not be blamed for."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from cuda2nki.fidelity import layoutscan
from cuda2nki.fidelity.check import check
from cuda2nki.fidelity.tracefind import LineStats

ROOT = Path(__file__).resolve().parents[2]
CORRECT = sorted(p for p in ROOT.glob("corpus/*/ports/*.py") if "_flaw_" not in p.name)


def _scan(src: str, legacy: bool = False) -> list[layoutscan.Candidate]:
    return layoutscan.scan(ast.parse(textwrap.dedent(src)), legacy=legacy)


@pytest.mark.parametrize("port", CORRECT, ids=lambda p: p.stem)
def test_correct_ports_have_no_candidates(port: Path) -> None:
    src = port.read_text()
    assert _scan(src, legacy="neuronxcc" in src) == []


REPEATED = """
def k(A, B):
    for m in range(0, M, 128):
        for n in range(0, N, 512):
            for k in range(0, K, 128):
                kk = min(128, K - k)
                blk = nl.ndarray((128, 128), dtype=A.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=blk[0:128, 0:kk], src=A[m : m + 128, k : k + kk])
                tp = nl.ndarray((128, 128), dtype=A.dtype, buffer=nl.psum)
                nisa.nc_transpose(dst=tp[0:kk, 0:128], data=blk[0:128, 0:kk])
"""


def test_a_transpose_repeated_across_a_loop_it_does_not_depend_on() -> None:
    (c,) = _scan(REPEATED)
    assert (c.code, c.kind, c.line) == ("C2N5009", "repeated", 10)
    assert "loop over 'n'" in c.detail


def test_a_transpose_that_depends_on_every_loop_is_not_blamed() -> None:
    src = REPEATED.replace(
        "src=A[m : m + 128, k : k + kk]", "src=A[m + n : m + n + 128, k : k + kk]"
    )
    assert _scan(src) == []


def test_a_transpose_run_once_under_a_condition_on_the_loop_is_not_blamed() -> None:
    src = REPEATED.replace(
        "                nisa.nc_transpose(",
        "                if n == 0:\n" + " " * 20 + "nisa.nc_transpose(",
    )
    assert _scan(src) == []


def test_an_accumulator_changes_every_iteration() -> None:
    src = """
    def k(x):
        acc = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        for i in range(8):
            nisa.tensor_tensor(dst=acc, data1=acc, data2=x, op=nl.add)
            nisa.nc_transpose(dst=t, data=acc)
    """
    assert _scan(src) == []


ROUND_TRIP = """
def k(x):
    t = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    tp = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.psum)
    nisa.nc_transpose(dst=tp, data=t)
    e = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.sbuf)
    nisa.activation(dst=e, op=nl.exp, data=tp)
    back = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.psum)
    nisa.nc_transpose(dst=back, data=e)
"""


def test_a_transpose_undone_after_elementwise_work() -> None:
    (c,) = _scan(ROUND_TRIP)
    assert (c.kind, c.line, c.lines) == ("round-trip", 10, (6, 10))


def test_a_reduction_in_between_needs_the_transposed_layout() -> None:
    src = ROUND_TRIP.replace(
        "nisa.activation(dst=e, op=nl.exp, data=tp)",
        "nisa.tensor_reduce(dst=e, op=nl.add, data=tp, axis=1)",
    )
    assert _scan(src) == []


def test_legacy_matmul_without_transpose_x_undoes_a_transpose() -> None:
    src = """
    def k(a, b):
        a_t = nl.load(a)
        x = nisa.nc_transpose(a_t)
        y = nl.copy(x)
        r = nl.matmul(y, nl.load(b))
        s = nl.matmul(nisa.nc_transpose(a_t), nl.load(b), transpose_x=True)
    """
    (c,) = _scan(src, legacy=True)
    assert (c.kind, c.line) == ("round-trip", 6)
    assert "transpose_x=True" in c.detail


@pytest.mark.parametrize(
    "loop",
    [
        "for off in (16, 8, 4, 2, 1):",
        "for s in range(5):\n        off = 16 >> s",
        "for s in range(5):\n        off = 16 // 2 ** s",
        "off = 16\n    while off >= 1:",
    ],
)
def test_halving_loops_in_their_usual_spellings(loop: str) -> None:
    body = (
        "nisa.tensor_tensor(dst=v[:, 0:off], data1=v[:, 0:off], "
        "data2=v[:, off : 2 * off], op=nl.maximum)"
    )
    tail = "\n        off //= 2" if "while" in loop else ""
    src = f"def k(v):\n    {loop}\n        {body}{tail}\n"
    (c,) = _scan(src)
    assert (c.code, c.kind) == ("C2N5011", "halving")


def test_warp_tiles_need_rows_to_fill_partitions() -> None:
    src = """
    WARP = 32
    def k(x):
        for r in range(0, R, WARP):
            t = nl.ndarray((WARP, 64), dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=x[r : r + WARP, :])
            nisa.activation(dst=t, op=nl.exp, data=t)
    """
    cands = _scan(src)
    assert {c.kind for c in cands} == {"lanes", "warp-tiles"}
    per_line = {
        6: LineStats("dma", "dma_copy", 8, 256, 512),
        7: LineStats("act", "act", 8, 256, 512),
    }
    many = layoutscan.findings(cands, "p.py", per_line, rows=256)
    assert {d.code for d in many} == {"C2N5011"} and len(many) == 1  # lanes: 64 wide, not 32
    assert "used 32 of 128 partitions" in many[0].message
    assert layoutscan.findings(cands, "p.py", per_line, rows=32) == []


def test_unexecuted_candidates_are_dropped_and_static_reading_is_labelled() -> None:
    cands = _scan(REPEATED)
    assert layoutscan.findings(cands, "p.py", {}, rows=256) == []
    (d,) = layoutscan.findings(cands, "p.py")
    assert d.code == "C2N5009" and "(read from the source)" in d.message


def test_static_only_check_reports_the_source_reading() -> None:
    port = ROOT / "corpus/linalg/ports/matmul_tiled_flaw_retranspose.py"
    rep = check(ROOT / "corpus/linalg/matmul_tiled.cu", port, static_only=True)
    assert "C2N5009" in {d.code for d in rep.findings}


PRODUCT = """
def k(a, b):
    acc = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=acc, stationary=b, moving=a)
    c = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=c, src=acc)
    t = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_transpose(dst=t, data=c)
"""


def test_a_transposed_matmul_result_could_swap_its_operands() -> None:
    (c,) = _scan(PRODUCT)
    assert (c.kind, c.line) == ("matmul-result", 8)
    assert "matmul at line 4" in c.detail


def test_a_matmul_result_combined_with_another_tile_is_not_blamed() -> None:
    src = PRODUCT.replace(
        "nisa.tensor_copy(dst=c, src=acc)",
        "nisa.tensor_tensor(dst=c, data1=acc, data2=bias, op=nl.add)",
    )
    assert _scan(src) == []


def test_repeats_are_counted_against_the_distinct_inputs() -> None:
    (c,) = _scan(REPEATED)
    assert c.producers == (8,)  # the DMA that fills the transposed block
    dma = LineStats("dma", "dma_copy", 8, 1024, 1024, keys={1, 2, 3, 4})
    tp = LineStats("tensor", "nc_transpose", 8, 1024, 1024)
    (d,) = layoutscan.findings([c], "p.py", {8: dma, 10: tp}, rows=256)
    assert "8 times" in d.message and "4 distinct inputs (2.0 times each)" in d.message
    dma.keys = set(range(8))  # every transpose had its own input: the loop ran once
    assert layoutscan.findings([c], "p.py", {8: dma, 10: tp}, rows=256) == []


def test_doubling_offsets_of_a_scan_are_not_a_reduction_tree() -> None:
    body = "nisa.tensor_tensor(dst=v[:, off:], data1=v[:, off:], data2=v[:, : n - off], op=nl.add)"
    for loop in ("for s in range(5):\n        off = 1 << s", "for off in (1, 2, 4, 8, 16):"):
        assert _scan(f"def k(v, n):\n    {loop}\n        {body}\n") == []


def test_32_by_32_tiles_of_a_vector_engine_transpose_are_its_limit() -> None:
    src = """
    def k(x):
        t = nl.ndarray((32, 32), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[0:32, 0:32])
        u = nl.ndarray((32, 32), dtype=x.dtype, buffer=nl.sbuf)
        nisa.nc_transpose(dst=u, data=t, engine=nisa.vector_engine)
    """
    assert [c for c in _scan(src) if c.kind == "warp-tiles"] == []


def test_32_wide_pieces_of_vector_engine_transposes_are_their_limit() -> None:
    """A per-row result turned into one row 32 partitions at a time (the Vector engine's
    transpose limit) is not a warp; the same loop doing elementwise work still is."""
    for loop in ("for q in range((n + 31) // 32):", "for q in range(0, n, 32):"):
        lo = "32 * q" if "//" in loop else "q"
        src = f"""
        def k(res, n):
            row = nl.ndarray((1, n), dtype=nl.int32, buffer=nl.sbuf)
            {loop}
                nisa.nc_transpose(dst=row[0:1, {lo}:{lo} + 32], data=res[{lo}:{lo} + 32, 0:1])
        """
        assert [c for c in _scan(src) if c.kind == "lanes"] == [], loop
        work = src.replace("nisa.nc_transpose(dst=", "nisa.tensor_copy(dst=").replace(
            "data=", "src="
        )
        assert [c.kind for c in _scan(work)] == ["lanes"], loop
