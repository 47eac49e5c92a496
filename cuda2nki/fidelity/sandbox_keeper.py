"""The keeper: the small process between the checker and bubblewrap that stops the sandbox
when the checker is gone, however it went.

bubblewrap's monitor releases the PID namespace's first process through an eventfd once the
namespaces exist; killed before that write, the monitor leaves that process blocked forever (an
eventfd has no end of file).  Its ``--die-with-parent`` is armed only just before the write, and
a parent-death signal armed any earlier kills the monitor inside that window.  So nothing is tied
to the checker's death by a signal.  The keeper instead watches the checker's *lifeline* (its
standard input, a pipe only the checker holds open, which the kernel closes whatever way the
checker ends) and bubblewrap's exit; when the lifeline closes it kills the namespace's first
process (every process of the namespace dies with it), whose pid bubblewrap reports on
``--info-fd``, and then bubblewrap itself.  Its exit status is bubblewrap's.

A trusted port (no bubblewrap, no PID namespace) runs under the keeper too: the keeper is then a
*child subreaper* (``PR_SET_CHILD_SUBREAPER``), so every process the port starts -- double forks
and ``setsid`` included -- stays its descendant, and all of them are killed when the lifeline
closes or the interpreter exits.

Run as ``python -I -S -c ... MARKER MODE COMMAND...`` (``MARKER``: the sandbox's job directory,
which every process of a bubblewrap sandbox names; ``MODE``: ``bwrap`` or ``trusted``); only the
standard library and :mod:`cuda2nki.fidelity.sandbox_reap` are imported, so it starts in
milliseconds.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import time

from cuda2nki.fidelity import sandbox_reap

#: how long the keeper waits for bubblewrap to exit once its namespace is killed (seconds)
STOP_WAIT_S = 5.0
_POLL_S = 0.1  # without pidfds: how often bubblewrap's exit is looked for


PR_SET_CHILD_SUBREAPER = 36
#: how long the keeper goes on killing a trusted port's processes (a port may keep forking)
KILL_ALL_S = 10.0


def _spawn(argv: list[str], info_w: int | None = None) -> int:
    """Fork and exec ``argv`` (bubblewrap gets ``--info-fd``); standard streams are inherited."""
    if info_w is not None:
        os.set_inheritable(info_w, True)
        argv = [argv[0], "--info-fd", str(info_w), *argv[1:]]
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child execs at once
        try:
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    if info_w is not None:
        os.close(info_w)
    return pid


def _read_all(fd: int) -> bytes:
    """Everything on ``fd`` until its end (bubblewrap writes its info, then closes it; a
    bubblewrap that dies first closes it too)."""
    out = bytearray()
    with contextlib.suppress(OSError):
        while chunk := os.read(fd, 4096):
            out += chunk
    os.close(fd)
    return bytes(out)


def _reaped(pid: int) -> int | None:
    """bubblewrap's wait status once it has exited (reaped), else None."""
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return 0
    return status if done else None


def _wait_for_either(pid: int) -> int | None:
    """Block until bubblewrap exits (its status) or the lifeline closes (None)."""
    watch = select.poll()
    watch.register(0, select.POLLHUP | select.POLLERR)
    pidfd = None
    if hasattr(os, "pidfd_open"):
        with contextlib.suppress(OSError):
            pidfd = os.pidfd_open(pid)
            watch.register(pidfd, select.POLLIN)
    try:
        while True:
            events = watch.poll(None if pidfd is not None else _POLL_S * 1000)
            status = _reaped(pid)
            if status is not None:
                return status
            if any(fd == 0 for fd, _ in events):
                return None
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _stop(pid: int, init: int | None, marker: str) -> int:
    """Kill the namespace (by its first process), then bubblewrap if it lingers; its status."""
    if init is not None:
        sandbox_reap.kill_namespace(init, marker)
    end = time.monotonic() + STOP_WAIT_S
    while (status := _reaped(pid)) is None and time.monotonic() < end:
        time.sleep(0.01)
    if status is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)  # our unreaped child: the pid cannot name another
        status = os.waitpid(pid, 0)[1]
    if init is None:
        sandbox_reap.kill_marked(marker)  # bubblewrap never said which pid that was
    return status


def _become_subreaper() -> None:
    """Orphans of our descendants are reparented to us, not to init (Linux; else nothing)."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _children() -> list[int]:
    """This process's live children (orphans reparented to us included), from ``/proc``."""
    me, out = str(os.getpid()), []
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            fields = sandbox_reap._stat_fields(entry) if entry.isdigit() else None
            if fields and len(fields) > 1 and fields[1] == me and fields[0] not in ("Z", "X"):
                out.append(int(entry))
    return out


def _kill_all(main_pid: int, status: int | None) -> int:
    """SIGKILL every descendant (they are our children, or become ours as their parents die)
    until none is left; the main child's status (``status`` when it was reaped already)."""
    end = time.monotonic() + KILL_ALL_S
    while time.monotonic() < end:
        for pid in _children():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)  # a child, not reaped yet: its pid is its own
        try:
            pid, st = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break  # no child at all
        if pid == main_pid:
            status = st
        if pid == 0:
            time.sleep(0.005)
    return 0 if status is None else status


def _exit_as(status: int) -> None:
    """End this process the way bubblewrap ended (its exit code, or its signal)."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def main(argv: list[str]) -> None:
    marker, mode, cmd = argv[0], argv[1], argv[2:]
    if mode == "trusted":
        _become_subreaper()
        pid = _spawn(cmd)
        _exit_as(_kill_all(pid, _wait_for_either(pid)))
    info_r, info_w = os.pipe()
    pid = _spawn(cmd, info_w)
    init = sandbox_reap.namespace_init(_read_all(info_r))
    status = _wait_for_either(pid)
    if status is None:
        status = _stop(pid, init, marker)
    _exit_as(status)


def command(
    package_root: str, marker: str, argv: list[str], python: str, *, trusted: bool = False
) -> list[str]:
    """The keeper's command line, running ``argv``: bubblewrap (without ``--info-fd``) for the
    sandbox whose job directory is ``marker``, or a trusted interpreter."""
    code = (
        f"import sys; sys.path.insert(0, {package_root!r}); "
        "from cuda2nki.fidelity.sandbox_keeper import main; main(sys.argv[1:])"
    )
    mode = "trusted" if trusted else "bwrap"
    return [python, "-I", "-S", "-c", code, marker, mode, *argv]
