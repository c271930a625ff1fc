"""Leaderboards, paired comparisons and exports of an account's own archived matches, served by REST,
MCP and Python alike (GET /api/v1/leaderboard, /api/v1/compare, /api/v1/batches/:id/export).

Each call reads only the seat files of the account's ended runs (an in-memory DuckDB over exactly
those Parquet files, as the series summary does), so one account never sees another's matches and
nothing waits on the export of ended runs. A model is identified by its provider and model id: the
same model id reached through two providers is two rows.
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import duckdb

from analytics.archive.store import Archive
from analytics.compare import METRICS, compare_configs, leaderboard as bt_leaderboard
from analytics.data import GAME_IDS, as_data, game_of
from orchestrator.auth import Principal, require
from orchestrator.core import Core
from orchestrator.provider_kinds import LOCAL
from orchestrator.runs import match_log
from orchestrator.errors import DomainError
from orchestrator.statuses import SCORED
from orchestrator.store import runs
from orchestrator.validation import integer_param

FORMATS = {"csv": "text/csv; charset=utf-8", "parquet": "application/vnd.apache.parquet"}
MAX_RESAMPLES = 2000
MAX_SEAT = 63  # the highest seat index compare accepts: above every plan's roster


def _str(name: str, value: Any, *, required: bool = True) -> str | None:
    if value is None:
        if required:
            raise DomainError("bad_request", f"{name} is required")
        return None
    if not isinstance(value, str) or not value:
        raise DomainError("bad_request", f"{name}: should be a non-empty string")
    return value


def _int(name: str, value: Any, low: int, high: int, default: int | None) -> int | None:
    return integer_param(value, name, low, high, default=default, hint=f"should be an integer from {low} to {high}")


def _source(core: Core, matches: dict[str, str | None]) -> duckdb.DuckDBPyConnection:
    """A `seats` view over these matches' seat rows (match id -> its series' key, wherever the archive
    holds them now) where `model` reads provider:model for model seats (scripted local/* seats and
    anchors keep their id), and `provider` is a column of its own."""
    with match_log.readable():  # a damaged seat file is refused, naming it: never a table without its rows
        rows = Archive.of(core.data_dir, core.config).seats(matches)
    con = duckdb.connect()
    con.register("raw", rows)
    # files archived before seat rows carried their provider were all local or unknown: say local
    columns = {row[0] for row in con.execute("DESCRIBE raw").fetchall()}
    if "provider" in columns:
        con.execute(f"CREATE VIEW rows AS SELECT * REPLACE (coalesce(provider, '{LOCAL}') AS provider) FROM raw")
    else:
        con.execute(f"CREATE VIEW rows AS SELECT *, '{LOCAL}' AS provider FROM raw")
    con.execute(f"CREATE VIEW seats AS SELECT * REPLACE (CASE WHEN provider = '{LOCAL}' THEN model "
                "ELSE provider || ':' || model END AS model), model AS model_id FROM rows")
    return con


def _matches(core: Core, principal: Principal, **where: str) -> dict[str, str | None]:
    """The account's ended matches (match id -> batch_id) that satisfy ``where``."""
    return runs.scored_matches(core.store.conn(), principal.account_id, SCORED, **where)


def _series(core: Core, principal: Principal, name: str, batch_id: Any) -> str:
    batch_id = _str(name, batch_id)
    if not runs.series_owned(core.store.conn(), batch_id, principal.account_id):
        raise DomainError("unknown_run", f"{name}: no series '{batch_id}' on this account; a series answers its "
                          "batch_id at launch")
    return batch_id


def leaderboard(core: Core, principal: Principal, *, scenario_id: Any = None, by: Any = None,
                resamples: Any = None, game: Any = None) -> dict:
    """Bradley-Terry strengths of the models (or seat names) that played the account's ended runs of
    one scenario, or of every scenario of one game (`game`: world or an arena game's id; the games'
    players never meet, so a board never spans two), with bootstrap intervals; overlapping intervals
    share a tie group."""
    require(principal, "runs:read")
    game = _str("game", game, required=False)
    if game is not None and game not in GAME_IDS:
        raise DomainError("bad_request", f"game: should be one of {', '.join(GAME_IDS)}")
    scenario_id = _str("scenario_id", scenario_id, required=game is None)
    game = game or game_of(scenario_id)
    by = _str("by", by, required=False) or "model"
    if by not in ("model", "name"):
        raise DomainError("bad_request", "by: should be model or name")
    resamples = _int("resamples", resamples, 100, MAX_RESAMPLES, 1000)
    where = {"scenario_id": scenario_id} if scenario_id is not None else {}
    con = _source(core, _matches(core, principal, **where))
    out = {"scenario_id": scenario_id, "game": game, "by": by, "n_matches": 0, "n_resamples": resamples,
           "confidence": 0.95, "method": None, "rows": []}
    try:
        board = bt_leaderboard(con, scenario_id=scenario_id, game=game, by=by, n_resamples=resamples)
    except ValueError:  # no ended match of this scenario yet: an empty board, not an error
        return {"leaderboard": out}
    ids = {r[0]: (r[1], r[2]) for r in con.execute("SELECT DISTINCT model, provider, model_id FROM seats").fetchall()}
    rows = []
    for row in board.to_dict()["rows"]:
        label = row.pop("model")
        provider, model = ids.get(label, (None, None)) if by == "model" else (None, None)
        rows.append({"label": label, "provider": provider, "model": model, **row})
    out.update(n_matches=board.n_matches, method=board.method, confidence=board.confidence, rows=rows)
    return {"leaderboard": out}


def compare(core: Core, principal: Principal, *, batch_a: Any = None, batch_b: Any = None, seat: Any = None,
            seat_b: Any = None, metric: Any = None) -> dict:
    """One seat of series a against a seat of series b, paired on the seeds both played (a series
    launched with paired_with replays the other's seeds): difference of means with its interval."""
    require(principal, "runs:read")
    a, b = _series(core, principal, "batch_a", batch_a), _series(core, principal, "batch_b", batch_b)
    seat = _int("seat", seat, 0, MAX_SEAT, 0)
    seat_b = _int("seat_b", seat_b, 0, MAX_SEAT, None)
    metric = _str("metric", metric, required=False) or "fitness_index"
    if metric not in METRICS:
        raise DomainError("bad_request", f"metric: should be one of {', '.join(METRICS)}")
    con = _source(core, _matches(core, principal, batch_id=a) | _matches(core, principal, batch_id=b))
    try:
        result = compare_configs(as_data(con), a, b, seat, metric=metric, seat_b=seat_b)
    except ValueError as e:  # nothing to pair yet, or a seat the series do not have
        raise DomainError("bad_request", f"cannot compare {a} seat {seat} with {b} seat "
                          f"{seat if seat_b is None else seat_b}: {e}") from None
    return {"comparison": {"batch_a": a, "batch_b": b, "seat": seat, "seat_b": seat if seat_b is None else seat_b,
                           **result}}


def export(core: Core, principal: Principal, batch_id: str, fmt: Any = None) -> tuple[bytes, str]:
    """A series' seat rows (one per agent per ended match, every results field) as CSV or Parquet:
    (the file's bytes, its media type)."""
    require(principal, "runs:read")
    batch_id = _series(core, principal, "id", batch_id)
    fmt = _str("format", fmt, required=False) or "csv"
    if fmt not in FORMATS:
        raise DomainError("bad_request", f"format: should be one of {', '.join(FORMATS)}")
    return table(core, principal, fmt, batch_id=batch_id), FORMATS[fmt]


def table(core: Core, principal: Principal, fmt: str, **where: str) -> bytes:
    """The seat rows of the account's ended matches that satisfy ``where``, as a `fmt` file."""
    con = _source(core, _matches(core, principal, **where))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"export.{fmt}"
        options = "FORMAT parquet, COMPRESSION zstd" if fmt == "parquet" else "FORMAT csv, HEADER"
        # the path is ours (a fresh temporary dir); nothing of the caller's reaches the statement
        con.execute(f"COPY (SELECT * FROM rows ORDER BY match_id, seat) TO '{path}' ({options})")
        return path.read_bytes()


def export_csv(core: Core, principal: Principal, batch_id: str) -> dict:
    """The CSV export as text, for MCP clients (a tool result carries text, not files)."""
    data, _ = export(core, principal, batch_id, "csv")
    return {"batch_id": batch_id, "format": "csv", "csv": data.decode()}
