"""The control plane's store: every SQL statement, every driver import and every parse of a stored
JSON column lives in this package, one repository module per table or aggregate. Everything above it
imports the repositories and the records they return (orchestrator/records), never the driver.

Transactions stay with the rules that need them: a policy opens `store.write()` and hands the
connection to the repository functions it calls, so what must change together commits together.
"""
from orchestrator.store.database import BUSY_TIMEOUT_S, DB_NAME, Connection, Row, Store, finite_json
from orchestrator.store.errors import IntegrityError, OperationalError, StoreError, Unstorable, unavailable
from orchestrator.store.migrations import MIGRATIONS
from orchestrator.store import leases
from orchestrator.store.location import SettingError, open_store, setting

__all__ = ["leases", "BUSY_TIMEOUT_S", "DB_NAME", "MIGRATIONS", "Connection", "IntegrityError", "OperationalError", "Unstorable",
           "Row", "SettingError", "Store", "StoreError", "finite_json", "open_store", "setting",
           "unavailable"]
