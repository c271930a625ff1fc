"""The DuckDB catalog of archived matches, written by the service alone.

Tables `matches` (one row per archived match, pointing at its Parquet log) and `seats` (every
results field per agent). Notebooks never open this file (DuckDB lets one process write it); they
read the Parquet files the archive writes beside it, which hold the same rows.
"""
from __future__ import annotations

import threading

import duckdb

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

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A cursor for a reader thread (a DuckDB connection is not shared across threads)."""
        return self.con.cursor()

    def register(self, rows: dict, outcomes: list[dict]) -> None:
        """Archived matches of finished runs (rows: run id -> store row) into the catalog, in one go."""
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
        with self._lock:
            self.con.executemany("INSERT OR REPLACE INTO matches VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", matches)
            seats_arrow = archive.seat_table(seats)  # noqa: F841  (DuckDB reads it by name below)
            if not self.has_seats:
                self.con.execute("CREATE TABLE seats AS SELECT * FROM seats_arrow")
                self.has_seats = True
            else:
                self.con.execute("INSERT INTO seats BY NAME SELECT * FROM seats_arrow")

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
        with self._lock:
            self.con.close()
