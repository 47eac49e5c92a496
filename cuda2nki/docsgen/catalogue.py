"""``docs/rules.md``: the diagnostic catalogue, as ``cuda2nki rules --format md`` prints it."""

from __future__ import annotations

from cuda2nki.cli.cmd_rules import render
from cuda2nki.diagnostics import rules
from cuda2nki.rules.examples import EXAMPLES, NO_EXAMPLE


def markdown() -> str:
    table = rules()
    live = [r for r in table.values() if not r.retired]
    head = [
        "# Diagnostic catalogue",
        "",
        "Every problem cuda2nki reports carries one of these ids, printed as "
        "`file:line:col: severity: message [C2Nxxxx]`.  `cuda2nki rules ID` prints one entry "
        "with its runnable example; `cuda2nki rules --format json` the whole catalogue.",
        "",
        f"{len(table)} ids ({len(table) - len(live)} retired); {len(EXAMPLES)} with a runnable "
        f"example that the test suite runs, {len(NO_EXAMPLE)} without one (the reason is given).",
        "",
        "Families: C2N0xxx general, C2N10xx front end, C2N15xx SIMT interpreter, C2N20xx lifter, "
        "C2N24xx tile IR, C2N25xx porting decisions, C2N3xxx NKI simulator, C2N4xxx numerical "
        "fidelity, C2N5xxx port findings.",
        "",
        "| id | severity | title |",
        "|---|---|---|",
    ]
    for r in table.values():
        retired = " (retired)" if r.retired else ""
        head.append(
            f"| [{r.code}](#{_anchor(r.code, r.title)}) | {r.severity}{retired} | {r.title} |"
        )
    return "\n".join(head) + "\n\n" + render(list(table.values()), "md", detail=True) + "\n"


def _anchor(code: str, title: str) -> str:
    text = f"{code}: {title}".lower()
    return "".join(c for c in text.replace(" ", "-") if c.isalnum() or c in "-_")
