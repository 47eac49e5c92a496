"""The port sandbox leaves nothing behind -- no directory, no process -- on every exit path: a
close at any moment of its start-up, a failing start, a checker killed outright (its leftovers
are swept at the next start), a pool worker killed at its time limit, hostile ports."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from cuda2nki.batch.pool import run_tasks
from cuda2nki.fidelity import sandbox, sandbox_keeper, sandbox_reap
from cuda2nki.fidelity.sandbox import PortSandbox, isolation
from tests.processes import processes_with

ROOT = Path(__file__).resolve().parents[2]
PORT = ROOT / "corpus/basic/ports/vector_add_port.py"
SWEEP_NOW_AND_THEN = sandbox_reap.sweep_now_and_then
needs_sandbox = pytest.mark.skipif(
    bool(isolation().missing) or not sys.platform.startswith("linux"),
    reason=f"sandbox layers missing: {isolation().missing}",
)


def _runs(n: int = 300) -> list[list[dict]]:
    a = np.arange(n, dtype=np.float32)
    return [[{"a": a, "b": a * 2}]]


def _gone(token: str, seconds: float = 10.0) -> list[int]:
    """The processes naming ``token`` still alive after waiting up to ``seconds``."""
    end = time.monotonic() + seconds
    while (left := processes_with(token)) and time.monotonic() < end:
        time.sleep(0.05)
    return left


@pytest.fixture
def tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private $TMPDIR (the sandbox's directories are counted there); no periodic sweep."""
    d = tmp_path / "tmp"
    d.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    monkeypatch.setattr(sandbox_reap, "sweep_now_and_then", lambda tmpdir=None: None)
    yield d
    for pid in processes_with(str(d)):  # never leave a leak of a failing test running
        os.kill(pid, signal.SIGKILL)


def _busy(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


@needs_sandbox
def test_a_close_at_any_moment_of_start_up_stops_every_process(tmp: Path) -> None:
    """bubblewrap arms --die-with-parent in its namespace's first process only once the mounts
    are made: a close that killed only the monitor before then left that process and the port's
    interpreter running forever (reparented to init, waiting for a job)."""
    for i in range(30):
        box = PortSandbox(str(PORT), "vector_add")
        box.launch()
        _busy(i / 1000)  # 0 to 29 ms: every stage of bubblewrap's start-up
        box.close()
    assert _gone(str(tmp), 3.0) == []
    assert not any(tmp.iterdir())


@needs_sandbox
def test_a_start_that_fails_inside_with_leaves_nothing(tmp: Path) -> None:
    """The job is refused after the sandbox was launched; ``__exit__`` does not run when
    ``__enter__`` raises, so the sandbox must clean up itself."""
    with pytest.raises(TypeError), PortSandbox(str(PORT), "vector_add", [[{"a": "text"}]]):
        pass
    assert not any(tmp.iterdir()), list(tmp.iterdir())
    assert _gone(str(tmp)) == []


@needs_sandbox
def test_a_launch_that_fails_leaves_nothing(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_process(*args: object, **kwargs: object) -> None:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(subprocess, "Popen", no_process)
    box = PortSandbox(str(PORT), "vector_add", _runs())
    with pytest.raises(BlockingIOError):
        box.launch()
    assert not any(tmp.iterdir()), list(tmp.iterdir())
    assert box._stdout.closed and box._stderr.closed


_CHECKER = """
import os, sys, time, tempfile
import numpy as np
sys.path.insert(0, {root!r})
tempfile.tempdir = {tmp!r}
from cuda2nki.fidelity import sandbox
from cuda2nki.fidelity.sandbox import PortSandbox
if {trusted!r}:
    sandbox.isolation = lambda: sandbox.Isolation(None, None, False, False, 'none')
box = PortSandbox({port!r}, 'vector_add', trust={trusted!r})
box.launch()
if {submit!r}:  # wait until the port runs
    a = np.arange(300, dtype=np.float32)
    box.submit([[{{'a': a, 'b': a}}]])
    ready = box._dir + '/job/out/ready'
    while box._proc.poll() is None and not os.path.exists(ready):
        time.sleep(0.01)
print(box._proc.pid, flush=True)
time.sleep(600)
"""


def _checker(tmp: Path, port: Path, *, trusted: bool = False, submit: bool = False) -> tuple:
    code = _CHECKER.format(
        root=str(ROOT), tmp=str(tmp), port=str(port), trusted=trusted, submit=submit
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    line = proc.stdout.readline()
    assert line.strip().isdigit(), "the checker did not start its sandbox"
    return proc, int(line)


@needs_sandbox
def test_a_checker_killed_outright_is_swept_at_the_next_start(
    tmp: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = tmp_path / "sleepy.py"
    port.write_text(PORT.read_text().replace("    (N,) = a.shape\n", "    time.sleep(600)\n"))
    port.write_text("import time\n" + port.read_text())
    proc, _ = _checker(tmp, port, submit=True)  # its port sleeps
    proc.kill()
    proc.wait()
    assert _gone(str(tmp)) == [], "the sandbox outlived its checker"
    (left,) = tmp.iterdir()  # nobody could remove it: the next sandbox start does
    monkeypatch.setattr(sandbox_reap, "sweep_now_and_then", SWEEP_NOW_AND_THEN)
    monkeypatch.setattr(sandbox_reap, "STALE_AFTER_S", 0.0)
    monkeypatch.setattr(sandbox_reap, "_last_sweep", {})
    with PortSandbox(str(PORT), "vector_add", _runs()) as box:
        assert box.result(0).status == "ok"
        assert not left.exists()
    assert not any(tmp.iterdir())


@needs_sandbox
@pytest.mark.parametrize("trusted", [False, True], ids=["sandboxed", "trusted"])
def test_a_sandbox_waiting_for_its_job_ends_with_its_checker(
    tmp: Path, trusted: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checker is killed while the sandbox still waits for its job (the window in which
    bubblewrap's own parent-death signal may not be armed yet; a trusted child has none)."""
    proc, pid = _checker(tmp, PORT, trusted=trusted)
    proc.kill()
    proc.wait()
    assert _gone(str(tmp)) == []
    if trusted:  # the trusted child's command line names its job directory, not $TMPDIR
        with pytest.raises(ProcessLookupError):
            for _ in range(100):
                os.kill(pid, 0)
                time.sleep(0.05)
    monkeypatch.setattr(sandbox_reap, "STALE_AFTER_S", 0.0)
    (left,) = tmp.iterdir()
    assert sandbox_reap.sweep(str(tmp)) == [str(left)]


_SELF_KILLER = """
import os, signal, sys, tempfile, threading
sys.path.insert(0, {root!r})
tempfile.tempdir = {tmp!r}
from cuda2nki.fidelity.sandbox import PortSandbox
boxes = [PortSandbox({port!r}, 'vector_add') for _ in range(24)]
threads = [threading.Thread(target=b.launch) for b in boxes]
for t in threads:
    t.start()
for t in threads:
    t.join()
os.kill(os.getpid(), signal.SIGKILL)  # while the last monitors still start
"""


@needs_sandbox
def test_a_checker_killed_at_any_moment_of_start_up_leaves_no_process(tmp: Path) -> None:
    """The checker dies while its sandboxes start: bubblewrap's namespace blocks on an eventfd
    until the monitor releases it, so a monitor killed before that (a parent-death signal armed
    before its exec) left that process waiting forever."""
    code = _SELF_KILLER.format(root=str(ROOT), tmp=str(tmp), port=str(PORT))
    for _ in range(3):
        subprocess.run([sys.executable, "-c", code], check=False, timeout=120)
    assert _gone(str(tmp), 20.0) == []


def test_the_child_stops_waiting_when_the_checker_closes_its_lifeline(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "from cuda2nki.fidelity.sandbox_child import _wait_for_job\n"
        f"_wait_for_job({str(tmp_path / 'job.json')!r})\n"
    )
    read, write = os.pipe()
    child = subprocess.Popen([sys.executable, "-c", code], stdin=read)
    os.close(read)
    time.sleep(0.5)
    assert child.poll() is None  # waiting
    os.close(write)
    assert child.wait(10) == 0


def _sandbox_then_hang(payload: str) -> None:
    box = PortSandbox(str(PORT), "vector_add")
    box.launch()
    time.sleep(600)


@needs_sandbox
def test_a_pool_worker_killed_at_its_time_limit_leaves_no_sandbox(tmp: Path) -> None:
    (out,) = run_tasks(_sandbox_then_hang, [("k", "")], jobs=1, timeout=3)
    assert out.status == "timeout"
    assert _gone(str(tmp)) == []
    assert not any(tmp.iterdir()), list(tmp.iterdir())


# --------------------------------------------------------------------------- hostile ports

HOSTILE = {
    "sleeps": "time.sleep(600)",
    "ignores_sigterm": "signal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(600)",
    "setsid_then_forks": "os.setsid()\nif os.fork() == 0:\n    time.sleep(600)\ntime.sleep(600)",
    "double_fork": "if os.fork() == 0:\n    if os.fork() == 0:\n        time.sleep(600)\n"
    "    os._exit(0)\ntime.sleep(600)",
    "thread_sleeps": "threading.Thread(target=time.sleep, args=(600,)).start()\ntime.sleep(600)",
    "spins": "while True:\n    pass",
}


def _hostile(tmp_path: Path, name: str) -> Path:
    body = "".join(f"    {line}\n" for line in HOSTILE[name].splitlines())
    port = tmp_path / "hostile.py"
    port.write_text(
        "import os, signal, threading, time\n"
        + PORT.read_text().replace("    (N,) = a.shape\n", body + "    (N,) = a.shape\n")
    )
    return port


@needs_sandbox
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_no_process_of_a_hostile_port_survives_its_sandbox(
    name: str, tmp: Path, tmp_path: Path
) -> None:
    with PortSandbox(str(_hostile(tmp_path, name)), "vector_add", _runs(), timeout=2) as box:
        res = box.result(0)
    assert res.status in ("timeout", "blocked"), (res.status, res.error)
    assert _gone(str(tmp), 3.0) == []
    assert not any(tmp.iterdir())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux processes")
@pytest.mark.parametrize("name", ["setsid_then_forks", "double_fork"])
def test_a_trusted_port_without_seccomp_cannot_leave_processes_behind(
    name: str, tmp: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No PID namespace and no seccomp filter: the port may fork and setsid, but the keeper is
    a child subreaper, so every process it starts is killed with the sandbox."""
    bare = sandbox.Isolation(None, None, False, False, "none")
    monkeypatch.setattr(sandbox, "isolation", lambda: bare)
    port = _hostile(tmp_path, name)
    with PortSandbox(str(port), "vector_add", _runs(), timeout=2, trust=True) as box:
        res = box.result(0)
        assert res.status == "timeout", (res.status, res.error)
    assert _gone(str(tmp), 5.0) == []
    assert not any(tmp.iterdir())


# --------------------------------------------------------------------------- the sweep


def _stale_dir(tmp: Path, owner: str) -> Path:
    d = tmp / f"{sandbox_reap.PREFIX}{owner}-abc"
    (d / "job" / "out").mkdir(parents=True)
    (d / "port.py").write_text("")
    return d


def test_the_sweep_removes_only_directories_whose_checker_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox_reap, "STALE_AFTER_S", 0.0)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    start_and_ns = sandbox_reap.owner_tag().split(".", 1)[1]
    gone = _stale_dir(tmp_path, f"{dead.pid}.{start_and_ns}")
    mine = _stale_dir(tmp_path, sandbox_reap.owner_tag())
    legacy = _stale_dir(tmp_path, "x1y2z3")  # made before owners were recorded
    other = tmp_path / "c2n-variant-abc"  # not a sandbox directory
    other.mkdir()
    # a process still running in the dead checker's sandbox is killed first
    runner = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", str(gone / "job")]
    )
    keeper = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", str(mine / "job")]
    )
    try:
        assert sandbox_reap.sweep(str(tmp_path)) == [str(gone)]
        assert runner.wait(10) == -signal.SIGKILL
        assert keeper.poll() is None
        assert mine.exists() and legacy.exists() and other.exists()
        old = time.time() - sandbox_reap.UNKNOWN_OWNER_AFTER_S - 1
        os.utime(legacy, (old, old))
        assert sandbox_reap.sweep(str(tmp_path)) == [str(legacy)]
        assert sandbox_reap.remove_tree(str(mine))
    finally:
        keeper.kill()
        runner.kill()


def test_the_sweep_spares_a_young_directory_of_a_dead_checker(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    tag = sandbox_reap.owner_tag().split(".", 1)[1]
    d = _stale_dir(tmp_path, f"{dead.pid}.{tag}")
    assert sandbox_reap.sweep(str(tmp_path)) == []
    assert sandbox_reap.sweep(str(tmp_path), owner_pid=dead.pid) == [str(d)]


def test_directories_are_named_after_their_owner(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    d = Path(sandbox_reap.make_dir())
    assert d.name.startswith(f"{sandbox_reap.PREFIX}{sandbox_reap.owner_tag()}-")
    assert sandbox_reap._owner_state(d.name) == "alive"
    d.rmdir()


def test_bubblewrap_reports_the_namespace_s_first_process() -> None:
    argv = sandbox_keeper.command("/pkg", "/job-on-host", ["/bin/bwrap", "--", "x"], "/py")
    assert argv[:3] == ["/py", "-I", "-S"]
    assert argv[-5:] == ["/job-on-host", "bwrap", "/bin/bwrap", "--", "x"]
    assert sandbox_reap.namespace_init(b'{\n    "child-pid": 4242,\n "net-namespace": 1\n}') == 4242
    assert sandbox_reap.namespace_init(b"") is None


#: stands in for bubblewrap: starts a "first process" naming the marker, reports its pid on
#: --info-fd, then exits 3 when that process ended well, 4 when not
_FAKE_BWRAP = """#!{python}
import os, subprocess, sys
fd = int(sys.argv[sys.argv.index('--info-fd') + 1])
code = 'import sys, time; time.sleep(float(sys.argv[1]))'
init = subprocess.Popen([sys.executable, '-c', code, sys.argv[-1], {marker!r}])
os.write(fd, b'{{"child-pid": %d}}' % init.pid)
os.close(fd)
sys.exit(3 if init.wait() == 0 else 4)
"""


def _keeper(tmp_path: Path, seconds: str) -> tuple[subprocess.Popen, int, str]:
    marker = str(tmp_path / "job-marker")
    fake = tmp_path / "bwrap"
    fake.write_text(_FAKE_BWRAP.format(python=sys.executable, marker=marker))
    fake.chmod(0o755)
    read, write = os.pipe()
    argv = sandbox_keeper.command(str(ROOT), marker, [str(fake), seconds], sys.executable)
    keeper = subprocess.Popen(argv, stdin=read, start_new_session=True)
    os.close(read)
    return keeper, write, marker


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux processes")
def test_the_keeper_stops_the_namespace_when_the_lifeline_closes(tmp_path: Path) -> None:
    keeper, lifeline, marker = _keeper(tmp_path, "600")
    try:
        deadline = time.monotonic() + 20
        while not processes_with(marker + "\x00") and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        assert keeper.poll() is None  # bubblewrap runs while the checker is there
        os.close(lifeline)
        assert keeper.wait(20) == 4  # its first process was killed
        assert _gone(marker) == []
    finally:
        keeper.kill()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux processes")
def test_the_keeper_exits_as_bubblewrap_did(tmp_path: Path) -> None:
    keeper, lifeline, _ = _keeper(tmp_path, "0")
    try:
        assert keeper.wait(20) == 3  # the stand-in's status: the first process exited 0
    finally:
        os.close(lifeline)
        keeper.kill()


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0 or not os.path.exists("/usr/bin/setpriv"),
    reason="needs root to act as an unprivileged user",
)
def test_what_the_port_made_unreadable_is_removed_too() -> None:
    """An unprivileged checker (user-namespace mode) owns what the port wrote, but a directory
    the port made unreadable or unwritable stops a plain recursive removal."""
    base = tempfile.mkdtemp(prefix="c2n-remove-", dir="/tmp")
    try:
        os.chmod(base, 0o755)
        tree = Path(base) / "sandbox"
        for sub, mode in (("locked", 0o000), ("readonly", 0o500), ("plain", 0o700)):
            d = tree / "job" / "out" / sub
            d.mkdir(parents=True)
            (d / "f").write_bytes(b"x")
            os.chmod(d, mode)
        for p in [Path(base), tree, *tree.rglob("*")]:
            os.lchown(p, sandbox.NOBODY, sandbox.NOBODY)
        code = (
            f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
            "from cuda2nki.fidelity.sandbox_reap import remove_tree\n"
            f"sys.exit(0 if remove_tree({str(tree)!r}) else 1)\n"
        )
        as_nobody = ["/usr/bin/setpriv", f"--reuid={sandbox.NOBODY}", f"--regid={sandbox.NOBODY}"]
        done = subprocess.run([*as_nobody, "--clear-groups", sys.executable, "-c", code])
        assert done.returncode == 0
        assert not tree.exists()
    finally:
        subprocess.run(["chmod", "-R", "u+rwx", base], check=False)
        import shutil

        shutil.rmtree(base, ignore_errors=True)
