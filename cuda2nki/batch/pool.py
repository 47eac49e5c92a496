"""A crash-proof process pool: every task gets a timeout and a memory limit, and a worker that
hangs, dies or runs out of memory is replaced while the other tasks carry on.

``concurrent.futures.ProcessPoolExecutor`` cannot do this (one dead worker breaks the pool), and a
fresh interpreter per task would cost more than porting a kernel, so workers are long-lived forked
processes that take tasks over a pipe and run them one at a time, in order.  While there is plenty
of work, a worker holds a second task in its queue so that it never waits for the parent between
two tasks.  The parent enforces the wall-clock timeout of the task a worker is running by killing
the worker (the task queued behind it goes back to the pending ones); the memory limit is
``RLIMIT_AS`` set inside the worker (a ``MemoryError`` becomes a result; a worker killed outright
becomes a ``crash`` result).  A worker that ran out of memory is replaced, and a task that did so
in a worker earlier tasks had used runs once more in a fresh one: what those tasks left behind
(caches, a fragmented heap) must not fail a file that fits the limit on its own.
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import os
import signal
import sys
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

try:  # POSIX only; elsewhere the memory limit is not enforced
    import resource
except ImportError:  # pragma: no cover
    resource = None  # type: ignore[assignment]


@dataclass(frozen=True)
class Outcome:
    """What became of one task: ``ok`` (``value`` set) or ``timeout`` / ``memory`` / ``crash`` / ``error``."""

    key: str
    status: str
    value: Any = None
    reason: str = ""
    seconds: float = 0.0


def _limit_memory(mb: int | None) -> None:
    if mb and resource is not None:
        limit = mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


#: youngest-generation threshold of the collector in a worker (CPython's default is 700)
WORKER_GC_THRESHOLD = 50_000


def _tune_gc() -> None:
    """A task allocates many short-lived, mostly acyclic objects: collecting the youngest
    generation every 700 allocations re-scans them for nothing, and the objects inherited from
    the parent are never garbage, so they are moved out of the collector's sight."""
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(WORKER_GC_THRESHOLD, gen1, gen2)


PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int) -> None:
    """Ask the kernel to SIGKILL this process when its parent dies (even by ``kill -9``), so no
    worker outlives the run; if the parent is already gone, exit now (Linux; elsewhere a no-op)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent_pid:
        os._exit(1)


def _worker_main(
    conn: Connection, fn: Callable[[Any], Any], memory_mb: int | None, parent_pid: int = 0
) -> None:
    if parent_pid:
        die_with_parent(parent_pid)
    _limit_memory(memory_mb)
    _tune_gc()
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        key, payload = msg
        t0 = time.perf_counter()
        try:
            result = ("ok", fn(payload), "")
        except MemoryError:
            result = ("memory", None, f"exceeded the memory limit of {memory_mb} MB")
        except Exception as exc:  # noqa: BLE001 - a task's failure is data, not a pool failure
            tb = traceback.extract_tb(exc.__traceback__)
            where = f" at {tb[-1].filename}:{tb[-1].lineno}" if tb else ""
            result = ("error", None, f"{type(exc).__name__}: {exc}{where}")
        secs = time.perf_counter() - t0
        try:  # the monotonic clock is shared with the parent: it is when the next task starts
            conn.send((key, *result, secs, time.monotonic()))
        except MemoryError:
            reason = f"exceeded the memory limit of {memory_mb} MB"
            conn.send((key, "memory", None, reason, secs, time.monotonic()))


#: tasks a worker holds at once (the one it runs and the next) while enough work is pending
DEPTH = 2


class _Worker:
    def __init__(
        self, ctx: mp.context.BaseContext, fn: Callable[[Any], Any], memory_mb: int | None
    ):
        self.conn, child = ctx.Pipe()
        # not daemonic: a task may start processes of its own (the sandbox of a port under check)
        self.proc = ctx.Process(
            target=_worker_main, args=(child, fn, memory_mb, os.getpid()), daemon=False
        )
        self.proc.start()
        child.close()
        self.queue: deque[tuple[str, Any]] = deque()  # the head is the task running
        self.started = 0.0  # when the head task started (monotonic clock)
        self.done = 0  # tasks it finished: what earlier tasks left in it counts from the first

    def submit(self, key: str, payload: Any) -> None:
        if not self.queue:
            self.started = time.monotonic()
        self.queue.append((key, payload))
        self.conn.send((key, payload))

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(timeout=5)
        self.conn.close()
        if self.proc.exitcode is not None and self.proc.pid is not None:
            # a worker killed mid-check leaves its port sandbox's directory (and, if killed
            # while the sandbox started, perhaps its processes): they are removed here
            from cuda2nki.fidelity.sandbox_reap import sweep

            sweep(owner_pid=self.proc.pid)


def run_tasks(
    fn: Callable[[Any], Any],
    tasks: Iterable[tuple[str, Any]],
    *,
    jobs: int = 1,
    timeout: float | None = None,
    memory_mb: int | None = None,
    limits: Mapping[str, float] | None = None,
) -> Iterator[Outcome]:
    """Run ``fn(payload)`` for each ``(key, payload)``; yield outcomes as they finish.

    ``fn`` must be importable (module-level) so the workers can run it.  A task's time limit
    is ``limits[key]`` where given, else ``timeout``.
    """
    limit = _limit_of(timeout, limits)
    ctx = mp.get_context("fork" if os.name == "posix" else "spawn")
    pending = list(tasks)
    pending.reverse()
    workers: list[_Worker] = []
    retried: set[str] = set()
    try:
        while pending or any(w.queue for w in workers):
            while len(workers) < jobs and pending:
                workers.append(_Worker(ctx, fn, memory_mb))
            _feed(workers, pending, jobs)
            busy = [w for w in workers if w.queue]
            ready = wait(
                [w.conn for w in busy] + [w.proc.sentinel for w in busy],
                timeout=_poll(busy, limit),
            )
            for w in busy:
                head, warm = w.queue[0], w.done > 0
                outcome = _collect(w, ready, limit(w.queue[0][0]), memory_mb)
                if outcome is None:
                    continue
                w.done += 1
                # out of memory in a worker that earlier tasks had filled (caches, a fragmented
                # heap): the task is run once more in a fresh worker before it counts as failed
                retry = outcome.status == "memory" and warm and head[0] not in retried
                if retry:
                    retried.add(head[0])
                else:
                    yield outcome
                # a worker out of memory may keep what it took (caches, a fragmented heap):
                # replaced like a hung or dead one, lest every later task fail in it too
                if outcome.status in ("timeout", "crash", "memory") or not w.proc.is_alive():
                    w.kill()
                    workers.remove(w)
                    pending.extend(reversed(w.queue))  # queued behind it, never started
                    w.queue.clear()
                    if retry:
                        pending.append(head)  # the next task a worker takes
    finally:
        for w in workers:
            try:
                w.conn.send(None)
            except OSError:
                pass
            w.kill()


def _feed(workers: list[_Worker], pending: list[tuple[str, Any]], jobs: int) -> None:
    """An idle worker gets a task; a busy one a second, unless the work is nearly done (then
    a task queued behind a long one would wait while another worker is idle)."""
    for w in workers:
        if not w.queue and pending:
            w.submit(*pending.pop())
    for w in workers:
        if len(w.queue) < DEPTH and len(pending) > jobs:
            w.submit(*pending.pop())


def _limit_of(
    timeout: float | None, limits: Mapping[str, float] | None
) -> Callable[[str], float | None]:
    """The time limit of the task of a key."""
    if not limits:
        return lambda key: timeout
    return lambda key: limits.get(key, timeout)


def _poll(busy: list[_Worker], limit: Callable[[str], float | None]) -> float | None:
    ends = [w.started + t for w in busy if (t := limit(w.queue[0][0])) is not None]
    if not ends:
        return None
    return max(0.0, min(ends) - time.monotonic()) + 0.01


def _collect(
    w: _Worker, ready: list[Any], timeout: float | None, memory_mb: int | None
) -> Outcome | None:
    """The outcome of the task ``w`` is running, if it has one now (else None)."""
    key = w.queue[0][0]
    elapsed = time.monotonic() - w.started
    if w.conn in ready:
        try:
            rkey, status, value, reason, secs, ended = w.conn.recv()
        except (EOFError, OSError):
            w.queue.popleft()
            return Outcome(key, "crash", None, _death_reason(w, memory_mb), elapsed)
        w.queue.popleft()
        w.started = ended
        return Outcome(rkey, status, value, reason, secs)
    if w.proc.sentinel in ready or not w.proc.is_alive():
        w.queue.popleft()
        return Outcome(key, "crash", None, _death_reason(w, memory_mb), elapsed)
    if timeout is not None and elapsed > timeout:
        w.queue.popleft()
        return Outcome(
            key, "timeout", None, f"took longer than {timeout:g} s and was stopped", elapsed
        )
    return None


def _death_reason(w: _Worker, memory_mb: int | None) -> str:
    w.proc.join(timeout=1)
    code = w.proc.exitcode
    if code is not None and code < 0:
        import signal

        name = signal.Signals(-code).name
        hint = (
            f" (memory limit {memory_mb} MB?)"
            if name in ("SIGKILL", "SIGSEGV") and memory_mb
            else ""
        )
        return f"worker killed by {name}{hint}"
    return f"worker exited with status {code}"
