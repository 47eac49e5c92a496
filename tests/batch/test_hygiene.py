"""``migrate`` leaves nothing behind: no process after SIGTERM, SIGINT or kill -9 of the command,
and special files in the input tree (FIFOs, devices, link loops) are reported, never read."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cuda2nki.fidelity import sandbox_reap
from tests.batch.faults import HANG, HANG_TOML, ROOT
from tests.processes import processes_with


def _wait_gone(token: str, seconds: float = 20) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = processes_with(token)
        if not left:
            return []
        time.sleep(0.1)
    return processes_with(token)


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux process semantics")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_stopping_migrate_stops_its_workers(
    tmp_path: Path, sig: signal.Signals, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for i in range(2):  # two workers, each stuck in a kernel the interpreter runs for minutes
        (src / f"hang{i}.cu").write_text(HANG.replace("slow_scale", f"slow_scale{i}"))
        (src / f"hang{i}.toml").write_text(HANG_TOML.replace("slow_scale", f"slow_scale{i}"))
    out = tmp_path / "out"
    tmp = tmp_path / "tmp"  # where the workers' port sandboxes live
    tmp.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp)}
    cmd = [sys.executable, "-m", "cuda2nki.cli.main", "migrate", str(src), "-o", str(out)]
    proc = subprocess.Popen(
        [*cmd, "--check", "--jobs", "2", "--timeout", "600", "-q"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        # Ctrl-C as a terminal delivers it: a test run started as a background job of a
        # non-interactive shell inherits SIGINT ignored, which Python then keeps
        preexec_fn=_sigint_default,
    )
    token = str(tmp_path)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(processes_with(token)) < 3:
            time.sleep(0.1)
        assert len(processes_with(token)) >= 3, "the workers never started"
        while time.monotonic() < deadline and len(list(tmp.iterdir())) < 2:
            time.sleep(0.1)  # each worker's check launches its port's sandbox early
        assert len(list(tmp.iterdir())) >= 2, "the workers never reached their checks"
        time.sleep(0.5)
        proc.send_signal(sig)  # the command only, as `timeout` or a CI runner would
        proc.wait(60)
        assert _wait_gone(token) == [], "a worker outlived migrate"
    finally:
        for pid in processes_with(token):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
    if sig != signal.SIGKILL:
        assert proc.returncode in (128 + int(sig), 130)
        assert not any(tmp.iterdir()), "a worker's sandbox directory outlived migrate"
    else:  # nothing of migrate ran after kill -9: the next sandbox start sweeps what it left
        monkeypatch.setattr(sandbox_reap, "STALE_AFTER_S", 0.0)
        sandbox_reap.sweep(str(tmp))
        assert not any(tmp.iterdir())


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_special_files_in_the_tree_are_reported_not_read(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "vector_add.cu").write_text((ROOT / "corpus/basic/vector_add.cu").read_text())
    os.mkfifo(src / "fifo.cu")
    (src / "zero.cu").symlink_to("/dev/zero")
    (src / "loop.cu").symlink_to(src / "loop.cu")
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "cuda2nki.cli.main", "migrate", str(src), "-o", str(out), "-q"]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    report = json.loads((out / "report.json").read_text())
    failed = {f["file"] for f in report["files"] if f["failed"]}
    assert {"fifo.cu", "zero.cu", "loop.cu"} <= failed
    text = json.dumps(report["kernels"])
    assert "not a regular file" in text and "symbolic links" in text
