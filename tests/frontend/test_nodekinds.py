"""Every named tree-sitter-cuda node kind has a disposition inside function bodies."""

from __future__ import annotations

import pytest

from cuda2nki.frontend.cst import language
from cuda2nki.frontend.lower import EXPR_HANDLERS, STMT_HANDLERS
from cuda2nki.frontend.nodekinds import REJECTED_KINDS, STRUCTURAL


def _named_kinds() -> set[str]:
    lang = language()
    return {
        lang.node_kind_for_id(i)
        for i in range(lang.node_kind_count)
        if lang.node_kind_is_named(i) and lang.node_kind_is_visible(i)
    }


def test_every_named_kind_is_handled_structural_or_rejected_by_id():
    tables = {
        "stmt": set(STMT_HANDLERS),
        "expr": set(EXPR_HANDLERS),
        "structural": set(STRUCTURAL),
        "rejected": set(REJECTED_KINDS),
    }
    missing = sorted(k for k in _named_kinds() if not any(k in t for t in tables.values()))
    assert missing == [], f"node kinds without a disposition: {missing}"
    # no kind is claimed twice (a handler and a rejection would contradict each other)
    names = list(tables)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert not tables[a] & tables[b], (a, b, tables[a] & tables[b])


def test_rejections_name_declared_frontend_ids():
    from cuda2nki.diagnostics import rules

    table = rules()
    for kind, code in REJECTED_KINDS.items():
        assert code in table and code.startswith("C2N1"), kind


def test_tables_only_name_real_kinds():
    kinds = _named_kinds()
    extra = (set(STMT_HANDLERS) | set(EXPR_HANDLERS) | STRUCTURAL | set(REJECTED_KINDS)) - kinds
    assert extra == set()


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        ("throw 1;", "throw_statement"),
        ("try { p[0] = 1; } catch (...) {}", "try_statement"),
        ("for (float v : arr) p[0] = v;", "for_range_loop"),
        ("p[0] = [](int x) { return x; }(1);", "lambda_expression"),
        ("delete p;", "delete_expression"),
        ("p[0] = offsetof(float2, y);", "offsetof_expression"),
        ("p[0] = _Generic(p[0], float: 1, default: 0);", "generic_expression"),
        ("co_return;", "co_return_statement"),
    ],
)
def test_rejected_kinds_reach_their_diagnostic(parse, body, kind):
    tu = parse("__global__ void k(float* p) {\n    " + body + "\n}\n")
    assert "k" in tu.rejected
    (d,) = [d for d in tu.rejected["k"]][:1]
    assert d.code == REJECTED_KINDS.get(kind, "C2N1010") or d.code == "C2N1001"
    assert d.loc.line == 2


def test_partly_supported_kinds_are_refused_elsewhere() -> None:
    """A partly supported kind is read by a construct's handler in some positions only: where
    it is dispatched on its own it is refused, and the generated subset page says both."""
    from cuda2nki.docsgen.cuda_subset import constructs
    from cuda2nki.frontend.nodekinds import PARTLY_SUPPORTED, REJECTED_KINDS

    assert set(PARTLY_SUPPORTED) <= set(REJECTED_KINDS)
    rows = {kind: (support, note) for kind, support, note in constructs()}
    assert rows["lambda_expression"][0] == "partly supported"
    assert "inlined" in rows["lambda_expression"][1]
