"""Where the archive's files live: every directory name, file suffix and file name, defined here once.

The tree, so a reader finds a file without reading the writers:
"""
#   archive/events/<key>/<part>.staged     a chunk of matches of a series (key = batch_id) or of a single
#   archive/seats/<key>/<part>.staged      run (key = match id) as a scripted worker wrote it, Parquet
#                                          (part = the chunk's first match id); readers by match id see it,
#                                          the Parquet globs do not
#   archive/events/<key>/<part>.parquet    the same, published once none of the series' runs is left to play
#   archive/seats/<key>/<part>.parquet     (the compactor moves it: no re-encoding)
#   archive/events/<match_id>.arrow        one match as a model worker or the service landed it (Arrow IPC)
#   archive/seats/<match_id>.arrow         its seat rows, likewise
#   archive/events/<key>.parquet           those matches of a series (or single run), compacted into one
#   archive/seats/<key>.parquet            file once none of its runs is left to play
#   archive/runs/<key>.parquet             ended runs' views (key = batch_id, or the first run's id)
#   archive/transcripts/<match_id>.arrow   every model turn of a match, for its run's owner only
#   archive/arena/<match_id>.json          an arena game's graded log, its whole record
#   archive/<any of those>.<hex>.tmp        a file being written (moved into place once whole)
from __future__ import annotations

from pathlib import Path

ARCHIVE_DIR = "archive"  # under the data dir, unless the store is told another location
EVENTS_DIR, SEATS_DIR, RUNS_DIR, TRANSCRIPTS_DIR, ARENA_DIR = "events", "seats", "runs", "transcripts", "arena"
SUBDIRS = (EVENTS_DIR, SEATS_DIR, RUNS_DIR, TRANSCRIPTS_DIR, ARENA_DIR)
LANDING, COMPACT, GAME = ".arrow", ".parquet", ".json"  # one match as the worker sent it; a whole series; a game log
STAGED = ".staged"  # a scripted worker's chunk, Parquet, not yet published (readers' globs skip it)
COMPACT_GLOB = "**/*" + COMPACT  # a series' one file, or its published parts in its directory
TEMP_SUFFIX = ".tmp"  # a file being written; readers never open one


def archive_dir(data_dir) -> Path:
    """The default archive location: <data dir>/archive (the store may be told another)."""
    return Path(data_dir) / ARCHIVE_DIR


def landed(match_id: str) -> str:
    """The file name of one match as it landed (events, seats or transcript)."""
    return match_id + LANDING


def compacted(key: str) -> str:
    """The file name of a series (or single run) compacted, or of ended runs' views."""
    return key + COMPACT


def game(match_id: str) -> str:
    """The file name of an arena game's graded log."""
    return match_id + GAME


def landed_id(name: str) -> str | None:
    """The match id of a landed file's name; None for any other file."""
    return name[:-len(LANDING)] if name.endswith(LANDING) else None


def staged(part: str) -> str:
    """The file name of a chunk written by a scripted worker, before its series is published."""
    return part + STAGED


def part_of(name: str) -> tuple[str, bool] | None:
    """(part, published) of a chunk file's name in a series directory; None for any other file."""
    if name.endswith(STAGED):
        return name[:-len(STAGED)], False
    if name.endswith(COMPACT):
        return name[:-len(COMPACT)], True
    return None


def series_files(data_dir, sub: str, key: str) -> list[Path]:
    """A series' (or single run's) files the Parquet globs read, under a data dir's default archive: its
    one compacted file and its published parts."""
    one = archive_dir(data_dir) / sub / compacted(key)
    return ([one] if one.exists() else []) + sorted((archive_dir(data_dir) / sub / key).glob("*" + COMPACT))


def series_archived(data_dir, sub: str, key: str) -> bool:
    """Whether a series (or single run) is archived for good under a data dir's default archive: its
    files are there and none of its parts is left staged."""
    return bool(series_files(data_dir, sub, key)) and not any((archive_dir(data_dir) / sub / key).glob("*" + STAGED))
