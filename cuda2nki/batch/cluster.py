"""Running a migration on a Dask cluster (``--executor dask``, extra ``cuda2nki[cluster]``).

Why Dask rather than Ray: it is pure Python and installs from PyPI in seconds with no native
runtime, a local cluster starts inside the test process, and ``distributed`` connects to an
existing scheduler by address (``--scheduler tcp://host:8786``) when a real cluster is there.

Each file is one Dask task.  The task itself runs the file in a child process of the Dask worker
through the same crash-proof pool as the local executor (timeout and memory limit per file), so a
kernel that hangs or exhausts memory never takes a Dask worker down, and the records -- and so the
report -- are identical to the local executor's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from cuda2nki.batch.job import JobSpec, process_file, warm_up
from cuda2nki.batch.pool import Outcome, run_tasks
from cuda2nki.diagnostics import error

if TYPE_CHECKING:
    from cuda2nki.batch.migrate import MigrateOptions


def run_isolated(key: str, spec: JobSpec, timeout: float, memory_mb: int | None) -> Outcome:
    """One file in a child process of the current (Dask worker) process."""
    warm_up()  # once per Dask worker: the per-file children inherit the warm pipeline
    (outcome,) = list(
        run_tasks(process_file, [(key, spec)], jobs=1, timeout=timeout, memory_mb=memory_mb)
    )
    return outcome


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
                    key,
                    spec,
                    opts.timeout,
                    opts.memory_mb,
                    key=f"c2n-{key}",
                    pure=False,
                )
                for key, spec in todo
            ]
            for fut in as_completed(futures):
                yield fut.result()
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
