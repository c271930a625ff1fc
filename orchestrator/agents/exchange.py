"""The exchange of agent turns: one async Ray actor on the head node holding every open agent turn.

A match plays on a model worker (any node); the agent reaches the API process on the head. Between
the two sits this actor, pinned to the head node, holding a coroutine per waiting call rather than a
thread, so thousands can wait at once. Deadlines and contacts read the service's Clock, so the
deadline_ms an agent reads is in the same time as the run's other times; the worker holds no Core and
tells only how long the match has been playing (`playing_ms`). Every head of one service finds the same
exchange by name in the service's namespace (actors.py), so an agent may ask through any head and a
head's death leaves the turns open; two services on one Ray cluster never share one.
"""
# The calls:
# - the worker calls `open_turn(run_id, seat, turn, timeout_ms, playing_ms)` and awaits the seat's
#   actions, or the deadline, or the agent's absence;
# - the API's long-poll calls `ask(run_id, seat, wait_ms)`, awaited from the request's coroutine, and
#   answers as soon as the seat's turn opens, the run ends, or wait_ms passes;
# - `submit(run_id, seat, tick, actions, reply, submitted_by)` hands the actions to the waiting turn;
# - the worker calls `end(run_id, tick)` when the match ends however it ends.
#
# Timing (docs/AGENTS.md): a seat's turn gets turn_timeout_ms from the moment it opens; but a seat
# that has never been in touch (asked for a turn or sent actions) has no clock running yet: its first
# turn waits for the agent's first contact, up to `absent_s` after the match began, and the deadline
# runs from that contact. A seat never in touch by then is absent (the run fails with agent_absent).
# Every contact is remembered, so the worker can tell a slow agent (in touch, late) from one that went
# away. The actor runs in its own process, so a ManualClock reaches it as a copy that reads the time
# it was sent.
from __future__ import annotations

import asyncio
import threading
import time

import ray

from orchestrator.actors import Shared, find
from orchestrator.clock import Clock
from orchestrator.provider_kinds import AGENT

AGENT_ABSENT_S = 120.0   # docs/AGENTS.md; `[runs] agent_absent_s` in config.toml
MAX_WAITING = 10_000      # calls the actor holds at once: long-polls and open turns
FORGET_S = 3600.0         # a seat in touch with no run playing (a run cancelled while queued) is forgotten
ENDED_KEPT_S = 600.0      # an ended run answers `ended` from here for this long; the store says so after


class Desk:
    """One agent seat of one run: its open turn, and when its agent was last in touch."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.seen_ms: int | None = None    # the agent's last contact: a turn asked or actions sent
        self.turn: dict | None = None      # the open turn's view: tick, season_ticks, ..., observation
        self.opened_ms = 0
        self.deadline_ms: int | None = None  # None while the agent has never been in touch
        self.timeout_ms = 0
        self.answer: asyncio.Future | None = None
        self.seen = asyncio.Event()        # set at the first contact
        self.changed = asyncio.Event()     # replaced at every change, so each long-poll wakes once

    def wake(self) -> None:
        self.changed.set()
        self.changed = asyncio.Event()

    def contact(self) -> None:
        self.seen_ms = self.clock.now_ms()
        if self.turn is not None and self.deadline_ms is None:
            self.deadline_ms = self.seen_ms + self.timeout_ms
        if not self.seen.is_set():
            self.seen.set()
            self.wake()

    def open(self) -> bool:
        return self.turn is not None and self.deadline_ms is not None and self.clock.now_ms() <= self.deadline_ms


class Exchange:
    def __init__(self, absent_s: float = AGENT_ABSENT_S, clock: Clock | None = None):
        self.absent_s = float(absent_s)
        self.clock = clock or Clock()
        self.runs: dict[str, dict[int, Desk]] = {}
        self.ended: dict[str, tuple[int | None, float]] = {}  # run -> (last tick played, when)
        self._swept = time.monotonic()

    def _desk(self, run_id: str, seat: int) -> Desk:
        return self.runs.setdefault(run_id, {}).setdefault(seat, Desk(self.clock))

    async def open_turn(self, run_id: str, seat: int, turn: dict, timeout_ms: int, playing_ms: int) -> dict:
        """Open the seat's turn and wait for it to close. turn: the view an agent reads (tick,
        season_ticks, actions_per_turn, observation, directions). Answers {actions, reply,
        submitted_by, latency_ms} once acted, {missed: true, in_touch: bool} at the deadline (in_touch:
        the agent was in touch while the turn was open), or {absent: true, absent_s} when the agent
        was never in touch within absent_s of the match beginning (playing_ms ago)."""
        self.ended.pop(run_id, None)
        d = self._desk(run_id, seat)
        fut = asyncio.get_running_loop().create_future()
        d.turn, d.answer, d.timeout_ms, d.opened_ms = turn, fut, int(timeout_ms), self.clock.now_ms()
        d.deadline_ms = d.opened_ms + d.timeout_ms if d.seen_ms is not None else None
        d.wake()
        try:
            if d.deadline_ms is None:
                absent_in_s = self.absent_s - playing_ms / 1000
                try:
                    await asyncio.wait_for(d.seen.wait(), max(0.0, absent_in_s))
                except TimeoutError:
                    return {"absent": True, "absent_s": self.absent_s}
                if fut.done():  # acted at its first contact
                    return fut.result()
            try:
                return await asyncio.wait_for(asyncio.shield(fut), max(0, d.deadline_ms - self.clock.now_ms()) / 1000)
            except TimeoutError:
                return {"missed": True, "in_touch": (d.seen_ms or 0) >= d.opened_ms}
        finally:
            if d.answer is fut:
                d.turn = d.answer = d.deadline_ms = None
                d.wake()

    async def ask(self, run_id: str, seat: int, wait_ms: int) -> dict:
        """The seat's turn as the agent reads it: {status: your_turn, deadline_ms, **turn}, or
        {status: ended, tick}, or {status: waiting} when neither came within wait_ms."""
        self._sweep()
        until = time.monotonic() + wait_ms / 1000
        d = self._desk(run_id, seat) if run_id not in self.ended else None
        if d is not None:
            d.contact()
        while True:
            if run_id in self.ended:
                return {"status": "ended", "tick": self.ended[run_id][0]}
            if d.open():
                return {**d.turn, "status": "your_turn", "deadline_ms": d.deadline_ms}
            left = until - time.monotonic()
            if left <= 0:
                return {"status": "waiting"}
            changed = d.changed
            try:
                await asyncio.wait_for(changed.wait(), left)
            except TimeoutError:
                pass

    async def submit(self, run_id: str, seat: int, tick: int, actions: list, reply: str, submitted_by: str) -> dict:
        """Hand the actions to the seat's open turn: {ok, tick, received}, or {closed: <why>} when
        `tick` is not the seat's open turn."""
        if run_id in self.ended:
            return {"closed": "the run has ended; no turn is open"}
        d = self._desk(run_id, seat)
        d.contact()
        if not d.open():
            return {"closed": f"tick {tick} is not open: no turn of this seat is open now (the run is between "
                              "ticks, or that turn's deadline passed); ask for the turn again"}
        if tick != d.turn["tick"]:
            return {"closed": f"tick {tick} is not open: the seat's open turn is tick {d.turn['tick']}"}
        d.answer.set_result({"actions": actions, "reply": reply, "submitted_by": submitted_by,
                             "latency_ms": self.clock.now_ms() - max(d.opened_ms, d.deadline_ms - d.timeout_ms)})
        d.turn = d.answer = d.deadline_ms = None
        d.wake()
        return {"ok": True, "tick": tick, "received": len(actions)}

    async def end(self, run_id: str, tick: int | None) -> None:
        """The match ended (tick: the last played, or None): waiting calls answer `ended`."""
        self.ended[run_id] = (tick, time.monotonic())
        for d in self.runs.pop(run_id, {}).values():
            if d.answer is not None and not d.answer.done():  # a turn its worker gave up (a cancel): closed
                d.answer.set_result({"missed": True, "in_touch": True})
            d.seen.set()
            d.wake()

    def _sweep(self) -> None:
        now = time.monotonic()
        if now - self._swept < 60:
            return
        self._swept = now
        for run_id in [r for r, (_, at) in self.ended.items() if now - at > ENDED_KEPT_S]:
            del self.ended[run_id]
        stale = self.clock.now_ms() - 1000 * FORGET_S
        for run_id, desks in list(self.runs.items()):
            if all(d.turn is None and (d.seen_ms or 0) < stale for d in desks.values()):
                del self.runs[run_id]


def absent_s(config: dict) -> float:
    return float((config.get("runs") or {}).get("agent_absent_s", AGENT_ABSENT_S))


def actor(shared: Shared, absent: float, clock: Clock):
    """The service's exchange, started on this (the head) node if no head has started it yet. A head
    starts it, never a worker: on a private Ray an actor lives as long as the process that started it."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = ray.get_runtime_context().get_node_id()
    cls = ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=0, max_concurrency=MAX_WAITING)(Exchange)
    return cls.options(**shared.options(NAME),
                       scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False)).remote(absent, clock)


NAME = "agents"


class Exchanges:
    """A head's way to the service's exchange: `handle()` for the API and `for_seats(seats)` for a job
    (its address, the exchange started first when the job has agent seats); `stop` with the head."""

    def __init__(self, config: dict, clock: Clock, shared: Shared):
        self.shared = shared
        self.absent_s = absent_s(config)
        self.clock = clock
        self._handle = None
        self._lock = threading.Lock()

    def for_seats(self, seats: list[dict]) -> str:
        """The exchange's address for a job whose roster is `seats` ("" without agent seats)."""
        if not any(s.get("provider") == AGENT for s in seats):
            return ""
        self.handle()
        return self.shared.address(NAME)

    def handle(self):
        with self._lock:
            if self._handle is None:
                self._handle = actor(self.shared, self.absent_s, self.clock)
            return self._handle

    def stop(self) -> None:
        with self._lock:
            handle, self._handle = self._handle, None
        self.shared.kill(handle)


def for_job(address: str):
    """The exchange a job's agent seats play through, on its worker: the service's, by address."""
    if not address:
        raise RuntimeError("agent seats play only where a dispatcher runs the exchange (`studio serve`, or "
                           "Studio(..., play=True))")
    return find(address)
