"""Every change of a run's status or live state: the transitions table and the functions that apply it.

TRANSITIONS names each transition with the statuses it leaves and the ones it may go to, as Prefect's
orchestration rules do; each function below applies one (`WHERE status IN (<leaves>)`) inside the
caller's write transaction. A run that is not in one of those states is left alone and the refused
transition is logged: replaying a write after a failure, or a cancel racing a result, then changes
nothing twice. docs/RUNS.md shows the table (`table()`), and tests/runs/test_transitions.py tries
every transition from every status.

The rules built on them live here too: what a cancel does in each status (`cancel`), what becomes of
a run whose worker went away (`lost`), a series' status from its runs' (`series_status`), and the
signal a caller waits on until a run's end is in the store (`Ends`).
"""
from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from orchestrator.errors import DomainError, envelope
from orchestrator.listeners import Listeners
from orchestrator.seats.ledger import Ledger
# The statuses are defined in orchestrator.statuses (below play/), where every reader takes them from.
from orchestrator.statuses import (ACTIVE, CANCELLED, FAILED, FINISHED, IN_WORLD, LAUNCHING, QUEUED, RUNNING,
                                   TERMINAL)

log = logging.getLogger("studio.lifecycle")



# A model run whose match keeps taking its worker down fails rather than resume for ever.
MAX_RESUMES = 3


@dataclass(frozen=True)
class Transition:
    name: str
    leaves: tuple[str, ...]
    to: tuple[str, ...] | None  # None: the status stays, only the run's live state changes
    what: str


TRANSITIONS = {t.name: t for t in (
    Transition("claim", (QUEUED,), (LAUNCHING,),
               "the dispatcher claims the oldest queued runs of a kind for free worker slots"),
    Transition("handed", (LAUNCHING,), None,
               "a worker holds the run (it may wait there behind another job); its match id is recorded"),
    Transition("began", (LAUNCHING,), (RUNNING,), "its worker began playing it: start time, live tick 0"),
    Transition("tick", (RUNNING,), None, "the tick its worker reached"),
    Transition("metered", IN_WORLD, None,
               "a model run's seat usage, turns and spend so far, written by the recorder every tick"),
    Transition("recorded", IN_WORLD, None,
               "a model seat's turn as it happened (transcript row, what it played) with the seat's usage "
               "and turns so far, written by the recorder as each answer arrives"),
    Transition("ask_cancel", IN_WORLD, None, "a cancel: its worker stops at the next tick boundary"),
    Transition("requeue", IN_WORLD, (QUEUED,),
               "a replay: a scripted run whose worker went away, or a job that never started"),
    Transition("resume", IN_WORLD, (QUEUED,),
               "a model run whose worker or service went away, or that stopped at a tick boundary for a "
               "shutdown: queued again, to replay its recorded turns and play on"),
    Transition("ended", IN_WORLD, TERMINAL, "its worker's outcome, with what it played and metered"),
    Transition("fail", IN_WORLD, (FAILED,), "the match could not be played, or a model run lost its worker "
               f"more than {MAX_RESUMES} times; what the recorder metered stays"),
    Transition("cancel_queued", (QUEUED,), (CANCELLED,), "a cancel before any worker: nothing played"),
    Transition("cancel_unplayed", IN_WORLD, (CANCELLED,),
               "a run asked to cancel whose worker went away before it archived anything"),
    Transition("series_stopped", (QUEUED,), (CANCELLED,),
               "a trial its series will not play: precise enough, or its budget spent (stop_reason series_stopped)"),
)}


def table() -> str:
    """The transitions as the Markdown table docs/RUNS.md carries (a test keeps the two equal)."""
    rows = [f"| `{t.name}` | {', '.join(t.leaves)} | {', '.join(t.to) if t.to else '(unchanged)'} | {t.what} |"
            for t in TRANSITIONS.values()]
    return "\n".join(["| transition | from | to | when |", "| --- | --- | --- | --- |", *rows])


def _states(states: tuple[str, ...]) -> str:
    return "(" + ", ".join(f"'{s}'" for s in states) + ")"  # our constants, never a caller's text


def _move(c: sqlite3.Connection, name: str, run_id: str, sets: str, params: tuple, quiet: bool = False) -> bool:
    t = TRANSITIONS[name]
    row = c.execute(f"UPDATE runs SET {sets} WHERE id = ? AND status IN {_states(t.leaves)} RETURNING id",
                    (*params, run_id)).fetchall()  # fetch all: the UPDATE completes before COMMIT
    if not row:
        if not quiet:
            now = c.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()
            log.info("run %s: no transition to %s from %s", run_id, "/".join(t.to) if t.to else name,
                     now[0] if now else "a missing run")
        return False
    return True


def error_json(message: str, code: str = "internal_error") -> str:
    return json.dumps(envelope(code, message))


def claim(c: sqlite3.Connection, scripted: bool, limit: int, series_ids: tuple = (),
          held: tuple = (), skip: tuple = ()) -> list[sqlite3.Row]:
    """queued -> launching: the oldest `limit` queued runs of a kind, for free worker slots; with
    series_ids, only runs of those series; never runs of the series in `held` (a series budget that
    cannot cover another trial while others play: orchestrator.runs.series.stopping), nor the runs in
    `skip` (trials beyond their series' wave: the same module)."""
    t = TRANSITIONS["claim"]
    within = f" AND batch_id IN ({','.join('?' * len(series_ids))})" if series_ids else ""
    if held:
        within += f" AND (batch_id IS NULL OR batch_id NOT IN ({','.join('?' * len(held))}))"
    if skip:  # one parameter however many: a long series may leave thousands waiting
        within += " AND id NOT IN (SELECT value FROM json_each(?))"
    rows = c.execute(f"UPDATE runs SET status = ? WHERE id IN (SELECT id FROM runs WHERE status IN {_states(t.leaves)} "
                     f"AND scripted = ?{within} ORDER BY seq LIMIT ?) RETURNING *",
                     (t.to[0], int(scripted), *series_ids, *held, *((json.dumps(list(skip)),) if skip else ()),
                      limit)).fetchall()
    return sorted(rows, key=lambda r: r["seq"])


def handed(c: sqlite3.Connection, run_id: str, match_id: str) -> bool:
    """A claimed run is with a worker (maybe waiting behind another job): it keeps `launching`."""
    return bool(handed_many(c, [(run_id, match_id)]))


def handed_many(c: sqlite3.Connection, pairs: list[tuple[str, str]]) -> set[str]:
    """`handed` for a chunk's runs (run id, match id) in one statement; returns the runs moved."""
    moving = _in(c, "handed", [run_id for run_id, _ in pairs])
    c.executemany("UPDATE runs SET match_id = ? WHERE id = ?", [(m, r) for r, m in pairs if r in moving])
    return moving


def _in(c: sqlite3.Connection, name: str, run_ids: list[str]) -> set[str]:
    """Which of these runs a set-based transition moves (those in the states it leaves); the others
    are logged, as `_move` does. Inside the caller's write transaction, so nothing moves them meanwhile."""
    if not run_ids:
        return set()
    t = TRANSITIONS[name]
    rows = c.execute(f"SELECT id, status FROM runs WHERE id IN ({','.join('?' * len(run_ids))})", run_ids).fetchall()
    now = {r["id"]: r["status"] for r in rows}
    for run_id in run_ids:
        if now.get(run_id) not in t.leaves:
            log.info("run %s: no transition to %s from %s", run_id, "/".join(t.to) if t.to else name,
                     now.get(run_id, "a missing run"))
    return {r for r in run_ids if now.get(r) in t.leaves}


def began(c: sqlite3.Connection, run_id: str, started_at_ms: int) -> bool:
    """launching -> running: its worker began playing it."""
    return _move(c, "began", run_id, f"status = '{RUNNING}', started_at_ms = ?, live_tick = 0", (started_at_ms,))


def tick(c: sqlite3.Connection, run_id: str, live_tick: int) -> bool:
    return _move(c, "tick", run_id, "live_tick = ?", (live_tick,), quiet=True)


def spend(roster: list[dict]) -> float:
    """A run's spend as the store keeps it: its roster's usage entries are the run's ledger as the
    worker last reported it (orchestrator.seats.ledger), the spend_usd column its total."""
    return Ledger([s["usage"] for s in roster]).usd


def metered(c: sqlite3.Connection, run_id: str, tick: int, seats: dict[int, dict]) -> bool:
    """What a playing run has metered so far: seats maps index -> {usage, turns} (totals, not deltas,
    so a repeated report changes nothing twice). A report that arrives after the run ended never
    overwrites its settled record."""
    row = c.execute(f"SELECT roster FROM runs WHERE id = ? AND status IN {_states(TRANSITIONS['metered'].leaves)}",
                    (run_id,)).fetchone()
    if row is None:
        return False
    roster = json.loads(row["roster"])
    for i, s in seats.items():
        roster[int(i)]["usage"] = s["usage"]
        if s.get("turns") is not None:  # scripted seats report their played ticks only
            roster[int(i)]["turns"] = s["turns"]
    return _move(c, "metered", run_id, "roster = ?, spend_usd = ?, live_tick = MAX(COALESCE(live_tick, 0), ?)",
                 (json.dumps(roster), spend(roster), tick), quiet=True)


def recorded(c: sqlite3.Connection, run_id: str, tick: int, seat: int, turn: dict, play: list, memory,
             report: dict) -> bool:
    """One model turn as it happened, with the seat's totals (report: {usage, turns}) in the same
    transaction: the turn is in the transcript exactly when it is metered. A repeated write (a retry)
    replaces the row and writes the same totals again."""
    row = c.execute(f"SELECT roster FROM runs WHERE id = ? AND status IN {_states(TRANSITIONS['recorded'].leaves)}",
                    (run_id,)).fetchone()
    if row is None:
        return False
    roster = json.loads(row["roster"])
    roster[seat]["usage"], roster[seat]["turns"] = report["usage"], report["turns"]
    c.execute("INSERT OR REPLACE INTO run_turns (run_id, tick, seat, turn, play, memory) VALUES (?, ?, ?, ?, ?, ?)",
              (run_id, tick, seat, json.dumps(turn), json.dumps(play), None if memory is None else json.dumps(memory)))
    return _move(c, "recorded", run_id, "roster = ?, spend_usd = ?", (json.dumps(roster), spend(roster)), quiet=True)


def turns_recorded(c: sqlite3.Connection, run_id: str) -> list[sqlite3.Row]:
    """A run's recorded turns in tick, then seat order."""
    return c.execute("SELECT tick, seat, turn, play, memory FROM run_turns WHERE run_id = ? ORDER BY tick, seat, n",
                     (run_id,)).fetchall()


def keep_transcript(c: sqlite3.Connection, run_id: str, rows: list[dict]) -> None:
    """A run that failed before its match was archived keeps its worker's transcript rows (an arena
    game's asks, several per ply when a move was illegal) as its record."""
    asked: dict[tuple[int, int], int] = {}
    for r in rows:
        key = (r["tick"], r["seat"])
        asked[key] = n = asked.get(key, -1) + 1
        c.execute("INSERT OR REPLACE INTO run_turns (run_id, tick, seat, n, turn, play) VALUES (?, ?, ?, ?, ?, '[]')",
                  (run_id, r["tick"], r["seat"], n, json.dumps(r)))


def ask_cancel(c: sqlite3.Connection, run_id: str) -> bool:
    """A run with a worker stops at its next tick boundary; the worker's outcome ends it."""
    return _move(c, "ask_cancel", run_id, "cancel_requested = 1", (), quiet=True)


def requeue(c: sqlite3.Connection, run_id: str) -> bool:
    """launching | running -> queued: a replay of a scripted run, or a job that never started."""
    return _move(c, "requeue", run_id,
                 f"status = '{QUEUED}', match_id = NULL, started_at_ms = NULL, live_tick = NULL", ())


def resume(c: sqlite3.Connection, run_id: str, counted: bool = True) -> bool:
    """launching | running -> queued for a model run: its recorded turns and metered usage stay, and the
    worker that takes it next replays them before it asks any model again. counted: a fault (a lost
    worker or service), which counts towards MAX_RESUMES; a shutdown's stop does not."""
    return _move(c, "resume", run_id, f"status = '{QUEUED}', match_id = NULL, live_tick = NULL, "
                 f"resumes = resumes + {int(counted)}", ())


def ended(c: sqlite3.Connection, run_id: str, o: dict, roster: str, now_ms: int) -> bool:
    """launching | running -> finished | cancelled | failed, with what the worker played and metered
    (o: an outcome as the play wing returns it; roster: the run's roster, usage in, as JSON)."""
    row = {"run_id": run_id, "status": o["status"], "stop_reason": o["stop_reason"], "match_ticks": o["match_ticks"],
           "match_id": o["match_id"], "results": json.dumps(o["results"]) if o["results"] else None,
           "roster": roster, "spend_usd": o["spend_usd"], "turns_settled": sum(u["agent_turns"] for u in o["usage"]),
           "error": json.dumps(o["error"]) if o["error"] else None, "started_at_ms": o.get("started_at_ms"),
           "archived": o.get("archived")}
    return bool(ended_many(c, [row], now_ms))


_ENDED = ("status", "stop_reason", "results", "roster", "spend_usd", "turns_settled", "match_ticks", "error",
          "match_id", "archived", "started_at_ms", "run_id")


def ended_many(c: sqlite3.Connection, rows: list[dict], now_ms: int) -> set[str]:
    """`ended` for many runs in one statement each, the dispatcher's per-chunk write. rows carry the
    columns already serialised (orchestrator.play.job.for_head), so nothing is parsed here. A run's
    recorded turns go once its match, transcript included, is in the archive. Returns the runs moved;
    the others were no longer in the world (a replayed write) and are logged, as `_move` does."""
    moving = _in(c, "ended", [r["run_id"] for r in rows])
    rows = [r for r in rows if r["run_id"] in moving]
    archived = [r["run_id"] for r in rows if r["match_id"] is not None]
    if archived:
        c.execute(f"DELETE FROM run_turns WHERE run_id IN ({','.join('?' * len(archived))})", archived)
    c.executemany("UPDATE runs SET status = ?, stop_reason = ?, results = ?, roster = ?, spend_usd = ?, "
                  "turns_settled = ?, live_tick = ?, error = ?, match_id = ?, archived = ?, "
                  f"started_at_ms = COALESCE(?, started_at_ms), finished_at_ms = {int(now_ms)} WHERE id = ?",
                  [tuple(r[k] for k in _ENDED) for r in rows])
    return {r["run_id"] for r in rows}


# agent turns the recorder metered into the roster while the run played (0 for scripted runs)
METERED_TURNS = "(SELECT COALESCE(SUM(json_extract(value, '$.usage.agent_turns')), 0) FROM json_each(runs.roster))"


def fail(c: sqlite3.Connection, run_id: str, message: str, now_ms: int) -> bool:
    """launching | running -> failed with what was metered as it played (model runs' usage and spend
    are written every tick by `metered`); nothing else is settled."""
    return _move(c, "fail", run_id, f"status = '{FAILED}', stop_reason = 'failed', error = ?, "
                 f"turns_settled = {METERED_TURNS}, finished_at_ms = ?", (error_json(message), now_ms))


def cancel_queued(c: sqlite3.Connection, run_id: str, now_ms: int) -> bool:
    """queued -> cancelled, nothing played."""
    return _move(c, "cancel_queued", run_id, f"status = '{CANCELLED}', stop_reason = 'cancelled', turns_settled = 0, "
                 "finished_at_ms = ?", (now_ms,))


def series_stopped(c: sqlite3.Connection, run_id: str, now_ms: int) -> bool:
    """queued -> cancelled for a trial a stopped series leaves unplayed: its reservation is released
    (a trial queued again to resume keeps what it metered before)."""
    return _move(c, "series_stopped", run_id, f"status = '{CANCELLED}', stop_reason = 'series_stopped', "
                 f"turns_settled = {METERED_TURNS}, finished_at_ms = ?", (now_ms,))


def cancel_unplayed(c: sqlite3.Connection, run_id: str, now_ms: int) -> bool:
    """launching | running -> cancelled for a run whose worker is gone before it archived anything."""
    return _move(c, "cancel_unplayed", run_id, f"status = '{CANCELLED}', stop_reason = 'cancelled', "
                 f"turns_settled = {METERED_TURNS}, match_id = NULL, live_tick = NULL, finished_at_ms = ?", (now_ms,))


def lost(c: sqlite3.Connection, row: sqlite3.Row, why: str, now_ms: int, resumable: bool = False,
         counted: bool = True) -> str:
    """A run whose worker (or whole service) went away: a cancelled one ends cancelled; a scripted one,
    or one whose worker never began it, is queued again (a replay costs nothing and plays the same
    match); a model run that was playing resumes from its recorded turns when its kind can
    (`resumable`) and it has not already resumed MAX_RESUMES times, else fails keeping what was
    metered. Returns the status it went to."""
    if row["cancel_requested"]:
        cancel_unplayed(c, row["id"], now_ms)
        return CANCELLED
    if row["scripted"] or row["status"] == LAUNCHING:
        requeue(c, row["id"])
        return QUEUED
    if resumable and row["resumes"] < MAX_RESUMES:
        resume(c, row["id"], counted)
        return QUEUED
    fail(c, row["id"], why, now_ms)
    return FAILED


def cancel(c: sqlite3.Connection, run_id: str, now_ms: int) -> str:
    """What a cancel does, by the run's status: queued, cancelled at once; launching before a worker
    holds it (no match yet), refused with run_launching, as the dispatcher is handing it over; with a
    worker (waiting in it or running), asked to stop at its next tick boundary; ended, nothing.
    Returns the status the run was in."""
    row = c.execute("SELECT status, match_id FROM runs WHERE id = ?", (run_id,)).fetchone()
    status = row["status"]
    if status == QUEUED:
        cancel_queued(c, run_id, now_ms)
    elif status == LAUNCHING and row["match_id"] is None:
        raise DomainError("run_launching", "the run is being handed to the world; retry the cancel in a few seconds")
    elif status in IN_WORLD:
        ask_cancel(c, run_id)
    return status


def stopped_by_cancel(row: sqlite3.Row) -> bool:
    """After a cancel: the run ended cancelled, or is still stopping; one that ended by itself meanwhile
    was not cancelled."""
    return row["stop_reason"] == "cancelled" or bool(row["status"] in IN_WORLD and row["cancel_requested"])


def in_world(c: sqlite3.Connection, run_ids: list[str] | None = None) -> list[sqlite3.Row]:
    """Runs launching or running (of these ids, when given), oldest first."""
    within = f" AND id IN ({','.join('?' * len(run_ids))})" if run_ids is not None else ""
    return c.execute(f"SELECT * FROM runs WHERE status IN {_states(IN_WORLD)}{within} ORDER BY seq",
                     tuple(run_ids or ())).fetchall()


def cancels_asked(c: sqlite3.Connection) -> list[str]:
    """Runs with a worker that were asked to cancel (maybe by another process on the data dir)."""
    return [r["id"] for r in c.execute(f"SELECT id FROM runs WHERE status IN {_states(IN_WORLD)} "
                                       "AND cancel_requested = 1").fetchall()]


def series_status(counts: Counter) -> str:
    """A series' status from its runs' counts: queued until one of them has left the queue, running
    while any is still to play, then cancelled or failed if every run did, else finished."""
    total = sum(counts.values())
    if any(counts[s] for s in ACTIVE):
        return RUNNING if total > counts[QUEUED] else QUEUED
    for status in (CANCELLED, FAILED):
        if counts[status] == total:
            return status
    return FINISHED


class Ends:
    """Signals for callers waiting until a run's end is committed to the store (a cancel waiting for
    the worker to stop, a read of a series waiting for it to change): the dispatcher calls `landed`
    with the runs each of its writes ended."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[str, list[threading.Event]] = {}
        self._listeners = Listeners("run ends")

    def listening(self, heard):
        """heard(run_ids) is called, on the dispatcher's thread, with the runs of each write that ended
        some; it must return at once (set an event, schedule a wake-up)."""
        return self._listeners.listening(heard)

    @contextmanager
    def watch(self, run_id: str) -> Iterator[threading.Event]:
        """An event set once the run's end lands; read the store after entering, so an end that landed
        just before is not waited for."""
        ended = threading.Event()
        with self._lock:
            self._waiting.setdefault(run_id, []).append(ended)
        try:
            yield ended
        finally:
            with self._lock:
                left = [e for e in self._waiting.get(run_id, ()) if e is not ended]
                if left:
                    self._waiting[run_id] = left
                else:
                    self._waiting.pop(run_id, None)

    def landed(self, run_ids) -> None:
        run_ids = list(run_ids)
        with self._lock:
            for run_id in run_ids:
                for ended in self._waiting.get(run_id, ()):
                    ended.set()
        self._listeners.notify(run_ids)
