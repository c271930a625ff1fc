"""The store's failures in one vocabulary for both databases: what the transports and the policies
catch, so nothing above the store names a driver's exception types.

The names are SQLite's classes, so the SQLite path raises its own errors unchanged and pays nothing
(psycopg is imported only when a PostgreSQL store is named).
The PostgreSQL store raises psycopg's errors made instances of the matching class here as well
(postgres.as_store_error): a lock not granted is both psycopg's LockNotAvailable and an
OperationalError, and one `except StoreError` catches either store's failure.
"""
from __future__ import annotations

import sqlite3
import sys

from orchestrator.store import database

StoreError = sqlite3.Error
IntegrityError = sqlite3.IntegrityError
OperationalError = sqlite3.OperationalError


class Unstorable(ValueError):
    """A value the store cannot hold, found before it was sent: text with a NUL character (U+0000),
    which PostgreSQL's text type refuses. Nothing was changed; the request is at fault, not the store."""


def unavailable(e: BaseException) -> int | None:
    """Seconds to wait before retrying when e is either store refusing for now (a lock not granted in
    the busy wait, a serialization retry, a full disk, a lost connection); else None."""
    postgres = sys.modules.get("orchestrator.store.postgres")  # not loaded: no PostgreSQL error exists
    if postgres is not None and isinstance(e, postgres.psycopg.Error):
        return postgres.unavailable(e)
    return database.unavailable(e)
