"""Inside the sandbox: run a port under review on the inputs the checker wrote, write its outputs.

This module is the whole program of the sandboxed interpreter (started fresh with ``exec``; it
never shares memory with the checker).  In order:

1. every module a port may legitimately use is imported (numpy, the simulator, common standard
   library modules) -- while the checker still prepares the job;
2. the job (``job.json``, written atomically once the inputs are in ``in.npz``) is read, and
   ``ml_dtypes`` (bf16/fp8, about a second to import) is imported if the job may need it;
3. resource limits (address space, CPU time, file size, open files, processes);
4. the seccomp filter (:mod:`cuda2nki.fidelity.seccomp`) -- from here on the process cannot start
   programs, fork, open sockets, trace or signal other processes, or map executable memory, and
   no native library can be loaded;
5. each test point's runs are simulated and their results written to ``out/pNNNN.npz`` and
   ``out/pNNNN.json`` (the JSON last, so its presence means the point is complete).

The job directory holds ``job.json`` and ``in.npz``; nothing else of the checker is visible.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Any

#: standard-library modules imported before the filter (extension modules cannot load after it)
PRELOAD = (
    "math",
    "cmath",
    "functools",
    "itertools",
    "operator",
    "typing",
    "dataclasses",
    "enum",
    "collections",
    "numbers",
    "random",
    "decimal",
    "fractions",
    "statistics",
    "copy",
    "contextlib",
    "string",
    "re",
    "struct",
    "array",
    "bisect",
    "heapq",
    "warnings",
    "abc",
    "types",
    "inspect",
    "logging",
    "time",
    "datetime",
    "textwrap",
    "hashlib",
    "zlib",
    "json",
    "unittest",
    "unittest.mock",
    # extension modules whose calls the seccomp filter refuses: loaded here so that a port's
    # attempt reaches the filter (and is reported) instead of failing at import
    "socket",
    "encodings.idna",
    "unicodedata",
    "select",
    "mmap",
    "subprocess",
    "signal",
    "threading",
)


def _wait_for_job(path: str, poll_s: float = 0.005) -> dict[str, Any]:
    """The job the checker writes (atomically) once its inputs are ready.  Standard input is a
    pipe only the checker writes to (and never does): when it reads as closed, the checker has
    gone or given up on this sandbox, and the interpreter exits without waiting any longer."""
    import time

    lifeline = _lifeline()
    while not os.path.exists(path):
        if lifeline is None:
            time.sleep(poll_s)
        elif lifeline.poll(poll_s * 1000):
            os._exit(0)  # POLLHUP: no job will come
    devnull = os.open(os.devnull, os.O_RDONLY)  # the port gets no handle on the checker
    os.dup2(devnull, 0)
    os.close(devnull)
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _lifeline() -> Any:
    """A poll object watching standard input for the checker's end of the pipe closing, or
    None when standard input is no pipe (a caller of its own, a terminal)."""
    import select
    import stat

    try:
        if not stat.S_ISFIFO(os.fstat(0).st_mode):
            return None
    except OSError:
        return None
    watch = select.poll()
    watch.register(0, select.POLLHUP | select.POLLERR)
    return watch


#: how a port names a type stored through ``ml_dtypes`` (bf16, fp8, fp4; case ignored)
NARROW_NAMES = r"bfloat16|bf16|float8|fp8|float4|fp4|e4m3|e5m2|e8m0|e2m1|ml_dtypes"


def _needs_narrow(job_dir: str, job: dict[str, Any]) -> bool:
    """Whether the job may meet a bf16 or fp8 value: its inputs hold one, or the port's text
    names such a type.  ``ml_dtypes`` is a native module, so it must be imported before the
    filter; importing it takes about a second, so it is imported only for such a job."""
    import re
    import zipfile

    from cuda2nki.fidelity import wire

    if job.get("narrow"):
        return True
    try:
        with zipfile.ZipFile(os.path.join(job_dir, "in.npz")) as z:
            if any(wire.TAG in n for n in z.namelist()):
                return True
        with open(job["port"], encoding="utf-8", errors="replace") as f:
            text = f.read()
    except (OSError, KeyError, zipfile.BadZipFile):
        return True  # unreadable here: the run reports it; the import costs only time
    return re.search(NARROW_NAMES, text, re.IGNORECASE) is not None


def _limits(lim: dict[str, Any]) -> None:
    import resource

    want = {
        resource.RLIMIT_AS: lim.get("memory_bytes"),
        resource.RLIMIT_CPU: lim.get("cpu_seconds"),
        resource.RLIMIT_FSIZE: lim.get("file_bytes"),
        resource.RLIMIT_NOFILE: lim.get("open_files"),
        resource.RLIMIT_NPROC: lim.get("processes"),
        resource.RLIMIT_CORE: 0,
    }
    for which, value in want.items():
        if value is None:
            continue
        _, hard = resource.getrlimit(which)
        v = int(value) if hard == resource.RLIM_INFINITY else min(int(value), hard)
        try:
            resource.setrlimit(which, (v, v))
        except (ValueError, OSError):
            resource.setrlimit(which, (v, hard))


def _preload() -> None:
    import importlib

    import numpy  # noqa: F401
    import numpy.linalg  # noqa: F401

    import cuda2nki.fidelity.tracefind  # noqa: F401
    import cuda2nki.fidelity.wire  # noqa: F401
    import cuda2nki.nkisim  # noqa: F401
    import cuda2nki.nkisim.profile  # noqa: F401
    import cuda2nki.nkisim.provenance  # noqa: F401
    from cuda2nki.nkisim import kernel

    kernel.single_threaded_blas()  # loads threadpoolctl's native helpers now
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass


#: audit events that name an attempt to reach outside the sandbox (reported, C2N4017).  The hook
#: only *reports*: the operating system's layers are what refuse (an attempt the seccomp filter
#: kills is written to ``attempts.log`` before the call, so it is reported although the process
#: dies).  A port can silence the hook; it cannot use that to get through.
REPORTED = {
    "os.system": "run a shell command",
    "subprocess.Popen": "start a program",
    "os.exec": "replace itself with a program",
    "os.posix_spawn": "start a program",
    "os.spawn": "start a program",
    "os.fork": "fork a process",
    "os.forkpty": "fork a process",
    "pty.spawn": "start a program",
    "socket.__new__": "open a socket",
    "socket.connect": "connect to the network",
    "socket.bind": "bind a network socket",
    "socket.sendto": "send on the network",
    "socket.sendmsg": "send on the network",
    "socket.getaddrinfo": "look up a network address",
    "os.kill": "signal a process",
    "os.killpg": "signal a process group",
    "signal.pthread_kill": "signal a thread",
    "ctypes.dlopen": "load a native library",
    "ctypes.dlsym": "look up a native function",
    "os.remove": "delete a file",
    "os.rmdir": "delete a directory",
    "os.rename": "rename a file",
    "os.mkdir": "create a directory",
    "os.symlink": "create a symbolic link",
    "os.link": "create a hard link",
    "os.truncate": "truncate a file",
    "os.chmod": "change a file's permissions",
    "os.chown": "change a file's owner",
    "shutil.rmtree": "delete a directory tree",
}
_FILE_EVENTS = frozenset(
    {
        "os.remove",
        "os.rmdir",
        "os.rename",
        "os.mkdir",
        "os.symlink",
        "os.link",
        "os.truncate",
        "os.chmod",
        "os.chown",
        "shutil.rmtree",
    }
)
_PRIVATE = ("/job/", "/tmp/")
_SECRET_READS = ("/environ", "/mem", "/etc/shadow", "/etc/passwd", "/.ssh/", "/.aws/", "/.netrc")


def secret_read(path: str) -> bool:
    """``path`` names a secret (``/proc/1/mem``, ``~/.ssh/...``): a file ending in one of the
    names, or inside one of the directories, of ``_SECRET_READS`` -- not any path that merely
    contains the text (a port ``member_sum.py`` is not ``/mem``)."""
    return any(k in path if k.endswith("/") else path.endswith(k) for k in _SECRET_READS)


def _port_line(port: str) -> int:
    """The innermost line of the port's file on the stack (0 when it is not there)."""
    f = sys._getframe(2)
    while f is not None:
        if f.f_code.co_filename == port:
            return f.f_lineno
        f = f.f_back
    return 0


def _watch(log_path: str, port: str) -> None:
    """Record the port's attempts to reach outside (see ``REPORTED``) in ``log_path``, one
    ``LINE<tab>WHAT`` per line."""
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    seen: set[str] = set()

    def note(what: str) -> None:
        if what not in seen and len(seen) < 64:
            seen.add(what)
            text = f"{_port_line(port)}\t{what}".replace("\n", " ")[:300] + "\n"
            os.write(fd, text.encode("utf-8", "replace"))

    def private(path: Any) -> bool:
        try:
            p = os.path.abspath(os.fsdecode(path))
        except (TypeError, ValueError):
            return False
        if p == port:
            return False  # the port file (a read-only copy) is not the port's to change
        return p.startswith(_PRIVATE) or p in ("/job", "/tmp")

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "open" and args and isinstance(args[0], str | bytes):
            mode = args[1] if len(args) > 1 and isinstance(args[1], str) else ""
            flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
            path = os.fsdecode(args[0])
            writes = any(c in mode for c in "wax+") or flags & (os.O_WRONLY | os.O_RDWR)
            if writes and not private(path):
                note(f"write {path}")
            elif not writes and secret_read(path):
                note(f"read {path}")
            return
        what = REPORTED.get(event)
        if what is None:
            return
        first = args[0] if args else None
        if event in _FILE_EVENTS and private(first):
            return  # the port's own files in its private directories
        if event.startswith("socket."):  # (socket, address, ...): the address says where to
            first = args[1] if len(args) > 1 and event != "socket.__new__" else None
        shown = "" if first is None else f" ({first!r})"[:200]
        note(f"{what}{shown}")

    sys.addaudithook(hook)


def _diag_dict(d: Any) -> dict[str, Any]:
    return {
        "code": d.code,
        "severity": int(d.severity),
        "message": d.message,
        "file": d.loc.file,
        "line": d.loc.line,
        "col": d.loc.col,
        "notes": list(d.notes),
    }


def _flatten(outs: Any) -> tuple[str, list[Any], Any]:
    """(structure, values, keys): how the port returned its outputs."""
    from collections.abc import Mapping

    if outs is None:  # a kernel without outputs (it only prints, say)
        return "seq", [], None
    if isinstance(outs, Mapping):
        keys = [str(k) for k in outs]
        return "dict", list(outs.values()), keys
    if isinstance(outs, list | tuple):
        return "seq", list(outs), None
    return "one", [outs], None


def _run_one(
    fn: Any, kwargs: dict[str, Any], target: str, profile: bool, port: str, lines: bool = False
) -> tuple:
    """(entry for the JSON, arrays for the npz) of one simulated run; ``lines``: with the port's
    lines that issued instructions."""
    import numpy as np

    from cuda2nki import nkisim
    from cuda2nki.diagnostics import DiagnosticError
    from cuda2nki.fidelity import tracefind
    from cuda2nki.fidelity.sandbox import failure_line

    try:
        res = nkisim.simulate_kernel(
            fn, kwargs, target=target, profile=profile, track_writers=profile
        )
    except DiagnosticError as exc:
        return {"status": "error", "diagnostics": [_diag_dict(d) for d in exc.diagnostics]}, {}
    except MemoryError:
        return {"status": "memory", "error": "MemoryError"}, {}
    except Exception as exc:  # noqa: BLE001 - the port's own exception
        what = f"{type(exc).__name__}: {exc}"
        return {"status": "error", "error": what, "line": failure_line(exc, port)}, {}
    structure, values, keys = _flatten(res.outputs)
    arrays = {f"o{i}": np.asarray(v) for i, v in enumerate(values)}
    entry: dict[str, Any] = {
        "status": "ok",
        "structure": structure,
        "keys": keys,
        "count": len(values),
        "instructions": len(res.trace),
        "host_outputs": list(res.state.host_outputs) if res.state is not None else [],
    }
    if lines:
        entry["lines"] = _port_lines(res.trace, port)
    if profile:
        prof = res.profile
        prof_dict = prof.to_dict() if hasattr(prof, "to_dict") else dict(prof or {})
        entry["trace"] = tracefind.summarise(res.trace, prof_dict).to_wire()
    if res.writers is not None and res.state is not None and res.state.writers is not None:
        entry["writers"] = _writer_events(res.writers, res.state.writers, arrays)
    return entry, arrays


def _port_lines(trace: list[Any], port: str) -> list[int]:
    """The lines of the port's own file that issued the trace's instructions."""
    base = os.path.basename(port)
    files: dict[str, bool] = {}
    out: set[int] = set()
    for ins in trace:
        mine = files.get(ins.file)
        if mine is None:
            mine = files[ins.file] = os.path.basename(str(ins.file)) == base
        if mine:
            out.add(int(ins.line))
    return sorted(out)


def _writer_events(maps: list[Any], log: Any, arrays: dict[str, Any]) -> dict[int, Any]:
    """Per output ``o{i}``, its element -> write event map as array ``w{i}`` (into ``arrays``);
    returns the events those maps name: event -> (line, op, int locals, producing lines)."""
    import numpy as np

    used: set[int] = set()
    for i, m in enumerate(maps):
        if m is None or f"o{i}" not in arrays or m.size != arrays[f"o{i}"].size:
            continue
        arrays[f"w{i}"] = m
        used.update(int(e) for e in np.unique(m) if e >= 0)
    return {e: log.events[e] for e in sorted(used)}


def _heavy(entry: dict[str, Any], limit: Any) -> bool:
    """Whether a point's first run issued more than ``limit`` engine instructions (no limit:
    never), so the point's further runs (other seeds, the determinism re-run) are left out."""
    if not isinstance(limit, int) or isinstance(limit, bool) or entry.get("status") != "ok":
        return False
    return int(entry.get("instructions", 0)) > limit


def _save_point(out_dir: str, pi: int, arrays: dict[str, Any], cap: Any) -> bool:
    """Write point ``pi``'s arrays, unless they exceed the file-size cap: then (or when the
    write hits the cap all the same) its reply says so and no arrays are left behind."""
    import errno

    from cuda2nki.fidelity import outcap, wire

    path = os.path.join(out_dir, f"p{pi:04d}.npz")
    size = outcap.returned_bytes(arrays)
    if not isinstance(cap, int) or size <= cap:
        try:
            wire.save_arrays(path, arrays)
            return True
        except OSError as exc:
            if exc.errno != errno.EFBIG:
                raise
    for leftover in (path, f"{path}.part.npz"):
        with contextlib.suppress(OSError):
            os.unlink(leftover)
    reply = {"runs": [{"status": "output", "bytes": size}]}
    wire.dump_json(os.path.join(out_dir, f"p{pi:04d}.json"), reply)
    return False


def _serve(job_dir: str, job: dict[str, Any]) -> None:
    import time

    from cuda2nki import nkisim
    from cuda2nki.diagnostics import DiagnosticError
    from cuda2nki.fidelity import wire

    out_dir = os.path.join(job_dir, "out")
    inputs = wire.load_arrays(os.path.join(job_dir, "in.npz"), cap=1 << 40)
    port, kernel = job["port"], job["kernel"]
    try:
        fn = nkisim.load_kernel(port, kernel)
    except DiagnosticError as exc:
        fail = {"status": "load", "diagnostics": [_diag_dict(d) for d in exc.diagnostics]}
        wire.dump_json(os.path.join(out_dir, "p0000.json"), {"runs": [fail]})
        return
    except MemoryError:
        wire.dump_json(os.path.join(out_dir, "p0000.json"), {"runs": [{"status": "memory"}]})
        return
    except BaseException as exc:  # noqa: BLE001 - the port's module raised while loading
        from cuda2nki.fidelity.sandbox import failure_line

        fail = {"status": "load", "error": f"{type(exc).__name__}: {exc}"}
        fail["line"] = failure_line(exc, port)
        wire.dump_json(os.path.join(out_dir, "p0000.json"), {"runs": [fail]})
        return
    profile_first = bool(job.get("profile_first"))
    heavy = job.get("heavy_instructions")
    for pi, point in enumerate(job["points"]):
        entries, arrays = [], {}
        for ri, run in enumerate(point):
            kwargs: dict[str, Any] = dict(run["scalars"])
            kwargs.update({p: inputs[key] for p, key in run["arrays"].items()})
            profile = profile_first and ri == 0
            entry, outs = _run_one(fn, kwargs, job["target"], profile, port, lines=ri == 0)
            entries.append(entry)
            arrays.update({f"r{ri}.{k}": v for k, v in outs.items()})
            if ri == 0 and _heavy(entry, heavy):
                break  # the point's other runs are left out: the checker reports it (C2N4029)
        if not _save_point(out_dir, pi, arrays, job.get("limits", {}).get("file_bytes")):
            return  # more than its outputs could need: the port is stopped
        # cpu_s: the interpreter's CPU time so far, start-up included (for latency figures)
        reply = {"runs": entries, "cpu_s": time.process_time()}
        wire.dump_json(os.path.join(out_dir, f"p{pi:04d}.json"), reply)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    job_dir = args[0]
    sys.dont_write_bytecode = True
    _preload()  # before the job arrives: the checker is still preparing it
    job = _wait_for_job(os.path.join(job_dir, "job.json"))
    if _needs_narrow(job_dir, job):
        from cuda2nki.nkisim import dtypes

        dtypes.load_narrow()
    _limits(job.get("limits", {}))
    if job.get("seccomp", True):
        from cuda2nki.fidelity import seccomp

        seccomp.install()
    with open(os.path.join(job_dir, "out", "ready"), "w", encoding="ascii"):
        pass  # the port's time starts now (the interpreter's start-up is not the port's)
    _watch(os.path.join(job_dir, "out", "attempts.log"), job["port"])
    _serve(job_dir, job)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # no interpreter teardown: nothing the port registered runs after its results


if __name__ == "__main__":  # pragma: no cover - the sandbox starts it with -c
    raise SystemExit(main())
