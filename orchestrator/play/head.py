"""The control plane as a playing job reaches it, one way whatever plays the job: its seats' keys,
and a place for their usage reports.

On a worker that is the head node's Recorder actor (orchestrator.recorder): it hands the keys over in
the call (never written on the worker's side) and writes each report to the run's row at once, so the
worker opens no file of the control plane. In-process play (no recorder) reads the keys from the
job's data dir and reports nowhere: its caller records the outcome.

A worker playing hundreds of matches on one event loop sends their turns and reports to the recorder
through one `Outbox`: whatever its matches write while a call is on its way goes in the next call,
each write awaited until the recorder has committed it.
"""
from __future__ import annotations

import asyncio
import weakref

from orchestrator.seats.player import Credential


class Head:
    def __init__(self, job, recorder=None):
        self.job, self.recorder = job, recorder

    @property
    def reports(self) -> bool:
        return self.recorder is not None

    def credentials(self) -> dict[int, Credential]:
        """seat index -> the key its client uses, for the seats that need one."""
        if self.recorder is not None:
            import ray

            return _credentials(ray.get(self.recorder.credentials.remote(self.job.run_id)))
        from orchestrator import recorder
        from orchestrator.core import Core

        return _credentials(recorder.credentials(Core.open(self.job.data_dir), self.job.run_id))

    async def credentials_async(self) -> dict[int, Credential]:
        if self.recorder is None:
            return await asyncio.to_thread(self.credentials)
        return _credentials(await _unwrapped(self.recorder.credentials.remote(self.job.run_id)))

    def report(self, tick: int, seats: dict) -> None:
        """seats: index -> {usage, turns}, totals so far. Waited for: a report overtaken by its
        predecessor would roll the totals back."""
        import ray

        ray.get(self.recorder.report.remote(self.job.run_id, tick, seats))

    async def report_async(self, tick: int, seats: dict) -> None:
        await outbox(self.recorder).put("report", (self.job.run_id, tick, seats))

    async def record_turn_async(self, tick: int, seat: int, turn: dict, play: list, memory, report: dict) -> None:
        """One model turn as it happened, with the seat's totals (orchestrator.recorder.record_turn)."""
        await outbox(self.recorder).put("turn", (self.job.run_id, tick, seat, turn, play, memory, report))

    def recorded(self) -> dict:
        """What the run recorded before its worker or service went away (orchestrator.recorder.recorded);
        in-process play records nothing, so it resumes nothing."""
        if self.recorder is None:
            return {"turns": [], "seats": {}}
        import ray

        return ray.get(self.recorder.recorded.remote(self.job.run_id))

    async def recorded_async(self) -> dict:
        if self.recorder is None:
            return {"turns": [], "seats": {}}
        return await _unwrapped(self.recorder.recorded.remote(self.job.run_id))


def _credentials(raw: dict) -> dict[int, Credential]:
    return {int(i): Credential(c["key"], c["base_url"], c["usd_per_mtok"], c.get("private_ok", False),
                               c.get("max_concurrent"), c.get("price")) for i, c in raw.items()}


# Calls on their way at once per worker: a few, so a slow transaction does not hold every match up,
# and each as large as the writes that queued meanwhile, up to BATCH.
IN_FLIGHT, BATCH = 4, 512


class Outbox:
    def __init__(self, recorder):
        self.recorder = recorder
        self.queue: list[tuple[str, tuple, asyncio.Future]] = []
        self.in_flight = 0
        self.pumping = False
        self.sending: set[asyncio.Task] = set()  # held here: the loop keeps only weak references to tasks

    async def put(self, kind: str, args: tuple):
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        self.queue.append((kind, args, done))
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
            results = await _unwrapped(self.recorder.write.remote([(kind, args) for kind, args, _ in batch]))
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
    from orchestrator.recorder import Unrecorded

    try:
        return await call
    except Exception as e:
        cause = getattr(e, "cause", None)
        if isinstance(cause, Unrecorded):
            raise cause from None
        raise
