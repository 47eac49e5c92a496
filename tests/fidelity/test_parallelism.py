"""Rows of independent work (from the lifted intent), which bound the rows a partition-use finding
(C2N5008) may expect: a block-wise scan has one row per block, a long reduction or scan axis is
split into 512-element pieces, a map has one row per element of its domain."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki import api
from cuda2nki.fidelity.parallelism import SEGMENT_ROW, work_rows
from cuda2nki.ir.parser import parse
from tests.fidelity.corpus import CORPUS, lift_corpus


def _rows(rel: str, **scalars: int) -> int | None:
    res, b = lift_corpus(rel)
    return work_rows(res.kernel_ir, b.resolve(scalars).scalars)


@pytest.mark.parametrize(
    ("rel", "scalars", "rows"),
    [
        ("scan/scan_hillis_steele", {"n": 4096}, 16),  # 256-element blocks, one row each
        ("scan/scan_hillis_steele", {"n": 1000}, 4),
        ("scan/scan_blelloch", {"n": 4096}, 16),
        ("reduce/reduce_volatile_tail", {"n": 10000}, 40),
        ("stencil/stencil_1d_shared", {"n": 8000}, 8000),  # a map: every element is a row
        ("basic/vector_add", {"N": 1000}, 1000),
    ],
)
def test_rows_of_corpus_kernels(rel: str, scalars: dict, rows: int) -> None:
    assert _rows(rel, **scalars) == rows


_ROW_SUMS = """
kernel k(x: in float32[R, C], y: out float32[R], R: int32, C: int32) {
  reduce: y[i] = reduce(add, j < C: x[i, j]; acc float32) for i < R;
}
"""
_TOTAL = """
kernel k(x: in float32[n], y: out float32[1], n: int32) {
  reduce: y[0] = reduce(add, j < n: x[j]; acc float32);
}
"""
_LONG_SCAN = """
kernel k(x: in float32[n], y: out float32[n], n: int32) {
  scan: y[j] = scan(add, j: x[j]; acc float32) for scan j < n;
}
"""
_TWO = _ROW_SUMS.replace(
    "for i < R;\n", "for i < R;\n  map: y[i] = x[i, 0] for i < R;\n"
)  # the larger of two computations counts


@pytest.mark.parametrize(
    ("text", "scalars", "rows"),
    [
        (_ROW_SUMS, {"R": 6, "C": 300}, 6),
        (_ROW_SUMS, {"R": 6, "C": 4096}, 6 * (4096 // SEGMENT_ROW)),  # long rows split
        (_ROW_SUMS, {"R": 6, "C": 4097}, 6 * (4096 // SEGMENT_ROW + 1)),
        (_TOTAL, {"n": 1 << 20}, (1 << 20) // SEGMENT_ROW),  # one sum of a million: many rows
        (_TOTAL, {"n": 100}, 1),
        (_LONG_SCAN, {"n": 5000}, 10),
        (_TWO, {"R": 9, "C": 10}, 9),
    ],
)
def test_rows_of_intents(text: str, scalars: dict, rows: int) -> None:
    assert work_rows(parse(text), scalars) == rows


def test_no_rows_without_an_intent_or_a_size() -> None:
    assert work_rows(None, {}) is None
    assert work_rows(parse(_ROW_SUMS), {"R": 6}) is None  # C unknown


def test_a_block_scan_port_on_one_partition_per_block_is_not_narrow(tmp_path: Path) -> None:
    """The generated port of a block-wise scan keeps one block per partition (16 of 128 for 4,096
    elements): no C2N5008.  Nor for a 1-D stencil with one block per partition: partition use is
    judged at the largest test point (two full tiles and a tail), where its blocks fill all 128
    partitions; a port on too few partitions at every size is flagged (test_partition_use.py)."""
    for rel in ("scan/scan_hillis_steele", "stencil/stencil_1d_shared"):
        cu = CORPUS / f"{rel}.cu"
        out = tmp_path / f"{cu.stem}.py"
        out.write_text(api.port(cu).source)
        report = api.check(cu, out, binding=cu.with_suffix(".toml"), seeds=1)
        ids = {d.code for d in report.findings}
        assert report.numerics_outcome == "pass"
        assert "C2N5008" not in ids, (rel, ids)
