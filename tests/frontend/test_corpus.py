"""Every corpus kernel is read by the front end; the refuse/ suite is refused with a C2N1 id."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.frontend import parse_file

ROOT = Path(__file__).resolve().parents[2] / "corpus"
FILES = sorted(ROOT.rglob("*.cu")) if ROOT.is_dir() else []


@pytest.mark.skipif(not FILES, reason="no corpus yet")
@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_corpus_file(path):
    tu = parse_file(path)
    if path.parent.name == "refuse":
        assert tu.rejected, "a refuse/ kernel was accepted"
        for ds in tu.rejected.values():
            assert ds and all(d.code.startswith("C2N1") for d in ds)
    else:
        assert tu.rejected == {}, [d.render() for d in tu.diagnostics]
        assert tu.kernels, "no kernel found"
        for k in tu.kernels:
            assert not k.template_params, f"{k.name} left uninstantiated"
