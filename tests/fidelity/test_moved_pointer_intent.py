"""``check`` lifts a kernel whose pointers move (``pa++``, ``p += K``) as the port does, moved
pointers fixed first: its tolerance comes from the IR and its performance findings know the
contraction (a matrix-vector product is bandwidth-bound: no call for the tensor engine)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.binding import load_binding
from cuda2nki.fidelity.check import check
from cuda2nki.pipeline import port_file

CORPUS = Path(__file__).resolve().parents[2] / "corpus"


@pytest.mark.parametrize("rel", ["pointers/gemv_bump_row", "pointers/sgemm_bump_kcount"])
def test_a_moved_pointer_kernel_is_checked_against_its_intent(rel: str, tmp_path: Path) -> None:
    cu = CORPUS / f"{rel}.cu"
    binding = load_binding(cu.with_suffix(".toml"))
    res = port_file(cu, binding=binding)
    assert res.source is not None and not res.literal
    port = tmp_path / f"{cu.stem}.py"
    port.write_text(res.source)
    rep = check(cu, port, binding=binding, kernel=res.kernel, seeds=1)
    assert rep.tolerance_source == "ir", rep.tolerance_source
    assert "C2N5002" not in {d.code for d in rep.findings}
