"""``migrate --check`` with no options and no sidecars on a tree of tiled GEMMs written as a
tutorial series writes them (pointers bumped per K-tile, register tiles, no bounds checks): each
binds from its launcher alone, ports through the contraction recogniser and passes its check;
``--examine`` puts every kernel in the same bucket."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cuda2nki.batch.migrate import MigrateOptions, migrate

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "linalg"
KERNELS = ("sgemm_bumped_smem", "sgemm_bumped_rows", "sgemm_bumped_tile16")


def _report(out: Path) -> dict:
    data = json.loads((out / "report.json").read_text())
    return {r["kernel"]: r for r in data["kernels"] if r["kernel"]}


@pytest.mark.slow
def test_tiled_gemms_bind_port_and_pass_with_no_options(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for k in KERNELS:  # the kernels alone: no .toml beside them
        shutil.copy(CORPUS / f"{k}.cu", src / f"{k}.cu")
    out = tmp_path / "out"
    migrate(MigrateOptions(src, out, check=True, timeout=600))
    got = _report(out)
    assert set(got) == set(KERNELS)
    for name, r in got.items():
        assert r["binding"] == "inferred", (name, r)
        assert r["status"] == "automatic" and r["idiom"] == "contract", (name, r)
        assert r["verdict"] == "pass" and r["numerics"] == "pass", (name, r)
    dry = tmp_path / "dry"
    migrate(MigrateOptions(src, dry, mode="examine"))
    assert {k: r["status"] for k, r in _report(dry).items()} == {
        k: r["status"] for k, r in got.items()
    }
