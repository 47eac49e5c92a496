"""C2N5008 (low partition use) weighs each engine instruction by the elements it processes: a
ragged last tile holding the leftovers on one partition is not a layout flaw, narrow tiles are."""

from __future__ import annotations

from cuda2nki.fidelity.tracefind import ProblemSize, findings, summarise
from cuda2nki.nkisim.state import Instr

SIZE = ProblemSize(rows=8000, bytes_per_partition=250, total_bytes=32000, elements=8000)


def _ops(parts_free: list[tuple[int, int]], ops_per_tile: int = 3) -> list[Instr]:
    return [
        Instr("vector", "tensor_scalar", (), (), (), p, f, 0, "p.py", 10 + k, ())
        for p, f in parts_free
        for k in range(ops_per_tile)
    ]


def _ids(trace: list[Instr]) -> set[str]:
    return {d.code for d in findings(summarise(trace), SIZE, "p.py")}


def test_a_ragged_last_tile_is_not_low_partition_use() -> None:
    trace = _ops([(126, 63), (1, 62)])  # 8000 = 126 x 63 + 62: two tiles, the second one row
    s = summarise(trace)
    assert s.partition_utilisation < 0.5  # per instruction: half the instructions are narrow
    assert s.work_partition_use > 0.95  # per element: almost everything ran on 126 partitions
    assert "C2N5008" not in _ids(trace)


def test_narrow_tiles_are_low_partition_use() -> None:
    for width, tiles in ((1, 8000 // 63), (16, 8), (32, 4)):
        trace = _ops([(width, 63)] * tiles)
        assert summarise(trace).work_partition_use == width / 128
        assert "C2N5008" in _ids(trace), width


def test_wide_tiles_on_a_few_partitions_are_still_low_partition_use() -> None:
    # a [1, N] layout: every instruction is wide, and runs on 1 of 128 partitions
    for width, free in ((1, 2000), (4, 1000), (7, 600)):
        trace = _ops([(width, free)] * 4)
        assert "C2N5008" in _ids(trace), (width, free)
    # 8 or more partitions with wide tiles stay a fair layout for a small problem
    assert "C2N5008" not in _ids(_ops([(8, 1000)] * 1))
