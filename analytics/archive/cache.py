"""The bounded cache of regenerated event logs, on this machine's disk under the data dir.

    <data dir>/cache/derived/<engine digest>/<match_id>.arrow    one verified log, Arrow IPC (uncompressed)

A page read twice plays its match once. The cache holds at most `[archive] derived_cache_mb` of logs
(DEFAULT_MB when unset), dropping the least recently read; a process sees others' writes only at its
next listing, so together they may pass the bound until one lists again. Logs are kept under the
engine digest that verified them, so an upgrade never serves a log its engine did not verify; files
are moved into place whole, so processes sharing the directory never read half a file.
"""
from __future__ import annotations

import functools
import os
import secrets
from pathlib import Path

import pyarrow as pa

from analytics.archive.format import from_ipc, to_ipc
from engine.digest import engine_digest

CACHE_DIR = Path("cache") / "derived"
DEFAULT_MB = 256
SUFFIX = ".arrow"


def cache_mb(config: dict | None) -> float:
    return float(((config or {}).get("archive") or {}).get("derived_cache_mb", DEFAULT_MB))


class DerivedCache:
    def __init__(self, root: str | Path, max_bytes: int):
        self.root = Path(root)
        self.max_bytes = int(max_bytes)
        # what this process believes the cache holds: the directory is listed again (and trimmed) only
        # once its writes could have passed the bound, not on every write
        self._held: int | None = None

    @classmethod
    def of(cls, data_dir: str | Path, config: dict | None = None) -> "DerivedCache":
        return _one(str(Path(data_dir) / CACHE_DIR), int(cache_mb(config) * 1024 * 1024))

    def _file(self, match_id: str) -> Path:
        return self.root / engine_digest() / (match_id + SUFFIX)

    def get(self, match_id: str) -> pa.Table | None:
        path = self._file(match_id)
        try:
            with path.open("rb") as f:
                table = from_ipc(f.read())
            os.utime(path)  # read now: the last to go
        except (FileNotFoundError, OSError, pa.ArrowInvalid):
            return None
        return table

    def put(self, match_id: str, table: pa.Table) -> None:
        data = to_ipc(table, compress=False)  # the first read pays this write: no LZ4 on top
        if len(data) > self.max_bytes:
            return
        path = self._file(match_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{secrets.token_hex(4)}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
        if self._held is not None:
            self._held += len(data)
        if self._held is None or self._held > self.max_bytes:
            self._fit()

    def files(self) -> list[tuple[float, int, Path]]:
        """(last read, bytes, path) of every cached log, under any engine digest."""
        out = []
        for p in self.root.glob("*/*" + SUFFIX):
            try:
                st = p.stat()
            except FileNotFoundError:  # evicted by another process meanwhile
                continue
            out.append((st.st_mtime, st.st_size, p))
        return out

    def size(self) -> int:
        return sum(size for _, size, _ in self.files())

    def _fit(self) -> None:
        files = sorted(self.files())
        total = sum(size for _, size, _ in files)
        for _, size, path in files:
            if total <= self.max_bytes:
                break
            path.unlink(missing_ok=True)
            total -= size
        self._held = total


@functools.lru_cache(maxsize=16)
def _one(root: str, max_bytes: int) -> DerivedCache:
    """One cache object per directory and bound in a process: every request's archive shares it."""
    return DerivedCache(root, max_bytes)
