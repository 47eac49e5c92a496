"""CUDA sources ported through the recognised path and checked against the SIMT interpreter on
shapes chosen to hit edge cases of the lowering (empty narrowed domains, SBUF pressure, ...)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.port.acceptance import CORPUS, check_kernel

HERE = Path(__file__).parent / "cuda"


def _check(src: Path, target: str, tmp_path: Path, shapes: list[dict], own: bool = False) -> object:
    """Port ``src`` (with its sidecar binding plus ``shapes`` as extra test points; only the
    binding's default point and ``shapes`` when ``own``) and compare."""
    cu = tmp_path / src.name
    shutil.copy(src, cu)
    toml = src.with_suffix(".toml").read_text()
    if own:  # the first of ``shapes`` replaces the binding's default point
        toml = toml.split("[[check.shapes]]")[0]
        for key, value in shapes[0].items():
            toml = re.sub(rf"(?m)^{key} = .*$", f"{key} = {value}", toml)
        shapes = shapes[1:]
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
    shapes = [{"rows": 3, "cols": 5}, {"rows": 2, "cols": 2}]
    out = _check(src, "legacy", tmp_path, shapes, own=True)
    assert out.status == "match", out
    port = (tmp_path / "heat_clamped_legacy.py").read_text()
    assert re.search(r"\n +del \w", port)


@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_rope_uses_axis_indices_as_values(target, tmp_path) -> None:
    """``(float)t * freq(p)``: the position axes become iota tiles (partition and free strides)
    plus the tile's offset; the outer loop variable is a per-tile scalar.  Recognised, not
    literal."""
    src = CORPUS / "misc" / "rope.cu"
    shapes = [{"T": 2, "H": 130, "D": 6}, {"T": 3, "H": 2, "D": 258}]
    out = _check(src, target, tmp_path, shapes, own=True)
    assert out.status == "match", out
    assert "iota" in (tmp_path / f"rope_{target}.py").read_text()


@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_odd_tail_element_without_a_domain(target, tmp_path) -> None:
    """``if (t == 0 && (n & 1)) data[n - 1] = ...``: one element on a [1, 1] tile under a guard
    loop of ``n % 2`` trips; sizes used as values (``n // 2``) are computed on the engines."""
    src = CORPUS / "lowp" / "scale_half2.cu"
    shapes = [{"n": 129}, {"n": 1}, {"n": 2}, {"n": 3}]
    out = _check(src, target, tmp_path, shapes, own=True)
    assert out.status == "match", out
    assert len(out.shapes) == 4


@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_bmm_nt_transposes_b_once_per_batch(target, tmp_path, capsys) -> None:
    """B stored [N, K] is transposed once into SBUF before the row-block loop (M > 128 here),
    not once per 128-row block of A: the checker finds no avoidable transpose (C2N5009)."""
    from cuda2nki.cli.main import main

    src = CORPUS / "linalg" / "bmm_nt.cu"
    shapes = [{"batch": 1, "M": 300, "N": 70, "K": 200}, {"batch": 2, "M": 129, "N": 3, "K": 129}]
    out = _check(src, target, tmp_path, shapes, own=True)
    assert out.status == "match", out
    port = tmp_path / f"bmm_nt_{target}.py"
    assert "once per block before the row-block loop" in port.read_text()
    capsys.readouterr()
    main(["check", str(tmp_path / "bmm_nt.cu"), str(port)])
    assert "C2N5009" not in capsys.readouterr().out


def test_bmm_nt_keeps_per_block_transposes_over_budget(tmp_path, monkeypatch) -> None:
    """Without room in SBUF the per-block transpose stays, and the port says why."""
    from cuda2nki.passes import _matmul_blocks

    monkeypatch.setattr(_matmul_blocks, "CACHE_BUDGET", 16)
    out = _check(CORPUS / "linalg" / "bmm_nt.cu", "nki", tmp_path, [{"M": 130}], own=True)
    assert out.status == "match", out
    text = (tmp_path / "bmm_nt_nki.py").read_text()
    assert "# C2N2506: operand 'B'" in text and "above the 16 budget" in text


@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_causal_mask_in_a_matmul_epilogue(target, tmp_path) -> None:
    """``k < j + 1 ? sum * scale : -inf`` on the output block: the row and column positions are
    iota tiles offset by the block's start (several row and column blocks at T = 130)."""
    src = CORPUS / "linalg" / "attention_scores.cu"
    shapes = [{"BH": 1, "T": 130, "D": 20}, {"BH": 2, "T": 5, "D": 3}]
    out = _check(src, target, tmp_path, shapes, own=True)
    assert out.status == "match", out


@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_row_clamped_2d_stencil_on_tiny_sizes(target, tmp_path) -> None:
    """Clamped rows on a 2-D grid: empty interior row ranges at rows <= 2, ragged at 130."""
    shapes = [{"rows": 1, "cols": 3}, {"rows": 2, "cols": 5}, {"rows": 130, "cols": 4}]
    out = _check(HERE / "vblur.cu", target, tmp_path, shapes)
    assert out.status == "match", out


@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_half_precision_scalar_is_rounded_like_cuda(target, tmp_path) -> None:
    """``__float2half2_rn(factor)``: the scalar is rounded to fp16 before the product, so the
    port agrees bit for bit with CUDA's half multiply (factor 0.1 is not exact in fp16)."""
    src = CORPUS / "lowp" / "scale_half2.cu"
    point = {"factor": 0.1, "n": 129, "rtol": 0.0, "atol": 0.0}
    out = _check(src, target, tmp_path, [point], own=True)
    assert out.status == "match", out
