"""CUDA sources ported through the recognised path and checked against the SIMT interpreter on
shapes chosen to hit edge cases of the lowering (empty narrowed domains, SBUF pressure, ...)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.port.acceptance import CORPUS, check_kernel

HERE = Path(__file__).parent / "cuda"


def _check(src: Path, target: str, tmp_path: Path, shapes: list[dict]) -> object:
    """Port ``src`` (with its sidecar binding plus ``shapes`` as extra test points) and compare."""
    cu = tmp_path / src.name
    shutil.copy(src, cu)
    toml = src.with_suffix(".toml").read_text()
    for point in shapes:
        toml += "\n[[check.shapes]]\n" + "".join(f"{k} = {v}\n" for k, v in point.items())
    cu.with_suffix(".toml").write_text(toml)
    return check_kernel(cu, target, tmp_path, max_points=100)


@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_clamped_1d_stencil_on_tiny_sizes(target, tmp_path) -> None:
    """Narrowed interior domains (i in [1, n-1)) are empty, not negative, when n <= 2."""
    out = _check(HERE / "blur1d.cu", target, tmp_path, [{"n": 1}, {"n": 2}, {"n": 3}])
    assert out.status == "match", out
    assert len(out.shapes) == 4


def test_clamped_heat_step_fits_sbuf_on_the_legacy_target(tmp_path) -> None:
    """Legacy tiles are allocated at full size ([128, 4096] fp32 = 16 KiB per partition); names of
    dead tiles are dropped so a statement nest never holds its predecessors' tiles (C2N3017)."""
    src = CORPUS / "stencil" / "heat_clamped.cu"
    out = _check(src, "legacy", tmp_path, [{"rows": 2, "cols": 2}])
    assert out.status == "match", out
    port = (tmp_path / "heat_clamped_legacy.py").read_text()
    assert "\n        del " in port
