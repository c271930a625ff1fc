"""Every change of a run's status or live state: the transitions table and the functions that apply it.

TRANSITIONS names each transition with the statuses it leaves and the ones it may go to, as Prefect's
orchestration rules do; each function below applies one (`WHERE status IN (<leaves>)`) inside the
caller's write transaction. A run that is not in one of those states is left alone and the refused
transition is logged: replaying a write after a failure, or a cancel racing a result, then changes
nothing twice. The rules built on them live here too: `cancel`, `lost` (a run whose worker went away),
`series_status`, and `Ends` (the signal a caller waits on until a run's end is in the store).
"""
from __future__ import annotations

import logging
import threading
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, Sequence

from orchestrator.errors import DomainError, envelope
from orchestrator.listeners import Listeners
from orchestrator.records.roster import Seat
from orchestrator.records.run import Ended, Run
from orchestrator.store import Connection, runs, turns
# The statuses live in their own module, below the play wing, where every reader takes them from.
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


def _move(c: Connection, name: str, run_id: str, sets: dict, quiet: bool = False) -> bool:
    t = TRANSITIONS[name]
    if runs.move(c, run_id, t.leaves, sets):
        return True
    if not quiet:
        log.info("run %s: no transition to %s from %s", run_id, "/".join(t.to) if t.to else name,
                 runs.status(c, run_id) or "a missing run")
    return False


def error_of(message: str, code: str = "internal_error") -> dict:
    return envelope(code, message)


def claim(c: Connection, scripted: bool, limit: int, series_ids: tuple = (),
          held: tuple = (), skip: tuple = ()) -> list[Run]:
    """queued -> launching: the oldest `limit` queued runs of a kind, for free worker slots; with
    series_ids, only runs of those series; never runs of the series in `held` (a series budget that
    cannot cover another trial while others play: the series' stopping rules), nor the runs in
    `skip` (trials beyond their series' wave: the same rules)."""
    t = TRANSITIONS["claim"]
    return runs.claim(c, t.leaves, t.to[0], scripted, limit, series_ids, held, skip)


def handed(c: Connection, run_id: str, match_id: str) -> bool:
    """A claimed run is with a worker (maybe waiting behind another job): it keeps `launching`."""
    return bool(handed_many(c, [(run_id, match_id)]))


def handed_many(c: Connection, pairs: list[tuple[str, str]]) -> set[str]:
    """`handed` for a chunk's runs (run id, match id) in one statement; returns the runs moved."""
    moving = _in(c, "handed", [run_id for run_id, _ in pairs])
    runs.set_match_ids(c, [(r, m) for r, m in pairs if r in moving])
    return moving


def _in(c: Connection, name: str, run_ids: list[str]) -> set[str]:
    """Which of these runs a set-based transition moves (those in the states it leaves); the others
    are logged, as `_move` does. Inside the caller's write transaction, so nothing moves them meanwhile."""
    if not run_ids:
        return set()
    t = TRANSITIONS[name]
    now = runs.statuses(c, run_ids)
    for run_id in run_ids:
        if now.get(run_id) not in t.leaves:
            log.info("run %s: no transition to %s from %s", run_id, "/".join(t.to) if t.to else name,
                     now.get(run_id, "a missing run"))
    return {r for r in run_ids if now.get(r) in t.leaves}


def began(c: Connection, run_id: str, started_at_ms: int) -> bool:
    """launching -> running: its worker began playing it."""
    return _move(c, "began", run_id, {"status": RUNNING, "started_at_ms": started_at_ms, "live_tick": 0})


def tick(c: Connection, run_id: str, live_tick: int) -> bool:
    return _move(c, "tick", run_id, {"live_tick": live_tick}, quiet=True)


def spend(roster: Sequence[Seat]) -> float:
    """A run's spend as the store keeps it: its roster's usage entries are the run's ledger as the
    worker last reported it (the seats' ledger), the spend_usd field its total."""
    return sum(s.usage.usd for s in roster)


def metered(c: Connection, run_id: str, tick: int, seats: dict[int, dict]) -> bool:
    """What a playing run has metered so far: seats maps index -> {usage, turns} (totals, not deltas,
    so a repeated report changes nothing twice). A report that arrives after the run ended never
    overwrites its settled record."""
    roster = runs.roster_in(c, run_id, TRANSITIONS["metered"].leaves)
    if roster is None:
        return False
    roster = list(roster)
    for i, s in seats.items():
        # scripted seats report their played ticks only (turns None)
        roster[int(i)] = roster[int(i)].metered(s["usage"], s.get("turns"))
    return _move(c, "metered", run_id, {"roster": roster, "spend_usd": spend(roster),
                                        "live_tick": runs.at_least("live_tick", tick)}, quiet=True)


def recorded(c: Connection, run_id: str, tick: int, seat: int, turn: dict, play: list, memory,
             report: dict) -> bool:
    """One model turn as it happened, with the seat's totals (report: {usage, turns}) in the same
    transaction: the turn is in the transcript exactly when it is metered. A repeated write (a retry)
    replaces the row and writes the same totals again."""
    roster = runs.roster_in(c, run_id, TRANSITIONS["recorded"].leaves)
    if roster is None:
        return False
    roster = list(roster)
    roster[seat] = roster[seat].metered(report["usage"], report["turns"])
    turns.add(c, run_id, tick, seat, turn, play, memory)
    return _move(c, "recorded", run_id, {"roster": roster, "spend_usd": spend(roster)}, quiet=True)


def turns_recorded(c: Connection, run_id: str) -> list:
    """A run's recorded turns in tick, then seat order."""
    return turns.recorded(c, run_id)


def keep_transcript(c: Connection, run_id: str, rows: list[dict]) -> None:
    """A run that failed before its match was archived keeps its worker's transcript rows (an arena
    game's asks, several per ply when a move was illegal) as its record."""
    turns.keep(c, run_id, rows)


def ask_cancel(c: Connection, run_id: str) -> bool:
    """A run with a worker stops at its next tick boundary; the worker's outcome ends it."""
    return _move(c, "ask_cancel", run_id, {"cancel_requested": 1}, quiet=True)


def requeue(c: Connection, run_id: str) -> bool:
    """launching | running -> queued: a replay of a scripted run, or a job that never started."""
    return _move(c, "requeue", run_id, {"status": QUEUED, "match_id": None, "started_at_ms": None, "live_tick": None})


def resume(c: Connection, run_id: str, counted: bool = True) -> bool:
    """launching | running -> queued for a model run: its recorded turns and metered usage stay, and the
    worker that takes it next replays them before it asks any model again. counted: a fault (a lost
    worker or service), which counts towards MAX_RESUMES; a shutdown's stop does not."""
    return _move(c, "resume", run_id, {"status": QUEUED, "match_id": None, "live_tick": None,
                                       "resumes": runs.plus("resumes", int(counted))})


def ended(c: Connection, run_id: str, o: dict, roster: list[dict], now_ms: int) -> bool:
    """launching | running -> finished | cancelled | failed, with what the worker played and metered
    (o: an outcome as the play wing returns it; roster: the run's roster, usage in)."""
    return bool(ended_many(c, [runs.outcome_row(run_id, o, roster)], now_ms))


def ended_many(c: Connection, rows: list[Ended], now_ms: int) -> set[str]:
    """`ended` for many runs in one statement each, the dispatcher's per-chunk write. rows are as the
    workers handed them over (the play wing's job.for_head), so nothing is parsed here. A run's
    recorded turns go once its match, transcript included, is in the archive. Returns the runs moved;
    the others were no longer in the world (a replayed write) and are logged, as `_move` does."""
    moving = _in(c, "ended", [r.run_id for r in rows])
    rows = [r for r in rows if r.run_id in moving]
    runs.ended(c, rows, now_ms)
    return {r.run_id for r in rows}


def fail(c: Connection, run_id: str, message: str, now_ms: int) -> bool:
    """launching | running -> failed with what was metered as it played (model runs' usage and spend
    are written every tick by `metered`); nothing else is settled."""
    return _move(c, "fail", run_id, {"status": FAILED, "stop_reason": "failed", "error": error_of(message),
                                     "turns_settled": runs.METERED_TURNS, "finished_at_ms": now_ms})


def cancel_queued(c: Connection, run_id: str, now_ms: int) -> bool:
    """queued -> cancelled, nothing played."""
    return _move(c, "cancel_queued", run_id, {"status": CANCELLED, "stop_reason": "cancelled", "turns_settled": 0,
                                              "finished_at_ms": now_ms})


def series_stopped(c: Connection, run_id: str, now_ms: int) -> bool:
    """queued -> cancelled for a trial a stopped series leaves unplayed: its reservation is released
    (a trial queued again to resume keeps what it metered before)."""
    return _move(c, "series_stopped", run_id, {"status": CANCELLED, "stop_reason": "series_stopped",
                                               "turns_settled": runs.METERED_TURNS, "finished_at_ms": now_ms})


def cancel_unplayed(c: Connection, run_id: str, now_ms: int) -> bool:
    """launching | running -> cancelled for a run whose worker is gone before it archived anything."""
    return _move(c, "cancel_unplayed", run_id, {"status": CANCELLED, "stop_reason": "cancelled",
                                                "turns_settled": runs.METERED_TURNS, "match_id": None,
                                                "live_tick": None, "finished_at_ms": now_ms})


def lost(c: Connection, run: Run, why: str, now_ms: int, resumable: bool = False, counted: bool = True) -> str:
    """A run whose worker (or whole service) went away: a cancelled one ends cancelled; a scripted one,
    or one whose worker never began it, is queued again (a replay costs nothing and plays the same
    match); a model run that was playing resumes from its recorded turns when its kind can
    (`resumable`) and it has not already resumed MAX_RESUMES times, else fails keeping what was
    metered. Returns the status it went to."""
    if run.cancel_requested:
        cancel_unplayed(c, run.id, now_ms)
        return CANCELLED
    if run.scripted or run.status == LAUNCHING:
        requeue(c, run.id)
        return QUEUED
    if resumable and run.resumes < MAX_RESUMES:
        resume(c, run.id, counted)
        return QUEUED
    fail(c, run.id, why, now_ms)
    return FAILED


def cancel(c: Connection, run_id: str, now_ms: int) -> str:
    """What a cancel does, by the run's status: queued, cancelled at once; launching before a worker
    holds it (no match yet), refused with run_launching, as the dispatcher is handing it over; with a
    worker (waiting in it or running), asked to stop at its next tick boundary; ended, nothing.
    Returns the status the run was in."""
    status, match_id = runs.status_and_match(c, run_id)
    if status == QUEUED:
        cancel_queued(c, run_id, now_ms)
    elif status == LAUNCHING and match_id is None:
        raise DomainError("run_launching", "the run is being handed to the world; retry the cancel in a few seconds")
    elif status in IN_WORLD:
        ask_cancel(c, run_id)
    return status


def stopped_by_cancel(run: Run) -> bool:
    """After a cancel: the run ended cancelled, or is still stopping; one that ended by itself meanwhile
    was not cancelled."""
    return run.stop_reason == "cancelled" or bool(run.status in IN_WORLD and run.cancel_requested)


def in_world(c: Connection, run_ids: list[str] | None = None) -> list[Run]:
    """Runs launching or running (of these ids, when given), oldest first."""
    return runs.in_world(c, run_ids)


def in_world_ids(c: Connection) -> list[str]:
    """The ids of the runs launching or running, oldest first."""
    return runs.in_world_ids(c)


def cancels_asked(c: Connection) -> list[str]:
    """Runs with a worker that were asked to cancel (maybe by another process on the data dir)."""
    return runs.cancels_asked(c)


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
