"""parse(to_text(ir)) == ir for hand-built and hypothesis-generated IR, locations included."""

import pytest
from hypothesis import HealthCheck, given, settings

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.ir.parser import parse, parse_all
from cuda2nki.ir.printer import to_text

from .strategies import KERNELS

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(KERNELS)
def test_generated_kernels_round_trip(k):
    text = to_text(k)
    assert parse(text) == k, text


def test_parse_all_and_comments():
    text = """
    # two kernels
    kernel a(x: in float32[N], N: int32) @"a.cu":1:1 {
      @2:3 map: x[i] = 1.0 for i < N @2:9;  # a comment
    }
    kernel b() {}
    """
    ks = parse_all(text)
    assert [k.name for k in ks] == ["a", "b"]
    c = ks[0].body[0]
    assert c.loc.file == "a.cu" and c.loc.line == 2 and c.domain.axes[0].loc.col == 9


@pytest.mark.parametrize(
    "text",
    [
        "kernel k( {",
        "kernel k() { map: c[i] = a[i] + for i < N; }",
        "kernel k() { bogus(dst=t[...]); }",
        "kernel k() { memset(dst=t[...], nope=1.0); }",
        "kernel k() { map: c[i] = frobnicate(a[i]) for i < N; }",
        "kernel k() { map: c[i] = reduce(sub2, k < K: a[k]); }",
        "kernel k() {} kernel j() {}",
    ],
)
def test_malformed_text_is_a_diagnostic(text):
    with pytest.raises(DiagnosticError) as exc:
        parse(text, "bad.ir")
    d = exc.value.diagnostic
    assert d.code == "C2N2400" and d.loc.file == "bad.ir" and d.loc.line >= 1


def test_grammar_has_no_lalr_conflicts(caplog):
    import logging

    import lark
    from lark import logger

    from cuda2nki.ir.parser import grammar_text

    old = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        with caplog.at_level(logging.DEBUG, logger="lark"):
            lark.Lark(grammar_text(), parser="lalr", maybe_placeholders=True, debug=True)
    finally:
        logger.setLevel(old)
    assert not [r for r in caplog.records if "conflict" in r.getMessage()]
