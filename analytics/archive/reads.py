"""Reading the archive: a match's event log wherever it is, written or derived, and its seat rows.

`Reads.events` is the one read every reader goes through (pages, the grader, forks, exports, the
notebook API): the log as written (landed, in a part of its series, or compacted), else, for a
scripted match kept as its inputs, regenerated, verified and cached. The records are found in the
seat files' footers, which a process keeps read (`_FOOTERS`). A file that is there and cannot be
decoded raises `Damaged`, never reads as absent. A mixin of the store's `Archive`, whose file helpers
(`_path`, `_parts`, `_from_parts`...) it uses.
"""
from __future__ import annotations

import json
import posixpath
import threading

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from analytics.archive import derive
from analytics.archive.damage import Damaged
from analytics.archive.format import SEAT_SCHEMA, event_columns, table_meta
from analytics.archive.layout import (
    COMPACT,
    EVENTS_DIR,
    SEATS_DIR,
    TEMP_SUFFIX,
    compacted,
    landed,
    landed_id,
    part_of,
)

FOOTERS_KEPT = 4096  # files' footers (their matches' records or metadata) this process keeps read
_FOOTERS: dict[tuple, dict] = {}
_FOOTERS_LOCK = threading.Lock()  # the service's page threads share it


class Reads:
    def _stored(self, match_id: str, key: str | None = None) -> pa.Table | None:
        """One match's event log wherever it is written now (landed, in a part of its series, or
        compacted under its series' key)."""
        try:
            return self._read_landed(EVENTS_DIR, match_id)
        except FileNotFoundError:  # not landed, or compacted away a moment ago
            pass
        for k in dict.fromkeys(x for x in (key, match_id) if x):
            for matches, table in self._from_parts(EVENTS_DIR, k, {match_id}):
                return table.replace_schema_metadata({b"studio": json.dumps(matches[match_id]).encode()})
            path = self._path(EVENTS_DIR, compacted(k))
            if self._exists(path):
                with self.fs.open_input_file(path) as f, self._decoding(path):  # one version of the file
                    meta = table_meta(pq.read_schema(f)).get("matches", {})
                    if match_id in meta:
                        table = pq.read_table(f, filters=[("match_id", "=", match_id)])
                        return table.replace_schema_metadata({b"studio": json.dumps(meta[match_id]).encode()})
        return None

    def stored_events(self, match_id: str, key: str | None = None) -> pa.Table | None:
        """events() without regenerating: the log as written (or materialized), else None."""
        return self._stored(match_id, key)

    def events(self, match_id: str, key: str | None = None) -> pa.Table | None:
        """One match's event log: as written (landed, in a part of its series, or compacted under its
        series' key), else, for a scripted match kept as its inputs, regenerated and verified
        (DerivedLogError when it cannot be), through the cache."""
        table = self._stored(match_id, key)
        if table is not None:
            return table
        rec = self.derived(match_id, key)
        return None if rec is None else self.regenerated(match_id, rec)

    def regenerated(self, match_id: str, rec: dict) -> pa.Table:
        if derive.engine_changed(rec):
            return derive.regenerate(match_id, rec)  # raises, naming the engine
        table = self.cache.get(match_id) if self.cache is not None else None
        if table is None:
            table = derive.regenerate(match_id, rec)
            if self.cache is not None:
                self.cache.put(match_id, table)
        return table

    def derived(self, match_id: str, key: str | None = None) -> dict | None:
        """A scripted match's record where its seat rows are, else None."""
        path = self._path(SEATS_DIR, landed(match_id))
        try:
            with self.fs.open_input_file(path) as f, self._decoding(path):
                return table_meta(pa.ipc.open_file(f).schema).get(derive.KEY)
        except FileNotFoundError:
            pass
        for k in dict.fromkeys(x for x in (key, match_id) if x):
            for path in [*self._parts(SEATS_DIR, k).values(), self._path(SEATS_DIR, compacted(k))]:
                held = self._footer_matches(path)
                if match_id in held:
                    return held[match_id].get(derive.KEY)
        return None

    def _footer_matches(self, listed: str) -> dict[str, dict]:
        """_listed_matches through a bounded cache of footers: a file is known by its path, size and
        mtime (every file is written whole under another name and moved), so a page read of one match
        of a large series reads none of its parts' footers again."""
        info = self.fs.get_file_info(listed)
        if info.type != pafs.FileType.File:
            return self._listed_matches(listed)
        at = (self.uri, listed, info.size, info.mtime_ns)
        held = _FOOTERS.get(at)
        if held is None:
            held = self._listed_matches(listed)
            with _FOOTERS_LOCK:
                _FOOTERS[at] = held
                while len(_FOOTERS) > FOOTERS_KEPT:
                    _FOOTERS.pop(next(iter(_FOOTERS)))
        return held

    def index(self, sub: str, settled: bool = False, damaged: list | None = None) -> dict[str, dict[str, dict]]:
        """Every series key of one kind (EVENTS_DIR or SEATS_DIR) -> its matches' metadata (events: the
        match's; seats: its record when kept as inputs), from the files' footers: compacted files and
        published parts, and unless `settled`, staged parts and matches landed alone (under their
        series' key, or their own id) too: those of series still playing, whose orphans may yet go.
        A file that cannot be read (damage.Damaged) is left out and added to `damaged` when given, else
        raised."""
        out: dict[str, dict[str, dict]] = {}
        for info in self.fs.get_file_info(pafs.FileSelector(self._path(sub), allow_not_found=True, recursive=True)):
            try:
                self._index_file(sub, info, settled, out)
            except Damaged as e:
                if damaged is None:
                    raise
                damaged.append(e)
        return out

    def _index_file(self, sub: str, info, settled: bool, out: dict) -> None:
        name, parent = posixpath.basename(info.path), posixpath.dirname(info.path)
        if info.type != pafs.FileType.File or name.endswith(TEMP_SUFFIX):
            return
        part = part_of(name)
        if (m := landed_id(name)) is not None and not settled:
            try:
                with self.fs.open_input_file(info.path) as f, self._decoding(info.path):
                    meta = table_meta(pa.ipc.open_file(f).schema)
            except FileNotFoundError:  # compacted away since the listing
                return
            meta = meta if sub == EVENTS_DIR else {k: v for k, v in meta.items() if k == derive.KEY}
            key = meta.get(derive.KEY, {}).get("meta", meta).get("batch_id") or m
            out.setdefault(key, {})[m] = meta
        elif parent == self._path(sub) and name.endswith(COMPACT):
            out.setdefault(name[:-len(COMPACT)], {}).update(self._footer_matches(info.path))
        elif part and parent != self._path(sub) and (part[1] or not settled):
            out.setdefault(posixpath.basename(parent), {}).update(self._footer_matches(info.path))

    def read_events(self, match_id: str, key: str | None = None, with_text: bool = True):
        """(columns as numpy arrays, the match metadata), or (None, None) when nothing is archived."""
        table = self.events(match_id, key)
        if table is None:
            return None, None
        return event_columns(table, with_text), table_meta(table)

    def seats(self, matches: dict[str, str | None]) -> pa.Table:
        """Seat rows of the given matches (match id -> its series' key, or None for a single run)."""
        parts, by_key = [], {}
        for m, key in matches.items():
            if self._exists(self._path(SEATS_DIR, landed(m))):
                parts.append(self._read_landed(SEATS_DIR, m))
            else:
                by_key.setdefault(key or m, []).append(m)
        for key, ids in by_key.items():
            parts += [table for _, table in self._from_parts(SEATS_DIR, key, set(ids), SEAT_SCHEMA)]
            path = self._path(SEATS_DIR, compacted(key))
            if self._exists(path):
                parts.append(self._read_compact(path, filters=[("match_id", "in", ids)], schema=SEAT_SCHEMA))
        parts = [p.cast(SEAT_SCHEMA) for p in parts]
        return pa.concat_tables(parts) if parts else SEAT_SCHEMA.empty_table()

