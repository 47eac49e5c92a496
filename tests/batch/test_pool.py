"""The crash-proof pool: timeouts, memory limits, crashes and errors are results, not failures."""

from __future__ import annotations

import os
import time

from cuda2nki.batch.pool import run_tasks

#: what a "keep" task leaves behind in its worker (as a cache would)
_KEPT: list[bytearray] = []


def work(payload: object) -> object:
    kind, value = payload  # type: ignore[misc]
    if kind == "ok":
        return value * 2
    if kind == "alloc":  # needs some memory of its own
        return len(bytearray(value * 1024 * 1024))
    if kind == "stash":  # keeps some memory in its worker and succeeds (as a cache would)
        _KEPT.append(bytearray(value * 1024 * 1024))
        return value
    if kind == "keep":  # fills the worker's memory and keeps it
        while True:
            _KEPT.append(bytearray(16 * 1024 * 1024))
    if kind == "sleep":
        time.sleep(value)
        return "woke"
    if kind == "hog":
        blocks = []
        while True:
            blocks.append(bytearray(64 * 1024 * 1024))
    if kind == "die":
        os._exit(3)
    if kind == "kill":
        os.kill(os.getpid(), 9)
    raise ValueError(f"bad payload {value}")


def _run(tasks, **kw):
    return {o.key: o for o in run_tasks(work, tasks, **kw)}


def test_all_ok_in_parallel() -> None:
    out = _run([(str(i), ("ok", i)) for i in range(20)], jobs=2)
    assert {k: o.value for k, o in out.items()} == {str(i): 2 * i for i in range(20)}
    assert all(o.status == "ok" for o in out.values())


def test_faults_are_isolated_and_the_rest_carries_on() -> None:
    tasks = [
        ("a", ("ok", 1)),
        ("hang", ("sleep", 30)),
        ("b", ("ok", 2)),
        ("hog", ("hog", 0)),
        ("die", ("die", 0)),
        ("kill", ("kill", 0)),
        ("err", ("raise", 7)),
        ("c", ("ok", 3)),
    ]
    t0 = time.monotonic()
    out = _run(tasks, jobs=2, timeout=1.5, memory_mb=512)
    assert time.monotonic() - t0 < 20
    assert out["a"].value == 2 and out["b"].value == 4 and out["c"].value == 6
    assert out["hang"].status == "timeout"
    assert out["hog"].status in ("memory", "crash")
    assert out["die"].status == "crash" and "status 3" in out["die"].reason
    assert out["kill"].status == "crash" and "SIGKILL" in out["kill"].reason
    assert out["err"].status == "error" and "bad payload 7" in out["err"].reason


def test_a_queued_task_is_timed_from_when_it_starts_not_when_it_was_queued() -> None:
    tasks = [(f"s{i}", ("sleep", 0.6)) for i in range(4)] + [(f"o{i}", ("ok", i)) for i in range(4)]
    out = _run(tasks, jobs=1, timeout=1.0)  # each sleep waits ~0.6 s behind the previous one
    assert all(o.status == "ok" for o in out.values()), {k: o.reason for k, o in out.items()}


def test_tasks_queued_behind_a_hang_or_a_crash_are_run_by_a_new_worker() -> None:
    tasks = [("a", ("ok", 1)), ("hang", ("sleep", 30)), ("b", ("ok", 2)), ("c", ("ok", 3))]
    tasks += [("die", ("die", 0)), ("d", ("ok", 4)), ("e", ("ok", 5)), ("f", ("ok", 6))]
    out = _run(tasks, jobs=1, timeout=1.0)
    assert set(out) == {k for k, _ in tasks}
    assert out["hang"].status == "timeout" and out["die"].status == "crash"
    assert {k: o.value for k, o in out.items() if len(k) == 1} == {
        "a": 2, "b": 4, "c": 6, "d": 8, "e": 10, "f": 12
    }  # fmt: skip


def test_a_worker_out_of_memory_is_replaced_not_reused() -> None:
    """A worker whose task ran out of memory may still hold it (caches, a fragmented heap):
    the tasks after it get a fresh worker instead of failing one after another."""
    tasks = [("keep", ("keep", 0))] + [(f"a{i}", ("alloc", 64)) for i in range(3)]
    # a forked worker starts with this process's address space: the limit leaves room above it
    with open("/proc/self/statm") as f:
        size_mb = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE") // (1 << 20)
    out = _run(tasks, jobs=1, timeout=30, memory_mb=size_mb + 384)
    assert out["keep"].status in ("memory", "crash")
    assert {k: o.status for k, o in out.items() if k != "keep"} == {
        "a0": "ok",
        "a1": "ok",
        "a2": "ok",
    }


def _room_mb(extra: int) -> int:
    """A memory limit ``extra`` MB above this process's address space (a forked worker's start)."""
    with open("/proc/self/statm") as f:
        size_mb = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE") // (1 << 20)
    return size_mb + extra


def test_a_task_out_of_memory_behind_others_runs_again_in_a_fresh_worker() -> None:
    """What earlier tasks left in a worker must not fail a task that fits the limit alone."""
    tasks = [("stash", ("stash", 256)), ("big", ("alloc", 256)), ("after", ("ok", 4))]
    out = _run(tasks, jobs=1, timeout=30, memory_mb=_room_mb(384))
    assert out["stash"].status == "ok"
    assert out["big"].status == "ok" and out["big"].value == 256 * 1024 * 1024
    assert out["after"].value == 8


def test_a_task_out_of_memory_in_a_fresh_worker_is_not_run_again() -> None:
    tasks = [("ok", ("ok", 1)), ("hog", ("hog", 0)), ("b", ("ok", 2))]
    out = _run(tasks, jobs=1, timeout=30, memory_mb=_room_mb(256))
    assert out["hog"].status in ("memory", "crash")  # once in the warm worker, once fresh
    assert out["ok"].value == 2 and out["b"].value == 4


def test_a_task_runs_within_its_own_time_limit() -> None:
    tasks = [("long", ("sleep", 1.2)), ("short", ("sleep", 1.2)), ("ok", ("ok", 1))]
    out = _run(tasks, jobs=2, timeout=0.6, limits={"long": 5.0})
    assert out["long"].status == "ok" and out["long"].value == "woke"
    assert out["short"].status == "timeout" and "0.6 s" in out["short"].reason
    assert out["ok"].value == 2
