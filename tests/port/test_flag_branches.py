"""Statements guarded by flags and modes (scalar parameters every thread tests alike) port as
Python branches taken when the kernel is traced -- not as a select per element -- and match the
SIMT interpreter on both targets for several flag values."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.port.acceptance import port_variant

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lift"))
from variants import FLAG_VARIANTS  # noqa: E402

IDS = [v[0] for v in FLAG_VARIANTS]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("vid", "src", "bdict"), [v[:3] for v in FLAG_VARIANTS], ids=IDS)
def test_flags_port_as_trace_time_branches(vid, src, bdict, target, tmp_path) -> None:
    res, run, points = port_variant(vid, src, bdict, target, tmp_path, tol=1e-6)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    params = bdict["params"]
    sizes = {d for v in params.values() if isinstance(v, dict) for d in v["shape"]}
    flags = {k for k, v in params.items() if not isinstance(v, dict) and k not in sizes}
    branches = [line for line in res.source.splitlines() if line.strip().startswith("if ")]
    assert branches, res.source
    for line in branches:  # each branch tests a flag, not a size
        assert any(re.search(rf"\b{f}\b", line) for f in flags), (line, flags)
    assert "select" not in res.source  # no element-wise choice on the flag
