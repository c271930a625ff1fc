"""Start-up checks of the data dir, before Ray or the HTTP server start: it must be writable, have
room, and belong to no other `studio serve`. Each failure is one line for the operator.

The lock is an flock on `studio.lock` held for the life of the process: the kernel releases it
when the process ends however it ends (kill -9 included), so a stale lock never blocks a restart.
Heads that join one Ray cluster may share a data dir (one service, several heads): they hold it
shared, which still keeps out a head with a private Ray and the commands that need it stopped.
"""
from __future__ import annotations

import errno
import fcntl
import os
import shutil
from pathlib import Path

LOCK_NAME = "studio.lock"
MIN_FREE_BYTES = 64 * 1024 * 1024  # room for the store's WAL and a few archived matches
PRIVATE_FILES = ("studio.db", "studio.db-wal", "studio.db-shm", "config.toml")


class StartError(Exception):
    """A reason the service cannot start on this data dir; the message is the one line to print."""


def check(data_dir: str | Path, *, min_free_bytes: int = MIN_FREE_BYTES) -> Path:
    path = Path(data_dir)
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as e:
        raise StartError(f"cannot create the data dir {path}: {e.strerror}") from None
    probe = path / ".studio-write-check"
    try:
        with open(probe, "wb") as f:
            f.write(b"\0" * 4096)
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        if e.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise StartError(f"the data dir {path.resolve()} is not writable ({e.strerror}); give the service "
                             "a writable directory with --data-dir") from None
        if e.errno in (errno.ENOSPC, errno.EDQUOT):
            raise StartError(f"the disk holding {path.resolve()} is full; free space and start again") from None
        raise StartError(f"cannot write in the data dir {path.resolve()}: {e.strerror}") from None
    finally:
        try:
            probe.unlink(missing_ok=True)
        except OSError:  # a read-only dir never held it
            pass
    free = shutil.disk_usage(path).free
    if free < min_free_bytes:
        raise StartError(f"the disk holding {path.resolve()} has {free // (1024 * 1024)} MiB free; the service "
                         f"needs at least {min_free_bytes // (1024 * 1024)} MiB: free space and start again")
    return path


class Busy(StartError):
    """Another process holds the lock; `holder` is its pid as it wrote it."""

    def __init__(self, message: str, holder: str):
        super().__init__(message)
        self.holder = holder


def lock(data_dir: str | Path, name: str = LOCK_NAME, what: str = "another `studio serve`", shared: bool = False):
    """Take the data dir for this process; returns the open lock file (keep it open). shared: beside
    other heads of the same service, which take it shared too."""
    path = Path(data_dir) / name
    f = open(path, "a+")
    try:
        fcntl.flock(f.fileno(), (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except BlockingIOError:
        f.seek(0)
        holder = f.read().strip() or "another process"
        f.close()
        raise Busy(f"the data dir {Path(data_dir).resolve()} is in use by {what} (pid {holder}); "
                   "stop it or use another --data-dir", holder) from None
    if shared:  # the pid of the head that took it first stays
        return f
    f.seek(0)
    f.truncate()
    f.write(str(os.getpid()))
    f.flush()
    return f


def make_private(data_dir: str | Path) -> None:
    """The data dir 0700 and the store's files 0600: tokens' hashes and encrypted keys live there.
    (SQLite gives the WAL and shared-memory files the database file's mode.)"""
    path = Path(data_dir)
    os.chmod(path, 0o700)
    for name in PRIVATE_FILES:
        p = path / name
        if p.exists():
            os.chmod(p, 0o600)


SERVING_NAME = "serving.url"  # where `studio serve` last listened (docs/api.md)
DEFAULT_BASE_URL = "http://127.0.0.1:8000"


def serving_url(host: str, port: int) -> str:
    """The URL a browser on this machine reaches a server bound to host:port by."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"
    return f"http://{shown}:{port}"


def record_serving(data_dir: str | Path, url: str) -> None:
    (Path(data_dir) / SERVING_NAME).write_text(url + "\n")


def served_url(data_dir: str | Path) -> str | None:
    try:
        return (Path(data_dir) / SERVING_NAME).read_text().strip() or None
    except OSError:
        return None


def public_url(config: dict) -> str | None:
    url = (config.get("console") or {}).get("public_url")
    return url.rstrip("/") if isinstance(url, str) and url.strip() else None


def base_url(data_dir: str | Path, config: dict) -> str:
    """Where people reach the service: `[console] public_url` when the operator set one, else the
    address `studio serve` last served on, else the default port on this machine."""
    return public_url(config) or served_url(data_dir) or DEFAULT_BASE_URL


def own_addresses(data_dir: str | Path, config: dict) -> tuple[str, ...]:
    """The service's own base URLs, which an account's provider key may not point at."""
    return tuple(u for u in (public_url(config), served_url(data_dir)) if u)
