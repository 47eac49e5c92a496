"""Suite-wide set-up: on a host that lacks a layer of the port sandbox, the tests that run ports
(our own corpus ports, not hostile ones) run them as trusted code, and say so once; the hostile-port
tests skip themselves there (tests/fidelity/test_hostile_ports.py)."""

from __future__ import annotations

import pytest


def pytest_report_header(config: pytest.Config) -> str:
    from cuda2nki.fidelity.sandbox import isolation

    missing = isolation().missing
    if not missing:
        return "port sandbox: all layers present"
    return "port sandbox: MISSING " + "; ".join(missing) + " -- corpus ports run as trusted code"


@pytest.fixture(autouse=True)
def _trusted_ports_where_the_sandbox_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    from cuda2nki.fidelity import sandbox

    if sandbox.isolation().missing:
        monkeypatch.setattr(sandbox, "TRUST_BY_DEFAULT", True)
