"""C2N5001 (literal per-thread translation) fires on many narrow engine instructions only where
they carry the work: a row gather computes one index per row on narrow columns and moves whole
rows by DMA, which is the layout a gather wants, not a per-thread translation."""

from __future__ import annotations

from cuda2nki.fidelity.tracefind import ProblemSize, findings, summarise
from cuda2nki.nkisim.state import Instr


def _compute(parts: int, free: int, count: int, line: int = 10) -> list[Instr]:
    return [
        Instr("vector", "tensor_scalar", (), (), (), parts, free, 0, "p.py", line, ())
        for _ in range(count)
    ]


def _dma(parts: int, nbytes: int, count: int, line: int = 20) -> list[Instr]:
    return [
        Instr("sync", "dma_copy", (), (), (), parts, 1, nbytes, "p.py", line, ())
        for _ in range(count)
    ]


def _ids(trace: list[Instr], size: ProblemSize) -> set[str]:
    return {d.code for d in findings(summarise(trace), size, "p.py")}


def test_index_columns_of_a_row_gather_are_not_a_literal_translation() -> None:
    # 129 rows x 2064 columns gathered: 6 index instructions on (rows, 1) per row tile, and
    # 2 DMAs per row tile moving whole rows
    size = ProblemSize(rows=129, bytes_per_partition=8256, total_bytes=4 * 266256, elements=266256)
    for rows in (128, 64, 1):
        trace = _compute(rows, 1, 6 * 5) + _dma(rows, 128 * 8256, 4)
        assert "C2N5001" not in _ids(trace, size), rows


def test_narrow_instructions_that_carry_the_work_are_a_literal_translation() -> None:
    # the same problem computed 64 elements at a time: the narrow instructions are the work
    size = ProblemSize(rows=129, bytes_per_partition=8256, total_bytes=4 * 266256, elements=266256)
    for parts, free in ((64, 1), (1, 64), (8, 8)):
        trace = _compute(parts, free, 266256 // 64) + _dma(128, 128 * 8256, 4)
        assert "C2N5001" in _ids(trace, size), (parts, free)
    # and a smaller share still counts when it is a real part of the work (a quarter)
    trace = _compute(32, 2, 266256 // 64 // 4) + _dma(128, 128 * 8256, 4)
    assert "C2N5001" in _ids(trace, size)
