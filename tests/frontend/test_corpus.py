"""Every corpus kernel is read by the front end; the refuse/ suite is refused with a C2N1 id."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.frontend import parse_file


def _binding(cu: Path) -> dict:
    toml = cu.with_suffix(".toml")
    if not toml.is_file():
        return {}
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        return {}
    try:
        return tomllib.loads(toml.read_text())
    except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError):
        return {}


ROOT = Path(__file__).resolve().parents[2] / "corpus"
FILES = sorted(ROOT.rglob("*.cu")) if ROOT.is_dir() else []


@pytest.mark.skipif(not FILES, reason="no corpus yet")
@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_corpus_file(path):
    tu = parse_file(path)
    meta = _binding(path)
    if path.parent.name == "refuse" or meta.get("expect") == "refuse":
        assert tu.rejected, "a refuse/ kernel was accepted"
        for ds in tu.rejected.values():
            assert ds and all(d.code.startswith("C2N1") for d in ds)
        if "expect_id" in meta:
            kernel = meta.get("kernel") or next(iter(tu.rejected))
            got = {(d.code, d.loc.line) for d in tu.rejected[kernel]}
            want = (meta["expect_id"], meta.get("expect_line"))
            assert want in got or (want[1] is None and want[0] in {c for c, _ in got}), got
    else:
        assert tu.rejected == {}, [d.render() for d in tu.diagnostics]
        assert tu.kernels, "no kernel found"
        for k in tu.kernels:
            assert not k.template_params, f"{k.name} left uninstantiated"
