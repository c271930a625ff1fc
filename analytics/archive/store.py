"""Where the archive lives and how a match gets there, written by the service (the head) alone.

Workers never touch it: a worker hands back a match's events and seat rows as Arrow IPC bytes,
and the head lands them as they came (a file write, no re-encoding). When a series has no run left
to play (or a single run ends) its landed matches are compacted into one Parquet file per series,
one row group per match with statistics on, and the landed files go. Analysts scan one file per
series instead of thousands. The file names are analytics.archive.layout's.

The location is the data dir's `archive/` by default, or any filesystem pyarrow reaches (S3-compatible
stores, GCS, HDFS; anything fsspec reaches when fsspec is installed), named by `STUDIO_ARCHIVE_URI`
or `[archive] uri` in the data dir's config.toml. Files are written to a temporary name and moved,
so a reader never sees half a file.
"""
from __future__ import annotations

import json
import os
import posixpath
import secrets
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from analytics.archive.format import (SEAT_SCHEMA, event_columns, from_ipc, run_table, table_meta, transcript_rows,
                                      write_parquet)
from analytics.archive.layout import (ARENA_DIR, EVENTS_DIR, RUNS_DIR, SEATS_DIR, SUBDIRS, TRANSCRIPTS_DIR, archive_dir,
                                      compacted, game, landed, landed_id)


def archive_uri(data_dir: str | Path, config: dict | None = None) -> str:
    """The archive's location: STUDIO_ARCHIVE_URI, else config [archive] uri, else <data dir>/archive."""
    uri = os.environ.get("STUDIO_ARCHIVE_URI") or ((config or {}).get("archive") or {}).get("uri")
    return uri or str(archive_dir(data_dir))


def _filesystem(uri: str) -> tuple[pafs.FileSystem, str]:
    if "://" not in uri:
        return pafs.LocalFileSystem(), str(Path(uri).resolve())
    try:
        return pafs.FileSystem.from_uri(uri)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        import fsspec  # schemes pyarrow does not speak natively (memory://, gcs via gcsfs, ...)

        fs, path = fsspec.core.url_to_fs(uri)
        return pafs.PyFileSystem(pafs.FSSpecHandler(fs)), path


class Archive:
    def __init__(self, uri: str):
        self.uri = uri
        self.fs, self.root = _filesystem(uri)
        for sub in SUBDIRS:
            self.fs.create_dir(self._path(sub), recursive=True)

    @classmethod
    def of(cls, data_dir: str | Path, config: dict | None = None) -> "Archive":
        return cls(archive_uri(data_dir, config))

    @property
    def local_root(self) -> Path | None:
        """The archive's directory when it is on this machine's disk (DuckDB reads it there)."""
        return Path(self.root) if isinstance(self.fs, pafs.LocalFileSystem) else None

    def _path(self, *parts: str) -> str:
        return posixpath.join(self.root, *parts)

    def path(self, sub: str, name: str) -> str:
        return self._path(sub, name)

    def _exists(self, path: str) -> bool:
        return self.fs.get_file_info(path).type == pafs.FileType.File

    def _put(self, path: str, data: bytes) -> None:
        tmp = f"{path}.{secrets.token_hex(4)}.tmp"
        with self.fs.open_output_stream(tmp) as f:
            f.write(data)
        self.fs.move(tmp, path)

    # -- one match, as the worker sent it ----------------------------------------------------------
    def land(self, match_id: str, events_ipc: bytes | None, seats_ipc: bytes, transcript_ipc: bytes | None = None,
             game_json: bytes | None = None) -> None:
        """events_ipc is None for an arena game, whose graded log (game_json) is its whole record."""
        if transcript_ipc is not None:  # model turns stay one file per match: only their run's owner reads them
            self._put(self._path(TRANSCRIPTS_DIR, landed(match_id)), transcript_ipc)
        if game_json is not None:
            self._put(self._path(ARENA_DIR, game(match_id)), game_json)
        if events_ipc is not None:
            self._put(self._path(EVENTS_DIR, landed(match_id)), events_ipc)
        self._put(self._path(SEATS_DIR, landed(match_id)), seats_ipc)

    def read_game(self, match_id: str) -> dict | None:
        path = self._path(ARENA_DIR, game(match_id))
        if not self._exists(path):
            return None
        with self.fs.open_input_stream(path) as f:
            return json.loads(f.read())

    def read_transcript(self, match_id: str, **page) -> tuple[list[dict], bool]:
        """A page of a match's model turns (transcript_rows); nothing when it has none."""
        try:
            table = self._read_landed(TRANSCRIPTS_DIR, match_id)
        except (FileNotFoundError, OSError):
            return [], False
        return transcript_rows(table, **page)

    def remove_match(self, match_id: str) -> None:
        """Drop a landed match (a run that will be replayed, or that failed after landing)."""
        self._drop(match_id, (EVENTS_DIR, SEATS_DIR, TRANSCRIPTS_DIR))

    def _drop(self, match_id: str, subs: tuple) -> None:
        for sub in subs:
            path = self._path(sub, landed(match_id))
            if self._exists(path):
                self.fs.delete_file(path)

    def landed(self) -> list[str]:
        """Match ids landed and not yet compacted."""
        sel = pafs.FileSelector(self._path(SEATS_DIR), allow_not_found=True)
        return sorted(m for i in self.fs.get_file_info(sel) if (m := landed_id(posixpath.basename(i.path))))

    def _read_landed(self, sub: str, match_id: str) -> pa.Table:
        with self.fs.open_input_file(self._path(sub, landed(match_id))) as f:
            return from_ipc(f)

    # -- a series, compacted -----------------------------------------------------------------------
    def compact(self, key: str, match_ids: list[str]) -> None:
        """The landed matches of one series (or one single run) into one Parquet file per kind; the
        landed files go once both are in place. Matches already compacted or never landed are skipped."""
        present = [m for m in match_ids if self._exists(self._path(SEATS_DIR, landed(m)))]
        if not present:
            return
        with_events = [m for m in present if self._exists(self._path(EVENTS_DIR, landed(m)))]  # arena games have none
        events = [self._read_landed(EVENTS_DIR, m) for m in with_events]
        meta = {"matches": {m: table_meta(t) for m, t in zip(with_events, events)}}
        seats = pa.concat_tables([self._read_landed(SEATS_DIR, m) for m in present])
        # An earlier compaction of the same key (a series extended after a restart) is kept, not lost.
        for sub, tables in ((EVENTS_DIR, events), (SEATS_DIR, [seats])):
            if not tables:
                continue
            target = self._path(sub, compacted(key))
            if self._exists(target):
                old = pq.read_table(target, filesystem=self.fs)
                tables = [old.replace_schema_metadata(None)] + tables
                if sub == EVENTS_DIR:
                    meta["matches"] = {**self._compact_meta(target).get("matches", {}), **meta["matches"]}
            tmp = f"{target}.{secrets.token_hex(4)}.tmp"
            write_parquet(tables, tmp, meta if sub == EVENTS_DIR else None, filesystem=self.fs)
            self.fs.move(tmp, target)
        for m in present:  # the transcript stays: it is read per match, by its run's owner
            self._drop(m, (EVENTS_DIR, SEATS_DIR))

    def _compact_meta(self, path: str) -> dict:
        return table_meta(pq.read_schema(path, filesystem=self.fs))

    # -- reads -------------------------------------------------------------------------------------
    def events(self, match_id: str, key: str | None = None) -> pa.Table | None:
        """One match's event log wherever it is now (landed, or compacted under its series' key)."""
        try:
            return self._read_landed(EVENTS_DIR, match_id)
        except (FileNotFoundError, OSError):  # not landed, or compacted away a moment ago
            pass
        for k in dict.fromkeys(x for x in (key, match_id) if x):
            path = self._path(EVENTS_DIR, compacted(k))
            if self._exists(path):
                table = pq.read_table(path, filesystem=self.fs, filters=[("match_id", "=", match_id)])
                if table.num_rows:
                    meta = self._compact_meta(path).get("matches", {}).get(match_id, {})
                    return table.replace_schema_metadata({b"studio": json.dumps(meta).encode()})
        return None

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
            path = self._path(SEATS_DIR, compacted(key))
            if self._exists(path):
                parts.append(pq.read_table(path, filesystem=self.fs, filters=[("match_id", "in", ids)],
                                           schema=SEAT_SCHEMA))
        parts = [p.cast(SEAT_SCHEMA) for p in parts]
        return pa.concat_tables(parts) if parts else SEAT_SCHEMA.empty_table()

    def write_runs(self, run_views: list[dict], name: str | None = None) -> str:
        """Ended runs' metadata, one row each, in `name` (else named after the first run)."""
        path = self._path(RUNS_DIR, compacted(name or run_views[0]["run_id"]))
        tmp = f"{path}.{secrets.token_hex(4)}.tmp"
        pq.write_table(run_table(run_views), tmp, filesystem=self.fs, compression="zstd")
        self.fs.move(tmp, path)
        return path
