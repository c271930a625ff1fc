"""Where the archive lives and how a match gets there.

The worker that played a match lands it (its events and seat rows as Arrow IPC files, as packed: no
re-encoding) when it can reach the archive (`reach`); otherwise it hands the bytes back and the
service (the head) lands them. When a series has no run left to play (or a single run ends) its
landed matches are compacted into one Parquet file per series, one row group per match with
statistics on, and the landed files go; a Ray task does that, off the head. Analysts scan one file per
series instead of thousands. The file names are analytics.archive.layout's.

The location is the data dir's `archive/` by default, or any filesystem pyarrow reaches (S3-compatible
stores, GCS, HDFS; anything fsspec reaches when fsspec is installed), named by `STUDIO_ARCHIVE_URI`
or `[archive] uri` in the data dir's config.toml. Files are written to a temporary name and moved,
so a reader never sees half a file; a writer that dies mid-write leaves only a temporary file, which
`drop_temporaries` removes once it is old. The store's run rows stay the record of which matches exist:
a landed file no run names is an orphan (`landed` lists it, the service's sweep removes it).
"""
from __future__ import annotations

import json
import os
import posixpath
import secrets
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from analytics.archive.format import (SEAT_SCHEMA, event_columns, from_ipc, run_table, table_meta, transcript_rows,
                                      write_parquet)
from analytics.archive.layout import (ARENA_DIR, EVENTS_DIR, RUNS_DIR, SEATS_DIR, SUBDIRS, TRANSCRIPTS_DIR, archive_dir,
                                      TEMP_SUFFIX, compacted, game, landed, landed_id)


def archive_uri(data_dir: str | Path, config: dict | None = None) -> str:
    """The archive's location: STUDIO_ARCHIVE_URI, else config [archive] uri, else <data dir>/archive."""
    uri = os.environ.get("STUDIO_ARCHIVE_URI") or ((config or {}).get("archive") or {}).get("uri")
    return uri or str(archive_dir(data_dir))


# Who can write the archive (and so where a match may be landed and a series compacted):
PROCESS = "process"  # only the process that opened it (fsspec's memory://): the service lands and compacts
NODE = "node"        # a path on one machine's disk: workers on the service's node, and the service
SHARED = "shared"    # every node: an object store or other remote filesystem, or a path declared shared


def archive_reach(uri: str, config: dict | None = None) -> str:
    """PROCESS, NODE or SHARED for this location. A path is on one node unless config.toml's
    `[archive] shared = true` (or STUDIO_ARCHIVE_SHARED=1) says every node mounts it at that path."""
    scheme = uri.split("://", 1)[0].lower() if "://" in uri else "file"
    if scheme == "memory":
        return PROCESS
    if scheme not in ("file", "local"):
        return SHARED
    declared = os.environ.get("STUDIO_ARCHIVE_SHARED") or ((config or {}).get("archive") or {}).get("shared")
    return SHARED if str(declared).lower() in ("1", "true", "yes") else NODE


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
    def __init__(self, uri: str, reach: str | None = None):
        self.uri = uri
        self.reach = reach or archive_reach(uri)
        self.fs, self.root = _filesystem(uri)
        for sub in SUBDIRS:
            self.fs.create_dir(self._path(sub), recursive=True)

    @classmethod
    def of(cls, data_dir: str | Path, config: dict | None = None) -> "Archive":
        uri = archive_uri(data_dir, config)
        return cls(uri, archive_reach(uri, config))

    @property
    def location(self) -> str:
        """The URI another process opens the same archive with (a local path made absolute: a worker's
        working directory is not the service's)."""
        return self.root if isinstance(self.fs, pafs.LocalFileSystem) else self.uri

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
        tmp = f"{path}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
        try:
            with self.fs.open_output_stream(tmp) as f:
                f.write(data)
            self.fs.move(tmp, path)
        except BaseException:
            try:  # a full disk leaves half a temporary file: gone now, not at the next sweep
                self.fs.delete_file(tmp)
            except OSError:
                pass
            raise

    # -- one match, as its worker packed it --------------------------------------------------------
    def land(self, match_id: str, events_ipc: bytes | None, seats_ipc: bytes, transcript_ipc: bytes | None = None,
             game_json: bytes | None = None) -> dict[str, int]:
        """events_ipc is None for an arena game, whose graded log (game_json) is its whole record. The
        seat rows go last: a match is landed once they are (`landed` lists them). Returns the files
        written, by path under the archive, with their sizes."""
        files = {}
        for sub, name, data in ((TRANSCRIPTS_DIR, landed(match_id), transcript_ipc),  # read per match by its owner
                                (ARENA_DIR, game(match_id), game_json), (EVENTS_DIR, landed(match_id), events_ipc),
                                (SEATS_DIR, landed(match_id), seats_ipc)):
            if data is not None:
                self._put(self._path(sub, name), data)
                files[f"{sub}/{name}"] = len(data)
        return files

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

    def landed(self, older_than_s: float | None = None) -> list[str]:
        """Match ids landed and not yet compacted (only those landed more than older_than_s ago, when given)."""
        sel = pafs.FileSelector(self._path(SEATS_DIR), allow_not_found=True)
        before = time.time() - older_than_s if older_than_s is not None else None
        return sorted(m for i in self.fs.get_file_info(sel) if (m := landed_id(posixpath.basename(i.path)))
                      and (before is None or i.mtime is None or i.mtime.timestamp() < before))

    def drop_temporaries(self, older_than_s: float) -> int:
        """Remove temporary files older than older_than_s: what a writer left when it died mid-write (a
        live writer moves its file into place within moments). Returns how many went."""
        before, gone = time.time() - older_than_s, 0
        for sub in SUBDIRS:
            for i in self.fs.get_file_info(pafs.FileSelector(self._path(sub), allow_not_found=True)):
                if i.path.endswith(TEMP_SUFFIX) and i.mtime is not None and i.mtime.timestamp() < before:
                    try:
                        self.fs.delete_file(i.path)
                        gone += 1
                    except OSError:  # another sweep, or the file's writer, moved it meanwhile
                        pass
        return gone

    def _read_landed(self, sub: str, match_id: str) -> pa.Table:
        with self.fs.open_input_file(self._path(sub, landed(match_id))) as f:
            return from_ipc(f)

    # -- a series, compacted -----------------------------------------------------------------------
    def compact(self, key: str, match_ids: list[str]) -> None:
        """The landed matches of one series (or one single run) into one Parquet file per kind; the
        landed files go once both are in place. Matches never landed are skipped, and so is a match a
        kind's file holds already: a compaction that stopped between its writes (its process killed)
        is simply run again."""
        present = [m for m in match_ids if self._exists(self._path(SEATS_DIR, landed(m)))]
        if not present:
            return
        events_file, seats_file = self._path(EVENTS_DIR, compacted(key)), self._path(SEATS_DIR, compacted(key))
        old_meta = self._compact_meta(events_file).get("matches", {}) if self._exists(events_file) else {}
        in_seats = set(pq.read_table(seats_file, filesystem=self.fs, columns=["match_id"]).column(0).to_pylist()
                       ) if self._exists(seats_file) else set()
        with_events = [m for m in present if m not in old_meta
                       and self._exists(self._path(EVENTS_DIR, landed(m)))]  # arena games have none
        events = [self._read_landed(EVENTS_DIR, m) for m in with_events]
        meta = {"matches": {**old_meta, **{m: table_meta(t) for m, t in zip(with_events, events)}}}
        seats = [self._read_landed(SEATS_DIR, m) for m in present if m not in in_seats]
        # An earlier compaction of the same key (a series extended after a restart) is kept, not lost.
        for target, tables in ((events_file, events), (seats_file, seats)):
            if not tables:
                continue
            if self._exists(target):
                tables = [pq.read_table(target, filesystem=self.fs).replace_schema_metadata(None)] + tables
            tmp = f"{target}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
            write_parquet(tables, tmp, meta if target == events_file else None, filesystem=self.fs)
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
        tmp = f"{path}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
        pq.write_table(run_table(run_views), tmp, filesystem=self.fs, compression="zstd")
        self.fs.move(tmp, path)
        return path
