"""A series' summary (analytics.summary.series_summary) over exactly its scored matches' seat rows and
graded seats, and the JSON text the batch read sends: the one computation, run by a worker's task
(orchestrator.runs.summary_task) when the process has a dispatcher, else by the reading process.

Imports nothing of the service's core, so a worker process loads only what it computes with.
"""
from __future__ import annotations

import json
from typing import NamedTuple

import duckdb
import pyarrow as pa

from analytics.archive.store import Archive
from analytics.summary import series_summary


class Kept(NamedTuple):
    """A summary and its JSON text as REST sends it (Starlette's JSONResponse encoding), so a read of a
    series that did not change encodes none of its intervals either. The dict is shared between reads:
    callers do not change it."""
    summary: dict
    text: str


def encode(body) -> str:
    return json.dumps(body, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def source(archive: Archive, match_ids: list[str], batch_id: str | None, decisions: pa.Table):
    """An in-memory DuckDB table of exactly this series' seat rows (landed or compacted): no glob over
    the whole archive, and no dependence on the export of ended runs having caught up. decisions:
    (match_id, seat, accuracy) of the graded seats (orchestrator.grading.read.graded_seats)."""
    con = duckdb.connect()
    con.register("seats", archive.seats({m: batch_id for m in match_ids}))
    con.register("decisions", decisions)
    return con


def compute(archive: Archive, batch_id: str, match_ids: list[str], decisions: pa.Table) -> Kept:
    fresh = series_summary(source(archive, match_ids, batch_id, decisions), batch_id)
    return Kept(fresh, encode(fresh))
