"""GET /batches/:id: a series' runs, their states and its per-seat summary (analytics' one path), with
`wait_ms` to wait for the series to change (a long-poll).

A read costs one lookup of the series and one index-only read of its runs (`runs_batch_state`). The summary
is computed once per change of the series' scored runs and kept, not recomputed per read. In a process with a
dispatcher it is computed by a task on a worker, never here: a read of a series still playing answers the
newest kept summary (it may lag the counts by the change being computed) and asks for the new one; a read of
a series that has ended waits for its final summary.
"""
from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import Counter
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

from orchestrator import statuses
from orchestrator.auth import Principal, require
from orchestrator.core import Core
from orchestrator.errors import DomainError
from orchestrator.records.series import Series
from orchestrator.runs import lifecycle
from orchestrator.runs.series import fork_effect, stopping, summaries, summary_text
from orchestrator.store import series as store
from orchestrator.validation import integer_param

BATCH_PREFIX = "bat_"  # the API's prefix of a series' id
MAX_WAIT_MS = 30_000  # as the seat turn's long-poll (docs/AGENTS.md)
# How often a waiting read looks at the store itself: changes this process is not told about (a run
# claimed or begun, a cancel or a dispatcher in another process) show within this.
CHECK_S = 0.25
# How long a read of an ended series waits for a worker's task to compute its final summary before
# computing it itself (a worker process may have to start first).
SUMMARY_WAIT_S = 60.0
log = logging.getLogger("studio.summaries")


@dataclass(frozen=True)
class State:
    """What a read of the series saw: the series and its runs' ids, statuses and scored matches."""
    batch: Series
    run_ids: tuple[str, ...]
    statuses: tuple[str, ...]
    scored: tuple[str, ...]  # match ids of the runs that ended with a match, in trial order
    graded: tuple[str, ...] = ()  # those of them whose decision grading is done (the summary carries it)
    kept: str | None = None  # the version of the series' kept summary (summaries.version)
    spent_usd: float = 0.0  # what its runs metered, all of them
    cancelled: int = 0  # its runs the caller cancelled
    effect: list | None = None  # a forked series with control: fork - control per changed seat (fork_effect)

    @property
    def counts(self) -> Counter:
        return Counter(self.statuses)

    @property
    def ended(self) -> bool:
        """No run of the series is left to play: nothing about it changes any more."""
        return not any(s in statuses.ACTIVE for s in self.statuses)

    @property
    def key(self) -> tuple:
        """What a waiting read compares: a run changed status, the summary's source changed, or a new
        summary was kept."""
        return self.statuses, self.scored, self.graded, self.kept


def wait_ms_of(value: Any) -> int:
    """wait_ms as a query string or a tool argument: an integer of milliseconds, 0..MAX_WAIT_MS."""
    return integer_param(value, "wait_ms", 0, MAX_WAIT_MS, default=0,
                         hint=f"send an integer of milliseconds from 0 to {MAX_WAIT_MS}")


def _state(core: Core, batch: Series) -> State:
    c = core.store.conn()
    # read again: the dispatcher writes a series' stop and sequences on its row as its runs end
    batch = store.get(c, batch.id)
    runs = store.runs_of(c, batch.id)
    scored = [(m, g) for m, s, g in zip(runs.match_ids, runs.statuses, runs.grading) if m and s in statuses.SCORED]
    return State(batch, runs.ids, runs.statuses, tuple(m for m, _ in scored),
                 tuple(m for m, g in scored if g == "done"), runs.kept, runs.spent_usd, runs.cancelled,
                 fork_effect.effect(core, batch, tuple(m for m, _ in scored)))


def read_state(core: Core, principal: Principal, batch_id: str) -> State:
    s = store.get(core.store.conn(), batch_id, principal.account_id)
    if s is None:
        raise DomainError("unknown_run", f"no series '{batch_id}' on this account; a series answers its batch_id "
                          "at launch")
    return _state(core, s)


def _head(state: State) -> dict:
    s, counts = state.batch, state.counts
    return {"batch_id": s.id, "status": lifecycle.series_status(counts), "trials": s.trials,
            "seed_mode": s.seed_mode, "batch_seed": s.batch_seed, "run_ids": list(state.run_ids),
            "counts": dict(counts), **stopping.head(s, state.ended, state.spent_usd, state.cancelled),
            **({"effect": stopping.with_effect_cs(state.effect, s)} if state.effect is not None else {})}


def view(state: State, kept: summaries.Kept) -> dict:
    return {"batch": _head(state) | {"summary": stopping.with_cs(kept.summary, state.batch)}}


def view_json(state: State, kept: summaries.Kept) -> bytes:
    """view() as REST sends it, the summary's kept text spliced in as the last field: the same bytes as
    encoding the whole view. A series with a target has its sequences added to the summary's seats."""
    if state.batch.until is not None:
        return summary_text.encode(view(state, kept)).encode()
    return f'{{"batch":{summary_text.encode(_head(state))[:-1]},"summary":{kept.text}}}}}'.encode()


def _summarizer(core: Core):
    """This process's dispatcher's summarizer, when it plays the data dir."""
    return None if core.dispatcher is None else core.dispatcher.summaries


@contextmanager
def _listening(core: Core, state: State, wake):
    """Wakes a waiter when a run of this series ended here (this process's dispatcher's end signal) or
    a new summary of it was kept."""
    ids, batch_id = frozenset(state.run_ids), state.batch.id

    def ended(run_ids) -> None:
        if not ids.isdisjoint(run_ids):
            wake()

    def kept(of: str) -> None:
        if of == batch_id:
            wake()
    with ExitStack() as stack:
        d = core.dispatcher
        if d is not None:
            stack.enter_context(d.ends.listening(ended))
            stack.enter_context(d.summaries.listening(kept))
        yield


def _changed(core: Core, state: State, wait_ms: int):
    """A wait's steps, for a thread or the event loop alike: yields how long to sleep at most before
    looking at the store again (a wake-up ends the sleep early); returns the series' state once it
    differs from `state`, or the state when wait_ms has passed."""
    deadline = time.monotonic() + wait_ms / 1000
    while True:
        now = _state(core, state.batch)
        left = deadline - time.monotonic()
        if now.key != state.key or left <= 0:
            return now
        yield min(left, CHECK_S)


def get_series(core: Core, principal: Principal, batch_id: str, wait_ms: Any = None) -> dict:
    """The series' view; with wait_ms, once it changes or wait_ms passed (at once when it has ended).
    For threads (MCP's tools, Python); the server's route awaits follow_series instead."""
    require(principal, "runs:read")
    wait = wait_ms_of(wait_ms)
    state = read_state(core, principal, batch_id)
    if wait and not state.ended:
        woken = threading.Event()
        with _listening(core, state, woken.set):
            steps = _changed(core, state, wait)
            try:
                while True:
                    woken.wait(next(steps))
                    woken.clear()  # before the store is read again: a later wake-up is not lost
            except StopIteration as done:
                state = done.value
    return view(state, _summary(core, state))


def _summary(core: Core, state: State) -> summaries.Kept:
    """summary_of for threads: an ended series' final summary may be waited for, SUMMARY_WAIT_S at most."""
    kept, done = _kept_or_asked(core, state)
    if kept is not None:
        return kept
    if done is not None:
        try:
            return done.result(timeout=SUMMARY_WAIT_S)
        except Exception as e:
            _computing_here(state, e)
    return summaries.summary(core, state.batch.id, state.scored, state.graded)


async def follow_series(core: Core, principal: Principal, batch_id: str, wait_ms: Any = None) -> dict:
    """get_series on the event loop: waiting holds no thread (woken by this process's dispatcher as runs
    of the series end or their summary is kept, else by the store check), nor does waiting for a
    worker's summary; only a summary computed here goes to a thread."""
    return view(*await _follow(core, principal, batch_id, wait_ms))


async def follow_series_json(core: Core, principal: Principal, batch_id: str, wait_ms: Any = None) -> bytes:
    """follow_series as REST's body."""
    return view_json(*await _follow(core, principal, batch_id, wait_ms))


async def _follow(core: Core, principal: Principal, batch_id: str, wait_ms: Any) -> tuple[State, summaries.Kept]:
    require(principal, "runs:read")
    wait = wait_ms_of(wait_ms)
    state = read_state(core, principal, batch_id)
    if wait and not state.ended:
        state = await changed(core, state, wait)
    return state, await summary_of(core, state)


async def summary_of(core: Core, state: State) -> summaries.Kept:
    """The summary a read of this state answers: the kept one of its scored runs; else, with a
    dispatcher, the newest kept one while the series plays, or the task's (awaited, no thread held)
    once it has ended; else computed in a thread."""
    kept, done = _kept_or_asked(core, state)
    if kept is not None:
        return kept
    if done is not None:
        try:  # shielded: a waiter that gives up never cancels the summary others wait for
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(done)), SUMMARY_WAIT_S)
        except Exception as e:
            _computing_here(state, e)
    return await asyncio.to_thread(summaries.summary, core, state.batch.id, state.scored, state.graded)


def _kept_or_asked(core: Core, state: State):
    """(summary to answer, None), or (None, the future of the summary to wait for) from this process's
    summarizer, or (None, None): no summarizer, compute it here."""
    batch_id = state.batch.id
    kept = summaries.cached(core, batch_id, state.scored, state.graded)
    summarizer = _summarizer(core)
    if kept is not None or summarizer is None:
        return kept, None
    done = summarizer.ask(batch_id, state.scored, state.graded, final=state.ended)
    if not state.ended:
        kept = summaries.newest(core, batch_id)
    return kept, (done if kept is None else None)


def _computing_here(state: State, e: BaseException) -> None:
    log.warning("series %s: its summary did not come from a worker (%s: %s); computing it here", state.batch.id,
                type(e).__name__, e)


async def changed(core: Core, state: State, wait_ms: int) -> State:
    """The series' state once it differs from `state`, or after wait_ms: on the event loop."""
    loop = asyncio.get_running_loop()
    woken = asyncio.Event()
    with _listening(core, state, lambda: loop.call_soon_threadsafe(woken.set)):
        steps = _changed(core, state, wait_ms)
        try:
            while True:
                seconds = next(steps)
                try:
                    await asyncio.wait_for(woken.wait(), seconds)
                except asyncio.TimeoutError:
                    pass
                woken.clear()
        except StopIteration as done:
            return done.value


def list_series(core: Core, principal: Principal, batch_ids: list[str] | None = None, limit: int = 100) -> list[dict]:
    """The account's series, newest first (or those of `batch_ids`): each one's id, trials, creation, status,
    its runs' counts (`ended`: how many are over, of `runs`), and its first trial's name and scenario."""
    require(principal, "runs:read")
    if batch_ids is not None and not batch_ids:
        return []
    out = []
    for b, mine in store.listed(core.store.conn(), principal.account_id, batch_ids, limit):
        counts = Counter(r["status"] for r in mine)
        out.append({"batch_id": b.id, "trials": b.trials, "created_at_ms": b.created_at_ms,
                    "status": lifecycle.series_status(counts), "counts": dict(counts), "runs": len(mine),
                    "ended": sum(counts[s] for s in statuses.TERMINAL),
                    "name": mine[0]["name"] if mine else None, "scenario_id": mine[0]["scenario_id"] if mine else None})
    return out
