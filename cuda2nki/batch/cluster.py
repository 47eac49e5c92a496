"""Running a migration on a Dask cluster (``--executor dask``, extra ``cuda2nki[cluster]``).

Why Dask rather than Ray: it is pure Python and installs from PyPI in seconds with no native
runtime, a local cluster starts inside the test process, and ``distributed`` connects to an
existing scheduler by address (``--scheduler tcp://host:8786``) when a real cluster is there.

Files go to Dask in chunks (a few per worker, so that the scheduler's per-task cost and the start
of a child process are paid per chunk, not per file).  A task runs its files in a child process of
the Dask worker through the same crash-proof pool as the local executor (timeout and memory limit
per file; a child that hangs or dies is replaced and the chunk carries on), so a kernel that hangs
or exhausts memory never takes a Dask worker down, and the records -- and so the report -- are
identical to the local executor's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from cuda2nki.batch.job import JobSpec, process_file, warm_up
from cuda2nki.batch.pool import Outcome, run_tasks
from cuda2nki.diagnostics import error

if TYPE_CHECKING:
    from cuda2nki.batch.migrate import MigrateOptions


def run_isolated(
    chunk: list[tuple[str, JobSpec]], timeout: float, memory_mb: int | None
) -> list[Outcome]:
    """Some files in a child process of the current (Dask worker) process, each within its
    own time limit (``JobSpec.time_limit``, else ``timeout``)."""
    warm_up()  # once per Dask worker: the children inherit the warm pipeline
    limits = {k: s.time_limit for k, s in chunk if s.time_limit is not None}
    return list(
        run_tasks(process_file, chunk, jobs=1, timeout=timeout, memory_mb=memory_mb, limits=limits)
    )


def chunks(todo: list[tuple[str, JobSpec]], workers: int) -> list[list[tuple[str, JobSpec]]]:
    """``todo`` in about four chunks per worker, at most 32 files each, in order."""
    size = max(1, min(32, len(todo) // max(1, 4 * workers)))
    return [todo[i : i + size] for i in range(0, len(todo), size)]


def run_on_dask(todo: list[tuple[str, JobSpec]], opts: MigrateOptions) -> Iterator[Outcome]:
    try:
        import dask
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise error(
            "C2N0002",
            option="--executor dask",
            reason="Dask is not installed; `pip install 'cuda2nki[cluster]'`",
        ) from None
    if not todo:
        return
    # worker processes must be allowed to fork the per-file child processes
    with dask.config.set({"distributed.worker.daemon": False}):
        cluster: Any = None
        if opts.scheduler:
            client = Client(opts.scheduler)
        else:
            cluster = LocalCluster(
                n_workers=opts.jobs,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=40,
            )
            client = Client(cluster)
        try:
            futures = [
                client.submit(
                    run_isolated,
                    chunk,
                    opts.timeout,
                    opts.memory_mb,
                    key=f"c2n-{chunk[0][0]}-{len(chunk)}",
                    pure=False,
                )
                for chunk in chunks(todo, opts.jobs)
            ]
            for fut in as_completed(futures):
                yield from fut.result()
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
