"""Integer data combined with indices or constants keeps C's 32-bit semantics in every port
(full-range unsigned inputs, so sums wrap): compared exactly with the SIMT interpreter on both
targets, whichever lowering the port takes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.port.acceptance import port_variant

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lift"))
from variants import WRAP_VARIANTS  # noqa: E402


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(
    ("vid", "src", "bdict"), [v[:3] for v in WRAP_VARIANTS], ids=[v[0] for v in WRAP_VARIANTS]
)
def test_wrapping_integer_values_port_exactly(vid, src, bdict, target, tmp_path) -> None:
    _, run, points = port_variant(vid, src, bdict, target, tmp_path, literal_ok=True)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
