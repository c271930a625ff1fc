"""The control plane as a playing job reaches it, one way whatever plays the job: its seats' keys,
and a place for their usage reports.

On a worker that is the head node's Recorder actor (orchestrator.recorder): it hands the keys over in
the call (never written on the worker's side) and writes each report to the run's row at once, so the
worker opens no file of the control plane. In-process play (no recorder) reads the keys from the
job's data dir and reports nowhere: its caller records the outcome.
"""
from __future__ import annotations

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

            raw = ray.get(self.recorder.credentials.remote(self.job.run_id))
        else:
            from orchestrator import recorder
            from orchestrator.core import Core

            raw = recorder.credentials(Core.open(self.job.data_dir), self.job.run_id)
        return {int(i): Credential(c["key"], c["base_url"], c["usd_per_mtok"], c.get("private_ok", False))
                for i, c in raw.items()}

    def report(self, tick: int, seats: dict) -> None:
        """seats: index -> {usage, turns}, totals so far. Waited for: a report overtaken by its
        predecessor would roll the totals back."""
        import ray

        ray.get(self.recorder.report.remote(self.job.run_id, tick, seats))

    async def report_async(self, tick: int, seats: dict) -> None:
        await _unwrapped(self.recorder.report.remote(self.job.run_id, tick, seats))

    async def record_turn_async(self, tick: int, seat: int, turn: dict, play: list, memory, report: dict) -> None:
        """One model turn as it happened, with the seat's totals (orchestrator.recorder.record_turn)."""
        await _unwrapped(self.recorder.turn.remote(self.job.run_id, tick, seat, turn, play, memory, report))

    def recorded(self) -> dict:
        """What the run recorded before its worker or service went away (orchestrator.recorder.recorded);
        in-process play records nothing, so it resumes nothing."""
        if self.recorder is None:
            return {"turns": [], "seats": {}}
        import ray

        return ray.get(self.recorder.recorded.remote(self.job.run_id))


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
