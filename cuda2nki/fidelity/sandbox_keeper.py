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

Run as ``python -I -S -c ... MARKER BWRAP ARGS...`` (``MARKER``: the sandbox's job directory,
which every process of the sandbox names); only the standard library and
:mod:`cuda2nki.fidelity.sandbox_reap` are imported, so it starts in milliseconds.
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


def _spawn(argv: list[str], info_w: int) -> int:
    """Fork and exec bubblewrap with ``--info-fd``; standard streams are inherited."""
    os.set_inheritable(info_w, True)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child execs at once
        try:
            os.execv(argv[0], [argv[0], "--info-fd", str(info_w), *argv[1:]])
        finally:
            os._exit(127)
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


def _exit_as(status: int) -> None:
    """End this process the way bubblewrap ended (its exit code, or its signal)."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def main(argv: list[str]) -> None:
    marker, bwrap = argv[0], argv[1:]
    info_r, info_w = os.pipe()
    pid = _spawn(bwrap, info_w)
    init = sandbox_reap.namespace_init(_read_all(info_r))
    status = _wait_for_either(pid)
    if status is None:
        status = _stop(pid, init, marker)
    _exit_as(status)


def command(package_root: str, marker: str, bwrap_argv: list[str], python: str) -> list[str]:
    """The keeper's command line, running bubblewrap as ``bwrap_argv`` (without
    ``--info-fd``) for the sandbox whose job directory is ``marker``."""
    code = (
        f"import sys; sys.path.insert(0, {package_root!r}); "
        "from cuda2nki.fidelity.sandbox_keeper import main; main(sys.argv[1:])"
    )
    return [python, "-I", "-S", "-c", code, marker, *bwrap_argv]
