"""The one channel between the workers playing model seats and the control plane: the Ray side of the
seats' `Recorder` protocol (seats/recording.py; a worker reaches it through play/head.py's `Remote`).

Workers touch no file of the control plane (the store, the key file): a `Recorder` actor pinned to
the head node does it for them. Every head's workers share this actor, so each write carries the
tenure of the dispatcher lease its job was handed in, and lands only while that is the lease's
current tenure, checked in the write's own transaction; a write from a superseded tenure is answered
Stale and its match stops. The functions below do the work over a Core; the actor only holds one.
"""
from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import ThreadPoolExecutor

import ray

from orchestrator.core import Core
from orchestrator.runs import lifecycle
from orchestrator.runs.head.lease import NAME as LEASE
from orchestrator.seats.funding import run_credentials
from orchestrator.seats.recording import Stale, Unrecorded
from orchestrator.store import OperationalError, leases, turns

log = logging.getLogger("studio.recorder")
RECORD_PATIENCE_S = 120.0
RETRY_S = 0.5
# One transaction per this long at most while writes keep coming: under load a transaction takes many
# runs' rows; a lone write waits for nothing.
FLUSH_EVERY_S = 0.02


def patience_s(core: Core) -> float:
    """How long a playing run waits for a store that refuses writes: `[runs] record_patience_s`."""
    return float((core.config.get("runs") or {}).get("record_patience_s", RECORD_PATIENCE_S))


def _patiently(core: Core, step, what: str):
    """step(c) in a write transaction, retried while the store refuses writes for now."""
    patience = patience_s(core)
    began, refused = time.monotonic(), False  # from the first attempt: SQLite's busy wait counts too
    while True:
        try:
            with core.store.write() as c:
                out = step(c)
            if refused:
                log.warning("the store takes %s again after %.1f s", what, time.monotonic() - began)
            return out
        except OperationalError as e:
            now = time.monotonic()
            if not refused:
                refused = True
                log.error("the store refused %s (%s); retrying every %.1f s", what, e, RETRY_S)
            if now - began >= patience:
                raise Unrecorded(f"the service could not record this run's turns for {patience:.0f} s: {e}") from e
            time.sleep(RETRY_S)


def record(core: Core, run_id: str, tick: int, seats: dict[int, dict]) -> bool:
    """Write what a playing run has metered so far (lifecycle.metered): seats maps index -> {usage,
    turns}, totals; only a run still launching or running is written."""
    return _patiently(core, lambda c: lifecycle.metered(c, run_id, tick, seats), "a run's usage")


_STEPS = {"report": lifecycle.metered, "turn": lifecycle.recorded}


def record_many(core: Core, entries: list[tuple]) -> list:
    """Turns and reports (kind, args as `turn` and `report` take them[, tenure]) in one transaction; one
    result each, in order: what its step returned, or the exception that refused it (Stale for a tenure
    of the dispatcher lease that has ended; an entry with no tenure is not checked). A store that stays
    unwritable raises Unrecorded for all of them; an entry the store refuses for any other reason is
    written again alone, so it fails by itself and the others land."""
    try:
        return _patiently(core, lambda c: _steps(c, entries), f"{len(entries)} model turns and reports")
    except Unrecorded:
        raise
    except Exception:
        if len(entries) == 1:
            raise
    out = []
    for entry in entries:
        try:
            out.append(_patiently(core, lambda c: _steps(c, [entry])[0], "a model turn"))
        except Unrecorded:
            raise
        except Exception as e:
            log.exception("recording a %s of run %s failed", entry[0], entry[1][0])
            out.append(e)
    return out


def _steps(c, entries: list[tuple]) -> list:
    current = {t: leases.stamped(c, LEASE, t) for t in {e[2] for e in entries if len(e) > 2 and e[2]}}
    out = []
    for kind, args, *tenure in entries:
        if tenure and tenure[0] and not current[tenure[0]]:
            log.warning("a %s of run %s from a superseded dispatcher (%s) was refused", kind, args[0], tenure[0])
            out.append(Stale(f"run {args[0]} was handed over by a dispatcher whose lease has passed to "
                             "another head; this worker's writes for it are refused"))
        else:
            out.append(_STEPS[kind](c, *args))
    return out


def replay(core: Core, run_id: str) -> dict:
    """{turns: [{tick, seat, turn, play, memory}], seats: {index: {usage, turns}}} of a run that resumes;
    empty lists and maps for a run that never recorded a turn."""
    return turns.replay(core.store.conn(), run_id).plain()


class Recorder:
    """An async actor: its event loop only queues and answers; the store is written on one thread
    (its own SQLite connection), read on others.

    Writes are grouped: whatever arrives while the store is busy with a transaction (and at least
    FLUSH_EVERY_S after the last one began) goes in the next one, many runs' rows in one transaction,
    on a thread of its own so the event loop keeps taking calls. A call returns once its rows are
    committed, so every metered turn is in the transcript. A write the store refuses for now (a full
    disk, a held lock) is retried for `patience_s`: the match waits meanwhile, and only a store that
    stays unwritable fails the run, with a message that names the cause."""

    def __init__(self, data_dir: str, store_url: str | None = None):
        self.core = Core.open(data_dir, store_url=store_url)
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="recorder-write")
        self._queue: list[tuple[list, asyncio.Future]] = []
        self._flushing = False
        self._flusher: asyncio.Task | None = None  # held here: the loop keeps only weak references to tasks
        self._began = 0.0  # loop time the last transaction began

    async def credentials(self, run_id: str) -> dict[int, dict]:
        """The decrypted keys of a run's model seats, returned in the call (never written on the
        worker's side), with the operator's cap on each key's requests in flight."""
        return await asyncio.to_thread(run_credentials, self.core, run_id)

    async def replay(self, run_id: str) -> dict:
        """What a resumed run replays: its recorded turns and every seat's totals."""
        return await asyncio.to_thread(replay, self.core, run_id)

    async def report(self, run_id: str, tick: int, seats: dict[int, dict], tenure: str = "") -> bool:
        """Every seat's usage and counts so far and the live tick, after each tick."""
        return _one(await self.write([("report", (run_id, tick, seats), tenure)]))

    async def turn(self, run_id: str, tick: int, seat: int, turn: dict, play: list, memory, report: dict,
                   tenure: str = "") -> bool:
        """One model turn as it happened (its transcript row, what the seat played, the conversation
        entry it left) with the seat's usage and counts so far, in one write. The worker awaits it as
        each answer arrives, so a worker killed with -9, or a service that goes away, loses neither
        spend nor transcript for any turn that was answered."""
        return _one(await self.write([("turn", (run_id, tick, seat, turn, play, memory, report), tenure)]))

    async def write(self, entries: list[tuple]) -> list:
        """Entries (turns and reports) written in the next transaction, each answered on its own; returns
        once it committed (record_many's results). A worker sends its matches' writes this way."""
        done = asyncio.get_running_loop().create_future()
        self._queue.append((entries, done))
        if not self._flushing:
            self._flushing = True
            self._flusher = asyncio.ensure_future(self._flush())
        return await done

    async def _flush(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self._queue:
                wait = self._began + FLUSH_EVERY_S - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                self._began = loop.time()
                batch, self._queue = self._queue, []
                entries = [e for es, _ in batch for e in es]
                try:
                    results = await loop.run_in_executor(self._writer, record_many, self.core, entries)
                except Exception as e:  # Unrecorded, or a lone entry's own error: each caller gets it
                    for _, done in batch:
                        if not done.done():
                            done.set_exception(e)
                    continue
                k = 0
                for es, done in batch:
                    if not done.done():  # a caller that went away
                        done.set_result(results[k:k + len(es)])
                    k += len(es)
        finally:
            self._flushing = False


def _one(results: list):
    if isinstance(results[0], BaseException):
        raise results[0]
    return results[0]


def start_recorder(data_dir: str, shared, store_url: str | None = None):
    """The service's Recorder actor (one per service, `Shared`), started on this (the head) node if no
    head has started it yet: the store lives here, not on the workers' disks. Async: thousands of
    matches' writes wait on it at once, each a coroutine, not a thread. store_url: the head's, when
    a URL names it (the actor's environment is the Ray cluster's, not the head's)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = ray.get_runtime_context().get_node_id()
    actor = ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1, max_concurrency=RECORDER_CALLS)(Recorder)
    return actor.options(**shared.options("recorder"),
                         scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False)).remote(data_dir, store_url)


RECORDER_CALLS = 10000  # calls the actor holds at once; workers batch theirs, so few are in flight
