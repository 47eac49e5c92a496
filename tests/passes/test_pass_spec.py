"""The pass registry and the ``-p name,name{opt=v}`` pipeline syntax."""

from __future__ import annotations

import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.passes import DEFAULT_PIPELINE, all_passes, parse_pipeline
from cuda2nki.passes.base import split_spec


def test_registry_names_match_pass_names() -> None:
    for key, factory in all_passes().items():
        assert factory().name == key


def test_default_pipeline_parses() -> None:
    names = [p.name for p in parse_pipeline(None)]
    assert ",".join(names) == DEFAULT_PIPELINE
    # intent clean-ups first, then guards become domains before any layout is chosen
    assert names[:8] == [
        "fold-peeled",
        "drop-identities",
        "unit-reductions",
        "split-sums",
        "factor-scales",
        "dead-stores",
        "hoist-guards",
        "guards-to-domains",
    ]
    # sizes fold last, over everything the scheduling passes built
    assert names[-1] == "fold-sizes"
    # loads hoisted out of a loop then serve the loops after it (the ragged tails)
    assert names.index("hoist-loads") < names.index("dedupe-loads")
    assert names.index("merge-lanes") < names.index("choose-layout")


def test_options_are_typed() -> None:
    (p,) = parse_pipeline("tile-sizes{free=2048,partitions=64}")
    assert (p.free, p.partitions) == (2048, 64)
    assert p.spec() == "tile-sizes{partitions=64,free=2048,moving=512}"


def test_split_spec() -> None:
    assert split_spec("a, b{x=1, y=z},c") == [("a", {}), ("b", {"x": "1", "y": "z"}), ("c", {})]


@pytest.mark.parametrize(
    "spec,needle",
    [
        ("no-such-pass", "unknown pass"),
        ("tile-sizes{bogus=1}", "no option"),
        ("tile-sizes{free=abc}", "not a int"),
        ("tile-sizes{free}", "needs a value"),
        ("tile-sizes{{", "cannot parse"),
    ],
)
def test_bad_specs_are_c2n0002(spec: str, needle: str) -> None:
    with pytest.raises(DiagnosticError) as exc:
        parse_pipeline(spec)
    assert exc.value.diagnostic.code == "C2N0002"
    assert needle in exc.value.diagnostic.message
