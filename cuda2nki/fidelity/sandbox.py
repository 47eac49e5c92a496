"""Running someone else's Python (a port under review) without trusting it.

The port runs in a forked child process with a wall-clock timeout, an address-space limit
(``RLIMIT_AS``), a CPU-time limit, a scrubbed environment (no inherited secrets: only ``PATH``,
``LANG`` and a private ``HOME``/``TMPDIR``), and an audit hook that refuses process creation,
network access, file deletion and writes outside its temporary directory.  Whatever the port
does -- raise, hang, allocate without bound, crash the interpreter, call out to the system -- the
parent gets a :class:`SandboxResult` saying so; cuda2nki itself never goes down with it.
"""

from __future__ import annotations

import contextlib
import faulthandler
import multiprocessing as mp
import os
import pickle
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

try:
    import resource
except ImportError:  # pragma: no cover - non-POSIX
    resource = None  # type: ignore[assignment]

#: audit events a port may not raise (the first argument is shown in the report)
BLOCKED_EVENTS = frozenset(
    {
        "os.system",
        "subprocess.Popen",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "pty.spawn",
        "socket.connect",
        "socket.bind",
        "socket.sendto",
        "socket.getaddrinfo",
        "os.remove",
        "os.rmdir",
        "os.rename",
        "shutil.rmtree",
        "os.kill",
        "os.killpg",
        "ctypes.dlopen",
        "webbrowser.open",
    }
)
_KEEP_ENV = ("PATH", "LANG", "LC_ALL")


@dataclass(frozen=True)
class SandboxResult:
    status: str  # ok | error | timeout | memory | crash | blocked
    value: Any = None
    error: str = ""
    line: int | None = None  # port line of the failure, when it is in the port's file
    violations: tuple[str, ...] = ()
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


def _scrub_env(tmp: str) -> None:
    keep = {k: os.environ[k] for k in _KEEP_ENV if k in os.environ}
    os.environ.clear()
    os.environ.update(keep)
    os.environ.update({"HOME": tmp, "TMPDIR": tmp, "PYTHONDONTWRITEBYTECODE": "1"})


def _installed_library(args: tuple[Any, ...]) -> bool:
    path = args[0] if args else None
    if path is None:
        return True  # the running process itself
    name = os.fsdecode(path)
    if not os.path.isabs(name):
        return False
    real = os.path.realpath(name)
    roots = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    return any(real.startswith(r + os.sep) for r in roots)


def _install_guard(tmp: str, violations: list[str]) -> None:
    tmp_real = os.path.realpath(tmp)

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "ctypes.dlopen" and _installed_library(args):
            return  # the simulator's own libraries (e.g. BLAS thread control) load from site-packages
        if event in BLOCKED_EVENTS:
            what = f"{event}({args[0]!r})" if args else event
            violations.append(what)
            raise PermissionError(f"cuda2nki sandbox: {what} is not allowed in a port under review")
        if event == "open" and args and isinstance(args[0], str | bytes) and len(args) > 1:
            mode = args[1] if isinstance(args[1], str) else ""
            if any(c in mode for c in "wax+"):
                path = os.path.realpath(os.fsdecode(args[0]))
                if not path.startswith(tmp_real):
                    what = f"open({os.fsdecode(args[0])!r}, {mode!r})"
                    violations.append(what)
                    raise PermissionError(
                        f"cuda2nki sandbox: writing {path} is not allowed in a port under review"
                    )

    sys.addaudithook(hook)


def _limit(memory_mb: int | None, cpu_s: float | None) -> None:
    if resource is None:
        return
    for which, soft in (
        (resource.RLIMIT_AS, memory_mb * 1024 * 1024 if memory_mb else None),
        (resource.RLIMIT_CPU, int(cpu_s) + 1 if cpu_s else None),
    ):
        if soft is None:
            continue
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:  # never above a limit the parent already set
            soft = min(soft, hard)
        try:
            resource.setrlimit(which, (soft, hard if hard != resource.RLIM_INFINITY else soft))
        except (ValueError, OSError):
            pass


def failure_line(exc: BaseException, port_file: str | None) -> int | None:
    """The innermost line of ``port_file`` in the exception's traceback."""
    if not port_file:
        return None
    real = os.path.realpath(port_file)
    line = None
    for fr in traceback.extract_tb(exc.__traceback__):
        if os.path.realpath(fr.filename) == real:
            line = fr.lineno
    return line


def _child(
    conn: Any,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    memory_mb: int | None,
    cpu_s: float | None,
    port_file: str | None,
) -> None:
    tmp = tempfile.mkdtemp(prefix="c2n-sandbox-")
    faulthandler.disable()  # a port that crashes the interpreter is reported, not dumped
    sys.dont_write_bytecode = True
    _scrub_env(tmp)
    violations: list[str] = []
    _limit(memory_mb, cpu_s)
    _install_guard(tmp, violations)
    t0 = time.perf_counter()
    try:
        value = fn(*args)
        msg = ("ok", value, "", None)
    except MemoryError:
        msg = ("memory", None, f"the port exceeded the memory limit of {memory_mb} MB", None)
    except BaseException as exc:  # noqa: BLE001 - everything the port raises is reported
        status = "blocked" if violations else "error"
        msg = (status, None, _describe(exc), failure_line(exc, port_file))
    payload = (*msg, tuple(violations), time.perf_counter() - t0)
    try:
        conn.send_bytes(pickle.dumps(payload))
    except MemoryError:
        conn.send_bytes(
            pickle.dumps(("memory", None, "out of memory returning results", None, (), 0.0))
        )
    except Exception as exc:  # noqa: BLE001 - e.g. an unpicklable value
        conn.send_bytes(
            pickle.dumps(
                ("error", None, f"cannot return results: {exc}", None, tuple(violations), 0.0)
            )
        )
    conn.close()
    os._exit(0)


def _describe(exc: BaseException) -> str:
    diags = getattr(exc, "diagnostics", None)
    if diags:
        return "; ".join(f"{d.message} [{d.code}]" for d in diags)
    return f"{type(exc).__name__}: {exc}"


class TimeLimitExceeded(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`TimeLimitExceeded` in the block after ``seconds`` (main thread, POSIX only;
    elsewhere the block runs unbounded)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(
        signal, "setitimer"
    ):
        yield
        return

    def _expire(signum: int, frame: Any) -> None:
        raise TimeLimitExceeded(f"took longer than {seconds:g} s")

    old = signal.signal(signal.SIGALRM, _expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def run_sandboxed(
    fn: Callable[..., Any],
    *args: Any,
    timeout: float = 60.0,
    memory_mb: int | None = 4096,
    port_file: str | None = None,
) -> SandboxResult:
    """Call ``fn(*args)`` in a sandboxed child; its return value must be picklable."""
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(
        target=_child, args=(child, fn, args, memory_mb, timeout * 2, port_file), daemon=True
    )
    t0 = time.perf_counter()
    proc.start()
    child.close()
    try:
        if not parent.poll(timeout):
            proc.kill()
            proc.join(5)
            return SandboxResult(
                "timeout",
                error=f"the port ran longer than {timeout:g} s and was stopped",
                seconds=time.perf_counter() - t0,
            )
        try:
            status, value, err, line, violations, secs = pickle.loads(parent.recv_bytes())
        except (EOFError, OSError):
            proc.join(5)
            code = proc.exitcode
            why = (
                f"killed by signal {-code}"
                if code is not None and code < 0
                else f"exit status {code}"
            )
            return SandboxResult(
                "crash", error=f"the port's process died ({why})", seconds=time.perf_counter() - t0
            )
        return SandboxResult(status, value, err, line, violations, secs)
    finally:
        parent.close()
        if proc.is_alive():
            proc.kill()
        proc.join(5)
