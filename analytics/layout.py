"""Where the archive's files live and how a landed match file is read.

The archive is written by orchestrator (orchestrator.archive formats the tables,
orchestrator.archive_store puts them on a filesystem) and read by analytics; the layout lives here,
in the lower layer, so that readers never import the writer.
"""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa

EVENTS_DIR, SEATS_DIR, RUNS_DIR, TRANSCRIPTS_DIR = "events", "seats", "runs", "transcripts"
LANDING, COMPACT = ".arrow", ".parquet"  # one match as the worker sent it; a whole series


def archive_dir(data_dir) -> Path:
    """The default archive location: <data dir>/archive (orchestrator.archive_store may move it)."""
    return Path(data_dir) / "archive"


def from_ipc(source) -> pa.Table:
    """A table from Arrow IPC file bytes or an open file."""
    return pa.ipc.open_file(pa.BufferReader(source) if isinstance(source, (bytes, pa.Buffer)) else source).read_all()
