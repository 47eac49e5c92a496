"""Every catalogue example raises its own id when run through the tool."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.cli.main import main
from cuda2nki.diagnostics import rules
from cuda2nki.rules.examples import EXAMPLES, NO_EXAMPLE, render_example, run_example

#: examples that are right but hit a known bug in the tool (id -> the bug); strict: a fix flips it
KNOWN_BUGS: dict[str, str] = {}


def test_every_live_id_has_an_example_or_a_reason() -> None:
    table = rules()
    live = {c for c, r in table.items() if not r.retired}
    missing = sorted(live - set(EXAMPLES) - set(NO_EXAMPLE))
    assert not missing, f"ids with neither an example nor a NO_EXAMPLE reason: {missing}"
    assert not (set(EXAMPLES) & set(NO_EXAMPLE))
    assert set(EXAMPLES) | set(NO_EXAMPLE) <= set(table), "examples for undeclared ids"
    assert all(len(why) > 20 for why in NO_EXAMPLE.values())


@pytest.mark.parametrize("code", sorted(EXAMPLES))
def test_example_raises_its_id(code: str, tmp_path: Path) -> None:
    ex = EXAMPLES[code]
    if not ex.ready():
        pytest.skip(f"needs {ex.requires}")
    out = run_example(ex, tmp_path, main)
    if code in KNOWN_BUGS:
        assert code not in out.ids, f"fixed: remove {code} from KNOWN_BUGS"
        pytest.xfail(KNOWN_BUGS[code])
    assert code in out.ids, out.output[-2000:]
    if ex.exit_code is not None:
        assert out.exit_code == ex.exit_code, out.output[-2000:]


def test_rules_prints_the_runnable_example(capsys) -> None:
    assert main(["rules", "C2N1011"]) == 0
    text = capsys.readouterr().out
    assert "goto out;" in text and "$ cuda2nki parse k.cu" in text
    assert main(["rules", "C2N0005"]) == 0
    assert "no runnable example" in capsys.readouterr().out
    assert render_example(EXAMPLES["C2N3020"]).endswith("(exit code 2)")
