"""Where the archive lives and who can write it: its URI (the data dir's `archive/`, STUDIO_ARCHIVE_URI
or config.toml's `[archive] uri`), its reach (this process, one node's disk, or every node), and the
pyarrow filesystem that opens it (fsspec for the schemes pyarrow does not speak)."""
from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs

from analytics.archive.layout import archive_dir


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
