"""``migrate --check`` with no sidecars on kernels that index arrays by loaded data: a CSR
sparse matrix-vector product and an open-addressing hash lookup bind from their host code
alone (the index data's values chosen, the hash table as large as its capacity), port, and
compute the same numbers as the CUDA kernel; ``--examine`` puts them in the same bucket."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cuda2nki.batch.migrate import MigrateOptions, migrate

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "gather"
KERNELS = {"csr_spmv_capped": "spmv_csr_capped", "hash_probe_linear": "lookup_linear_probe"}


def _report(out: Path) -> dict:
    data = json.loads((out / "report.json").read_text())
    return {r["kernel"]: r for r in data["kernels"] if r["kernel"]}


@pytest.mark.slow
def test_data_indexed_kernels_bind_port_and_compute_right(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for f in KERNELS:  # the kernels alone: no .toml beside them
        shutil.copy(CORPUS / f"{f}.cu", src / f"{f}.cu")
    out = tmp_path / "out"
    migrate(MigrateOptions(src, out, check=True, timeout=600))
    got = _report(out)
    assert set(got) == set(KERNELS.values())
    for name, r in got.items():
        assert r["binding"] == "inferred" and not r["blocking"], (name, r)
        assert r["status"] in ("automatic", "literal"), (name, r)
        assert r["numerics"] == "pass", (name, r)
    dry = tmp_path / "dry"
    migrate(MigrateOptions(src, dry, mode="examine"))
    assert {k: r["status"] for k, r in _report(dry).items()} == {
        k: r["status"] for k, r in got.items()
    }
