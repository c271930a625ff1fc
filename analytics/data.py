"""A data dir's archive as DuckDB views, read without disturbing the service.

The service alone writes the archive: analytics takes no lock and reads its published Parquet parts
(renamed into place, never half-written) through DuckDB views that re-expand their globs per query.
`events_df` also reads a playing series' files and derives a scripted match's log from its inputs; a
query over `events` first writes the derived logs it needs into the archive, analytics' one write.

    data = open_data_dir("./studio-data")
    data.seats_df(batch_id="bat_...")          # pandas
    data.query_arrow("SELECT ... WHERE seed = ?", [7])   # Arrow, values bound as parameters
"""
from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Callable, Iterable, Sequence

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from analytics.archive import materialize as derived_logs
from analytics.archive.cache import DerivedCache
from analytics.archive.format import from_ipc
from analytics.archive.layout import COMPACT_GLOB, EVENTS_DIR, RUNS_DIR, SEATS_DIR, STAGED, archive_dir, landed
from analytics.archive.store import Archive
from engine.arena.games import GAMES as ARENA_GAMES
from engine.rubric import DIMENSIONS, STATS
_INT_COLS = "tick agent a b c d e f g".split()
_EVENTS_VIEW = re.compile(r"\bevents\b", re.IGNORECASE)
log = logging.getLogger("studio.analytics")

# Column types of each view when the directory holds no file yet, so that queries written against
# a fresh data dir return an empty result instead of failing on a missing column.
EVENTS_COLUMNS = {"match_id": "VARCHAR", **{c: "INTEGER" for c in _INT_COLS[:2]}, "kind": "TINYINT",
                  "ok": "TINYINT", "reason": "TINYINT", **{c: "INTEGER" for c in _INT_COLS[2:]},
                  "v": "DOUBLE", "event": "VARCHAR", "refusal": "VARCHAR", "text": "VARCHAR"}
SEATS_COLUMNS = {
    **{c: "VARCHAR" for c in ("match_id", "run_id", "batch_id", "scenario_id", "scenario_hash", "config_hash")},
    "seed": "BIGINT", "spawn_seed": "BIGINT", "seat": "BIGINT", "anchor": "BOOLEAN", "name": "VARCHAR",
    "model": "VARCHAR", "rank": "BIGINT", "fitness_index": "DOUBLE", "grade": "VARCHAR",
    "archetype": "VARCHAR", "status": "VARCHAR", "crafter_score": "DOUBLE", "field_size": "BIGINT",
    "match_ticks": "BIGINT", "rubric": "VARCHAR", "scaffold": "VARCHAR", "achievements": "VARCHAR[]",
    "epilogue": "VARCHAR", **{d: "DOUBLE" for d in DIMENSIONS}, "net_worth": "DOUBLE",
    **{s: "BIGINT" for s in STATS[1:]},
}
# The runs issue owns the run view; only these columns are relied on here.
RUNS_COLUMNS = {"run_id": "VARCHAR", "status": "VARCHAR", "scenario_id": "VARCHAR", "batch_id": "VARCHAR",
                "created_at_ms": "BIGINT", "finished_at_ms": "BIGINT"}
VIEWS = {"events": (EVENTS_DIR, EVENTS_COLUMNS), "seats": (SEATS_DIR, SEATS_COLUMNS),
         "runs": (RUNS_DIR, RUNS_COLUMNS)}
# Columns that are all-null in some files come out typed NULL; pin them so unions stay stable.
_PINNED = {"seats": {"scaffold": "VARCHAR", "achievements": "VARCHAR[]"}}


def _literal(text: str) -> str:
    """A SQL string literal. View definitions cannot hold bound parameters, so the glob (a value,
    never an identifier) is quoted here with the quote doubled."""
    return "'" + text.replace("'", "''") + "'"


# A seat row's game: an arena game's id (the registry's), else the world. Scores of different games are
# different things (world fitness, chess accuracy, percent optimal Connect Four moves) and their
# matches share no players, so summaries and leaderboards keep each game apart.
WORLD = "world"
GAME_IDS = (WORLD, *ARENA_GAMES)
GAME_SQL = (f"(CASE WHEN scenario_id IN ({', '.join(_literal(g) for g in ARENA_GAMES)}) THEN scenario_id "
            f"ELSE {_literal(WORLD)} END)")
FAILED = "failed"  # a run that ended without a result to trust: left out of reports and leaderboards


def game_of(scenario_id: str | None) -> str:
    return scenario_id if scenario_id in ARENA_GAMES else WORLD


def where(*, batch_id=None, run_ids=None, scenario_id=None, match_ids=None, anchors: bool = True,
          game: str | None = None, exclude_runs=None) -> tuple[str, list]:
    """A WHERE clause over seats/runs columns and its bound values. Each filter is one value or a
    list of values; column names are fixed here, only values come from the caller. ``game``: one of
    GAME_IDS; ``exclude_runs``: run ids to leave out (DataDir.failed_run_ids)."""
    clauses, params = [], []
    if game is not None:
        if game not in GAME_IDS:
            raise ValueError(f"unknown game {game!r}; one of {', '.join(GAME_IDS)}")
        clauses.append(f"{GAME_SQL} = ?")
        params.append(game)
    if exclude_runs:
        clauses.append("NOT list_contains(?, run_id)")
        params.append([str(r) for r in exclude_runs])
    for column, value in (("batch_id", batch_id), ("run_id", run_ids), ("scenario_id", scenario_id),
                          ("match_id", match_ids)):
        if value is None:
            continue
        if isinstance(value, str):
            clauses.append(f"{column} = ?")
            params.append(value)
        else:
            clauses.append(f"list_contains(?, {column})")
            params.append([str(v) for v in value])
    if not anchors:
        clauses.append("NOT anchor")
    return (f" WHERE {' AND '.join(clauses)}" if clauses else ""), params


def failed_left_out(data: DataDir, failed: list[str], **filters) -> dict:
    """How many of ``failed`` runs (and their matches) the selection (where's filters) would have held."""
    if not failed:
        return {"failed_runs": 0, "matches": 0, "note": None}
    clause, params = where(**filters)
    clause = f"{clause} AND" if clause else " WHERE"
    counts = data.query(f"SELECT count(DISTINCT run_id) AS runs, count(DISTINCT match_id) AS matches "
                        f"FROM seats{clause} list_contains(?, run_id)", [*params, list(failed)])
    runs, matches = int(counts["runs"].iloc[0]), int(counts["matches"].iloc[0])
    note = (f"{runs} failed run{'s' if runs != 1 else ''} ({matches} match{'es' if matches != 1 else ''}) left out"
            if runs else None)
    return {"failed_runs": runs, "matches": matches, "note": note}


def _empty_select(columns: dict[str, str]) -> str:
    # Identifiers and types come from the constants above, never from the caller.
    cols = ", ".join(f"CAST(NULL AS {t}) AS {name}" for name, t in columns.items())
    return f"SELECT {cols} WHERE false"


class DataDir:
    """An archive opened for reading: views ``events``, ``seats``, ``runs`` on ``con``.

    With ``path`` None, ``con`` is used as it is (e.g. the service's own connection, whose
    ``seats`` table the series summary reads) and no views are created.
    """

    def __init__(self, path: str | Path | None = None, con: duckdb.DuckDBPyConnection | None = None,
                 progress: Callable[[int, int], None] | None = None):
        self.path = Path(path) if path is not None else None
        self.progress = progress  # (done, total) while a query's derived logs are written first
        self.con = con if con is not None else duckdb.connect(":memory:")
        if con is None or self.path is not None:
            # Our own connection (or one we add views to): timestamps read the same on every machine.
            # A bare service connection is left as its owner configured it.
            self.con.execute("SET timezone = 'UTC'")
        self._empty: set[str] = set()
        if self.path is not None:
            self.refresh()

    # -- views -----------------------------------------------------------------------------------
    def _dir(self, sub: str) -> Path:
        return archive_dir(self.path) / sub

    def _has_files(self, sub: str) -> bool:
        return any(self._dir(sub).glob(COMPACT_GLOB))

    def refresh(self) -> None:
        """(Re)create the views; a directory without files gets an empty view of the known columns."""
        self._empty.clear()
        for view, (sub, columns) in VIEWS.items():
            if self._has_files(sub):
                glob = _literal(str(self._dir(sub) / COMPACT_GLOB))
                pinned = _PINNED.get(view, {})
                replace = ", ".join(f"CAST({c} AS {t}) AS {c}" for c, t in pinned.items())
                star = f"* REPLACE ({replace})" if replace else "*"
                sql = f"SELECT {star} FROM read_parquet({glob}, union_by_name = true)"
            else:
                self._empty.add(view)
                sql = _empty_select(columns)
            self.con.execute(f"CREATE OR REPLACE TEMP VIEW {view} AS {sql}")

    def _pick_up_new_dirs(self) -> None:
        # An empty view does not glob; once its first file lands, switch it to the Parquet view.
        if self.path is not None and any(self._has_files(VIEWS[v][0]) for v in self._empty):
            self.refresh()

    # -- queries ---------------------------------------------------------------------------------
    def _run(self, sql: str, params: Sequence | dict | None):
        self._derive_for(sql, params)
        self._pick_up_new_dirs()
        return self.con.execute(sql, params if params is not None else [])

    def query(self, sql: str, params: Sequence | dict | None = None) -> pd.DataFrame:
        """pandas result of ``sql`` with ``?`` (or ``$name``) values bound from ``params``."""
        return self._run(sql, params).df()

    def query_arrow(self, sql: str, params: Sequence | dict | None = None) -> pa.Table:
        self._derive_for(sql, params)
        self._pick_up_new_dirs()
        # A relation, not a cursor: DuckDB 2 copies the rows once more for Arrow from a cursor.
        return self.con.sql(sql, params=params).to_arrow_table()

    def seats_df(self, *, batch_id: str | Iterable[str] | None = None, run_ids: Iterable[str] | None = None,
                 scenario_id: str | Iterable[str] | None = None, match_ids: Iterable[str] | None = None,
                 anchors: bool = True) -> pd.DataFrame:
        """Seat rows (one per agent per match, every results field); each filter is a value or a list."""
        return self.query(*self._seats_sql(batch_id, run_ids, scenario_id, match_ids, anchors))

    def seats_arrow(self, *, batch_id=None, run_ids=None, scenario_id=None, match_ids=None,
                    anchors: bool = True) -> pa.Table:
        return self.query_arrow(*self._seats_sql(batch_id, run_ids, scenario_id, match_ids, anchors))

    @staticmethod
    def _seats_sql(batch_id, run_ids, scenario_id, match_ids, anchors):
        clause, params = where(batch_id=batch_id, run_ids=run_ids, scenario_id=scenario_id, match_ids=match_ids,
                               anchors=anchors)
        return f"SELECT * FROM seats{clause} ORDER BY match_id, seat", params

    # -- derived logs --------------------------------------------------------------------------------
    def _archive(self) -> Archive:
        return Archive(str(archive_dir(self.path)), cache=DerivedCache.of(self.path))

    def materialize(self, keys: Iterable[str] | None = None) -> dict:
        """Write the derived logs of these series (every series when None) into the archive, where the
        events view reads them."""
        out = derived_logs.materialize(self._archive(), keys, progress=self.progress)
        if out["matches"]:
            log.info("analytics: wrote %d derived event logs of %d series", out["written"], len(out["series"]))
        return out

    def _derive_for(self, sql: str, params) -> None:
        """A query over the events view reads Parquet; the scripted matches it may read whose logs are
        derived are written first: those of the series its bound values name (a batch id, a match
        id), else of every series."""
        if self.path is None or not _EVENTS_VIEW.search(sql):
            return
        todo = derived_logs.pending(self._archive())
        if not todo:
            return
        values = {str(v) for v in (params.values() if isinstance(params, dict) else params or [])
                  for v in (v if isinstance(v, (list, tuple)) else [v])}
        named = [k for k, matches in todo.items() if k in values or values.intersection(matches)]
        self.materialize(named or None)

    def _derived_log(self, match_id: str) -> pa.Table | None:
        """A scripted match's log derived on demand (verified, through the cache), when its log is not
        written; None otherwise. DerivedLogError when it cannot be derived."""
        arch = self._archive()
        key = next((k for (k,) in self.con.execute("SELECT batch_id FROM seats WHERE match_id = ? LIMIT 1",
                                                   [match_id]).fetchall() if k), None)
        if arch.derived(match_id, key) is None or arch.stored_events(match_id, key) is not None:
            return None
        return arch.events(match_id, key)

    def failed_run_ids(self) -> list[str]:
        """Runs the archive's run views record as failed. A bare connection (the service's, whose
        callers select ended runs themselves) has no run views: none."""
        if self.path is None:
            return []
        return [r for (r,) in self._run("SELECT DISTINCT run_id FROM runs WHERE status = ? ORDER BY run_id",
                                        [FAILED]).fetchall()]

    def games(self, **filters) -> list[str]:
        """The games the selected seat rows belong to, in GAME_IDS order (filters as where's)."""
        clause, params = where(**filters)
        found = {g for (g,) in self._run(f"SELECT DISTINCT {GAME_SQL} FROM seats{clause}", params).fetchall()}
        return [g for g in GAME_IDS if g in found]

    def runs_df(self, *, batch_id=None, run_ids=None, scenario_id=None) -> pd.DataFrame:
        clause, params = where(batch_id=batch_id, run_ids=run_ids, scenario_id=scenario_id)
        return self.query(f"SELECT * FROM runs{clause} ORDER BY run_id", params)

    def runs_arrow(self, *, batch_id=None, run_ids=None, scenario_id=None) -> pa.Table:
        clause, params = where(batch_id=batch_id, run_ids=run_ids, scenario_id=scenario_id)
        return self.query_arrow(f"SELECT * FROM runs{clause} ORDER BY run_id", params)

    def events_df(self, match_id: str, kinds: Iterable[str] | None = None) -> pd.DataFrame:
        """One match's events in log order, optionally only some kinds (by name: 'snapshot', ...)."""
        return self.query(*self._events_sql(match_id, kinds))

    def events_arrow(self, match_id: str, kinds: Iterable[str] | None = None) -> pa.Table:
        return self.query_arrow(*self._events_sql(match_id, kinds))

    def _events_sql(self, match_id: str, kinds):
        landing = self._dir(EVENTS_DIR) / landed(match_id) if self.path is not None else None
        drop = "file_row_number"
        derived = None
        if landing is not None and not landing.exists():
            derived = self._derived_log(match_id)
        if derived is not None:  # a scripted match kept as its inputs: its log derived, not written
            self.con.register("landed_events", derived.replace_schema_metadata(None))
            source, params = "(SELECT *, row_number() OVER () AS file_row_number FROM landed_events)", []
        elif landing is not None and landing.exists():  # a series still playing: its matches are not compacted yet
            with landing.open("rb") as f:
                table = from_ipc(f.read())
            self.con.register("landed_events", table.replace_schema_metadata(None))
            source, params = "(SELECT *, row_number() OVER () AS file_row_number FROM landed_events)", []
        elif self.path is not None and (files := self._events_parts()):
            # A series' files hold many matches, one row group each: the match_id statistics let DuckDB
            # skip every other row group; file_row_number keeps the log's own order. Staged parts (a
            # series still playing) count too; a part caught both staged and published is read once.
            source = ("(SELECT * FROM read_parquet(?, file_row_number = true, filename = true, union_by_name = true) "
                      "WHERE match_id = ? QUALIFY filename = min(filename) OVER ())")
            params, drop = [files, match_id], "file_row_number, filename"
        else:
            source, params = "(SELECT *, 0 AS file_row_number FROM events WHERE match_id = ?)", [match_id]
        sql = f"SELECT * EXCLUDE ({drop}) FROM {source}"
        if kinds is not None:
            sql += " WHERE list_contains(?, event::VARCHAR)"
            params.append(list(kinds))
        return sql + " ORDER BY file_row_number", params

    def _events_parts(self) -> list[str]:
        """Every Parquet file of event logs: the published ones and the parts of series still playing."""
        root = self._dir(EVENTS_DIR)
        return [str(p) for p in sorted(root.glob(COMPACT_GLOB))] + [str(p) for p in sorted(root.glob("*/*" + STAGED))]

    def events_files(self, match_ids: Iterable[str] | None = None) -> list[Path]:
        """The series files holding event logs, sorted; only those holding ``match_ids`` when given."""
        if self.path is None:
            raise ValueError("events files need a data dir, not a bare connection")
        if match_ids is not None:
            match_ids = list(match_ids)
            todo = derived_logs.pending(self._archive())
            if keys := [k for k, matches in todo.items() if not matches.keys().isdisjoint(match_ids)]:
                self.materialize(keys)
        else:
            self.materialize()
        files = sorted(self._dir(EVENTS_DIR).glob(COMPACT_GLOB))
        if match_ids is None or not files:
            return files
        rows = duckdb.connect(":memory:").execute(
            "SELECT DISTINCT filename FROM read_parquet(?, filename = true) WHERE list_contains(?, match_id)",
            [[str(p) for p in files], sorted({str(m) for m in match_ids})]).fetchall()
        return sorted(Path(r[0]) for r in rows)

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> "DataDir":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_data_dir(path: str | Path, con: duckdb.DuckDBPyConnection | None = None,
                  progress: Callable[[int, int], None] | None = None) -> DataDir:
    """Views over ``<path>/archive`` on ``con`` (a fresh in-memory connection by default); progress:
    called (done, total) while derived logs are written before a query over events."""
    return DataDir(path, con, progress)


def as_data(source) -> DataDir:
    """A DataDir from a DataDir, a data dir path, or a DuckDB connection that already has a
    ``seats`` view or table (the service's). One entry point so the API and notebooks share it."""
    if isinstance(source, DataDir):
        return source
    if isinstance(source, duckdb.DuckDBPyConnection):
        return DataDir(None, source)
    if isinstance(source, (str, Path)):
        return open_data_dir(source)
    raise TypeError(f"expected a DataDir, a data dir path or a DuckDB connection, got {type(source).__name__}")


def plain(value):
    """numpy scalars to Python ones, so results go through json.dumps as they are."""
    return value.item() if isinstance(value, np.generic) else value
