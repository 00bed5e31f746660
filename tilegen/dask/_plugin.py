"""The distributed worker plug-in of set_worker_threads (imports distributed, so it is only
imported when a cluster is in use)."""
from __future__ import annotations

from distributed.diagnostics.plugin import WorkerPlugin


class TilegenThreads(WorkerPlugin):
    """tg.set_num_threads(n) in a worker process, when the worker starts."""

    name = "tilegen-threads"
    idempotent = True

    def __init__(self, n: int):
        self.n = n

    def setup(self, worker):
        import tilegen

        tilegen.set_num_threads(self.n)
