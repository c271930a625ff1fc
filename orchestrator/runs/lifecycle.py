"""Every change of a run's status, as guarded transition functions.

queued -> launching (claimed by the dispatcher) -> running (its worker began playing) ->
finished | cancelled | failed; queued -> cancelled; launching | running -> queued (a replay).
Each function names the states it leaves (`WHERE status IN (...)`) and runs inside the caller's
write transaction. A run that is not in one of those states is left alone and the refused
transition is logged: replaying a write after a failure, or a cancel racing a result, then
changes nothing twice.
"""
from __future__ import annotations

import json
import logging
import sqlite3

from orchestrator.store import now_ms

log = logging.getLogger("studio.lifecycle")

ACTIVE = ("queued", "launching", "running")
TERMINAL = ("finished", "failed", "cancelled")
STATUSES = ACTIVE + TERMINAL
IN_WORLD = ("launching", "running")  # handed to the dispatcher, not yet ended


def _states(states: tuple[str, ...]) -> str:
    return "(" + ", ".join(f"'{s}'" for s in states) + ")"  # our constants, never a caller's text


def _move(c: sqlite3.Connection, run_id: str, to: str, sets: str, params: tuple, leaves: tuple[str, ...]) -> bool:
    row = c.execute(f"UPDATE runs SET {sets} WHERE id = ? AND status IN {_states(leaves)} RETURNING id",
                    (*params, run_id)).fetchall()  # fetch all: the UPDATE completes before COMMIT
    if not row:
        now = c.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()
        log.info("run %s: no transition to %s from %s", run_id, to, now[0] if now else "a missing run")
        return False
    return True


def error_json(message: str, code: str = "internal_error") -> str:
    return json.dumps({"error": code, "message": message})


def claim(c: sqlite3.Connection, scripted: bool, limit: int, batch_ids: tuple = ()) -> list[sqlite3.Row]:
    """queued -> launching: the oldest `limit` queued runs of a kind, for free worker slots; with
    batch_ids, only runs of those series."""
    within = f" AND batch_id IN ({','.join('?' * len(batch_ids))})" if batch_ids else ""
    rows = c.execute("UPDATE runs SET status = 'launching' WHERE id IN (SELECT id FROM runs WHERE status = 'queued' "
                     f"AND scripted = ?{within} ORDER BY seq LIMIT ?) RETURNING *",
                     (int(scripted), *batch_ids, limit)).fetchall()
    return sorted(rows, key=lambda r: r["seq"])


def handed(c: sqlite3.Connection, run_id: str, match_id: str) -> bool:
    """A claimed run is with a worker (maybe waiting behind another job): it keeps `launching`."""
    return _move(c, run_id, "launching", "match_id = ?", (match_id,), ("launching",))


def began(c: sqlite3.Connection, run_id: str, started_at_ms: int) -> bool:
    """launching -> running: its worker began playing it."""
    return _move(c, run_id, "running", "status = 'running', started_at_ms = ?, live_tick = 0",
                 (started_at_ms,), ("launching",))


def tick(c: sqlite3.Connection, run_id: str, live_tick: int) -> None:
    c.execute("UPDATE runs SET live_tick = ? WHERE id = ? AND status = 'running'", (live_tick, run_id))


def requeue(c: sqlite3.Connection, run_id: str) -> bool:
    """launching | running -> queued: a replay of a scripted run, or a job that never started."""
    return _move(c, run_id, "queued", "status = 'queued', match_id = NULL, started_at_ms = NULL, live_tick = NULL",
                 (), IN_WORLD)


def ended(c: sqlite3.Connection, run_id: str, o: dict, roster: str) -> bool:
    """launching | running -> finished | cancelled | failed, with what the worker played and metered."""
    settled = sum(u["agent_turns"] for u in o["usage"])
    return _move(c, run_id, o["status"],
                 "status = ?, stop_reason = ?, results = ?, roster = ?, spend_usd = ?, turns_settled = ?, "
                 "live_tick = ?, finished_at_ms = ?, error = ?, match_id = ?, "
                 "started_at_ms = COALESCE(?, started_at_ms)",
                 (o["status"], o["stop_reason"], json.dumps(o["results"]) if o["results"] else None, roster,
                  o["spend_usd"], settled, o["match_ticks"], now_ms(),
                  json.dumps(o["error"]) if o["error"] else None, o["match_id"], o.get("started_at_ms")),
                 IN_WORLD)


# agent turns the recorder metered into the roster while the run played (0 for scripted runs)
METERED_TURNS = "(SELECT COALESCE(SUM(json_extract(value, '$.usage.agent_turns')), 0) FROM json_each(runs.roster))"


def fail(c: sqlite3.Connection, run_id: str, message: str) -> bool:
    """launching | running -> failed with what was metered as it played (model runs' usage and spend
    are written every tick by orchestrator.recorder); nothing else is settled."""
    return _move(c, run_id, "failed", "status = 'failed', stop_reason = 'failed', error = ?, "
                 f"turns_settled = {METERED_TURNS}, finished_at_ms = ?", (error_json(message), now_ms()), IN_WORLD)


def cancel_queued(c: sqlite3.Connection, run_id: str) -> bool:
    """queued -> cancelled, nothing played."""
    return _move(c, run_id, "cancelled", "status = 'cancelled', stop_reason = 'cancelled', turns_settled = 0, "
                 "finished_at_ms = ?", (now_ms(),), ("queued",))


def cancel_unplayed(c: sqlite3.Connection, run_id: str) -> bool:
    """launching | running -> cancelled for a run whose worker is gone before it archived anything."""
    return _move(c, run_id, "cancelled", "status = 'cancelled', stop_reason = 'cancelled', "
                 f"turns_settled = {METERED_TURNS}, match_id = NULL, live_tick = NULL, finished_at_ms = ?",
                 (now_ms(),), IN_WORLD)


def ask_cancel(c: sqlite3.Connection, run_id: str) -> bool:
    """A run with a worker stops at its next tick boundary; the worker's outcome ends it."""
    return c.execute("UPDATE runs SET cancel_requested = 1 WHERE id = ? AND status IN " + _states(IN_WORLD),
                     (run_id,)).rowcount == 1


def lost(c: sqlite3.Connection, row: sqlite3.Row, why: str) -> str:
    """A run whose worker (or whole service) went away: a cancelled one ends cancelled; a scripted one,
    or one whose worker never began it, is queued again (a replay costs nothing and plays the same
    match); a model run that was playing fails, since its paid turns cannot be replayed. Returns the
    status it went to."""
    if row["cancel_requested"]:
        cancel_unplayed(c, row["id"])
        return "cancelled"
    if row["scripted"] or row["status"] == "launching":
        requeue(c, row["id"])
        return "queued"
    fail(c, row["id"], why)
    return "failed"


def in_world(c: sqlite3.Connection) -> list[sqlite3.Row]:
    return c.execute(f"SELECT * FROM runs WHERE status IN {_states(IN_WORLD)} ORDER BY seq").fetchall()
