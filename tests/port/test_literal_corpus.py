"""Every runnable corpus kernel, with the literal lowering forced: the literal port matches the
SIMT interpreter on the binding's test points, or the kernel is refused with C2N2301 naming the
construct.  Never a port that runs but computes something else (issue 4 §2)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.port.literal_acceptance import check_literal

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "corpus"))
from corpus_catalog import runnable  # noqa: E402

KERNELS = [e.cu for e in runnable()]


@pytest.mark.slow
@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("cu", KERNELS, ids=[f"{p.parent.name}/{p.stem}" for p in KERNELS])
def test_literal_port_matches_or_refuses_by_name(cu, target, tmp_path):
    out = check_literal(cu, tmp_path, lowering="literal", target=target)
    assert out.status in ("match", "refused"), (out.status, out.detail)
    if out.status == "refused":
        assert "C2N2301" in out.codes and "(line " in out.detail
    else:
        assert "C2N2300" in out.codes and out.points
