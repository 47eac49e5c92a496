"""C's truncating ``/`` and ``%`` on indices whose sign is unknown (a thread coordinate minus a
runtime offset): every port, recognised or literal, computes what the CUDA kernel computes,
including where the numerator is negative (there truncation and floor division differ)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.port.acceptance import run_against_simt

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lift"))
from variants import CDIV_VARIANTS, ROTATE_VARIANTS  # noqa: E402

CASES = CDIV_VARIANTS + [v for v in ROTATE_VARIANTS if v[0] == "rotate/double_remainder"]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("vid", "src", "bdict"), [v[:3] for v in CASES], ids=[v[0] for v in CASES])
def test_port_keeps_c_division(vid, src, bdict, target, tmp_path) -> None:
    from cuda2nki.binding import binding_from_dict
    from cuda2nki.codegen.pipeline import port_file

    cu = tmp_path / f"{vid.split('/')[1]}.cu"
    cu.write_text(src)
    binding = binding_from_dict({"kernel": "k", **bdict}, path=str(cu))
    res = port_file(cu, binding=binding, target=target)
    assert res.source is not None, [d.message for d in res.diagnostics]
    port = tmp_path / f"{cu.stem}_{target}.py"
    port.write_text(res.source)
    points = binding.test_points()
    run = run_against_simt(res, binding, port, points=points, rtol=0, atol=0, seed=lambda k: 5 + k)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
