"""The sandbox reports a port's reads of secrets (process memory and environment, keys) by the
file named, not by text the path happens to contain: a port file called ``member_sum.py`` (its
``__pycache__`` entry is looked up on import) is not ``/proc/N/mem``."""

from __future__ import annotations

import pytest

from cuda2nki.fidelity.sandbox_child import secret_read


@pytest.mark.parametrize(
    "path",
    ["/proc/12/mem", "/proc/self/environ", "/etc/shadow", "/root/.ssh/id_rsa", "/h/u/.aws/creds"],
)
def test_secrets_are_reported(path: str) -> None:
    assert secret_read(path)


@pytest.mark.parametrize(
    "path",
    [
        "/tmp/p/__pycache__/member_sum.cpython-311.pyc",
        "/tmp/p/memset_rows.py",
        "/tmp/environment_maps/port.py",
        "/tmp/p/shadow_copy.py",
    ],
)
def test_paths_that_only_contain_the_text_are_not(path: str) -> None:
    assert not secret_read(path)
