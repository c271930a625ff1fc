"""Which player plays a job: the one place that tells a job's kinds apart (an arena game, a world
match with model seats, a world match of scripted seats). A new kind of player (a model run resumed
after a fault, a seat played by the account's own program) is one module and one line here.

`play_job_async` is the model worker's way in: a world match with model seats is a coroutine on the
worker's loop; anything else runs on a thread. `play_job` plays in the caller's thread; a world match
with model seats gets an event loop of its own there."""
from __future__ import annotations

import asyncio
from typing import Callable

from engine.arena.games import GAMES
from orchestrator.play import arena, world
from orchestrator.play.head import recorder_for
from orchestrator.play.job import Job, Outcome
from orchestrator.provider_kinds import LOCAL


def play_job(job: Job, should_stop: Callable[[], bool] = lambda: False,
             on_tick: Callable[[int], None] = lambda t: None, recorder=None,
             on_frame: Callable[[dict], None] | None = None,
             should_drain: Callable[[], bool] = lambda: False, pack: bool = True) -> Outcome:
    """Play a job wherever it runs: a Ray worker passes the head's Recorder actor, in-process play
    none (head.py's `recorder_for`). on_tick gets every tick (an arena game's every ply)
    reported; on_frame, the world's live positions after each. pack=False: a scripted world match keeps its log
    as a table (world.play)."""
    recording = recorder_for(job, recorder)
    game = GAMES.get(job.scenario_id)
    if game is not None:
        return arena.play(game, job, recording, should_stop, on_tick)
    if all(s["provider"] == LOCAL for s in job.seats):
        return world.play(job, None, should_stop, on_tick, on_frame, pack=pack)
    return asyncio.run(play_job_async(job, should_stop, on_tick, recorder, on_frame, should_drain))


async def play_job_async(job: Job, should_stop: Callable[[], bool] = lambda: False,
                         on_tick: Callable[[int], None] = lambda t: None, recorder=None,
                         on_frame: Callable[[dict], None] | None = None,
                         should_drain: Callable[[], bool] = lambda: False,
                         stopped: asyncio.Event | None = None) -> Outcome:
    """play_job as a coroutine, for a worker that plays many matches on one event loop. stopped: an
    event set together with should_stop, so a model match waiting on providers stops at once."""
    recording = recorder_for(job, recorder)
    game = GAMES.get(job.scenario_id)
    if game is not None:
        return await arena.play_async(game, job, recording, should_stop, on_tick)
    if all(s["provider"] == LOCAL for s in job.seats):
        return await asyncio.to_thread(world.play, job, None, should_stop, on_tick, on_frame)
    return await world.play_async(job, await world.model_seats(recording), should_stop, on_tick, on_frame, should_drain,
                                  stopped)
