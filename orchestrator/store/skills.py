"""The skills table: each account's own skills, newest first."""
from __future__ import annotations

from orchestrator.records.skill import Skill
from orchestrator.store.database import Connection, Row

_FIELDS = ("id", "account_id", "name", "text", "created_at_ms", "updated_at_ms")


def _skill(r: Row | None) -> Skill | None:
    return None if r is None else Skill(**{k: r[k] for k in _FIELDS})


def own(c: Connection, skill_id: str, account_id: str) -> Skill | None:
    return _skill(c.execute("SELECT * FROM skills WHERE id = ? AND account_id = ?", (skill_id, account_id)).fetchone())


def count(c: Connection, account_id: str) -> int:
    return c.execute("SELECT COUNT(*) FROM skills WHERE account_id = ?", (account_id,)).fetchone()[0]


def of_account(c: Connection, account_id: str) -> list[Skill]:
    rows = c.execute("SELECT * FROM skills WHERE account_id = ? ORDER BY seq DESC", (account_id,)).fetchall()
    return [_skill(r) for r in rows]


def insert(c: Connection, s: Skill) -> None:
    c.execute("INSERT INTO skills (id, account_id, name, text, created_at_ms) VALUES (?, ?, ?, ?, ?)",
              (s.id, s.account_id, s.name, s.text, s.created_at_ms))


def replace(c: Connection, s: Skill) -> None:
    c.execute("UPDATE skills SET name = ?, text = ?, updated_at_ms = ? WHERE id = ?",
              (s.name, s.text, s.updated_at_ms, s.id))


def delete(c: Connection, skill_id: str) -> None:
    c.execute("DELETE FROM skills WHERE id = ?", (skill_id,))
