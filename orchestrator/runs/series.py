"""GET /batches/:id: a series' runs, their states and its per-seat summary (analytics.summary, one path),
with `wait_ms` to wait for the series to change (a long-poll).

A read costs one lookup of the series and one index-only read of its runs (`runs_batch_state`). The
summary is computed once per change of the series' scored runs and kept (orchestrator.runs.summaries),
not recomputed per read.
"""
from __future__ import annotations

import asyncio
import re
import threading
import time
from collections import Counter
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from orchestrator.auth import Principal, require
from orchestrator.core import Core
from orchestrator.errors import DomainError
from orchestrator.runs import lifecycle, summaries

BATCH_PREFIX = "bat_"  # SPEC.md's prefix of a series' id
MAX_WAIT_MS = 30_000  # as the seat turn's long-poll (CONTRACT.md section 13)
# How often a waiting read looks at the store itself: changes this process is not told about (a run
# claimed or begun, a cancel or a dispatcher in another process) show within this.
CHECK_S = 0.25
_DIGITS = re.compile(r"[0-9]{1,9}")  # ASCII only: str.isdigit() also takes '²', which int() refuses


@dataclass(frozen=True)
class State:
    """What a read of the series saw: its stored row and its runs' ids, statuses and scored matches."""
    batch: Any
    run_ids: tuple[str, ...]
    statuses: tuple[str, ...]
    scored: tuple[str, ...]  # match ids of the runs that ended with a match, in trial order
    graded: tuple[str, ...] = ()  # those of them whose decision grading is done (the summary carries it)

    @property
    def counts(self) -> Counter:
        return Counter(self.statuses)

    @property
    def ended(self) -> bool:
        """No run of the series is left to play: nothing about it changes any more."""
        return not any(s in lifecycle.ACTIVE for s in self.statuses)

    @property
    def key(self) -> tuple:
        """What a waiting read compares: a run changed status, or the summary's source changed."""
        return self.statuses, self.scored, self.graded


def wait_ms_of(value: Any) -> int:
    """wait_ms as a query string or a tool argument: an integer of milliseconds, 0..MAX_WAIT_MS."""
    if value is None:
        return 0
    if isinstance(value, str) and _DIGITS.fullmatch(value):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_WAIT_MS:
        raise DomainError("bad_request", f"wait_ms: send an integer of milliseconds from 0 to {MAX_WAIT_MS}")
    return value


def _state(core: Core, batch) -> State:
    rows = core.store.all("SELECT id, status, match_id, grading_status FROM runs WHERE batch_id = ? ORDER BY trial",
                          (batch["id"],))
    scored = [r for r in rows if r["match_id"] and r["status"] in lifecycle.SCORED]
    return State(batch, tuple(r["id"] for r in rows), tuple(r["status"] for r in rows),
                 tuple(r["match_id"] for r in scored),
                 tuple(r["match_id"] for r in scored if r["grading_status"] == "done"))


def read_state(core: Core, principal: Principal, batch_id: str) -> State:
    s = core.store.one("SELECT * FROM batches WHERE id = ? AND account_id = ?", (batch_id, principal.account_id))
    if s is None:
        raise DomainError("unknown_run", f"no series '{batch_id}' on this account; a series answers its batch_id "
                          "at launch")
    return _state(core, s)


def _head(state: State) -> dict:
    s = state.batch
    counts = state.counts
    return {"batch_id": s["id"], "status": lifecycle.series_status(counts), "trials": s["trials"],
            "seed_mode": s["seed_mode"], "batch_seed": s["batch_seed"], "run_ids": list(state.run_ids),
            "counts": dict(counts)}


def view(state: State, kept: summaries.Kept) -> dict:
    return {"batch": _head(state) | {"summary": kept.summary}}


def view_json(state: State, kept: summaries.Kept) -> bytes:
    """view() as REST sends it, the summary's kept text spliced in as the last field: the same bytes as
    encoding the whole view."""
    return f'{{"batch":{summaries.encode(_head(state))[:-1]},"summary":{kept.text}}}}}'.encode()


def _ends(core: Core):
    """This process's dispatcher's end signal, when it plays the data dir."""
    d = getattr(core, "dispatcher", None)
    return getattr(d, "ends", None)


def _hears(state: State, wake):
    """A listener for lifecycle.Ends that wakes a waiter when a run of this series ended here."""
    ids = frozenset(state.run_ids)

    def heard(run_ids) -> None:
        if not ids.isdisjoint(run_ids):
            wake()
    return heard


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
        ends = _ends(core)
        with ends.listening(_hears(state, woken.set)) if ends else nullcontext():
            steps = _changed(core, state, wait)
            try:
                while True:
                    woken.wait(next(steps))
                    woken.clear()  # before the store is read again: a later wake-up is not lost
            except StopIteration as done:
                state = done.value
    return view(state, summaries.summary(core, state.batch["id"], state.scored, state.graded))


async def follow_series(core: Core, principal: Principal, batch_id: str, wait_ms: Any = None) -> dict:
    """get_series on the event loop: waiting holds no thread (woken by this process's dispatcher as runs
    of the series end, else by the store check), and only a summary to compute goes to a thread."""
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
    """The summary of the state's scored runs: the kept one on the event loop, else computed in a thread."""
    kept = summaries.cached(core, state.batch["id"], state.scored, state.graded)
    if kept is None:
        kept = await asyncio.to_thread(summaries.summary, core, state.batch["id"], state.scored, state.graded)
    return kept


async def changed(core: Core, state: State, wait_ms: int) -> State:
    """The series' state once it differs from `state`, or after wait_ms: on the event loop."""
    loop = asyncio.get_running_loop()
    woken = asyncio.Event()
    ends = _ends(core)
    with ends.listening(_hears(state, lambda: loop.call_soon_threadsafe(woken.set))) if ends else nullcontext():
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

