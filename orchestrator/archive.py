"""The archive: one Parquet file per match (events), one per match (seat results), one per run
(run metadata), and a DuckDB catalog the service alone writes.

Notebooks read the Parquet files (no locks, safe while the service runs); the service queries the
catalog. Files are written to a temporary name and renamed, so a reader never sees half a file.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from engine.events import COLUMNS
from engine.kernels.codes import EVENT_KINDS, INVALID, REASONS, SAY

EVENTS_DIR, SEATS_DIR, RUNS_DIR = "events", "seats", "runs"
_KINDS = pa.array(list(EVENT_KINDS), pa.string())
_REASONS = pa.array(list(REASONS), pa.string())


def archive_dir(data_dir: str | Path) -> Path:
    return Path(data_dir) / "archive"


def events_path(data_dir, match_id: str) -> Path:
    return archive_dir(data_dir) / EVENTS_DIR / f"{match_id}.parquet"


def _write(table: pa.Table, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".parquet.tmp")
    # Dictionary-encoding the integer columns and writing statistics cost a third of the write time;
    # delta-packing them shrinks what zstd has to compress (ticks ascend, most fields are small).
    dict_cols = [f.name for f in table.schema if pa.types.is_dictionary(f.type)]
    delta = {f.name: "DELTA_BINARY_PACKED" for f in table.schema if pa.types.is_integer(f.type)}
    pq.write_table(table, tmp, compression="zstd", compression_level=1, use_dictionary=dict_cols or False,
                   write_statistics=False, column_encoding=delta or None)
    os.replace(tmp, path)


def events_table(match_id: str, cols: dict, meta: dict, messages: list[str] | None = None) -> pa.Table:
    """The event columns of engine/events.py plus the match id and readable names for kind/reason.
    With the match's message table, the text column is built without touching a Python object per
    row: say and invalid rows index the messages, every other row is null."""
    n = len(cols["tick"])
    arrays = {"match_id": pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int8)),
                                                        pa.array([match_id]))}
    for name in COLUMNS:
        arrays[name] = pa.array(cols[name])
    arrays["event"] = pa.DictionaryArray.from_arrays(pa.array(cols["kind"]), _KINDS)
    refused = cols["ok"] == 0
    arrays["refusal"] = pa.DictionaryArray.from_arrays(pa.array(cols["reason"], mask=~refused), _REASONS)
    if messages is None:
        arrays["text"] = pa.array(list(cols["text"]), pa.string())
    else:
        has_text = (cols["kind"] == SAY) | (cols["kind"] == INVALID)
        arrays["text"] = pa.DictionaryArray.from_arrays(pa.array(cols["b"], mask=~has_text),
                                                        pa.array(messages or [""], pa.string()))
    # Required (non-null) columns skip Parquet's definition levels: a sixth of the write time.
    schema = pa.schema([pa.field(k, a.type, nullable=k in ("refusal", "text")) for k, a in arrays.items()],
                       metadata={b"studio": json.dumps(meta).encode()})
    return pa.Table.from_arrays(list(arrays.values()), schema=schema)


def write_events(data_dir, match_id: str, cols: dict, meta: dict, messages: list[str] | None = None) -> Path:
    path = events_path(data_dir, match_id)
    _write(events_table(match_id, cols, meta, messages), path)
    return path


def read_events(path: str | Path, with_text: bool = True) -> tuple[dict, dict]:
    """(columns as numpy arrays, the match metadata) from a stored event log. Scoring needs no text."""
    table = pq.read_table(path, columns=list(COLUMNS) + (["text"] if with_text else []))
    cols = {name: table.column(name).to_numpy() for name in COLUMNS}
    if with_text:
        text = table.column("text")
        if pa.types.is_dictionary(text.type):
            text = text.cast(pa.string())
        cols["text"] = np.array(text.to_pylist(), dtype=object)
    meta = json.loads((table.schema.metadata or {}).get(b"studio", b"{}"))
    return cols, meta


_STR, _I64, _I32, _F64 = pa.string(), pa.int64(), pa.int32(), pa.float64()
# Explicit, so a first file whose batch_id happens to be null still has the same schema as the rest.
SEAT_SCHEMA = pa.schema(
    [(c, _STR) for c in ("match_id", "run_id", "batch_id", "scenario_id", "scenario_hash", "config_hash")]
    + [("seed", _I64), ("spawn_seed", _I64), ("seat", _I32), ("anchor", pa.bool_()), ("name", _STR),
       ("model", _STR), ("provider", _STR), ("rank", _I32), ("fitness_index", _F64), ("grade", _STR), ("archetype", _STR),
       ("status", _STR), ("crafter_score", _F64), ("field_size", _I32), ("match_ticks", _I32), ("rubric", _STR),
       ("scaffold", _STR), ("achievements", pa.list_(_STR)), ("epilogue", _STR)]
    + [(d, _F64) for d in ("survival", "economy", "social", "competitiveness", "exploration")]
    + [("net_worth", _F64)]
    + [(c, _I32) for c in ("ticks_alive", "trades", "partners", "raids_won", "raids_lost", "raids_repelled",
                           "relics", "tiles_seen", "refused")])


def seat_table(rows: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=SEAT_SCHEMA)


def seat_rows(run: dict, results: dict) -> list[dict]:
    """One flat row per agent (seats and anchors) with every results field, for analysis."""
    rows = []
    for entry in results["agents"] + results.get("anchors", []):
        row = {
            "match_id": run["match_id"], "run_id": run["run_id"], "batch_id": run.get("batch_id"),
            "scenario_id": run["scenario_id"], "scenario_hash": run["scenario_hash"],
            "config_hash": run["config_hash"], "seed": run["seed"], "spawn_seed": run["spawn_seed"],
            "seat": entry["seat"], "anchor": entry in results.get("anchors", []), "name": entry["name"],
            "model": entry["model"], "provider": "local" if entry in results.get("anchors", []) else
            run.get("providers", {}).get(entry["seat"]) or "local",
            "rank": entry["rank"], "fitness_index": entry["fitness_index"],
            "grade": entry["grade"], "archetype": entry["archetype"], "status": entry["status"],
            "crafter_score": entry["crafter_score"], "field_size": results["field_size"],
            "match_ticks": results["match_ticks"], "rubric": results["rubric"],
            "scaffold": run.get("scaffolds", {}).get(entry["seat"]),
            "achievements": entry.get("achievements", []), "epilogue": entry["epilogue"],
        }
        for k, v in entry["dimensions"].items():
            row[k] = v
        for k, v in entry.get("stats", {}).items():
            row[k] = v
        rows.append(row)
    return rows


def write_seats(data_dir, match_id: str, rows: list[dict]) -> Path:
    path = archive_dir(data_dir) / SEATS_DIR / f"{match_id}.parquet"
    _write(seat_table(rows), path)
    return path


def write_runs(data_dir, run_views: list[dict]) -> Path:
    """Ended runs' metadata, one row each (nested fields as JSON text), named after the first run."""
    flat = [{k: (json.dumps(v) if isinstance(v, (dict, list)) else v) for k, v in view.items()} for view in run_views]
    path = archive_dir(data_dir) / RUNS_DIR / f"{run_views[0]['run_id']}.parquet"
    _write(pa.Table.from_pylist(flat), path)
    return path


def remove_match(data_dir, match_id: str) -> None:
    """Drop a match's files (a run that will be replayed, or that failed after archiving)."""
    for folder in (EVENTS_DIR, SEATS_DIR):
        (archive_dir(data_dir) / folder / f"{match_id}.parquet").unlink(missing_ok=True)
