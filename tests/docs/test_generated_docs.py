"""The generated tables under docs/ match what the code says (CUDA2NKI_UPDATE_DOCS=1 rewrites)."""

from __future__ import annotations

import os

import pytest

from cuda2nki.docsgen import DOCS, ROOT, generate


@pytest.mark.parametrize("name", sorted(DOCS))
def test_generated_doc_is_current(name: str) -> None:
    path = ROOT / "docs" / name
    text = generate(name)
    if os.environ.get("CUDA2NKI_UPDATE_DOCS") == "1":
        path.write_text(text)
    assert path.is_file(), f"docs/{name} missing: run python -m cuda2nki.docsgen"
    assert path.read_text() == text, (
        f"docs/{name} is stale: run `python -m cuda2nki.docsgen` "
        "(or the tests with CUDA2NKI_UPDATE_DOCS=1)"
    )


def test_tables_have_content() -> None:
    subset = generate("cuda-subset.md")
    assert "| `for_statement` | supported (statement)" in subset
    assert "| `goto_statement` | refused, C2N1011" in subset
    api = generate("nki-api-coverage.md")
    assert "| `nisa.nc_matmul` | implemented | implemented | tensor |" in api
    assert "C2N3001" in api
    idioms = generate("idioms.md")
    assert "| contract | matrix product" in idioms and "`nisa.nc_matmul`" in idioms
    assert generate("rules.md").count("\n## C2N") >= 170
