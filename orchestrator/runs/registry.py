"""The export of ended runs to archive/runs/ (one Parquet file per batch of ended runs), so readers of
the archive see every run that ended, cancelled or failed ones included, next to the matches.

Nothing on a request's path waits for it: the dispatcher hands ended runs to a thread, and whatever
has queued up meanwhile goes in one file. A cancel of a queued run, rarer, writes its row at once.
"""
from __future__ import annotations

import logging
import queue
import threading

from orchestrator import archive
from orchestrator.runs.views import run_view

log = logging.getLogger("studio.export")


def export(core, run_ids: list[str]) -> None:
    """Write the final views of these runs to archive/runs/; a copy, so a failure is only logged."""
    try:
        placeholders = ",".join("?" * len(run_ids))
        views = []
        for row in core.store.all(f"SELECT * FROM runs WHERE id IN ({placeholders})", tuple(run_ids)):
            view = run_view(row)
            view["account_id"] = row["account_id"]
            views.append(view)
        if views:
            archive.write_runs(core.data_dir, views)
    except Exception:  # the store stays the record; the export is a copy for notebooks
        log.exception("exporting %d ended runs failed", len(run_ids))


class Registry:
    def __init__(self, core):
        self.core = core
        self._queue: queue.Queue = queue.Queue()
        self._thread = threading.Thread(target=self._drain, name="studio-export", daemon=True)
        self._thread.start()

    def ended(self, run_ids: list[str]) -> None:
        self._queue.put(("ended", run_ids))

    def flush(self) -> None:
        """Wait until everything handed over so far is written."""
        done = threading.Event()
        self._queue.put(("flush", done))
        done.wait()

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=30)

    def _drain(self) -> None:
        while True:
            items = [self._queue.get()]
            while True:  # take whatever else queued up meanwhile: one file for all of it
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            run_ids = [r for item in items if item and item[0] == "ended" for r in item[1]]
            if run_ids:
                export(self.core, run_ids)
            for item in items:
                if item and item[0] == "flush":
                    item[1].set()
            if None in items:
                return
