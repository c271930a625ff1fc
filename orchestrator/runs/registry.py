"""The DuckDB catalog of archived matches, the compaction of ended series, and the export of ended
runs, written by the service alone.

The table `matches` registers each archived match (run, batch, scenario, path of its Parquet log);
the views `events` and `seats` read the per-match Parquet files themselves, so a match's thousands
of events and its seat rows are never copied into the catalog (measured: copying the seat rows in
cost ~10 ms of CPU per run, more than scoring the match). Notebooks never open this file (DuckDB
lets one process write it); they read the same Parquet files. Nothing on a request's path reads
the catalog, so this work happens on its own thread, and whatever has queued up meanwhile goes in
one commit and one file. A series whose last run ended (or a single run) is compacted here too
(orchestrator.archive_store), so the request path never pays for a Parquet write.
"""
from __future__ import annotations

import logging
import queue
import threading

import duckdb
import pyarrow as pa

from orchestrator import archive
from orchestrator.archive_store import Archive
from orchestrator.runs.views import run_view
from orchestrator.store import now_ms

log = logging.getLogger("studio.catalog")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS matches (
    match_id VARCHAR, run_id VARCHAR, account_id VARCHAR, batch_id VARCHAR, scenario_id VARCHAR,
    events_path VARCHAR, match_ticks INTEGER, stop_reason VARCHAR, registered_at_ms BIGINT
);
"""
_MATCH_COLUMNS = ("match_id", "run_id", "account_id", "batch_id", "scenario_id", "events_path", "match_ticks",
                  "stop_reason", "registered_at_ms")


class Registry:
    def __init__(self, core, store: Archive | None = None):
        self.core = core
        self.data_dir = core.data_dir
        self.archive = store or Archive.of(core.data_dir, core.config)
        path = archive.archive_dir(self.data_dir) / "catalog.duckdb"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.con = duckdb.connect(str(path))
        self.con.execute("SET timezone = 'UTC'")
        self.con.execute(_SCHEMA)
        self._lock = threading.Lock()
        self._views_made = False
        self._queue: queue.Queue = queue.Queue()
        self._thread = threading.Thread(target=self._drain, name="studio-catalog", daemon=True)
        self._thread.start()

    # -- what the dispatcher hands over ---------------------------------------------------------
    def ended(self, run_ids: list[str], rows: dict | None = None, outcomes: list[dict] | None = None) -> None:
        """Runs that ended: their matches (rows: run id -> store row, with the outcomes that archived
        something) go to the catalog, their final views to archive/runs/."""
        self._queue.put(("ended", run_ids, rows or {}, outcomes or []))

    def sweep(self) -> None:
        """Compact whatever a previous process landed and never compacted (it stopped mid-series)."""
        self._queue.put(("sweep",))

    def flush(self) -> None:
        """Wait until everything handed over so far is written."""
        done = threading.Event()
        self._queue.put(("flush", done))
        done.wait()

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A cursor for a reader thread (a DuckDB connection is not shared across threads)."""
        return self.con.cursor()

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=30)
        with self._lock:
            self.con.close()

    # -- the writer thread ----------------------------------------------------------------------
    def _drain(self) -> None:
        while True:
            items = [self._queue.get()]
            while True:  # take whatever else queued up meanwhile: one commit, one file for all of it
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            run_ids, rows, outcomes, flushes, stop, sweep = [], {}, [], [], False, False
            for item in items:
                if item is None:
                    stop = True
                elif item[0] == "flush":
                    flushes.append(item[1])
                elif item[0] == "sweep":
                    sweep = True
                else:
                    run_ids += item[1]
                    rows.update(item[2])
                    outcomes += item[3]
            try:
                if outcomes:
                    self._insert(rows, outcomes)
                if run_ids:
                    self._export(run_ids)
            except Exception:  # the catalog and exports are copies; the store and event logs stay the record
                log.exception("catalog registration failed")
            try:
                if run_ids or sweep:
                    self._compact(run_ids, sweep)
            except Exception:  # landed files stay readable; the next sweep compacts them
                log.exception("compacting ended series failed")
            for done in flushes:
                done.set()
            if stop:
                return

    def _insert(self, rows: dict, outcomes: list[dict]) -> None:
        matches = []
        for o in outcomes:
            if not o["match_id"]:  # a run that failed before anything was archived
                continue
            row, match_id = rows[o["run_id"]], o["match_id"]
            key = row["batch_id"] or match_id
            matches.append([match_id, row["id"], row["account_id"], row["batch_id"], row["scenario_id"],
                            self.archive.path(archive.EVENTS_DIR, key + archive.COMPACT), o["match_ticks"],
                            o["stop_reason"], now_ms()])
        if not matches:
            return
        matches_arrow = pa.table({n: [m[k] for m in matches] for k, n in enumerate(_MATCH_COLUMNS)})  # noqa: F841
        with self._lock:
            self.con.execute("INSERT INTO matches SELECT * FROM matches_arrow")  # DuckDB reads it by name

    def _compact(self, run_ids: list[str], sweep: bool) -> None:
        """Compact each series none of whose runs is still to play, and each ended single run."""
        if sweep:
            landed = self.archive.landed()
            marks = ",".join("?" * len(landed))
            rows = self.core.store.all(f"SELECT id, batch_id, match_id FROM runs WHERE match_id IN ({marks})",
                                       tuple(landed)) if landed else []
        else:
            marks = ",".join("?" * len(run_ids))
            rows = self.core.store.all(f"SELECT id, batch_id, match_id FROM runs WHERE id IN ({marks})",
                                       tuple(run_ids))
        singles = [r["match_id"] for r in rows if not r["batch_id"] and r["match_id"]]
        for b in sorted({r["batch_id"] for r in rows if r["batch_id"]}):
            runs = self.core.store.all("SELECT status, match_id FROM runs WHERE batch_id = ? ORDER BY trial", (b,))
            if not any(r["status"] in ("queued", "launching", "running") for r in runs):
                self.archive.compact(b, [r["match_id"] for r in runs if r["match_id"]])
        for m in singles:
            self.archive.compact(m, [m])
        root = self.archive.local_root
        if not self._views_made and root is not None and any((root / archive.EVENTS_DIR).glob("*.parquet")):
            with self._lock:  # read_parquet needs at least one file when the view is made
                self._make_views()

    def _make_views(self) -> None:
        root = self.archive.local_root
        for view, folder in (("events", archive.EVENTS_DIR), ("seats", archive.SEATS_DIR)):
            glob = str(root / folder / "*.parquet").replace("'", "''")  # a path of ours, not a user's
            self.con.execute(f"CREATE OR REPLACE VIEW {view} AS SELECT * FROM read_parquet('{glob}', "
                             "union_by_name = true)")
        self._views_made = True

    def _export(self, run_ids: list[str]) -> None:
        placeholders = ",".join("?" * len(run_ids))
        views = []
        for row in self.core.store.all(f"SELECT * FROM runs WHERE id IN ({placeholders})", tuple(run_ids)):
            view = run_view(row)
            view["account_id"] = row["account_id"]
            views.append(view)
        if views:
            self.archive.write_runs(views)
