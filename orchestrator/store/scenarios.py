"""The scenarios table: each account's saved scenarios, newest first."""
from __future__ import annotations

import json

from orchestrator.records.scenario import Scenario
from orchestrator.store.database import Connection, Row

_FIELDS = ("id", "account_id", "name", "description", "season_ticks", "hash", "created_at_ms", "updated_at_ms")


def _scenario(r: Row | None) -> Scenario | None:
    return None if r is None else Scenario(**{k: r[k] for k in _FIELDS}, env=json.loads(r["env"]))


def get(c: Connection, scenario_id: str, account_id: str | None = None) -> Scenario | None:
    """The scenario; with account_id, only when that account owns it (a foreign id reads as unknown)."""
    if account_id is None:
        return _scenario(c.execute("SELECT * FROM scenarios WHERE id = ?", (scenario_id,)).fetchone())
    return _scenario(c.execute("SELECT * FROM scenarios WHERE id = ? AND account_id = ?",
                               (scenario_id, account_id)).fetchone())


def same(c: Connection, account_id: str, name: str, digest: str) -> Scenario | None:
    """The account's newest scenario of this name and content hash."""
    return _scenario(c.execute("SELECT * FROM scenarios WHERE account_id = ? AND name = ? AND hash = ? "
                               "ORDER BY seq DESC LIMIT 1", (account_id, name, digest)).fetchone())


def count(c: Connection, account_id: str) -> int:
    return c.execute("SELECT COUNT(*) FROM scenarios WHERE account_id = ?", (account_id,)).fetchone()[0]


def of_account(c: Connection, account_id: str) -> list[Scenario]:
    rows = c.execute("SELECT * FROM scenarios WHERE account_id = ? ORDER BY seq DESC", (account_id,)).fetchall()
    return [_scenario(r) for r in rows]


def insert(c: Connection, s: Scenario) -> None:
    c.execute("INSERT INTO scenarios (id, account_id, name, description, season_ticks, env, hash, created_at_ms) "
              "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
              (s.id, s.account_id, s.name, s.description, s.season_ticks, json.dumps(s.env), s.hash, s.created_at_ms))


def replace(c: Connection, s: Scenario) -> None:
    """Rewrite the definition, hash and updated time of an existing scenario."""
    c.execute("UPDATE scenarios SET name = ?, description = ?, season_ticks = ?, env = ?, hash = ?, "
              "updated_at_ms = ? WHERE id = ?",
              (s.name, s.description, s.season_ticks, json.dumps(s.env), s.hash, s.updated_at_ms, s.id))


def delete(c: Connection, scenario_id: str) -> None:
    c.execute("DELETE FROM scenarios WHERE id = ?", (scenario_id,))
