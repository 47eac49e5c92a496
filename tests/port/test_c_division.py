"""C's truncating ``/`` and ``%`` on indices whose sign is unknown (a thread coordinate minus a
runtime offset): every port, recognised or literal, computes what the CUDA kernel computes,
including where the numerator is negative (there truncation and floor division differ)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.port.acceptance import port_variant

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lift"))
from variants import CDIV_VARIANTS, ROTATE_VARIANTS  # noqa: E402

CASES = CDIV_VARIANTS + [v for v in ROTATE_VARIANTS if v[0] == "rotate/double_remainder"]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("vid", "src", "bdict"), [v[:3] for v in CASES], ids=[v[0] for v in CASES])
def test_port_keeps_c_division(vid, src, bdict, target, tmp_path) -> None:
    _, run, points = port_variant(vid, src, bdict, target, tmp_path, seed0=5, literal_ok=True)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
