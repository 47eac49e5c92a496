"""The diagnostic registry against the source: every id raised is declared, every id declared is
raised or retired, and retired ids stay listed with the reason."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from cuda2nki.diagnostics import rules
from cuda2nki.rules.examples import NO_EXAMPLE

PKG = Path(__file__).resolve().parents[2] / "cuda2nki"
ID = re.compile(r"C2N\d{4}")
NOT_RAISED_YET = "not raised yet"
RETIRED = "retired:"


def _strings(tree: ast.AST) -> tuple[set[str], set[str]]:
    """Ids in string literals: (all of them, those outside docstrings)."""
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            if isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    every, code = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found = set(ID.findall(node.value))
            every |= found
            if id(node) not in docstrings:
                code |= found
    return every, code


def _scan() -> tuple[dict[str, set[str]], set[str]]:
    """Id -> files mentioning it (anywhere in a string), and the ids used outside docstrings."""
    where: dict[str, set[str]] = {}
    used: set[str] = set()
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        if rel.startswith("rules/"):
            continue  # the tables declare ids, the examples quote them
        every, code = _strings(ast.parse(path.read_text(), str(path)))
        for c in every:
            where.setdefault(c, set()).add(rel)
        used |= code
    return where, used


WHERE, USED = _scan()


def test_every_id_in_the_source_is_declared() -> None:
    table = rules()
    undeclared = {c: sorted(files) for c, files in WHERE.items() if c not in table}
    assert not undeclared, f"ids used in the source but not declared: {undeclared}"


def test_every_declared_id_is_raised_or_retired() -> None:
    table = rules()
    unused = sorted(c for c, r in table.items() if not r.retired and c not in USED)
    assert unused == [], (
        "declared ids no code raises: raise them, or retire them (Rule(..., retired=True) with a "
        f"NO_EXAMPLE reason starting '{RETIRED}')"
    )


def test_no_id_is_acknowledged_as_not_raised_yet() -> None:
    pending = sorted(c for c, why in NO_EXAMPLE.items() if why.startswith(NOT_RAISED_YET))
    assert pending == [], f"raise these ids or retire them: {pending}"


def test_retired_ids_stay_listed_with_the_reason() -> None:
    table = rules()
    retired = {c for c, r in table.items() if r.retired}
    for code in retired:
        assert NO_EXAMPLE.get(code, "").startswith(RETIRED), code
        assert "retired" in table[code].explanation.lower(), code
    for code, why in NO_EXAMPLE.items():
        if why.startswith(RETIRED):
            assert code in retired, f"{code} is described as retired but its rule is live"


def test_retired_ids_are_not_raised() -> None:
    retired = {c for c, r in rules().items() if r.retired}
    assert not (retired & USED), sorted(retired & USED)


def test_scanner_sees_ids_outside_docstrings_only() -> None:
    every, code = _strings(
        ast.parse('"""Mentions C2N0001."""\ndef f():\n    """C2N0002"""\n    return "C2N0003"\n')
    )
    assert every == {"C2N0001", "C2N0002", "C2N0003"} and code == {"C2N0003"}
