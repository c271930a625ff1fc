"""The archive's formats: a match's event log and seat rows as Arrow tables, the cheap Arrow IPC
(LZ4) bytes a worker hands back and how they are read, and the Parquet files a series is compacted into.

Where the files live is the layout's concern (their names) and the store's (the data dir, or any
pyarrow/fsspec filesystem); this module never touches a filesystem.
"""
from __future__ import annotations

import json
import re

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.parquet as pq

from engine.events import COLUMNS
from engine.kernels.codes import EVENT_KINDS, INVALID, REASONS, SAY
from engine.rubric import DIMENSIONS, STATS
from engine.text import writable

# The provider a seat row gives scripted seats and anchors. The archive keeps its own name for it: a
# value of the stored format (files written long ago carry it), on a floor that imports only the engine,
# which has no providers. It equals the orchestrator's LOCAL provider kind, and a test keeps the two equal.
LOCAL_PROVIDER = "local"

_KINDS = pa.array(list(EVENT_KINDS), pa.string())
_REASONS = pa.array(list(REASONS), pa.string())
_IPC = {True: pa.ipc.IpcWriteOptions(compression="lz4"), False: pa.ipc.IpcWriteOptions()}


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


def to_ipc(table: pa.Table, compress: bool = True) -> bytes:
    """Arrow IPC file bytes, LZ4-compressed: a third of the cost of a Parquet write for an event log.
    Uncompressed is 8x cheaper again for 4x the bytes: the choice when the bytes never leave the machine."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema, options=_IPC[compress]) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


def from_ipc(source) -> pa.Table:
    """A table from Arrow IPC file bytes or an open file."""
    return pa.ipc.open_file(pa.BufferReader(source) if isinstance(source, (bytes, pa.Buffer)) else source).read_all()


def table_meta(table: pa.Table | pa.Schema) -> dict:
    schema = table if isinstance(table, pa.Schema) else table.schema
    return json.loads((schema.metadata or {}).get(b"studio", b"{}"))


def event_columns(table: pa.Table, with_text: bool = True) -> dict:
    """One match's event columns as numpy arrays (the shape the rubric and the pages read)."""
    cols = {name: table.column(name).to_numpy() for name in COLUMNS}
    if with_text:
        text = table.column("text")
        if pa.types.is_dictionary(text.type):
            text = text.cast(pa.string())
        cols["text"] = np.array(text.to_pylist(), dtype=object)
    return cols


def write_parquet(tables, where, metadata: dict | None = None, filesystem=None) -> None:
    """Tables of one schema (metadata aside) into one Parquet file, one row group each, so a reader
    asking for one match skips every other row group by its match_id statistics."""
    tables = list(tables)
    first = tables[0]
    schema = first.schema.with_metadata({b"studio": json.dumps(metadata).encode()} if metadata else {})
    # Dictionary-encoding the integer columns costs time for no gain. Delta-packing them and LZ4 on top
    # (measured over 20 series files, 11.85 M events, idle): write 163 ms CPU per series and a full
    # scan of the scorecard columns in ~1.75 s, against zstd alone 257 ms and ~2.45 s (zstd+delta
    # 226 ms, ~1.9 s; LZ4 alone twice the bytes). Statistics go on match_id alone: every row group
    # holds one whole match, so only its match_id range lets a reader skip it.
    dict_cols = [f.name for f in schema if pa.types.is_dictionary(f.type)]
    delta = {f.name: "DELTA_BINARY_PACKED" for f in schema if pa.types.is_integer(f.type)}
    stats = ["match_id"] if "match_id" in schema.names else True
    with pq.ParquetWriter(where, schema, filesystem=filesystem, compression="lz4",
                          use_dictionary=dict_cols or False, write_statistics=stats,
                          column_encoding=delta or None) as w:
        for t in tables:
            w.write_table(t.replace_schema_metadata(schema.metadata), row_group_size=max(1, t.num_rows))


_STR, _I64, _I32, _F64 = pa.string(), pa.int64(), pa.int32(), pa.float64()
# Explicit, so a first file whose batch_id happens to be null still has the same schema as the rest.
SEAT_SCHEMA = pa.schema(
    [(c, _STR) for c in ("match_id", "run_id", "batch_id", "scenario_id", "scenario_hash", "config_hash")]
    + [("seed", _I64), ("spawn_seed", _I64), ("seat", _I32), ("anchor", pa.bool_()), ("name", _STR),
       ("model", _STR), ("provider", _STR), ("rank", _I32), ("fitness_index", _F64), ("grade", _STR), ("archetype", _STR),
       ("status", _STR), ("crafter_score", _F64), ("field_size", _I32), ("match_ticks", _I32), ("rubric", _STR),
       ("scaffold", _STR), ("achievements", pa.list_(_STR)), ("epilogue", _STR)]
    + [(d, _F64) for d in DIMENSIONS]
    + [("net_worth", _F64)]
    + [(c, _I32) for c in STATS if c != "net_worth"])


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
            "model": entry["model"], "provider": LOCAL_PROVIDER if entry in results.get("anchors", []) else
            run.get("providers", {}).get(entry["seat"]) or LOCAL_PROVIDER,
            "rank": entry["rank"], "fitness_index": entry["fitness_index"],
            "grade": entry["grade"], "archetype": entry["archetype"], "status": entry["status"],
            "crafter_score": entry["crafter_score"], "field_size": results["field_size"],
            "match_ticks": results["match_ticks"], "rubric": results["rubric"],
            "scaffold": run.get("scaffolds", {}).get(entry["seat"]),
            "achievements": entry.get("achievements", []), "epilogue": entry["epilogue"],
            "replied": entry.get("replied", True),  # false: a model seat whose provider never answered
        }
        for k, v in entry["dimensions"].items():
            row[k] = v
        for k, v in entry.get("stats", {}).items():
            row[k] = v
        rows.append(row)
    return rows


def run_table(run_views: list[dict]) -> pa.Table:
    """Ended runs' views, one row each (nested fields as JSON text)."""
    return pa.Table.from_pylist([{k: (json.dumps(v) if isinstance(v, (dict, list)) else v) for k, v in view.items()}
                                 for view in run_views])


# Every model turn of a match, beside its events: for the run's owner only, never on a public page.
TRANSCRIPT_SCHEMA = pa.schema([
    ("tick", pa.int32()), ("seat", pa.int16()), ("reply", pa.string()), ("actions", pa.string()),
    ("refused", pa.list_(pa.string())), ("latency_ms", pa.float64()), ("input_tokens", pa.int64()),
    ("output_tokens", pa.int64()), ("error", pa.string()), ("refusal", pa.string()), ("truncated", pa.bool_()),
    ("submitted_by", pa.string()),  # an agent seat's turn: "token:<prefix>" or "console:<handle>"
])


_TRANSCRIPT_TEXT = ("reply", "error", "refusal", "submitted_by")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def transcript_table(turns: list[dict]) -> pa.Table:
    """turns: rows of TRANSCRIPT_SCHEMA's fields (actions as JSON text), in tick then seat order. A
    model's words are kept as it sent them, but for what UTF-8 cannot hold (`writable`), so
    no reply can keep a run's transcript from being written."""
    return pa.Table.from_pylist([_writable(t) for t in turns], schema=TRANSCRIPT_SCHEMA)


def _writable(turn: dict) -> dict:
    out = dict(turn)
    for k in _TRANSCRIPT_TEXT:
        if isinstance(out.get(k), str):
            out[k] = writable(out[k])
    if out.get("refused"):
        out["refused"] = [writable(r) if isinstance(r, str) else r for r in out["refused"]]
    if isinstance(out.get("actions"), str):
        out["actions"] = _writable_json(out["actions"])
    return out


def _writable_json(text: str) -> str:
    """JSON text whose strings stay writable once read back: an escaped lone surrogate (an arena move
    as a model sent it) would decode to one, so such text is written with U+FFFD in its place."""
    if not _SURROGATE_ESCAPE.search(text):
        return writable(text)
    try:
        return writable(json.dumps(json.loads(text), ensure_ascii=False))
    except ValueError:
        return writable(text)


def transcript_rows(table: pa.Table, *, seat: int | None = None, offset: int = 0,
                    limit: int = 100) -> tuple[list[dict], bool]:
    """(up to `limit` turns from `offset`, whether more follow)."""
    if seat is not None:
        table = table.filter(pa.compute.equal(table.column("seat"), seat))
    rows = table.slice(offset, limit + 1).to_pylist()
    for r in rows:
        r["actions"] = json.loads(r["actions"]) if r["actions"] else []
        r["truncated"] = bool(r.get("truncated"))  # rows archived before the field, and arena turns
        r.setdefault("refusal", None)
        r.setdefault("submitted_by", None)  # rows archived before the field
    return rows[:limit], len(rows) > limit
