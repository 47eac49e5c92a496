"""The public Python API: importable from the package, typed, explicit keywords, and the
``cuda2nki.testing`` helper's readable failure text."""

from __future__ import annotations

import inspect
import typing
import warnings
from pathlib import Path

import pytest

import cuda2nki
from cuda2nki import api

ROOT = Path(__file__).resolve().parents[1]
CU = ROOT / "corpus/basic/vector_add.cu"
PORT = ROOT / "corpus/basic/ports/vector_add_port.py"
PUBLIC = ("check", "review", "port", "simulate", "run", "parse")


def test_every_public_name_imports_from_the_package() -> None:
    from cuda2nki import check, parse, port, review, run, simulate  # noqa: F401

    for name in cuda2nki.__all__:
        assert getattr(cuda2nki, name) is not None, name
    assert cuda2nki.review is api.review


@pytest.mark.parametrize("name", PUBLIC)
def test_public_functions_have_explicit_typed_keywords(name: str) -> None:
    fn = getattr(api, name)
    sig = inspect.signature(fn)
    kinds = {p.kind for p in sig.parameters.values()}
    assert inspect.Parameter.VAR_KEYWORD not in kinds, f"{name} hides its options in **kwargs"
    from cuda2nki.fidelity.check import CheckReport
    from cuda2nki.nkisim import SimResult
    from cuda2nki.pipeline import PortResult

    names = {"CheckReport": CheckReport, "PortResult": PortResult, "SimResult": SimResult}
    hints = typing.get_type_hints(fn, localns=names)  # the annotations resolve
    missing = [p for p in sig.parameters if p not in hints]
    assert not missing, f"{name}: parameters without a type hint: {missing}"
    assert hints.get("return") not in (None, typing.Any), f"{name} returns Any"


def test_check_and_review_take_the_same_keywords() -> None:
    check = set(inspect.signature(api.check).parameters)
    review = set(inspect.signature(api.review).parameters)
    assert check <= review and review - check == {"compare"}


def test_port_target_is_a_deprecated_spelling_of_api() -> None:
    with pytest.warns(DeprecationWarning, match="api="):
        old = api.port(CU, target="legacy")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = api.port(CU, api="legacy")
    assert old.source == new.source and "nki.language" in new.source


def test_review_api_renders_markdown_and_html() -> None:
    r = api.review(CU, PORT, seeds=1, compare=False, static_only=True)
    assert r.verdict == "unverified" and r.generated is None
    assert "vector_add" in r.to_markdown()
    assert r.to_html().lstrip().lower().startswith("<!doctype html")


def test_assert_port_matches_passes_and_returns_the_report() -> None:
    from cuda2nki.testing import assert_port_matches

    report = assert_port_matches(CU, PORT, seeds=1)
    assert report.verdict == "pass"


def test_assert_port_matches_failure_text_is_readable(tmp_path: Path) -> None:
    from cuda2nki.testing import assert_port_matches

    wrong = tmp_path / "vector_add_port.py"
    wrong.write_text(PORT.read_text().replace("op=nl.add", "op=nl.subtract"))
    with pytest.raises(AssertionError) as info:
        assert_port_matches(CU, wrong, seeds=1)
    text = str(info.value)
    assert text.startswith(f"port {wrong} (vector_add) does not match CUDA"), text
    assert "verdict fail" in text
    assert "output out, shape N=" in text and "outside tolerance" in text
    assert "Traceback" not in text and "{" not in text.splitlines()[0]


def test_assert_port_matches_fail_on_threshold() -> None:
    from cuda2nki.diagnostics import SourceLoc, make
    from cuda2nki.fidelity.check import CheckReport
    from cuda2nki.testing import failure_text

    warn = make("C2N0008", SourceLoc("k.cu", 3, 5), path="k.toml", kernel="k", known="j")
    report = CheckReport("k.cu", "p.py", "k", "k", "nki", "pass", [], [warn], "binding")
    assert failure_text(report, "error") == failure_text(report, "warning") == ""
    text = failure_text(report, "note")
    assert "k.cu:3:5: note:" in text and "[C2N0008]" in text
