"""Leaving nothing behind: the port sandbox's directories and processes, on every exit path.

A sandbox is a job directory ``$TMPDIR/c2n-sandbox-<owner>-<random>`` and a process tree (the
keeper of :mod:`cuda2nki.fidelity.sandbox_keeper`, bubblewrap's monitor, the PID namespace's first
process, the port's interpreter).  :meth:`PortSandbox.close` removes both; when the checker is
killed outright (``kill -9``, a pool worker stopped at its time limit, an out-of-memory kill) the
keeper still stops the processes, but nobody removes the directory.  Hence, here:

* :func:`kill_namespace` -- the sandbox is stopped by killing the first process of its PID
  namespace (the kernel then kills every process in it), found by the pid bubblewrap reports on
  ``--info-fd``, verified through a pidfd and its command line before the signal;
* :func:`kill_marked` -- the fallback: every live process whose command line holds the sandbox's
  unique job directory (bubblewrap binds it by that path);
* :func:`sweep` -- directories of checkers that are gone: the owner (pid, start time and PID
  namespace) is in the directory's name; their processes are killed and the directory removed.
  A sandbox start sweeps now and then (:func:`sweep_now_and_then`, at most every
  :data:`SWEEP_EVERY_S` seconds per process); the batch pool sweeps after each worker it kills.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterable

PREFIX = "c2n-sandbox-"
#: a directory of a checker that is gone is removed once it is this old (seconds)
STALE_AFTER_S = 60.0
#: a directory whose owner is unknown (no owner in its name, or a checker of another PID
#: namespace) is removed once it is this old and no process names it
UNKNOWN_OWNER_AFTER_S = 2 * 3600.0
#: a sandbox start sweeps at most this often per process
SWEEP_EVERY_S = 600.0
_TAGGED = re.compile(re.escape(PREFIX) + r"(\d+)\.(\d+)\.(\d+)-")
_last_sweep: dict[str, float] = {}


# --------------------------------------------------------------------------- owners


def _stat_fields(pid: int | str) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (state first), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    return raw.rsplit(b")", 1)[-1].decode("ascii", "replace").split()


def _pid_namespace() -> int:
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def owner_tag(pid: int | None = None) -> str:
    """``<pid>.<start time in clock ticks>.<PID namespace>`` of this process: unique for its
    lifetime, and a later process with the same pid has another start time."""
    pid = os.getpid() if pid is None else pid
    fields = _stat_fields(pid)
    start = fields[19] if fields and len(fields) > 19 else "0"
    return f"{pid}.{start}.{_pid_namespace()}"


def make_dir() -> str:
    """A new, private sandbox directory under ``$TMPDIR`` named after its owner (this process)."""
    return tempfile.mkdtemp(prefix=f"{PREFIX}{owner_tag()}-")


def _owner_state(name: str) -> str:
    """``alive``, ``gone`` or ``unknown`` for the checker that made directory ``name``."""
    m = _TAGGED.match(name)
    if m is None or int(m.group(3)) != _pid_namespace():
        return "unknown"  # made by an older version, or by a checker we cannot see
    fields = _stat_fields(m.group(1))
    if fields is None or len(fields) <= 19 or fields[0] in ("Z", "X"):
        return "gone"
    return "alive" if fields[19] == m.group(2) else "gone"


# --------------------------------------------------------------------------- processes


def _cmdline(pid: int | str) -> bytes | None:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return None


def _live(pid: int | str) -> bool:
    fields = _stat_fields(pid)
    return bool(fields) and fields[0] not in ("Z", "X")


def marked_processes(markers: Iterable[str]) -> dict[str, list[int]]:
    """Live processes (other than this one) whose command line holds each marker."""
    wanted = {m: m.encode() for m in markers}
    found: dict[str, list[int]] = {m: [] for m in wanted}
    if not wanted or not os.path.isdir("/proc"):
        return found
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        cmd = _cmdline(entry)
        if not cmd:
            continue
        for m, raw in wanted.items():
            if raw in cmd and _live(entry):
                found[m].append(int(entry))
    return found


def _kill_verified(pid: int, check: Callable[[int], bool]) -> bool:
    """SIGKILL ``pid`` if ``check(pid)`` holds for the process the pid names *now* (a pidfd pins
    the process first, so a pid reused in between is never signalled)."""
    pidfd = None
    if hasattr(os, "pidfd_open"):
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            return False  # gone already
    try:
        if not check(pid):
            return False
        if pidfd is not None:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        else:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return True
    finally:
        if pidfd is not None:
            os.close(pidfd)


def kill_marked(marker: str) -> list[int]:
    """SIGKILL every live process whose command line holds ``marker``; their pids."""
    out = []
    for pid in marked_processes([marker])[marker]:
        if _kill_verified(pid, lambda p: marker.encode() in (_cmdline(p) or b"")):
            out.append(pid)
    return out


def namespace_init(info: bytes) -> int | None:
    """The host pid of the PID namespace's first process, from bubblewrap's ``--info-fd``."""
    m = re.search(rb'"child-pid"\s*:\s*(\d+)', info)
    return int(m.group(1)) if m else None


def kill_namespace(init_pid: int, marker: str) -> bool:
    """SIGKILL the sandbox's first process (every process of its PID namespace dies with it),
    after checking that the pid still names a process of this sandbox."""
    return _kill_verified(init_pid, lambda p: marker.encode() in (_cmdline(p) or b""))


# --------------------------------------------------------------------------- directories


def remove_tree(path: str) -> bool:
    """Remove ``path`` whatever the sandbox left in it (directories it made unreadable or
    unwritable are opened up first); True when nothing is left."""

    def opened_up(func: Callable[..., object], p: str, exc: BaseException) -> None:
        if isinstance(exc, FileNotFoundError):
            return
        with contextlib.suppress(OSError):
            parent = os.path.dirname(p)
            os.chmod(parent, stat.S_IRWXU | os.stat(parent).st_mode)
            if os.path.isdir(p) and not os.path.islink(p):
                os.chmod(p, stat.S_IRWXU)
                shutil.rmtree(p, ignore_errors=True)
            else:
                os.unlink(p)

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=opened_up)
    else:  # pragma: no cover - 3.11: the same handler, given (type, value, traceback)
        shutil.rmtree(path, onerror=lambda f, p, info: opened_up(f, p, info[1]))
    return not os.path.lexists(path)


def _stale(path: str, name: str, now: float, owner_pid: int | None) -> bool:
    m = _TAGGED.match(name)
    if owner_pid is not None:
        return m is not None and int(m.group(1)) == owner_pid and _owner_state(name) == "gone"
    try:
        age = now - os.lstat(path).st_mtime
    except OSError:
        return False
    state = _owner_state(name)
    if state == "gone":
        return age >= STALE_AFTER_S
    return state == "unknown" and age >= UNKNOWN_OWNER_AFTER_S


def sweep(tmpdir: str | None = None, *, owner_pid: int | None = None) -> list[str]:
    """Remove the sandbox directories under ``tmpdir`` (default ``$TMPDIR``) whose checker is
    gone, after killing any process still running in them; the paths removed.  ``owner_pid``:
    only that (dead) process's directories, whatever their age (the pool's sweep after it
    killed a worker)."""
    base = tmpdir or tempfile.gettempdir()
    try:
        names = [n for n in os.listdir(base) if n.startswith(PREFIX)]
    except OSError:
        return []
    now = time.time()
    stale = {}
    for name in names:
        path = os.path.join(base, name)
        if os.path.isdir(path) and not os.path.islink(path) and _stale(path, name, now, owner_pid):
            stale[os.path.join(path, "job")] = path
    if not stale:
        return []
    running = marked_processes(stale)
    removed = []
    for marker, path in stale.items():
        if (
            owner_pid is None
            and _owner_state(os.path.basename(path)) == "unknown"
            and running[marker]
        ):
            continue  # an owner we cannot see, with its sandbox running: not ours to judge
        kill_marked(marker)
        if remove_tree(path):
            removed.append(path)
    return removed


def sweep_now_and_then(tmpdir: str | None = None) -> None:
    """:func:`sweep`, unless this process swept ``tmpdir`` in the last :data:`SWEEP_EVERY_S`."""
    base = tmpdir or tempfile.gettempdir()
    now = time.monotonic()
    last = _last_sweep.get(base)
    if last is not None and now - last < SWEEP_EVERY_S:
        return
    _last_sweep[base] = now
    with contextlib.suppress(OSError):
        sweep(base)
