"""A damaged archive file: one that is there but cannot be decoded (a Parquet footer or page that does
not parse, an Arrow IPC file overwritten or cut short, a game log that is not JSON). Readers raise
`Damaged`, naming the file by its path under the archive, instead of answering as if it were absent:
a match whose record cannot be read says so, never shows nothing. A file that is not there
(FileNotFoundError) is no damage: a scripted match keeps no events file, a run without model seats no
transcript. `check` decodes every file of an archive, for `studio archive check`.
"""
from __future__ import annotations

import json
import posixpath
from contextlib import contextmanager

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from analytics.archive.format import from_ipc, table_meta
from analytics.archive.layout import (
    COMPACT,
    GAME,
    LANDING,
    STAGED,
    SUBDIRS,
    TEMP_SUFFIX,
)

# what a decoder raises on bytes that are not what the file says: pyarrow's own errors (a Parquet
# thrift or page error is an OSError), and the JSON of a footer's metadata or of a game log
DECODE_ERRORS = (pa.ArrowException, OSError, ValueError, EOFError, UnicodeDecodeError)


class Damaged(Exception):
    """path: the file under the archive (`seats/<key>.parquet`); cause: what its decoder said."""

    def __init__(self, path: str, cause: str):
        super().__init__(f"archive file {path} cannot be read: {cause}")
        self.path = path
        self.cause = cause


@contextmanager
def decoding(path: str, root: str | None = None):
    """Decode errors inside become Damaged(path); a missing file stays FileNotFoundError. The cause
    never names the archive's root (a public page shows it): paths in it are the archive's own."""
    try:
        yield
    except (FileNotFoundError, Damaged):
        raise
    except DECODE_ERRORS as e:
        cause = str(e).replace(root.rstrip("/") + "/", "") if root else str(e)
        raise Damaged(path, f"{type(e).__name__}: {cause.strip()[:300]}") from e


def read_ipc(f) -> pa.Table:
    """A table from an Arrow IPC file, checked whole: an overwritten buffer that is not compressed
    would otherwise read as other values, or past its end."""
    table = from_ipc(f)
    table.validate(full=True)
    return table


def _decode(fs: pafs.FileSystem, path: str) -> None:
    """Read a file as its readers would, whole; raises what its decoder raises."""
    name = posixpath.basename(path)
    with fs.open_input_file(path) as f:
        if name.endswith(GAME):
            json.loads(f.read())
        elif name.endswith(LANDING):
            table_meta(read_ipc(f))
        else:  # Parquet: a series' file, a part, a derived part, ended runs' views
            table_meta(pq.read_schema(f))
            pq.read_table(f).validate(full=True)


def check(fs: pafs.FileSystem, root: str) -> dict:
    """{checked: how many files, damaged: [{file, error}]} over every file of the archive at root
    (temporary files aside: a writer's, never read)."""
    checked, damaged = 0, []
    for sub in SUBDIRS:
        infos = fs.get_file_info(pafs.FileSelector(posixpath.join(root, sub), allow_not_found=True, recursive=True))
        for info in sorted(infos, key=lambda i: i.path):
            name = posixpath.basename(info.path)
            if info.type != pafs.FileType.File or name.endswith(TEMP_SUFFIX):
                continue
            if not name.endswith((COMPACT, STAGED, LANDING, GAME)):
                continue
            rel = posixpath.relpath(info.path, root)
            try:
                with decoding(rel, root):
                    _decode(fs, info.path)
            except FileNotFoundError:  # compacted or published since the listing
                continue
            except Damaged as e:
                damaged.append({"file": e.path, "error": e.cause})
            checked += 1
    return {"checked": checked, "damaged": damaged}
