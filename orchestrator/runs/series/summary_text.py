"""A series' summary (`series_summary`) over exactly its scored matches' seat rows and graded seats,
and the JSON text the batch read sends: the one computation, run by a worker's actor when the process
has a dispatcher, else by the reading process.

A process keeps the series it summarised last (SERIES_ROWS of them) as running summaries:
a series is summarised again each time it grows, and an ended match's
rows never change, so only the matches new since the last summary are read and folded in.

Imports nothing of the service's core, so a worker process loads only what it computes with.
"""
from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import NamedTuple

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from analytics.archive.format import SEAT_SCHEMA
from analytics.archive.store import Archive
from analytics.data import DIMENSIONS
from analytics.choice import BCA_MIN_N, CHOICE
from analytics.summary import SUMMARY_COLUMNS, empty, summarize, table_rows
from analytics.summary_running import RunningSummary
from engine.rubric import ACHIEVEMENTS

SERIES_ROWS = 64  # series whose seat rows a process keeps, the most recently summarised


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
    (match_id, seat, accuracy) of the graded seats (`graded_seats`)."""
    con = duckdb.connect()
    con.register("seats", archive.seats({m: batch_id for m in match_ids}))
    con.register("decisions", decisions)
    return con


class _Series:
    """What a process keeps of a series it summarised: its summary kept up to date as its matches
    land, and the rows read (a summary over fewer matches than were read starts from these)."""

    def __init__(self, batch_id: str | None):
        self.running = RunningSummary(batch_id)
        self.parts: list[pa.Table] = []


_kept: OrderedDict[tuple[str, str | None], _Series] = OrderedDict()
_kept_lock = threading.Lock()


def compute(archive: Archive, batch_id: str, match_ids: list[str], decisions: pa.Table) -> Kept:
    """The series' summary over these matches (those whose rows are there to read): only the matches
    new since this process last summarised the series are read and folded in. A match whose rows are
    not there yet is read again next time."""
    key = (archive.uri, batch_id)
    with _kept_lock:
        kept = _kept.pop(key, None) or _Series(batch_id)
    new = [m for m in match_ids if m not in kept.running.matches]
    if new:
        got = archive.seats({m: batch_id for m in new}).select(list(SUMMARY_COLUMNS))
        kept.running.add(got)
        kept.parts.append(got)
    with _kept_lock:
        _kept[key] = kept
        while len(_kept) > SERIES_ROWS:
            _kept.popitem(last=False)
    if kept.running.matches.issubset(match_ids):
        fresh = kept.running.summary(decisions)
    else:  # an older state of the series than this process has folded in
        rows = pa.concat_tables(kept.parts)
        rows = rows.filter(pc.is_in(rows["match_id"], pa.array(list(match_ids), pa.string())))
        fresh = summarize(table_rows(rows, decisions, batch_id), batch_id)
    return Kept(fresh, encode(fresh))


def nothing_scored(batch_id: str) -> Kept:
    """The summary of a series none of whose runs has ended: no rows to read, nothing to compute."""
    fresh = empty(batch_id)
    return Kept(fresh, encode(fresh))


def warm() -> None:
    """Summaries of a made-up series of every size the interval methods change at, so that a fresh
    process's first real summary does not also pay for loading the statistics stack (scipy loads its
    modules on first use, numpy and pandas their kernels)."""
    rows = [{"match_id": f"m{t:02}", "run_id": f"r{t:02}", "batch_id": "warm", "scenario_id": "warm", "seed": t,
             "seat": seat, "anchor": bool(seat), "name": f"seat {seat}", "model": "local/warm", "rank": 1 + seat,
             "status": "alive", "fitness_index": (37.0 * t + 11.0 * seat) % 100, "crafter_score": 1.0,
             **{d: (13.0 * t + 7.0 * seat + k) % 100 for k, d in enumerate(DIMENSIONS)},
             "achievements": list(ACHIEVEMENTS[:1 + t % 3])} for t in range(50) for seat in range(2)]
    for n in sorted({k for table in CHOICE.values() for k in table} | {BCA_MIN_N}):
        part = rows[:2 * n]
        graded = pa.table({"match_id": [r["match_id"] for r in part], "seat": pa.array([r["seat"] for r in part], pa.int32()),
                           "accuracy": [r["fitness_index"] for r in part]})
        summarize(table_rows(pa.Table.from_pylist(part, schema=SEAT_SCHEMA), graded, "warm"), "warm")
