"""After runs end: the export of their final views to archive/runs/, and the compaction of their
matches into one Parquet file per series (analytics.archive.store). A single run is exported and
compacted as it ends (with whatever else ended meanwhile: one file); a series waits until none of its
runs is left to play, then goes in one file of views (`runs/<batch_id>.parquet`, rewritten whole if it
is settled again) and one of matches. Per-run files would cost the service a Parquet write per run
and leave analysts thousands of files to scan.

Nothing on a request's path waits for it: the dispatcher hands ended runs to a thread, and whatever
has queued up meanwhile goes in one file. A cancel of a queued run, rarer, writes its row at once.
"""
from __future__ import annotations

import logging
import queue
import threading

from analytics.archive.store import Archive
from orchestrator.runs.lifecycle import ACTIVE
from orchestrator.runs.views import run_view

log = logging.getLogger("studio.export")


def export(core, run_ids: list[str], store: Archive | None = None, name: str | None = None) -> None:
    """Write the final views of these runs to archive/runs/ (named `name`, else after the first run);
    a copy, so a failure is only logged."""
    try:
        placeholders = ",".join("?" * len(run_ids))
        views = []
        for row in core.store.all(f"SELECT * FROM runs WHERE id IN ({placeholders})", tuple(run_ids)):
            view = run_view(row)
            view["account_id"] = row["account_id"]
            views.append(view)
        if views:
            (store or Archive.of(core.data_dir, core.config)).write_runs(views, name)
    except Exception:  # the store stays the record; the export is a copy for notebooks
        log.exception("exporting %d ended runs failed", len(run_ids))


def settle(core, store: Archive, ended: list, swept: list = (), compact: bool = True) -> None:
    """ended: runs (id, batch_id, match_id) that just ended; swept: runs whose matches a previous
    process landed and never compacted. Single runs that just ended are exported; every series of
    either list with no run left to play is exported and compacted whole, and so is each single run's
    match. Landed files stay readable until then; a failed compaction is logged and retried by the
    next sweep. compact=False: views only (a process that does not play runs must not compact what
    the playing process's archiver may be compacting)."""
    singles = [r["id"] for r in ended if not r["batch_id"]]
    if singles:
        export(core, singles, store)
    try:
        for b in sorted({r["batch_id"] for r in [*ended, *swept] if r["batch_id"]}):
            runs = core.store.all("SELECT id, status, match_id FROM runs WHERE batch_id = ? ORDER BY trial", (b,))
            if not any(r["status"] in ACTIVE for r in runs):
                if compact:
                    store.compact(b, [r["match_id"] for r in runs if r["match_id"]])
                export(core, [r["id"] for r in runs], store, name=b)
        for r in [*ended, *swept]:
            if compact and not r["batch_id"] and r["match_id"]:
                store.compact(r["match_id"], [r["match_id"]])
    except Exception:
        log.exception("compacting ended series failed")


def cancelled_in_queue(core, run_id: str) -> None:
    """A queued run was cancelled: nothing played, so no dispatcher heard of it. This process's
    archiver settles it (its series may have nothing left to play now); with none here, its view is
    exported and the compaction left to the playing process's next sweep."""
    d = getattr(core, "dispatcher", None)
    if d is not None:
        d.archiver.ended([run_id])
        return
    rows = core.store.all("SELECT id, batch_id, match_id FROM runs WHERE id = ?", (run_id,))
    settle(core, Archive.of(core.data_dir, core.config), rows, compact=False)


class Archiver:
    def __init__(self, core, store: Archive | None = None):
        self.core = core
        self.archive = store or Archive.of(core.data_dir, core.config)
        self._queue: queue.Queue = queue.Queue()
        self._thread = threading.Thread(target=self._drain, name="studio-export", daemon=True)
        self._thread.start()

    def ended(self, run_ids: list[str]) -> None:
        self._queue.put(("ended", run_ids))

    def sweep(self) -> None:
        """Compact whatever a previous process landed and never compacted (it stopped mid-series)."""
        self._queue.put(("sweep",))

    def flush(self) -> None:
        """Wait until everything handed over so far is written."""
        done = threading.Event()
        self._queue.put(("flush", done))
        done.wait()

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=30)

    def _rows(self, column: str, values: list[str]) -> list:
        marks = ",".join("?" * len(values))  # column is one of two fixed names, never a caller's
        return self.core.store.all(f"SELECT id, batch_id, match_id FROM runs WHERE {column} IN ({marks})",
                                   tuple(values)) if values else []

    def _drain(self) -> None:
        while True:
            items = [self._queue.get()]
            while True:  # take whatever else queued up meanwhile: one file for all of it
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            run_ids = list(dict.fromkeys(r for item in items if item and item[0] == "ended" for r in item[1]))
            swept = self._rows("match_id", self.archive.landed()) if any(
                item and item[0] == "sweep" for item in items) else []
            ended = self._rows("id", run_ids)
            if ended or swept:
                settle(self.core, self.archive, ended, swept)
            for item in items:
                if item and item[0] == "flush":
                    item[1].set()
            if None in items:
                return
