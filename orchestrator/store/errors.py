"""The store's failures in one vocabulary for both databases: what the transports and the policies
catch, so nothing above the store names a driver's exception types. Each name is a tuple of the two
drivers' classes (an `except` and `isinstance` take either), which costs the SQLite path nothing."""
from __future__ import annotations

import sqlite3

import psycopg

from orchestrator.store import database, postgres

StoreError = (sqlite3.Error, psycopg.Error)
IntegrityError = (sqlite3.IntegrityError, psycopg.IntegrityError)
OperationalError = (sqlite3.OperationalError, psycopg.OperationalError)


def unavailable(e: BaseException) -> int | None:
    """Seconds to wait before retrying when e is either store refusing for now (a lock not granted in
    the busy wait, a serialization retry, a full disk, a lost connection); else None."""
    if isinstance(e, sqlite3.Error):
        return database.unavailable(e)
    if isinstance(e, psycopg.Error):
        return postgres.unavailable(e)
    return None
