"""CUDA sources ported through the recognised path and checked against the SIMT interpreter on
shapes chosen to hit edge cases of the lowering (empty narrowed domains, SBUF pressure, ...)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.port.acceptance import check_kernel

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
