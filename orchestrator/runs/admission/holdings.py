"""What an account holds right now: queue slots, this month's agent turns, run history.

Read inside the launch's write transaction, so concurrent launches see each other's reservations.
"""
from __future__ import annotations

from datetime import datetime, timezone

from orchestrator.store import Connection, runs

RUN_HISTORY_DEFAULT = 100_000  # runs per account; the operator may change it in config.toml [limits]


def month_start_ms(now_ms: int) -> int:
    now = datetime.fromtimestamp(now_ms / 1000, tz=timezone.utc)
    return int(datetime(now.year, now.month, 1, tzinfo=timezone.utc).timestamp() * 1000)


def active_launches(c: Connection, account_id: str) -> int:
    return runs.active_launches(c, account_id)


def turns(c: Connection, account_id: str, now_ms: int) -> dict:
    """Agent turns this month (the month of now_ms): settled by runs that ended this month, held by
    active runs."""
    return {"used": runs.turns_settled_since(c, account_id, month_start_ms(now_ms)),
            "held": runs.turns_held(c, account_id)}


def remaining(plan: dict, t: dict) -> int | None:
    limit = plan["agent_turns_per_month"]
    return None if limit is None else max(0, limit - t["used"] - t["held"])


def history(c: Connection, account_id: str) -> int:
    return runs.history(c, account_id)
