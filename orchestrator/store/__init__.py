"""The control plane's store: every SQL statement, every driver import and every parse of a stored
JSON column lives in this package, one repository module per table or aggregate. Everything above it
imports the repositories and the records they return (orchestrator.records), never the driver.

Transactions stay with the rules that need them: a policy opens `store.write()` and hands the
connection to the repository functions it calls, so what must change together commits together.
"""
from orchestrator.store.database import (
    BUSY_TIMEOUT_S,
    DB_NAME,
    Connection,
    IntegrityError,
    OperationalError,
    Row,
    Store,
    StoreError,
    finite_json,
    unavailable,
)
from orchestrator.store.migrations import MIGRATIONS
from orchestrator.store import leases

__all__ = ["leases", "BUSY_TIMEOUT_S", "DB_NAME", "MIGRATIONS", "Connection", "IntegrityError", "OperationalError",
           "Row", "Store", "StoreError", "finite_json", "unavailable"]
