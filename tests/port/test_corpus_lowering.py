"""How each corpus kernel ports: through a recogniser (its idiom), literally (and why), or not
at all.  A recogniser or pass that starts raising turns a recognised port into a literal one;
this test catches it, where the tests that check recognised ports would merely skip the kernel.
Slow tier (it ports the whole corpus).  Regenerate the expected list with
``CUDA2NKI_UPDATE_GOLDEN=1 pytest -m slow tests/port/test_corpus_lowering.py`` and review it."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from cuda2nki.pipeline import PortResult, port_file

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
EXPECTED = Path(__file__).with_name("corpus_lowering.json")
UPDATE = os.environ.get("CUDA2NKI_UPDATE_GOLDEN") == "1"
_WHY = re.compile(r"ported literally: (?P<why>.*?); threads of a block")


def _corpus() -> list[str]:
    return [f"{cu.parent.name}/{cu.stem}" for cu in sorted(CORPUS.glob("*/*.cu"))]


def lowering(res: PortResult) -> str:
    """``recognised: IDIOM``, ``literal: WHY`` (the C2N2300 warning's reason) or ``refused``."""
    if res.source is None:
        return "refused"
    if not res.literal:
        return f"recognised: {res.idiom}"
    whys = [
        m["why"]
        for d in res.diagnostics
        if d.code == "C2N2300"
        for m in [_WHY.search(d.message)]
        if m
    ]
    return f"literal: {whys[0] if whys else '(no C2N2300 warning)'}"


def _expected() -> dict[str, str]:
    return json.loads(EXPECTED.read_text()) if EXPECTED.exists() else {}


def _record(rel: str, got: str) -> None:
    table = _expected()
    table[rel] = got
    known = set(_corpus())
    table = {k: v for k, v in sorted(table.items()) if k in known}
    EXPECTED.write_text(json.dumps(table, indent=1) + "\n")


def test_the_list_names_every_corpus_kernel() -> None:
    if UPDATE:
        pytest.skip("being regenerated")
    assert sorted(_expected()) == _corpus(), "run with CUDA2NKI_UPDATE_GOLDEN=1 and review"


@pytest.mark.slow
@pytest.mark.parametrize("rel", _corpus())
def test_corpus_kernel_ports_as_pinned(rel: str) -> None:
    res = port_file(CORPUS / f"{rel}.cu")
    got = lowering(res)
    if UPDATE:
        _record(rel, got)
    want = _expected().get(rel)
    assert want is not None, f"{rel} is not listed: run with CUDA2NKI_UPDATE_GOLDEN=1"
    causes = [d.render() for d in res.diagnostics if d.code in ("C2N2300", "C2N2512")]
    assert got == want, "\n".join([f"{rel} now ports as {got!r}, pinned {want!r}", *causes])
    if res.literal:  # a literal port always says so, and why
        assert any(d.code == "C2N2300" for d in res.diagnostics)


@pytest.mark.parametrize("rel", ["basic/saxpy", "linalg/gemv", "norm/softmax_naive"])
def test_a_pass_that_raises_is_named_where_the_port_falls_back(rel: str, monkeypatch) -> None:
    from cuda2nki.diagnostics import Severity
    from cuda2nki.passes.common_tiles import CommonTilesPass

    def boom(self, kernel, ctx):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(CommonTilesPass, "run", boom)
    res = port_file(CORPUS / f"{rel}.cu")
    assert res.source is not None and res.literal
    (note,) = [d for d in res.diagnostics if d.code == "C2N2512"]
    assert note.severity == Severity.NOTE and note.loc.line > 0
    assert "'common-tiles'" in note.message and "simulated bug" in note.message
    # the literal lowering's warning says which pass it replaced, not only that one failed
    assert lowering(res).startswith("literal: the recognised form could not be scheduled")
    assert "(C2N2512: pass 'common-tiles' failed: RuntimeError: simulated bug)" in lowering(res)
