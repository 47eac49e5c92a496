"""A port under review can raise, hang, hog memory, crash or call out: each is reported, nothing leaks."""

from __future__ import annotations

import os
import socket
import subprocess

from cuda2nki.fidelity.sandbox import run_sandboxed


def _ok(x: int) -> int:
    return x + 1


def _raise() -> None:
    raise ValueError("port bug")


def _hang() -> None:
    while True:
        pass


def _hog() -> list[bytearray]:
    blocks = []
    while True:
        blocks.append(bytearray(32 * 1024 * 1024))


def _crash() -> None:
    os.abort()


def _shell() -> int:
    return subprocess.call(["true"])


def _swallowed_shell() -> str:
    try:
        os.system("true")
    except PermissionError:
        pass
    return "done"


def _net() -> None:
    socket.create_connection(("127.0.0.1", 9), timeout=1)


def _env() -> dict[str, str]:
    return dict(os.environ)


def _write_home() -> None:
    with open("/tmp/cuda2nki-sandbox-escape.txt", "w") as fh:
        fh.write("x")


def test_ok_returns_value() -> None:
    r = run_sandboxed(_ok, 41)
    assert r.status == "ok" and r.value == 42 and not r.violations


def test_exception_is_reported_with_line() -> None:
    r = run_sandboxed(_raise, port_file=__file__)
    assert r.status == "error" and "port bug" in r.error
    assert r.line == _raise.__code__.co_firstlineno + 1


def test_hang_times_out() -> None:
    r = run_sandboxed(_hang, timeout=1.0)
    assert r.status == "timeout"


def test_memory_hog_is_stopped() -> None:
    r = run_sandboxed(_hog, memory_mb=600, timeout=20)
    assert r.status in ("memory", "crash")


def test_crash_is_reported() -> None:
    r = run_sandboxed(_crash)
    assert r.status == "crash"


def test_process_creation_and_network_are_blocked() -> None:
    for fn in (_shell, _net):
        r = run_sandboxed(fn)
        assert r.status == "blocked", (fn, r)
        assert r.violations
    r = run_sandboxed(_swallowed_shell)
    assert r.status == "ok" and len(r.violations) == 1 and r.violations[0].startswith("os.system")


def test_environment_is_scrubbed(monkeypatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "hunter2")
    r = run_sandboxed(_env)
    assert r.status == "ok" and "AWS_SECRET_ACCESS_KEY" not in r.value
    assert r.value["HOME"].startswith(r.value["TMPDIR"])


def test_writes_outside_the_sandbox_are_blocked() -> None:
    r = run_sandboxed(_write_home)
    assert r.status == "blocked"
    assert not os.path.exists("/tmp/cuda2nki-sandbox-escape.txt")


def test_time_limit_interrupts_a_long_computation() -> None:
    import time

    import pytest

    from cuda2nki.fidelity.sandbox import TimeLimitExceeded, time_limit

    t0 = time.monotonic()
    with pytest.raises(TimeLimitExceeded):
        with time_limit(0.3):
            while True:
                pass
    assert time.monotonic() - t0 < 5
    with time_limit(5):
        pass  # no alarm left behind
    time.sleep(0.01)
