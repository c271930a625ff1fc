"""The DuckDB catalog of archived matches, written by the service alone.

Tables `matches` (one row per archived match, pointing at its Parquet log) and `seats` (every
results field per agent). Notebooks never open this file (DuckDB lets one process write it); they
read the Parquet files the archive writes beside it, which hold the same rows. Nothing on a
request's path reads the catalog either, so registration happens on its own thread, off the
dispatcher's (a DuckDB commit costs several milliseconds there).
"""
from __future__ import annotations

import queue
import threading

import duckdb
import pyarrow as pa

from orchestrator import archive
from orchestrator.runs.views import run_view
from orchestrator.store import now_ms

_SCHEMA = """
CREATE TABLE IF NOT EXISTS matches (
    match_id VARCHAR PRIMARY KEY, run_id VARCHAR, account_id VARCHAR, batch_id VARCHAR, scenario_id VARCHAR,
    events_path VARCHAR, match_ticks INTEGER, stop_reason VARCHAR, registered_at_ms BIGINT
);
"""


class Registry:
    def __init__(self, data_dir):
        self.data_dir = data_dir
        path = archive.archive_dir(data_dir) / "catalog.duckdb"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.con = duckdb.connect(str(path))
        self.con.execute("SET timezone = 'UTC'")
        self.con.execute(_SCHEMA)
        self._lock = threading.Lock()
        self.has_seats = bool(self.con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'seats'").fetchone()[0])
        self._queue: queue.Queue = queue.Queue()
        self._thread = threading.Thread(target=self._drain, name="studio-catalog", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            try:
                self._insert(*item)
            except Exception:  # the catalog is a convenience copy; the Parquet files stay the record
                import logging
                logging.getLogger("studio.catalog").exception("catalog registration failed")

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A cursor for a reader thread (a DuckDB connection is not shared across threads)."""
        return self.con.cursor()

    def register(self, rows: dict, outcomes: list[dict]) -> None:
        """Queue archived matches of ended runs (rows: run id -> store row) for the catalog."""
        self._queue.put((rows, outcomes))

    def flush(self) -> None:
        """Wait until everything queued so far is in the catalog."""
        done = threading.Event()
        self._queue.put((None, done))
        done.wait()

    def _insert(self, rows, outcomes) -> None:
        if rows is None:  # a flush marker
            outcomes.set()
            return
        matches, seats = [], []
        for o in outcomes:
            if not o["seat_rows"]:  # a run that failed before anything was archived
                continue
            row, match_id = rows[o["run_id"]], o["seat_rows"][0]["match_id"]
            matches.append([match_id, row["id"], row["account_id"], row["batch_id"], row["scenario_id"],
                            str(archive.events_path(self.data_dir, match_id)), o["match_ticks"], o["stop_reason"],
                            now_ms()])
            seats += o["seat_rows"]
        if not matches:
            return
        names = ("match_id", "run_id", "account_id", "batch_id", "scenario_id", "events_path", "match_ticks",
                 "stop_reason", "registered_at_ms")
        matches_arrow = pa.table({n: [m[k] for m in matches] for k, n in enumerate(names)})  # noqa: F841
        seats_arrow = archive.seat_table(seats)  # noqa: F841  (DuckDB reads it by name below)
        with self._lock:
            # DuckDB's executemany costs ~1 ms a row; Arrow scans insert the lot, in one commit
            self.con.execute("BEGIN")
            self.con.execute("INSERT OR REPLACE INTO matches SELECT * FROM matches_arrow")
            if not self.has_seats:
                self.con.execute("CREATE TABLE seats AS SELECT * FROM seats_arrow")
            else:
                self.con.execute("INSERT INTO seats BY NAME SELECT * FROM seats_arrow")
            self.con.execute("COMMIT")
            self.has_seats = True

    def export_runs(self, core, run_ids: list[str]) -> None:
        """Ended runs' metadata for notebooks: one Parquet file per call (a run ends once)."""
        rows = core.store.all(f"SELECT * FROM runs WHERE id IN ({','.join('?' * len(run_ids))})", tuple(run_ids))
        views = []
        for row in rows:
            view = run_view(row)
            view["account_id"] = row["account_id"]
            views.append(view)
        archive.write_runs(self.data_dir, views)

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=30)
        with self._lock:
            self.con.close()
