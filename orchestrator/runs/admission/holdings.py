"""What an account holds right now: queue slots, this month's agent turns, run history.

Read inside the launch's write transaction, so concurrent launches see each other's reservations.
"""
from __future__ import annotations

import sqlite3
from datetime import datetime, timezone

from orchestrator.statuses import ACTIVE, TERMINAL
RUN_HISTORY_DEFAULT = 100_000  # runs per account; the operator may change it in config.toml [limits]


def month_start_ms(now_ms: int) -> int:
    now = datetime.fromtimestamp(now_ms / 1000, tz=timezone.utc)
    return int(datetime(now.year, now.month, 1, tzinfo=timezone.utc).timestamp() * 1000)


def active_launches(c: sqlite3.Connection, account_id: str) -> int:
    return c.execute("SELECT COUNT(DISTINCT launch_id) FROM runs WHERE account_id = ? AND status IN "
                     f"{ACTIVE}", (account_id,)).fetchone()[0]


def turns(c: sqlite3.Connection, account_id: str, now_ms: int) -> dict:
    """Agent turns this month (the month of now_ms): settled by runs that ended this month, held by
    active runs."""
    since = month_start_ms(now_ms)
    used = c.execute("SELECT COALESCE(SUM(turns_settled), 0) FROM runs WHERE account_id = ? AND "
                     f"status IN {TERMINAL} AND finished_at_ms >= ?",
                     (account_id, since)).fetchone()[0]
    held = c.execute("SELECT COALESCE(SUM(turns_reserved), 0) FROM runs WHERE account_id = ? AND "
                     f"status IN {ACTIVE}", (account_id,)).fetchone()[0]
    return {"used": int(used), "held": int(held)}


def remaining(plan: dict, t: dict) -> int | None:
    limit = plan["agent_turns_per_month"]
    return None if limit is None else max(0, limit - t["used"] - t["held"])


def history(c: sqlite3.Connection, account_id: str) -> int:
    return c.execute("SELECT COUNT(*) FROM runs WHERE account_id = ?", (account_id,)).fetchone()[0]
