"""Where the archive lives and how a match gets there.

Scripted workers write each chunk of a series' matches as its final Parquet files (`land_part`),
staged where the globs do not look; once no run of the series is left to play, `compact` publishes
them by renaming, with no re-encoding (a part holding a match no run names is rewritten without it).
Matches landed one at a time (Arrow IPC) are compacted into one Parquet file per series, so analysts
scan a few files per series instead of thousands. A scripted match kept as its inputs has no events
file: its record rides in its seat rows' file metadata. Files are moved into place whole, and a dead
writer's temporaries are dropped once old; the run rows stay the record of which matches exist, so a
landed file no run names is an orphan the service's sweep removes.
"""
from __future__ import annotations

import json
import posixpath
import secrets
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from analytics.archive import derive
from analytics.archive.cache import DerivedCache
from analytics.archive.damage import Damaged, check, decoding, read_ipc
from analytics.archive.format import (
    run_table,
    table_meta,
    transcript_rows,
    write_parquet,
)
from analytics.archive.layout import (
    ARENA_DIR,
    COMPACT,
    EVENTS_DIR,
    RUNS_DIR,
    SEATS_DIR,
    SUBDIRS,
    TEMP_SUFFIX,
    TRANSCRIPTS_DIR,
    compacted,
    game,
    landed,
    landed_id,
    part_of,
    staged,
)
from analytics.archive.location import (  # noqa: F401  (their callers import them from here too)
    NODE,
    PROCESS,
    SHARED,
    _filesystem,
    archive_reach,
    archive_uri,
)
from analytics.archive.reads import Reads


class Archive(Reads):
    def __init__(self, uri: str, reach: str | None = None, cache: DerivedCache | None = None):
        self.uri = uri
        self.reach = reach or archive_reach(uri)
        self.cache = cache  # regenerated logs (a scripted match's), kept on this machine; None: none kept
        self.fs, self.root = _filesystem(uri)
        for sub in SUBDIRS:
            self.fs.create_dir(self._path(sub), recursive=True)

    @classmethod
    def of(cls, data_dir: str | Path, config: dict | None = None) -> "Archive":
        uri = archive_uri(data_dir, config)
        return cls(uri, archive_reach(uri, config), DerivedCache.of(data_dir, config))

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

    def _decoding(self, path: str):
        """Decode errors while reading path become damage.Damaged, naming it under the archive."""
        return decoding(posixpath.relpath(path, self.root), self.root)

    def check(self) -> dict:
        """Every file decoded whole: {checked, damaged: [{file, error}]} (`studio archive check`)."""
        return check(self.fs, self.root)

    def _exists(self, path: str) -> bool:
        return self.fs.get_file_info(path).type == pafs.FileType.File

    def _put(self, path: str, data: bytes) -> None:
        self._whole(path, lambda tmp: self._write_bytes(tmp, data))

    def _write_bytes(self, path: str, data: bytes) -> None:
        with self.fs.open_output_stream(path) as f:
            f.write(data)

    def _whole(self, path: str, write) -> None:
        """write(tmp) to a temporary name, moved into place once whole: a reader never sees half a file."""
        tmp = f"{path}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
        try:
            write(tmp)
            self.fs.move(tmp, path)
        except BaseException:
            try:  # a full disk leaves half a temporary file: gone now, not at the next sweep
                self.fs.delete_file(tmp)
            except OSError:
                pass
            raise

    # -- a scripted worker's chunk of matches, one series' share of it -----------------------------
    def land_part(self, key: str, events: list[pa.Table], seats: pa.Table,
                  derived: dict[str, dict] | None = None) -> dict[str, int]:
        """events: the matches' event tables (events_table), seats: their seat rows, in one table;
        derived: match id -> its record (`derive.record`) for the scripted matches whose logs
        are not written, kept in the seat rows' file. Both files are written as they will be read
        (Parquet), staged in the series' directory under the first match's id; the seat rows go last,
        as with a match landed alone. Returns the files written, by path under the archive, with their sizes."""
        derived = derived or {}
        matches = {table_meta(t)["match_id"]: table_meta(t) for t in events}
        part = staged(next(iter({**matches, **derived})))
        seat_meta = {m: {} for m in matches} | {m: {derive.KEY: r} for m, r in derived.items()}
        files = {}
        try:
            for sub, tables, meta in ((EVENTS_DIR, events, matches), (SEATS_DIR, [seats], seat_meta)):
                if not tables:
                    continue
                self.fs.create_dir(self._path(sub, key), recursive=True)
                path = self._path(sub, key, part)
                self._whole(path, lambda tmp, t=tables, m=meta: write_parquet(t, tmp, {"matches": m},
                                                                              filesystem=self.fs))
                files[f"{sub}/{key}/{part}"] = self.fs.get_file_info(path).size
        except BaseException:
            # the matches go back to the head, which lands them alone: half a part must not hold them too
            for name in files:
                try:
                    self.fs.delete_file(self._path(name))
                except OSError:  # left for the publication, which drops a part without its seat rows
                    pass
            raise
        return files

    def _parts(self, sub: str, key: str) -> dict[str, str]:
        """A series' parts of one kind: part -> its file's path (published when both names are there)."""
        sel = pafs.FileSelector(self._path(sub, key), allow_not_found=True)
        out = {}
        for info in self.fs.get_file_info(sel):
            found = part_of(posixpath.basename(info.path))
            if found and (found[1] or found[0] not in out):
                out[found[0]] = info.path
        return out

    def _part_matches(self, path: str) -> dict[str, dict]:
        """match id -> its metadata, for a part's file (events: the match's; seats: empty)."""
        with self._decoding(path):
            return table_meta(pq.read_schema(path, filesystem=self.fs)).get("matches", {})

    def _listed_matches(self, listed: str) -> dict[str, dict]:
        """_part_matches of a part as listed: a staged part published since is read under its new name,
        one dropped since holds nothing."""
        for path in (listed, listed[:-len(staged(""))] + COMPACT if listed.endswith(staged("")) else None):
            try:
                return self._part_matches(path) if path else {}
            except FileNotFoundError:
                continue
        return {}

    def _read_part(self, listed: str, wanted: set[str], schema=None) -> tuple[dict[str, dict], pa.Table | None]:
        """(its matches, its rows of the wanted ones or None when it holds none) for a part as listed: a
        staged part published since its listing is read under its new name."""
        try:
            return self._read_part_file(listed, wanted, schema)
        except FileNotFoundError:
            if not listed.endswith(staged("")):
                raise
            return self._read_part_file(listed[:-len(staged(""))] + COMPACT, wanted, schema)

    def _read_part_file(self, path: str, wanted: set[str], schema=None) -> tuple[dict[str, dict], pa.Table | None]:
        # Matches and rows through one open file: a part moved meanwhile is still read whole, as one version.
        with self.fs.open_input_file(path) as f, self._decoding(path):
            matches = table_meta(pq.read_schema(f)).get("matches", {})
            held = wanted.intersection(matches)
            if not held:
                return matches, None
            # a part whose every match is wanted (a series' summary) is read whole: the filter's dataset
            # scan costs several times the read
            keep = None if held == set(matches) else [("match_id", "in", sorted(held))]
            return matches, pq.read_table(f, filters=keep, schema=schema)

    def _from_parts(self, sub: str, key: str, wanted: set[str], schema=None) -> list[tuple[dict, pa.Table]]:
        """(matches, rows of the wanted ones) of each of a series' parts holding any. A directory listing
        may miss a part renamed into place while it reads (POSIX allows it; an object store's listing may
        lag), so the parts are listed once more when a wanted match was not found."""
        out, read, found = [], set(), set()
        for _ in range(2):
            for part, listed in self._parts(sub, key).items():
                if part in read or found >= wanted:
                    continue
                read.add(part)
                try:
                    matches, table = self._read_part(listed, wanted - found, schema)
                except FileNotFoundError:  # rewritten without its orphans, or dropped, since the listing
                    read.discard(part)
                    continue
                if table is not None:
                    out.append((matches, table))
                    found.update(wanted.intersection(matches))
            if found >= wanted:
                break
        return out

    def _staged(self) -> dict[str, tuple]:
        """match id -> (series key, part, its file's mtime) for every staged part, by its seat rows' file."""
        out = {}
        for info in self.fs.get_file_info(pafs.FileSelector(self._path(SEATS_DIR), allow_not_found=True,
                                                             recursive=True)):
            found = part_of(posixpath.basename(info.path))
            if found and not found[1]:
                key = posixpath.basename(posixpath.dirname(info.path))
                try:
                    held = self._part_matches(info.path)
                except FileNotFoundError:  # published (or dropped) since the listing: no longer staged
                    continue
                except Damaged:  # its matches' reads say so; `studio archive check` lists it
                    continue
                for m in held:
                    out[m] = (key, found[0], info.mtime)
        return out

    def _publish(self, key: str, named: set[str]) -> None:
        """Move a series' staged parts into place. A part with matches no run names (played by a worker
        that died before the head heard of it) is written again without them, or goes when it holds
        none; a staged part whose published file is there already (a publication that stopped between
        the two) just goes, and so does an events part without seat rows (a worker's write that failed
        halfway: its matches were handed back and landed alone). Events go first, seat rows last: a match counts as archived once its seat
        rows are readable."""
        with_seats = set(self._parts(SEATS_DIR, key))
        for sub in (EVENTS_DIR, SEATS_DIR):
            listed = [(found, i.path) for i in self.fs.get_file_info(pafs.FileSelector(self._path(sub, key),
                                                                                      allow_not_found=True))
                      if (found := part_of(posixpath.basename(i.path)))]
            published = {part for (part, done), _ in listed if done}
            for (part, done), path in listed:
                if done:
                    continue
                matches = self._part_matches(path)
                target = self._path(sub, key, part + COMPACT)
                if part in published or (sub == EVENTS_DIR and part not in with_seats):
                    pass  # published already; or a part whose seat rows were never written: its matches went back
                elif set(matches) <= named:
                    self.fs.move(path, target)
                    continue
                elif kept := [m for m in matches if m in named]:
                    rows, meta = self._part_rows(path, sub, kept), {"matches": {m: matches[m] for m in kept}}
                    self._whole(target, lambda tmp, r=rows, m=meta: write_parquet(r, tmp, m, filesystem=self.fs))
                self.fs.delete_file(path)

    def _part_rows(self, path: str, sub: str, kept: list[str]) -> list[pa.Table]:
        """A part's rows of the kept matches: one table per match for events (a row group each)."""
        with self._decoding(path):
            table = pq.read_table(path, filesystem=self.fs, filters=[("match_id", "in", kept)])
        if sub != EVENTS_DIR:
            return [table]
        ids = table.column("match_id").cast(pa.string())
        return [table.filter(pa.compute.equal(ids, m)).combine_chunks() for m in kept]

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
        with self.fs.open_input_stream(path) as f, self._decoding(path):
            return json.loads(f.read())

    def read_transcript(self, match_id: str, **page) -> tuple[list[dict], bool]:
        """A page of a match's model turns (transcript_rows); nothing when it has none (no model seat),
        damage.Damaged when its file is there and cannot be read."""
        try:
            table = self._read_landed(TRANSCRIPTS_DIR, match_id)
        except FileNotFoundError:
            return [], False
        return transcript_rows(table, **page)

    def remove_match(self, match_id: str) -> None:
        """Drop a landed match (a run that will be replayed, or that failed after landing). A match in a
        staged part stays there until its series is published, which leaves it out (`_publish`)."""
        self._drop(match_id, (EVENTS_DIR, SEATS_DIR, TRANSCRIPTS_DIR))

    def remove_matches(self, match_ids) -> None:
        """remove_match for each, and the staged parts that hold nothing but these matches (orphans of a
        series or single run that will never be published: its run was played again under a new id)."""
        ids = set(match_ids)
        for m in ids:
            self.remove_match(m)
        by_part: dict[tuple[str, str], set] = {}
        for m, (key, part, _) in self._staged().items():
            by_part.setdefault((key, part), set()).add(m)
        for (key, part), held in by_part.items():
            if held <= ids:
                for sub in (SEATS_DIR, EVENTS_DIR):  # seat rows first: the part stops counting as landed
                    path = self._path(sub, key, staged(part))
                    if self._exists(path):
                        self.fs.delete_file(path)

    def _drop(self, match_id: str, subs: tuple) -> None:
        for sub in subs:
            path = self._path(sub, landed(match_id))
            if self._exists(path):
                self.fs.delete_file(path)

    def landed(self, older_than_s: float | None = None) -> list[str]:
        """Match ids landed and not yet compacted or published (only those landed more than older_than_s
        ago, when given)."""
        sel = pafs.FileSelector(self._path(SEATS_DIR), allow_not_found=True)
        before = time.time() - older_than_s if older_than_s is not None else None

        def old(mtime) -> bool:
            return before is None or mtime is None or mtime.timestamp() < before
        alone = [m for i in self.fs.get_file_info(sel) if (m := landed_id(posixpath.basename(i.path))) and old(i.mtime)]
        return sorted(alone + [m for m, (_, _, mtime) in self._staged().items() if old(mtime)])

    def drop_temporaries(self, older_than_s: float) -> int:
        """Remove temporary files older than older_than_s: what a writer left when it died mid-write (a
        live writer moves its file into place within moments). Returns how many went."""
        before, gone = time.time() - older_than_s, 0
        for sub in SUBDIRS:
            for i in self.fs.get_file_info(pafs.FileSelector(self._path(sub), allow_not_found=True, recursive=True)):
                if i.path.endswith(TEMP_SUFFIX) and i.mtime is not None and i.mtime.timestamp() < before:
                    try:
                        self.fs.delete_file(i.path)
                        gone += 1
                    except OSError:  # another sweep, or the file's writer, moved it meanwhile
                        pass
        return gone

    def _read_landed(self, sub: str, match_id: str) -> pa.Table:
        path = self._path(sub, landed(match_id))
        with self.fs.open_input_file(path) as f, self._decoding(path):
            return read_ipc(f)

    # -- a series, compacted -----------------------------------------------------------------------
    def compact(self, key: str, match_ids: list[str]) -> None:
        """A series (or one single run) archived for good: its staged parts published (`_publish`), and
        the matches landed one at a time compacted into one Parquet file per kind, whose landed files
        go once both are in place. Matches never landed are skipped, and so is a match a kind's file
        holds already: a compaction that stopped between its writes (its process killed) is simply run
        again. The parts go last: a series counts as archived once nothing of it is left staged
        (layout.series_archived)."""
        self._compact_landed(key, match_ids)
        self._publish(key, set(match_ids))

    def _compact_landed(self, key: str, match_ids: list[str]) -> None:
        present = [m for m in match_ids if self._exists(self._path(SEATS_DIR, landed(m)))]
        if not present:
            return
        events_file, seats_file = self._path(EVENTS_DIR, compacted(key)), self._path(SEATS_DIR, compacted(key))
        old_meta = self._compact_meta(events_file).get("matches", {}) if self._exists(events_file) else {}
        in_seats = set(self._read_compact(seats_file, columns=["match_id"]).column(0).to_pylist()
                       ) if self._exists(seats_file) else set()
        with_events = [m for m in present if m not in old_meta
                       and self._exists(self._path(EVENTS_DIR, landed(m)))]  # arena games have none
        events = [self._read_landed(EVENTS_DIR, m) for m in with_events]
        meta = {"matches": {**old_meta, **{m: table_meta(t) for m, t in zip(with_events, events)}}}
        new_seats = [m for m in present if m not in in_seats]
        seats = [self._read_landed(SEATS_DIR, m) for m in new_seats]
        # a scripted match's record goes with its seat rows
        old_seats = self._compact_meta(seats_file).get("matches", {}) if self._exists(seats_file) else {}
        seat_meta = {"matches": {**old_seats, **{m: {derive.KEY: r} for m, t in zip(new_seats, seats)
                                                 if (r := table_meta(t).get(derive.KEY))}}}
        # An earlier compaction of the same key (a series extended after a restart) is kept, not lost.
        for target, tables, kept in ((events_file, events, meta), (seats_file, seats, seat_meta)):
            if not tables:
                continue
            if self._exists(target):
                tables = [self._read_compact(target).replace_schema_metadata(None)] + tables
            tmp = f"{target}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
            write_parquet(tables, tmp, kept if kept["matches"] else None, filesystem=self.fs)
            self.fs.move(tmp, target)
        for m in present:  # the transcript stays: it is read per match, by its run's owner
            self._drop(m, (EVENTS_DIR, SEATS_DIR))

    def _compact_meta(self, path: str) -> dict:
        with self._decoding(path):
            return table_meta(pq.read_schema(path, filesystem=self.fs))

    def _read_compact(self, path: str, **options) -> pa.Table:
        with self._decoding(path):
            return pq.read_table(path, filesystem=self.fs, **options)

    # -- derived logs, written on demand (materialize) -------------------------------------------
    def write_events(self, key: str, tables: list[pa.Table], name: str) -> str:
        """Event logs of a series written after the fact (materialize): one published
        part, `name`, read as any other part. Returns its path under the archive."""
        self.fs.create_dir(self._path(EVENTS_DIR, key), recursive=True)
        meta = {"matches": {table_meta(t)["match_id"]: table_meta(t) for t in tables}}
        path = self._path(EVENTS_DIR, key, compacted(name))
        self._whole(path, lambda tmp: write_parquet(tables, tmp, meta, filesystem=self.fs))
        return f"{EVENTS_DIR}/{key}/{compacted(name)}"

    def write_runs(self, run_views: list[dict], name: str | None = None) -> str:
        """Ended runs' metadata, one row each, in `name` (else named after the first run)."""
        path = self._path(RUNS_DIR, compacted(name or run_views[0]["run_id"]))
        tmp = f"{path}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
        pq.write_table(run_table(run_views), tmp, filesystem=self.fs, compression="zstd")
        self.fs.move(tmp, path)
        return path
