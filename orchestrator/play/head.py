"""The control plane as a playing job reaches it: its seats' keys, and a place for their turns and
totals. One protocol (the seats' `Recorder`, seats/recording.py), chosen once per job by `recorder_for`:

- `Remote`: on a worker, the head node's Recorder actor (runs/head/recorder.py). It hands the keys over
  in the call and writes each turn and report to the run's row at once, so the worker never writes a
  key down nor opens a file of the control plane;
- `InProcess`: in-process play reads the keys from the job's data dir and records nowhere (its
  caller records the outcome), so it has nothing to replay.
"""
from __future__ import annotations

import asyncio
import weakref

from orchestrator.core import Core
from orchestrator.seats.funding import run_credentials
from orchestrator.seats.player import Credential
from orchestrator.seats.recording import OffRecord, Recorder, Unrecorded
from orchestrator.seats.turn import TurnRecord


def recorder_for(job, actor=None) -> Recorder:
    """A job's recorder: the head's Recorder actor when a worker was handed one, else in-process play's."""
    return InProcess(job) if actor is None else Remote(job.run_id, actor, getattr(job, "tenure", ""))


class InProcess(OffRecord):
    def __init__(self, job):
        self.job = job

    async def credentials(self) -> dict[int, Credential]:
        return await asyncio.to_thread(lambda: _credentials(run_credentials(Core.open(self.job.data_dir),
                                                                            self.job.run_id)))


class Remote:
    """The head's Recorder actor as a worker reaches it for one run: reads by call, writes through the
    loop's Outbox, each awaited until committed (a report overtaken by its predecessor would roll the
    totals back). Each write carries the tenure of the dispatcher lease the job was handed in, which the
    recorder checks as it writes."""

    def __init__(self, run_id: str, actor, tenure: str = ""):
        self.run_id, self.actor, self.tenure = run_id, actor, tenure

    async def credentials(self) -> dict[int, Credential]:
        return _credentials(await _unwrapped(self.actor.credentials.remote(self.run_id)))

    async def replay(self) -> dict:
        return await _unwrapped(self.actor.replay.remote(self.run_id))

    async def turn(self, turn: TurnRecord, play: list, memory, totals: dict) -> None:
        await outbox(self.actor).put("turn", (self.run_id, turn.tick, turn.seat, turn.row(), play, memory, totals),
                                     self.tenure)

    async def report(self, tick: int, seats: dict[int, dict]) -> None:
        await outbox(self.actor).put("report", (self.run_id, tick, seats), self.tenure)


def _credentials(raw: dict) -> dict[int, Credential]:
    return {int(i): Credential(c["key"], c["base_url"], c["usd_per_mtok"], c.get("private_ok", False),
                               c.get("max_concurrent"), c.get("price")) for i, c in raw.items()}


# Calls on their way at once per worker: a few, so a slow transaction does not hold every match up,
# and each as large as the writes that queued meanwhile, up to BATCH.
IN_FLIGHT, BATCH = 4, 512


class Outbox:
    """A worker playing hundreds of matches on one event loop sends their turns and reports to the
    recorder through one Outbox: whatever its matches write while a call is on its way goes in the
    next call, each write awaited until the recorder has committed it."""

    def __init__(self, recorder):
        self.recorder = recorder
        self.queue: list[tuple[str, tuple, str, asyncio.Future]] = []
        self.in_flight = 0
        self.pumping = False
        self.sending: set[asyncio.Task] = set()  # held here: the loop keeps only weak references to tasks

    async def put(self, kind: str, args: tuple, tenure: str = ""):
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        self.queue.append((kind, args, tenure, done))
        if not self.pumping:  # after this pass of the loop: the writes other matches ask in it go along
            self.pumping = True
            loop.call_soon(self._pump)
        return await done

    def _pump(self) -> None:
        self.pumping = False
        while self.queue and self.in_flight < IN_FLIGHT:
            batch, self.queue = self.queue[:BATCH], self.queue[BATCH:]
            self.in_flight += 1
            task = asyncio.ensure_future(self._send(batch))
            self.sending.add(task)
            task.add_done_callback(self.sending.discard)

    async def _send(self, batch: list) -> None:
        try:
            results = await _unwrapped(self.recorder.write.remote([(kind, args, tenure)
                                                                   for kind, args, tenure, _ in batch]))
        except Exception as e:  # the store stayed unwritable (Unrecorded), or the call itself failed
            for *_, done in batch:
                if not done.done():
                    done.set_exception(e)
        else:
            for (*_, done), result in zip(batch, results):
                if done.done():
                    continue
                if isinstance(result, BaseException):
                    done.set_exception(result)
                else:
                    done.set_result(result)
        finally:
            self.in_flight -= 1
            self._pump()


_outboxes: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # event loop -> {recorder actor id: Outbox}


def outbox(recorder) -> Outbox:
    """The running loop's outbox to this recorder, shared by every match playing on the loop."""
    per_loop = _outboxes.setdefault(asyncio.get_running_loop(), {})
    ident = recorder._actor_id.hex()
    box = per_loop.get(ident)
    if box is None:
        box = per_loop[ident] = Outbox(recorder)
    return box


async def _unwrapped(call):
    """Await a recorder call; a store that stayed unwritable reaches the play code as the recorder's own
    Unrecorded (its message names the cause), not wrapped in Ray's task error."""
    try:
        return await call
    except Exception as e:
        cause = getattr(e, "cause", None)
        if isinstance(cause, Unrecorded):
            raise cause from None
        raise
